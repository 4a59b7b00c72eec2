// apps/run/free_port.h — asks the kernel for a TCP port nobody listens on.
//
// A single-machine job needs some port for its rendezvous store (MASTER_PORT). A fixed one
// (torchrun's 29500) collides as soon as two jobs run at once — two tests under a parallel
// ctest, say — so when none is given ember-run binds port 0, reads which port the kernel
// chose, and closes the socket again. Another process could take the port in between; the
// window is a few milliseconds, the same trade-off torchrun makes for --standalone.
// The port is free on every interface, as rank 0's store will listen on all of them
// (distributed/tcp_store.h).
#pragma once

namespace ember::run {

// A currently free port on every interface (IPv6 dual-stack, or IPv4 without IPv6).
// Throws std::runtime_error naming the failing system call.
int find_free_port();

}  // namespace ember::run
