// tests/apps/test_ember_run.cpp — the `ember-run` launcher (torchrun's counterpart, §9.3).
//
// Black-box: each test runs build/bin/ember-run with /bin/sh -c scripts as workers and looks
// at what they printed, what files they left and the launcher's exit code and messages.
// Workers mark their progress with files in a scratch directory, so no test depends on
// timing: "the others were stopped" means their "survived" marker never appeared.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "launch_test_helpers.h"
#include "test_cli_helpers.h"

using ember::testing::cli::ScratchDir;
using namespace ember::testing::launch;

namespace {
std::string ember_run(const std::string& arguments, int* exit_code) {
  return run_shell(bin("ember-run") + " " + arguments, exit_code);
}
}  // namespace

TEST_CASE("ember-run: every worker gets torchrun's environment", "[apps][ember-run]") {
  int exit_code = -1;
  std::string output = ember_run(
      "--nproc-per-node 3 -- /bin/sh -c "
      "'echo \"RANK=$RANK WORLD_SIZE=$WORLD_SIZE LOCAL_RANK=$LOCAL_RANK LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE "
      "GROUP_RANK=$GROUP_RANK MASTER_ADDR=$MASTER_ADDR\"; echo \"PORT=$MASTER_PORT\"'",
      &exit_code);
  REQUIRE(exit_code == 0);
  std::vector<std::string> ports;
  for (int rank = 0; rank < 3; ++rank) {
    auto lines = rank_lines(output, rank);
    REQUIRE(lines.size() == 2);
    std::string r = std::to_string(rank);
    CHECK(lines[0] == "RANK=" + r + " WORLD_SIZE=3 LOCAL_RANK=" + r +
                          " LOCAL_WORLD_SIZE=3 GROUP_RANK=0 MASTER_ADDR=127.0.0.1");
    ports.push_back(lines[1]);
  }
  // One rendezvous port for the whole group, picked by the launcher (never empty).
  CHECK(ports[0] != "PORT=");
  CHECK(ports[0] == ports[1]);
  CHECK(ports[1] == ports[2]);
}

TEST_CASE("ember-run: ranks of a second node start after the first node's", "[apps][ember-run]") {
  // Node 1 of 2 with 2 workers each: ranks 2 and 3. No rendezvous happens (the workers only
  // print), so the absent node 0 does not matter.
  int exit_code = -1;
  std::string output = ember_run(
      "--nproc-per-node 2 --nnodes 2 --node-rank 1 --master-addr 10.1.2.3 --master-port 23456 -- /bin/sh -c "
      "'echo $RANK/$WORLD_SIZE local $LOCAL_RANK node $GROUP_RANK at $MASTER_ADDR:$MASTER_PORT'",
      &exit_code);
  REQUIRE(exit_code == 0);
  CHECK(rank_lines(output, 2) == std::vector<std::string>{"2/4 local 0 node 1 at 10.1.2.3:23456"});
  CHECK(rank_lines(output, 3) == std::vector<std::string>{"3/4 local 1 node 1 at 10.1.2.3:23456"});
  CHECK(rank_lines(output, 0).empty());
}

TEST_CASE("ember-run: each output line carries its rank, stdout and stderr alike", "[apps][ember-run]") {
  int exit_code = -1;
  // Lines written in pieces and a last line without a newline still come out whole.
  std::string output = ember_run(
      "--nproc-per-node 2 -- /bin/sh -c "
      "'printf \"first \"; printf \"half\\n\"; echo to-stderr >&2; printf \"no newline at the end\"'",
      &exit_code);
  REQUIRE(exit_code == 0);
  for (int rank = 0; rank < 2; ++rank) {
    auto lines = rank_lines(output, rank);
    std::sort(lines.begin(), lines.end());  // stdout and stderr are separate pipes
    CHECK(lines == std::vector<std::string>{"first half", "no newline at the end", "to-stderr"});
  }
  for (const std::string& line : split_lines(output)) CHECK((line.rfind("[rank ", 0) == 0));
}

