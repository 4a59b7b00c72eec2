// tests/apps/test_cli_timeouts.cpp — distributed limits of `ember train` and `ember-run`.
//
//   - `--timeout SECONDS` / EMBER_TIMEOUT (which `ember-run --timeout` sets for its workers)
//     bound the rendezvous and every collective; the default is 10 minutes;
//   - errors tell the time really spent next to the timeout;
//   - two jobs given one --master-port: the second job's ranks say that the port is taken
//     by another job, and the first job goes on undisturbed.
// A rank alone in a world of 2 is the simplest rendezvous that cannot complete: it waits
// for a peer that never comes, so it is the timeout, and nothing else, that ends it.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>

#include "launch_test_helpers.h"
#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;
using namespace ember::testing::launch;

namespace {

// `ember train` as rank 0 of a world of 2 whose rank 1 never comes.
std::string lonely_rank(const std::string& environment, const std::string& flags, int* exit_code, double* seconds) {
  const auto start = std::chrono::steady_clock::now();
  std::string output = run_shell("env WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                                     std::to_string(free_port()) + " " + environment + " " + bin("ember") +
                                     " train --device cpu --data toy --hidden 4 --epochs 1 --quiet " + flags,
                                 exit_code);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return output;
}

// N in "after N ms (timeout T ms" (-1 when absent).
long long reported_ms(const std::string& output, long long timeout_ms) {
  std::smatch match;
  std::regex pattern("after (\\d+) ms \\(timeout " + std::to_string(timeout_ms) + " ms");
  return std::regex_search(output, match, pattern) ? std::stoll(match[1].str()) : -1;
}

}  // namespace

TEST_CASE("ember train: EMBER_TIMEOUT and --timeout bound the rendezvous, and the error tells the time spent",
          "[cli][distributed][timeout]") {
  int code = -1;
  double seconds = 0;

  SECTION("EMBER_TIMEOUT") {
    std::string output = lonely_rank("EMBER_TIMEOUT=1", "", &code, &seconds);
    INFO(output);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains("ember: error: Gloo rendezvous failed on rank 0 of 2 after "));
    long long reported = reported_ms(output, 1000);
    CHECK(reported >= 900);
    CHECK(static_cast<double>(reported) <= seconds * 1000.0);
    CHECK(seconds < 30);  // not the default 10 minutes
  }

  SECTION("--timeout wins over EMBER_TIMEOUT") {
    std::string output = lonely_rank("EMBER_TIMEOUT=3000", "--timeout 1.5", &code, &seconds);
    INFO(output);
    CHECK(code == 1);
    CHECK(reported_ms(output, 1500) >= 1400);
    CHECK(seconds < 30);
  }

  SECTION("a bad EMBER_TIMEOUT or --timeout is a usage error") {
    std::string output = lonely_rank("EMBER_TIMEOUT=soon", "", &code, &seconds);
    INFO(output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains("ember: error: EMBER_TIMEOUT must be a number of seconds in (0, 31536000], "
                                       "got 'soon'"));
    output = lonely_rank("", "--timeout 0", &code, &seconds);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains("--timeout"));
  }
}

