// tests/distributed/test_tcp_store.cpp — the rendezvous store: protocol, names, deadlines.
//
// Most cases run server and clients in this process. The store must never hang, so the
// cases that matter most are about silence: a server process stopped with SIGSTOP (its
// sockets stay open, nothing answers), an address that never answers a connect, and a
// client that sends half a request and stops. Each asserts that the waiting side gives
// up within its timeout plus a few seconds (a generous bound: CI machines are slow, but a
// hang is infinitely slow).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <ember/distributed/distributed_error.h>
#include <ember/distributed/tcp_store.h>

#include "multiprocess.h"

namespace dist = ember::distributed;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A raw TCP connection to 127.0.0.1:port, for speaking (or not speaking) the protocol by hand.
int raw_connection(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  return fd;
}

bool loopback_ipv6_available() {
  int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

TEST_CASE("tcp store: set, get, add, check and wait across two clients", "[distributed][store]") {
  dist::TCPStore master("127.0.0.1", 0, /*is_master=*/true, std::chrono::seconds(5));
  REQUIRE(master.port() > 0);
  dist::TCPStore client("127.0.0.1", master.port(), /*is_master=*/false, std::chrono::seconds(5));

  master.set("greeting", std::string("hello"));
  auto value = client.get("greeting");
  REQUIRE(std::string(value.begin(), value.end()) == "hello");
  client.set("empty", std::vector<char>{});
  REQUIRE(master.get("empty").empty());

  REQUIRE(master.add("counter", 2) == 2);
  REQUIRE(client.add("counter", 5) == 7);
  REQUIRE(client.add("counter", -10) == -3);

  REQUIRE(master.check({"greeting", "counter"}));
  REQUIRE_FALSE(master.check({"greeting", "missing"}));

  // A get that waits: the key arrives from another thread 100 ms later.
  std::thread late_writer([&] {
    std::this_thread::sleep_for(milliseconds(100));
    master.set("late", std::string("here"));
  });
  auto late = client.get("late");
  late_writer.join();
  REQUIRE(std::string(late.begin(), late.end()) == "here");
}

TEST_CASE("tcp store: host names and IPv6 addresses reach a server listening on every interface",
          "[distributed][store]") {
  // MASTER_ADDR=localhost, as the tutorial's script writes it, works like 127.0.0.1.
  dist::TCPStore master("localhost", 0, /*is_master=*/true, std::chrono::seconds(5));
  dist::TCPStore by_name("localhost", master.port(), false, std::chrono::seconds(5));
  dist::TCPStore by_number("127.0.0.1", master.port(), false, std::chrono::seconds(5));
  by_name.set("key", std::string("value"));
  auto value = by_number.get("key");
  REQUIRE(std::string(value.begin(), value.end()) == "value");
  if (loopback_ipv6_available()) {
    dist::TCPStore by_ipv6("::1", master.port(), false, std::chrono::seconds(5));
    REQUIRE(by_ipv6.add("counter", 4) == 4);
    REQUIRE(by_name.add("counter", 1) == 5);
  }
  // A name that does not resolve is named in the error (at once, or after the timeout when
  // the resolver only says "try again").
  REQUIRE_THROWS_AS(dist::TCPStore("no-such-host.invalid", 29500, false, milliseconds(300)), dist::DistributedError);
  REQUIRE_THROWS_WITH(dist::TCPStore("no-such-host.invalid", 29500, false, milliseconds(300)),
                      Catch::Contains("no-such-host.invalid"));
}

TEST_CASE("tcp store: timeouts and errors name what was missing", "[distributed][store]") {
  dist::TCPStore master("127.0.0.1", 0, true, milliseconds(200));
  REQUIRE_THROWS_WITH(master.wait({"never", "nor-this"}, milliseconds(100)),
                      "TCPStore: wait timed out after 100 ms for keys [never, nor-this]");
  REQUIRE_THROWS_AS(master.get("never"), dist::DistributedError);
  // Serving the same port twice fails with the system's reason.
  REQUIRE_THROWS_WITH(dist::TCPStore("127.0.0.1", master.port(), true),
                      "TCPStore: cannot listen on port " + std::to_string(master.port()) +
                          " (all interfaces): Address already in use; port " +
                          std::to_string(master.port()) + " is in use (another job?)");
  // Nobody serves this port: the client gives up after its timeout, saying why.
  const int unused = ember::testing::free_port();
  REQUIRE_THROWS_WITH(dist::TCPStore("127.0.0.1", unused, false, milliseconds(100)),
                      "TCPStore: timed out after 100 ms connecting to 127.0.0.1:" + std::to_string(unused) +
                          " (last error: Connection refused)");
  REQUIRE_THROWS_AS(dist::TCPStore("127.0.0.1", 70000, false), ember::ValueError);
}

TEST_CASE("tcp store: connecting to an address that never answers ends at the timeout", "[distributed][store]") {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): routed nowhere. Where the machine has a default
  // route, SYNs vanish and a blocking connect() would wait for the kernel's ~2 minutes;
  // elsewhere the kernel refuses at once and the client retries. Either way: the timeout.
  const auto start = Clock::now();
  REQUIRE_THROWS_WITH(dist::TCPStore("192.0.2.1", 29500, false, milliseconds(500)),
                      Catch::StartsWith("TCPStore: timed out after 500 ms connecting to 192.0.2.1:29500"));
  const double waited = seconds_since(start);
  INFO("gave up after " << waited << " s");
  REQUIRE(waited < 0.5 + 3.0);
}

