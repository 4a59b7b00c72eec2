// distributed/tcp_store.h — a tiny TCP key-value store for rendezvous (torch.distributed.TCPStore).
//
// Tutorial §9.3. Before processes can talk they must find each other: rank 0 serves a
// key-value store at MASTER_ADDR:MASTER_PORT and every rank (rank 0 included) connects to
// it as a client. Each process publishes its own connection details under a key and
// reads everyone else's; Gloo's connectFullMesh does exactly this through the adapter in
// process_group_gloo.cpp.
//
// Protocol (one request, one reply):
//   request  = u8 command, u32 count, count × (u32 length, bytes)
//   reply    = u8 status,  u32 count, count × (u32 length, bytes)
// Commands: SET key value, GET key (status 0 = missing), ADD key delta (decimal text, as
// PyTorch stores counters), CHECK keys... (status 1 when all exist).
// Waiting (get/wait) is done by the *client* re-asking every few milliseconds until the
// deadline: slower than server-side wake-ups, but the server never holds a request open.
//
// Nothing here may hang: every socket is non-blocking and every wait is a poll() with a
// deadline. A client gives up on connecting, and on every request, when its timeout runs
// out — also when the server's process is alive but stopped (SIGSTOP, a debugger, swapped
// out), which is the one failure a closed socket does not reveal. The server is one
// poll()-driven thread that keeps a buffer per connection: a client that sends half a
// request (and stops) leaves its bytes in its buffer while the others are served.
//
// Addresses: MASTER_ADDR may be a host name ("localhost", "node0.cluster") or a numeric
// IPv4/IPv6 address; getaddrinfo resolves it. The server listens on every interface
// (in6addr_any, which also accepts IPv4, or INADDR_ANY where IPv6 is off), as PyTorch's
// does: the address clients use to reach it is their business, not the server's.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember::distributed {

using Milliseconds = std::chrono::milliseconds;

class TCPStore {
 public:
  // is_master: also run the server on `port` (port 0 = let the kernel choose; see port()).
  // Every instance is a client of host:port; a client retries connecting until `timeout`.
  // Errors (DistributedError): "TCPStore: cannot resolve host 'nosuchhost': Name or service
  // not known", "TCPStore: cannot listen on port 29500 (all interfaces): Address already in
  // use", "TCPStore: timed out after 30000 ms connecting to 10.0.0.1:29500 (last error:
  // Connection refused)".
  TCPStore(std::string host, int port, bool is_master, Milliseconds timeout = std::chrono::seconds(30));
  ~TCPStore();
  TCPStore(const TCPStore&) = delete;
  TCPStore& operator=(const TCPStore&) = delete;

  void set(const std::string& key, const std::vector<char>& value);
  void set(const std::string& key, const std::string& value) { set(key, std::vector<char>(value.begin(), value.end())); }
  // Waits (up to the store's timeout) until the key exists, then returns its value.
  std::vector<char> get(const std::string& key);
  // Adds delta to the integer at key (missing = 0) and returns the new value.
  std::int64_t add(const std::string& key, std::int64_t delta);
  // True when every key exists right now (no waiting for the keys; the request itself
  // still times out if the server does not answer).
  bool check(const std::vector<std::string>& keys);
  // Waits until every key exists; throws DistributedError naming the missing keys on timeout.
  void wait(const std::vector<std::string>& keys);
  void wait(const std::vector<std::string>& keys, Milliseconds timeout);

  int port() const { return port_; }
  const std::string& host() const { return host_; }
  Milliseconds timeout() const { return timeout_; }
  void set_timeout(Milliseconds timeout) { timeout_ = timeout; }

 private:
  class Server;
  struct Reply {
    std::uint8_t status = 0;
    std::vector<std::vector<char>> values;
  };
  using Clock = std::chrono::steady_clock;
  // One request/reply exchange that must finish by `deadline`; `what` names it in errors
  // ("get('key')"). After a failure the connection is closed: a late reply would otherwise
  // be read as the answer to the next request.
  // `budget` is the timeout the message reports.
  Reply request(std::uint8_t command, const std::vector<std::vector<char>>& arguments, Clock::time_point deadline,
                Milliseconds budget, const std::string& what);
  std::string endpoint() const;  // "host:port", brackets around an IPv6 address

  std::string host_;
  int port_;
  Milliseconds timeout_;
  std::unique_ptr<Server> server_;  // only on the master
  int socket_ = -1;                 // this process's client connection (non-blocking)
  std::string broken_;              // why the connection was closed, once it was
};

}  // namespace ember::distributed