TEST_CASE("ember-run: a failing rank is named with its exit code and the others are stopped", "[apps][ember-run]") {
  ScratchDir scratch("ember_run_fail");
  int exit_code = -1;
  std::string output = ember_run(
      "--nproc-per-node 3 -- /bin/sh -c "
      "'if [ $RANK = 1 ]; then while [ ! -e " + scratch / "ready.0" + " ] || [ ! -e " + scratch / "ready.2" +
          " ]; do sleep 0.05; done; exit 3; fi; "
          "touch " + scratch.str() + "/ready.$RANK; sleep 60; touch " + scratch.str() + "/survived.$RANK'",
      &exit_code);
  CHECK(exit_code == 1);
  CHECK(contains(output, "rank 1 (local rank 1, pid "));
  CHECK(contains(output, ") failed with exit code 3; stopping the other workers"));
  CHECK(contains(output, "ember-run: error: worker group failed: rank 1 (local rank 1) exited with exit code 3"));
  CHECK_FALSE(std::filesystem::exists(scratch / "survived.0"));
  CHECK_FALSE(std::filesystem::exists(scratch / "survived.2"));
}

TEST_CASE("ember-run: a rank killed by a signal is reported with the signal's name", "[apps][ember-run]") {
  int exit_code = -1;
  std::string output = ember_run("--nproc-per-node 1 -- /bin/sh -c 'kill -SEGV $$'", &exit_code);
  CHECK(exit_code == 1);
  CHECK(contains(output, "worker group failed: rank 0 (local rank 0) exited with signal 11 (SIGSEGV)"));
}

TEST_CASE("ember-run: a worker that ignores SIGTERM is killed after the grace period", "[apps][ember-run]") {
  ScratchDir scratch("ember_run_sigkill");
  int exit_code = -1;
  std::string output = ember_run(
      "--nproc-per-node 2 --grace-period 0.5 -- /bin/sh -c "
      "'if [ $RANK = 0 ]; then while [ ! -e " + scratch / "ready" + " ]; do sleep 0.05; done; exit 7; fi; "
          "trap \"\" TERM; touch " + scratch / "ready" + "; sleep 60; touch " + scratch / "survived" + "'",
      &exit_code);
  CHECK(exit_code == 1);
  CHECK(contains(output, "rank 0 (local rank 0) exited with exit code 7"));
  CHECK_FALSE(std::filesystem::exists(scratch / "survived"));
}

TEST_CASE("ember-run: --max-restarts K starts a failing group K more times", "[apps][ember-run]") {
  ScratchDir scratch("ember_run_restarts");
  int exit_code = -1;
  // Every start appends one line per rank; rank 0 always fails, once rank 1 has written.
  std::string output = ember_run(
      "--nproc-per-node 2 --max-restarts 2 -- /bin/sh -c "
      "'echo \"$RANK $TORCHELASTIC_RESTART_COUNT $TORCHELASTIC_MAX_RESTARTS\" >> " + scratch / "starts" +
          "; touch " + scratch.str() + "/written.$TORCHELASTIC_RESTART_COUNT.$RANK; if [ $RANK = 0 ]; then "
          "while [ ! -e " + scratch.str() + "/written.$TORCHELASTIC_RESTART_COUNT.1 ]; do sleep 0.05; done; exit 9; fi'",
      &exit_code);
  CHECK(exit_code == 1);
  auto starts = split_lines(ember::testing::read_file(scratch / "starts"));
  std::sort(starts.begin(), starts.end());
  CHECK(starts == std::vector<std::string>{"0 0 2", "0 1 2", "0 2 2", "1 0 2", "1 1 2", "1 2 2"});
  CHECK(contains(output, "restarting the worker group (restart 1 of 2)"));
  CHECK(contains(output, "restarting the worker group (restart 2 of 2)"));
  CHECK(contains(output, "worker group failed: rank 0 (local rank 0) exited with exit code 9 after 2 restart(s)"));
}

TEST_CASE("ember-run: --max-restarts with several nodes says that restarts stay on this node", "[apps][ember-run]") {
  int exit_code = -1;
  std::string output = ember_run(
      "--nproc-per-node 1 --nnodes 2 --node-rank 1 --master-addr 127.0.0.1 --master-port 23456 --max-restarts 2 -- "
      "/bin/sh -c 'echo $RANK'",
      &exit_code);
  CHECK(exit_code == 0);
  CHECK(contains(output, "ember-run: note: with --nnodes > 1, --max-restarts restarts only this node's workers"));
  CHECK(rank_lines(output, 1) == std::vector<std::string>{"1"});
  // One node, or no restarts: no note.
  output = ember_run("--nproc-per-node 1 --max-restarts 2 -- true", &exit_code);
  CHECK_FALSE(contains(output, "note:"));
}