TEST_CASE("ember-run --timeout passes EMBER_TIMEOUT to its workers, and the job's id", "[apps][ember-run][timeout]") {
  int code = -1;
  std::string output =
      run_shell(bin("ember-run") + " --nproc-per-node 2 --timeout 2.5 -- /bin/sh -c 'echo T=$EMBER_TIMEOUT'", &code);
  INFO(output);
  REQUIRE(code == 0);
  CHECK(rank_lines(output, 0) == std::vector<std::string>{"T=2.5"});
  CHECK(rank_lines(output, 1) == std::vector<std::string>{"T=2.5"});

  // Every worker of a job gets the same TORCHELASTIC_RUN_ID: random, or --rdzv-id's.
  output = run_shell(bin("ember-run") + " --nproc-per-node 2 -- /bin/sh -c 'echo id=$TORCHELASTIC_RUN_ID'", &code);
  REQUIRE(code == 0);
  REQUIRE(rank_lines(output, 0).size() == 1);
  CHECK(std::regex_match(rank_lines(output, 0)[0], std::regex("id=[0-9a-f]{16}")));
  CHECK(rank_lines(output, 1) == rank_lines(output, 0));
  output = run_shell(bin("ember-run") + " --nproc-per-node 2 --rdzv-id job7 -- /bin/sh -c 'echo id=$TORCHELASTIC_RUN_ID'",
                     &code);
  CHECK(rank_lines(output, 1) == std::vector<std::string>{"id=job7"});

  output = run_shell(bin("ember-run") + " --nproc-per-node 2 --timeout 0 -- true", &code);
  CHECK(code == 2);
  CHECK(contains(output, "ember-run: error: --timeout: must be in (0, 31536000] seconds, got 0"));
  output = run_shell(bin("ember-run") + " --nproc-per-node 2 --timeout soon -- true", &code);
  CHECK(code == 2);
  CHECK(contains(output, "expected a number of seconds, got 'soon'"));
}

TEST_CASE("two jobs on one --master-port: the second says the port is taken, the first goes on",
          "[cli][distributed][timeout]") {
  ScratchDir scratch("port_clash");
  const std::string port = std::to_string(free_port());
  const std::string train = bin("ember") + " train --device cpu --data idx:" + fixtures_dir() + "/idx --hidden 4 --batch-size 1";
  const std::string a_out = scratch / "a.out", b_out = scratch / "b.out", c_out = scratch / "c.out";
  // Job A trains "for ever" on the port; once its rank 0 has printed its header (the
  // rendezvous is over), job B is started on the same port, then a lone rank 1 of a third
  // job; then A is stopped with SIGTERM.
  int code = -1;
  std::string script =
      bin("ember-run") + " --nproc-per-node 2 --master-port " + port + " -- " + train + " --epochs 100000000 >" +
      a_out + " 2>&1 & a=$!\n"
      "while kill -0 $a 2>/dev/null && ! grep -q 'Training a' " + a_out + "; do sleep 0.05; done\n" +
      bin("ember-run") + " --nproc-per-node 2 --master-port " + port + " -- " + train + " --epochs 1 --timeout 20 >" +
      b_out + " 2>&1; echo \"exit=$?\" >>" + b_out + "\n" +
      "env WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port +
      " TORCHELASTIC_RUN_ID=intruder EMBER_TIMEOUT=20 " + train + " --epochs 1 >" + c_out +
      " 2>&1; echo \"exit=$?\" >>" + c_out + "\n" +
      "kill -TERM $a; wait $a; echo \"exit=$?\" >>" + a_out + "\n";
  run_shell(script, &code);
  std::string a = read_file(a_out), b = read_file(b_out), c = read_file(c_out);
  INFO("job A:\n" << a.substr(a.size() > 3000 ? a.size() - 3000 : 0) << "\njob B:\n" << b << "\nrank 1 of C:\n" << c);
  // B's rank 0 cannot serve the store ("port P is in use (another job?)") and its rank 1 is
  // turned away by A's store ("port P is in use by another job"); whichever fails first
  // stops B, so either message may be the one printed.
  CHECK(contains(b, "exit=1"));
  CHECK(contains(b, "port " + port + " is in use"));
  // C's rank 1 reaches A's store and is turned away at once, not after its timeout.
  CHECK(contains(c, "exit=1"));
  CHECK(contains(c, "port " + port + " is in use by another job"));
  // A trained on and was stopped by the SIGTERM, as its workers say; no error of its own.
  CHECK(contains(a, "exit=143"));
  CHECK(contains(a, "ember: terminated by SIGTERM"));
  CHECK_FALSE(contains(a, "error:"));
}
