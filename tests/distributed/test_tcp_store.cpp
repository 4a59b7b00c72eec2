// tests/distributed/test_tcp_store.cpp — the rendezvous store, in one process (server + clients).
#include <catch2/catch.hpp>

#include <thread>

#include <ember/distributed/tcp_store.h>
#include <ember/distributed/distributed_error.h>

#include "multiprocess.h"

namespace dist = ember::distributed;

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
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    master.set("late", std::string("here"));
  });
  auto late = client.get("late");
  late_writer.join();
  REQUIRE(std::string(late.begin(), late.end()) == "here");
}

TEST_CASE("tcp store: timeouts and errors name what was missing", "[distributed][store]") {
  dist::TCPStore master("127.0.0.1", 0, true, std::chrono::milliseconds(200));
  REQUIRE_THROWS_WITH(master.wait({"never", "nor-this"}, std::chrono::milliseconds(100)),
                      "TCPStore: wait timed out after 100 ms for keys [never, nor-this]");
  REQUIRE_THROWS_AS(master.get("never"), dist::DistributedError);
  REQUIRE_THROWS_WITH(dist::TCPStore("localhost", 0, true), "TCPStore: 'localhost' is not a numeric IPv4 address");
  // Binding the same port twice fails with the system's reason.
  REQUIRE_THROWS_WITH(dist::TCPStore("127.0.0.1", master.port(), true),
                      Catch::StartsWith("TCPStore: cannot bind 127.0.0.1:" + std::to_string(master.port())));
  // Nobody serves this port: the client gives up after its timeout.
  const int unused = ember::testing::free_port();
  REQUIRE_THROWS_WITH(dist::TCPStore("127.0.0.1", unused, false, std::chrono::milliseconds(100)),
                      "TCPStore: timed out after 100 ms connecting to 127.0.0.1:" + std::to_string(unused));
}