TEST_CASE("ember-run: a group that succeeds after a restart makes the launcher succeed", "[apps][ember-run]") {
  ScratchDir scratch("ember_run_recover");
  int exit_code = -1;
  // The first start fails, the second succeeds: exit code 0 and one restart message.
  std::string output = ember_run(
      "--nproc-per-node 2 --max-restarts 3 -- /bin/sh -c "
      "'if [ $TORCHELASTIC_RESTART_COUNT = 0 ] && [ $RANK = 1 ]; then exit 4; fi; echo done'",
      &exit_code);
  CHECK(exit_code == 0);
  CHECK(contains(output, "restarting the worker group (restart 1 of 3)"));
  CHECK_FALSE(contains(output, "restart 2 of 3"));
  REQUIRE_FALSE(rank_lines(output, 1).empty());
  CHECK(rank_lines(output, 1).back() == "done");
}

TEST_CASE("ember-run: SIGTERM to the launcher is forwarded to the workers", "[apps][ember-run]") {
  ScratchDir scratch("ember_run_sigterm");
  int exit_code = -1;
  std::string output = run_shell(
      bin("ember-run") + " --nproc-per-node 2 -- /bin/sh -c 'touch " + scratch.str() +
          "/ready.$RANK; sleep 60; touch " + scratch.str() + "/survived.$RANK' & launcher=$!; "
          "while [ ! -e " + scratch / "ready.0" + " ] || [ ! -e " + scratch / "ready.1" + " ]; do sleep 0.05; done; "
          "kill -TERM $launcher; wait $launcher; echo launcher-exit=$?",
      &exit_code);
  CHECK(contains(output, "received SIGTERM, forwarding it to the workers"));
  CHECK(contains(output, "launcher-exit=143"));
  CHECK_FALSE(std::filesystem::exists(scratch / "survived.0"));
  CHECK_FALSE(std::filesystem::exists(scratch / "survived.1"));
}

TEST_CASE("ember-run: bad arguments give a clear error and exit code 2", "[apps][ember-run]") {
  int exit_code = -1;
  std::string output = ember_run("--nproc-per-node 0 -- true", &exit_code);
  CHECK(exit_code == 2);
  CHECK(contains(output, "ember-run: error: --nproc-per-node: Value 0 not in range 1 to 1024"));

  output = ember_run("--nproc-per-node 2", &exit_code);
  CHECK(exit_code == 2);
  CHECK(contains(output, "ember-run: error: no program to run"));

  // Several machines cannot meet at this machine's loopback address: the default is refused.
  output = ember_run("--nproc-per-node 2 --nnodes 2 --master-port 1234 -- true", &exit_code);
  CHECK(exit_code == 2);
  CHECK(contains(output, "ember-run: error: --master-addr is required with --nnodes > 1: the default 127.0.0.1 "
                         "reaches only this machine"));

  output = ember_run("--nproc-per-node 2 --nnodes 2 --master-addr node0.example -- true", &exit_code);
  CHECK(exit_code == 2);
  CHECK(contains(output, "--master-port is required with --nnodes > 1"));

  output = ember_run("--nnodes 2 --node-rank 2 --master-port 1234 -- true", &exit_code);
  CHECK(exit_code == 2);
  CHECK(contains(output, "--node-rank 2 is out of range: with --nnodes 2 it must be in [0, 1]"));

  output = ember_run("--nproc-per-node 2 -- /no/such/program", &exit_code);
  CHECK(exit_code == 2);
  CHECK(contains(output, "ember-run: error: cannot run '/no/such/program': not an executable file"));

  output = ember_run("--bogus 1 -- true", &exit_code);
  CHECK(exit_code == 2);
  CHECK(contains(output, "ember-run: error:"));
  CHECK(contains(output, "--bogus"));
}

TEST_CASE("ember-run: without -- the first non-option word starts the command", "[apps][ember-run]") {
  int exit_code = -1;
  // torchrun's spelling with '=' and underscores works as well.
  std::string output = ember_run("--nproc_per_node=2 /bin/echo --flag-of-the-worker", &exit_code);
  REQUIRE(exit_code == 0);
  CHECK(rank_lines(output, 0) == std::vector<std::string>{"--flag-of-the-worker"});
  CHECK(rank_lines(output, 1) == std::vector<std::string>{"--flag-of-the-worker"});
}
