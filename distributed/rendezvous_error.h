// distributed/rendezvous_error.h — one message shape for every way a rendezvous can fail.
//
// Tutorial §9.3. Before the first collective, every rank must reach rank 0's TCPStore and
// trade addresses (Gloo) or the ncclUniqueId (NCCL) through it. When that goes wrong, a
// learner needs to know *which* process gave up, *at what step* and *after how long* —
// the time really spent, measured, next to the timeout (a refused connection fails in
// milliseconds, long before a 10-minute timeout, and must not read as a timeout):
//   "Gloo rendezvous failed on rank 0 of 2 after 1003 ms (timeout 1000 ms) while
//    exchanging addresses with the other ranks: TCPStore: wait timed out ...; ranks that
//    never reached the store: 1"
// The last part is a best-effort look at the store (each backend's ranks count themselves
// in under "<joined_prefix><rank>"), asked with a short timeout so that a store which is
// itself the problem cannot delay the error. Used by process_group.cpp and the backends;
// not part of the public API. elapsed_ms() is the same measure for collectives' errors.
#pragma once

#include <chrono>
#include <string>

#include <ember/distributed/tcp_store.h>

namespace ember::distributed {

// backend: "Gloo" or "NCCL"; step: what the rank was doing ("connecting to the store at
// 10.0.0.1:29500"); cause: the underlying error's message. store may be null (not reached).
// started: when the rendezvous began (the elapsed time is measured from it).
[[noreturn]] void throw_rendezvous_error(const std::string& backend, int rank, int size, Milliseconds timeout,
                                         std::chrono::steady_clock::time_point started, const std::string& step,
                                         const std::string& cause, TCPStore* store = nullptr,
                                         const std::string& joined_prefix = "");

// Whole milliseconds since `started` (what every distributed error reports as "after N ms").
long long elapsed_ms(std::chrono::steady_clock::time_point started);

}  // namespace ember::distributed
