// tests/apps/test_tutorial_09_ddp.cpp — tutorial §9.3: the DDP script, one and two processes.
//
// build/bin/tutorial_09_ddp must print what the tutorial's DDP script prints under PyTorch
// on CPUs with Gloo (tests/reference/tutorial_09_ddp.py made the transcripts). With two
// ranks the lines of the ranks interleave differently from run to run, so each rank's lines
// (ember-run's "[rank R] " tag) are compared in their own order. The two-rank losses after
// the first step only match if DDP really averaged the gradients of both ranks.
// Without a GPU only: on a GPU machine the program trains on NCCL/CUDA and prints
// "CUDA available: True", so the transcript cannot match; the test then skips (exit 4).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include <ember/ember.h>

#include "launch_test_helpers.h"

using namespace ember::testing::launch;

namespace {
std::string expected(const std::string& name) {
  return ember::testing::read_file(std::string(EMBER_SOURCE_DIR) + "/tests/apps/expected/" + name);
}
}  // namespace

TEST_CASE("tutorial 09 ddp: one process prints PyTorch's Gloo transcript", "[apps][tutorial][distributed]") {
  if (ember::cuda::is_available()) std::exit(4);
  int exit_code = -1;
  // On its own the script would meet itself at port 12345; a free port keeps parallel tests apart.
  std::string output =
      run_shell("MASTER_PORT=" + std::to_string(free_port()) + " " + bin("tutorial_09_ddp"), &exit_code);
  REQUIRE(exit_code == 0);
  CHECK(output == expected("tutorial_09_ddp_world1.txt"));
}

TEST_CASE("tutorial 09 ddp: two ranks under ember-run print PyTorch's Gloo transcript", "[apps][tutorial][distributed]") {
  if (ember::cuda::is_available()) std::exit(4);
  int exit_code = -1;
  std::string output = run_shell(bin("ember-run") + " --nproc-per-node 2 -- " + bin("tutorial_09_ddp"), &exit_code);
  REQUIRE(exit_code == 0);
  const std::string reference = expected("tutorial_09_ddp_world2.txt");
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    CHECK(rank_lines(output, rank) == rank_lines(reference, rank));
  }
  // Nothing but tagged lines: no error message from the launcher or a rank.
  CHECK(split_lines(output).size() == split_lines(reference).size());
}
