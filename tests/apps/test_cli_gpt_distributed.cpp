// tests/apps/test_cli_gpt_distributed.cpp — `ember-run --nproc-per-node 2 -- ember train
// --model gpt` (issue 21): nanoGPT's data parallelism, against PyTorch and against itself.
//
// Rank r seeds --seed + r and draws its own batches; DDP starts every rank from rank 0's
// weights and averages the gradients; the logged loss is the mean over ranks; rank 0
// evaluates with its own generator and writes the log and the checkpoint, which keeps every
// rank's generator. tests/reference/gen_cli_gpt_ddp.py runs that loop in PyTorch with two
// Gloo processes (cli_gpt_ddp.json); here ember-run runs it with the same flags on the
// committed word list, and the log must agree step for step (relative error below 1e-4: the
// averaged gradients round differently). A run stopped and resumed under ember-run must
// equal the uninterrupted one bit for bit, which needs every rank's generator back.
// All of it on the CPU (Gloo): `--device cpu` on every command.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <ember/nn/serialize.h>

#include "gpt_test_helpers.h"
#include "launch_test_helpers.h"
#include "test_cli_helpers.h"
#include "test_support.h"

using namespace ember::testing::cli;
using namespace ember::testing::launch;

namespace {

// `ember-run --nproc-per-node RANKS -- ember ARGUMENTS`: its output, and the exit code in *code.
std::string run_ranks(int ranks, const std::string& arguments, int* code) {
  return run_shell(bin("ember-run") + " --nproc-per-node " + std::to_string(ranks) + " -- " + bin("ember") + " " +
                       arguments,
                   code);
}

std::string run_ranks_ok(int ranks, const std::string& arguments) {
  int code = -1;
  std::string output = run_ranks(ranks, arguments, &code);
  INFO("ember-run ... ember " << arguments << "\n" << output);
  REQUIRE(code == 0);
  return output;
}

}  // namespace

TEST_CASE("ember-run ember train --model gpt: 2 ranks log PyTorch DDP's mean losses, lrs and evaluations",
          "[cli][gpt][distributed]") {
  const auto reference = ember::testing::load_reference("cli_gpt_ddp.json");
  REQUIRE(reference["world_size"] == 2);
  for (const auto& c : reference["cases"]) {
    SECTION(c["name"].get<std::string>()) {
      ScratchDir scratch("gpt_ddp_parity");
      const std::string log = scratch / "log.jsonl", checkpoint = scratch / "gpt.st";
      std::string flags;
      for (const auto& flag : c["flags"]) {  // (not " " + flag: GCC 12's -Wrestrict false positive)
        flags += ' ';
        flags += flag.get<std::string>();
      }
      const std::string output = run_ranks_ok(2, "train --device cpu --data text:" + sample_text() + flags +
                                                     " --log-every 1 --log " + log + " --save " + checkpoint);
      CHECK_THAT(output, Catch::Contains("distributed: 2 ranks (gloo)"));
      require_log_matches(log, c);  // one log, rank 0's
      REQUIRE(events_of(log, "summary").size() == 1);
      // The checkpoint keeps both ranks' generators, and they differ (each drew its own batches).
      ember::Metadata metadata;
      ember::load(checkpoint, &metadata);
      REQUIRE(metadata.at("world_size") == "2");
      REQUIRE(metadata.at("generator.rank1").size() == metadata.at("generator").size());
      REQUIRE(metadata.at("generator.rank1") != metadata.at("generator"));
    }
  }
}

TEST_CASE("ember-run ember train --model gpt --resume continues a 2-rank run exactly; another rank count is refused",
          "[cli][gpt][distributed][resume]") {
  ScratchDir scratch("gpt_ddp_resume");
  const std::string whole = scratch / "whole.jsonl", part = scratch / "part.jsonl", checkpoint = scratch / "gpt.st";
  const std::string flags = "train --model gpt --device cpu --data text:" + sample_text() +
                            " --block-size 8 --n-layer 1 --n-head 2 --n-embd 8 --batch-size 4 --lr 0.003"
                            " --eval-every 3 --eval-batches 2 --log-every 1 --quiet";
  run_ranks_ok(2, flags + " --max-steps 9 --log " + whole);
  run_ranks_ok(2, flags + " --max-steps 6 --save " + checkpoint + " --log " + part);
  run_ranks_ok(2, flags + " --max-steps 9 --resume " + checkpoint + " --log " + part);
  require_resumed_log_equals(part, whole, 9, 3);

  // One process cannot continue two ranks' run exactly: refused (exit 1) unless
  // --allow-config-change, which continues with rank 0's generator.
  int code = -1;
  std::string output = run_ember(flags + " --max-steps 9 --resume " + checkpoint, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ranks (ember-run): checkpoint 2, now 1"));
  output = run_ember(flags + " --max-steps 9 --allow-config-change --resume " + checkpoint, &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("continuing " + checkpoint + " with other options"));
}
