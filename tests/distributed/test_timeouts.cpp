// tests/distributed/test_timeouts.cpp — EMBER_TIMEOUT and the timeout arithmetic of init_process_group.
//
// The multi-process side (a rendezvous that gives up after EMBER_TIMEOUT, the elapsed time
// in the message) is tested end to end in tests/apps/test_cli_timeouts.cpp; here the
// parsing: what is accepted, what is refused and with which words.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <ember/ember.h>

namespace dist = ember::distributed;
using std::chrono::milliseconds;

namespace {
// Sets EMBER_TIMEOUT for one scope (unset: nullptr) and restores the absence after.
struct EmberTimeout {
  explicit EmberTimeout(const char* value) {
    if (value != nullptr) setenv("EMBER_TIMEOUT", value, 1);
    else unsetenv("EMBER_TIMEOUT");
  }
  ~EmberTimeout() { unsetenv("EMBER_TIMEOUT"); }
};
}  // namespace

TEST_CASE("EMBER_TIMEOUT sets the default timeout in seconds", "[distributed][timeout]") {
  {
    EmberTimeout unset(nullptr);
    CHECK(dist::timeout_from_environment() == dist::kDefaultTimeout);
    CHECK(dist::kDefaultTimeout == milliseconds(600000));
  }
  {
    EmberTimeout empty("");
    CHECK(dist::timeout_from_environment() == dist::kDefaultTimeout);
  }
  {
    EmberTimeout value("2.5");
    CHECK(dist::timeout_from_environment() == milliseconds(2500));
  }
  {
    EmberTimeout tiny("0.0001");  // rounded up: never a zero timeout
    CHECK(dist::timeout_from_environment() == milliseconds(1));
  }
  for (const char* bad : {"soon", "0", "-3", "5s", "1e300", "nan", "inf"}) {
    INFO(bad);
    EmberTimeout value(bad);
    CHECK_THROWS_AS(dist::timeout_from_environment(), ember::ValueError);
    CHECK_THROWS_WITH(dist::timeout_from_environment(),
                      std::string("EMBER_TIMEOUT must be a number of seconds in (0, 31536000], got '") + bad + "'");
  }
}

TEST_CASE("timeout_from_seconds bounds a timeout given in seconds", "[distributed][timeout]") {
  CHECK(dist::timeout_from_seconds(1.5, "--timeout") == milliseconds(1500));
  CHECK(dist::timeout_from_seconds(31536000, "--timeout") == dist::kMaxTimeout);
  CHECK_THROWS_WITH(dist::timeout_from_seconds(0, "--timeout"),
                    "--timeout must be a number of seconds in (0, 31536000], got 0");
  CHECK_THROWS_AS(dist::timeout_from_seconds(1e300, "--timeout"), ember::ValueError);
}

TEST_CASE("init_process_group refuses a timeout beyond a year", "[distributed][timeout]") {
  CHECK_THROWS_WITH(dist::init_process_group("gloo", 0, 1, dist::kMaxTimeout + milliseconds(1)),
                    Catch::Contains("init_process_group: timeout must be in (0, 31536000000] ms"));
  CHECK_FALSE(dist::is_initialized());
}