TEST_CASE("tcp store: a client that stops half way through a request does not stall the others",
          "[distributed][store]") {
  dist::TCPStore master("127.0.0.1", 0, true, std::chrono::seconds(5));
  master.set("big", std::vector<char>(65536, 'x'));
  // One client sends three bytes of a request and nothing more.
  int half_sent = raw_connection(master.port());
  const char partial[3] = {4, 0, 0};
  REQUIRE(::send(half_sent, partial, sizeof partial, 0) == 3);
  // Another asks for 64 KB 200 times and never reads a reply: the server's output
  // buffer for it grows, the server itself goes on.
  int never_reads = raw_connection(master.port());
  std::vector<char> request{2, 0, 0, 0, 1, 0, 0, 0, 3, 'b', 'i', 'g'};
  for (int i = 0; i < 200; ++i) ::send(never_reads, request.data(), request.size(), MSG_DONTWAIT | MSG_NOSIGNAL);

  dist::TCPStore client("127.0.0.1", master.port(), false, std::chrono::seconds(2));
  const auto start = Clock::now();
  client.set("still", std::string("served"));
  REQUIRE(client.get("big").size() == 65536);
  REQUIRE(client.add("n", 1) == 1);
  REQUIRE(seconds_since(start) < 2.0);
  ::close(half_sent);
  ::close(never_reads);
  // A request with an absurd item count is dropped (connection closed), not obeyed.
  int nonsense = raw_connection(master.port());
  const char huge_count[5] = {1, '\x7f', '\x7f', '\x7f', '\x7f'};
  REQUIRE(::send(nonsense, huge_count, sizeof huge_count, MSG_NOSIGNAL) == 5);
  char byte = 0;
  REQUIRE(::recv(nonsense, &byte, 1, 0) == 0);  // end of stream: the server closed it
  ::close(nonsense);
  REQUIRE(client.check({"still"}));
}

// The store's server in a process of its own, so that the test can stop it with SIGSTOP.
TEST_CASE("worker: store server", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
  dist::TCPStore server("127.0.0.1", std::atoi(std::getenv("STORE_PORT")), /*is_master=*/true, std::chrono::seconds(5));
  server.set("ready", std::string("yes"));
  std::this_thread::sleep_for(std::chrono::seconds(120));
}

TEST_CASE("tcp store: a stopped server makes every request time out instead of hanging", "[distributed][store]") {
  const int port = ember::testing::free_port();
  auto server = ember::testing::spawn_worker("worker: store server", {{"STORE_PORT", std::to_string(port)}});
  dist::TCPStore client("127.0.0.1", port, false, std::chrono::seconds(30));  // retries until it listens
  REQUIRE(client.get("ready") == std::vector<char>{'y', 'e', 's'});
  client.set("before", std::string("stop"));

  // The server process is alive, its sockets open, but it answers nothing any more.
  // (waitpid with WUNTRACED returns once it has really stopped: kill only sends the signal.)
  REQUIRE(::kill(server->pid, SIGSTOP) == 0);
  int status = 0;
  REQUIRE(::waitpid(server->pid, &status, WUNTRACED) == server->pid);
  REQUIRE(WIFSTOPPED(status));
  client.set_timeout(std::chrono::seconds(1));
  auto start = Clock::now();
  REQUIRE_THROWS_WITH(client.get("before"),
                      "TCPStore: wait([before]) timed out after 1000 ms: the store at 127.0.0.1:" +
                          std::to_string(port) + " did not answer (is the process serving it, rank 0, stopped or hung?)");
  double waited = seconds_since(start);
  INFO("get gave up after " << waited << " s");
  REQUIRE(waited < 1.0 + 3.0);
  // The connection is not trusted again (a late answer would be read as the next reply).
  REQUIRE_THROWS_WITH(client.set("after", std::string("x")), Catch::Contains("closed after an earlier error"));

  // A new client: the kernel still completes the handshake for the stopped listener, so
  // connecting succeeds; the first request is what times out.
  dist::TCPStore late("127.0.0.1", port, false, std::chrono::seconds(1));
  start = Clock::now();
  REQUIRE_THROWS_WITH(late.set("k", std::string("v")), Catch::StartsWith("TCPStore: set('k') timed out after 1000 ms"));
  waited = seconds_since(start);
  INFO("set gave up after " << waited << " s");
  REQUIRE(waited < 1.0 + 3.0);
  ::kill(server->pid, SIGCONT);
}

TEST_CASE("tcp store: a server that exits mid-wait ends the wait at once, saying so", "[distributed][store]") {
  const int port = ember::testing::free_port();
  auto server = ember::testing::spawn_worker("worker: store server", {{"STORE_PORT", std::to_string(port)}});
  dist::TCPStore client("127.0.0.1", port, false, std::chrono::seconds(30));
  REQUIRE(client.get("ready") == std::vector<char>{'y', 'e', 's'});
  std::thread killer([pid = server->pid] {
    std::this_thread::sleep_for(milliseconds(200));
    ::kill(pid, SIGKILL);
  });
  const auto start = Clock::now();
  REQUIRE_THROWS_WITH(client.wait({"never"}, std::chrono::seconds(20)),
                      "TCPStore: lost the connection to 127.0.0.1:" + std::to_string(port) +
                          " during wait([never]) (did rank 0 exit?)");
  killer.join();
  const double waited = seconds_since(start);
  INFO("gave up after " << waited << " s of a 20 s wait");
  REQUIRE(waited < 5.0);
}
