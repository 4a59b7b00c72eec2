// distributed/rendezvous_error.cpp — see rendezvous_error.h.
#include <ember/distributed/rendezvous_error.h>

#include <algorithm>

#include <ember/distributed/distributed_error.h>

namespace ember::distributed {
namespace {

// "1, 3" — the ranks whose "joined" key is missing; empty when the store cannot tell us.
std::string absent_ranks(TCPStore& store, const std::string& prefix, int size) {
  const Milliseconds saved = store.timeout();
  store.set_timeout(std::min(saved, Milliseconds(2000)));
  std::string absent;
  try {
    for (int r = 0; r < size; ++r) {
      if (!store.check({prefix + std::to_string(r)})) absent += (absent.empty() ? "" : ", ") + std::to_string(r);
    }
  } catch (const std::exception&) {
    absent.clear();  // the store itself is unreachable: nothing to add
  }
  store.set_timeout(saved);
  return absent;
}

}  // namespace

long long elapsed_ms(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration_cast<Milliseconds>(std::chrono::steady_clock::now() - started).count();
}

void throw_rendezvous_error(const std::string& backend, int rank, int size, Milliseconds timeout,
                            std::chrono::steady_clock::time_point started, const std::string& step,
                            const std::string& cause, TCPStore* store, const std::string& joined_prefix) {
  std::string message = make_message(backend, " rendezvous failed on rank ", rank, " of ", size, " after ",
                                     elapsed_ms(started), " ms (timeout ", timeout.count(), " ms) while ", step, ": ",
                                     cause);
  if (store != nullptr && !joined_prefix.empty()) {
    std::string absent = absent_ranks(*store, joined_prefix, size);
    if (!absent.empty()) message += "; ranks that never reached the store: " + absent;
  }
  throw DistributedError(message);
}

}  // namespace ember::distributed
