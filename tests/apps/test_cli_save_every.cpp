// tests/apps/test_cli_save_every.cpp — `ember train --save-every STEPS`: mid-epoch checkpoints
// and their exact --resume (apps/cli/loader_position.h).
//
// The promise: a run stopped inside an epoch (2.4 epochs, say) and resumed from its last
// mid-epoch checkpoint ends with the uninterrupted run's parameters and optimizer state,
// byte for byte, and logs the same step losses and the same epoch train_loss/train_acc —
// alone, with --workers, with --grad-accum and a per-step lr schedule, and on 2 ranks
// under ember-run. The stop comes at a known step
// through the test seam EMBER_TEST_INTERRUPT_AT_STEP (interrupt.h: a SIGINT raised after
// that step, handled as a Ctrl-C), and once through SIGKILL at a random moment while a
// checkpoint is written every step (what is on disk is always a whole checkpoint).
// A mid-epoch checkpoint refuses options that change the epoch's batches, even with
// --allow-config-change.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <ember/nn/serialize.h>

#include "launch_test_helpers.h"
#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;
using ember::testing::launch::run_shell;

namespace {

void require_identical(const std::string& path_a, const std::string& path_b) {
  ember::Metadata meta_a, meta_b;
  ember::nn::StateDict a = ember::load(path_a, &meta_a);
  ember::nn::StateDict b = ember::load(path_b, &meta_b);
  REQUIRE(a.size() == b.size());
  for (const auto& [name, tensor] : a) {
    INFO(name);
    const ember::Tensor* other = b.find(name);
    REQUIRE(other != nullptr);
    CHECK(tensor.equal(*other));  // bit for bit
  }
  CHECK(meta_a.at("generator") == meta_b.at("generator"));
  CHECK(meta_a.at("step") == meta_b.at("step"));
  CHECK(meta_a.at("epoch") == meta_b.at("epoch"));
}

// The "position" of a mid-epoch checkpoint (null when it was written at an epoch's end).
nlohmann::json position_of(const std::string& checkpoint) {
  ember::Metadata metadata;
  ember::load(checkpoint, &metadata);
  auto found = metadata.find("position");
  return found == metadata.end() ? nlohmann::json(nullptr) : nlohmann::json::parse(found->second);
}

// The epoch lines' train_loss and train_acc, which must match exactly.
std::vector<std::pair<double, double>> epoch_metrics(const std::string& log) {
  std::vector<std::pair<double, double>> metrics;
  for (const auto& entry : log_entries(log)) {
    if (entry.at("event") == "epoch") {
      metrics.emplace_back(entry.at("train_loss").get<double>(), entry.at("train_acc").get<double>());
    }
  }
  return metrics;
}

struct Case {
  std::string flags;
  int save_every;
  int stop_at_step;     // EMBER_TEST_INTERRUPT_AT_STEP
  int epochs_done;      // where the last checkpoint before the stop stands
  int batches_done;
};

}  // namespace

TEST_CASE("ember train --save-every: stopped mid-epoch and resumed equals the uninterrupted run, byte for byte",
          "[cli][resume][save-every]") {
  const std::string idx = "--data idx:" + fixtures_dir() + "/idx";
  // The IDX fixture: 24 training examples (18 with --val-split 0.25).
  const Case cases[] = {
      // 5 batches per epoch; saves at steps 4, 8, 12; stopped at 13: epoch 3, after batch 2.
      {idx + " --hidden 8 --batch-size 5 --lr 0.1 --momentum 0.9 --dropout 0.2 --seed 4", 4, 13, 2, 2},
      // The same with two worker threads prefetching batches.
      {idx + " --hidden 8 --batch-size 5 --lr 0.1 --momentum 0.9 --dropout 0.2 --seed 4 --workers 2", 4, 13, 2, 2},
      // Adam, a validation split and --drop-last: 3 batches per epoch; saves at 2, 4, 8
      // (6 is an epoch's end); stopped at 9: epoch 3 after batch 2.
      {idx + " --hidden 12,6 --batch-size 5 --lr 0.01 --optimizer adam --dropout 0.1 --val-split 0.25 --drop-last "
             "--workers 3 --seed 6",
       2, 9, 2, 2},
      // --grad-accum 2 with a per-step cosine schedule after warm-up and clipping: 12 micro-batches,
      // 6 optimizer steps per epoch; saves after steps 4, 8, 16 (12 ends epoch 2); stopped at
      // 17: the checkpoint stands after micro-batch 8 of epoch 3, with the scheduler's state.
      {idx + " --hidden 8 --batch-size 2 --grad-accum 2 --lr 0.2 --momentum 0.9 --lr-schedule cosine "
             "--warmup-steps 3 --clip-grad-norm 1 --dropout 0.1 --seed 8",
       4, 17, 2, 8},
      // A warm-up of 7 steps chained with a per-epoch StepLR (5 steps per epoch): saves at 3,
      // 6, 9; stopped at 8, inside the warm-up after the schedule's first step — the lr comes
      // back from the checkpoint (either scheduler may have set it last).
      {idx + " --hidden 8 --batch-size 5 --lr 0.3 --lr-schedule step --lr-step-size 1 --lr-gamma 0.5 "
             "--warmup-steps 7 --seed 9",
       3, 8, 1, 1},
      // The toy data (5 examples, batch 2: 3 batches, the last short), in the first epoch.
      {"--data toy --hidden 16,8 --batch-size 2 --lr 0.1 --momentum 0.9 --dropout 0.2 --seed 5", 1, 2, 0, 1},
  };
  ScratchDir scratch("save_every");
  for (const Case& c : cases) {
    INFO(c.flags);
    const std::string common = "train " + c.flags + " --epochs 4 --quiet --log-every 1";
    int code = -1;
    run_ember(common + " --save-every " + std::to_string(c.save_every) + " --save " + scratch / "straight.st" +
                  " --log " + scratch / "straight.jsonl",
              &code);
    REQUIRE(code == 0);
    // The same run, stopped at a known step by the test seam.
    std::string output = run_shell("EMBER_TEST_INTERRUPT_AT_STEP=" + std::to_string(c.stop_at_step) + " " +
                           launch::bin("ember") + " " + common + " --save-every " + std::to_string(c.save_every) +
                           " --save " + scratch / "half.st" + " --log " + scratch / "resumed.jsonl" + " 2>&1",
                       &code);
    INFO(output);
    REQUIRE(code == 130);
    nlohmann::json position = position_of(scratch / "half.st");
    REQUIRE(position.is_object());
    CHECK(position.at("batches_done") == c.batches_done);
    ember::Metadata metadata;
    ember::load(scratch / "half.st", &metadata);
    CHECK(metadata.at("epoch") == std::to_string(c.epochs_done));
    CHECK_THAT(output, Catch::Contains("the checkpoint of epoch " + std::to_string(c.epochs_done + 1) + " at batch " +
                                       std::to_string(c.batches_done) + " of "));

    output = run_ember(common + " --resume " + scratch / "half.st" + " --save " + scratch / "resumed.st" + " --log " +
                           scratch / "resumed.jsonl",
                       &code);
    INFO(output);
    REQUIRE(code == 0);
    require_identical(scratch / "straight.st", scratch / "resumed.st");
    CHECK(logged_step_losses(scratch / "resumed.jsonl") == logged_step_losses(scratch / "straight.jsonl"));
    CHECK(epoch_metrics(scratch / "resumed.jsonl") == epoch_metrics(scratch / "straight.jsonl"));
  }
}

TEST_CASE("ember train --save-every: the header says where a mid-epoch checkpoint resumes", "[cli][resume][save-every]") {
  ScratchDir scratch("save_every_header");
  const std::string common = "train --data idx:" + fixtures_dir() + "/idx --hidden 8 --batch-size 5 --epochs 3";
  int code = -1;
  run_shell("EMBER_TEST_INTERRUPT_AT_STEP=8 " + launch::bin("ember") + " " + common + " --quiet --save-every 3 --save " +
                scratch / "ck.st" + " 2>&1",
            &code);
  REQUIRE(code == 130);
  std::string output = run_ember(common + " --resume " + scratch / "ck.st", &code);
  INFO(output);
  REQUIRE(code == 0);
  // Saved at step 6: epoch 2 (5 batches each), after its first batch.
  CHECK_THAT(output, Catch::Contains(", resuming in epoch 2 after batch 1 of 5\n"));
  CHECK_THAT(output, Catch::Contains("Epoch: 002/003 | Batch 001/005"));
  CHECK_THAT(output, !Catch::Contains("Epoch: 001/003"));
  // ember eval reads a mid-epoch checkpoint and says where it stands.
  output = run_ember("eval --checkpoint " + scratch / "ck.st", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("(16-8-3 MLP, epoch 2 at batch 1 of 5, trained on idx:"));
}

TEST_CASE("ember train --save-every: a checkpoint killed with SIGKILL mid-save is whole and resumes exactly",
          "[cli][resume][save-every][interrupt]") {
  // A checkpoint every step (each replaced atomically: temporary file, fsync, rename), and
  // SIGKILL at a random moment: the file on disk is one whole checkpoint of some step, and
  // resuming it gives the uninterrupted run's parameters.
  ScratchDir scratch("save_every_kill");
  const std::string flags = "train --data toy --hidden 8 --batch-size 2 --lr 0.2 --momentum 0.9 --dropout 0.1 --seed 12 "
                            "--quiet";
  const std::string checkpoint = scratch / "ck.st";
  InterruptedRun run = run_ember_signalled(scratch, flags + " --epochs 100000000 --save-every 1 --save " + checkpoint,
                                           "test -f '" + checkpoint + "' && sleep 0.3", "KILL");
  REQUIRE(run.exit_code == 137);
  ember::Metadata metadata;
  REQUIRE_NOTHROW(ember::load(checkpoint, &metadata));
  const long long epochs = std::stoll(metadata.at("epoch")) + 2;
  int code = -1;
  std::string output = run_ember(flags + " --epochs " + std::to_string(epochs) + " --resume " + checkpoint + " --save " +
                                     scratch / "resumed.st",
                                 &code);
  INFO(output);
  REQUIRE(code == 0);
  run_ember(flags + " --epochs " + std::to_string(epochs) + " --save " + scratch / "straight.st", &code);
  REQUIRE(code == 0);
  require_identical(scratch / "straight.st", scratch / "resumed.st");
}

TEST_CASE("ember train --save-every: a mid-epoch checkpoint refuses options that change the epoch's batches",
          "[cli][resume][save-every]") {
  ScratchDir scratch("save_every_refuse");
  const std::string idx = "--data idx:" + fixtures_dir() + "/idx";
  int code = -1;
  run_shell("EMBER_TEST_INTERRUPT_AT_STEP=8 " + launch::bin("ember") + " train " + idx +
                " --hidden 8 --batch-size 5 --epochs 3 --quiet --save-every 3 --save " + scratch / "ck.st" + " 2>&1",
            &code);
  REQUIRE(code == 130);
  const std::string resume = " --resume " + scratch / "ck.st";
  // Other batches, even with --allow-config-change.
  std::string output =
      run_ember("train " + idx + " --hidden 8 --batch-size 4 --epochs 3 --quiet --allow-config-change" + resume, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: --resume " + scratch / "ck.st" +
                                     ": the checkpoint stands inside epoch 2 (after batch 1 of 5), and these options "
                                     "decide that epoch's batches, so they cannot change even with "
                                     "--allow-config-change:\n  --batch-size: checkpoint 5, now 4\n"));
  output = run_ember("train " + idx + " --hidden 8 --batch-size 5 --seed 3 --drop-last --epochs 3 --quiet "
                                      "--allow-config-change" + resume,
                     &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("  --drop-last: checkpoint off, now on\n  --seed: checkpoint 0, now 3\n"));
  // Another learning rate does not change the batches: allowed with --allow-config-change.
  output = run_ember("train " + idx + " --hidden 8 --batch-size 5 --lr 0.05 --epochs 3 --quiet --allow-config-change" +
                         resume,
                     &code);
  CHECK(code == 0);
  // --epochs must leave the checkpoint's epoch to finish.
  output = run_ember("train " + idx + " --hidden 8 --batch-size 5 --epochs 1 --quiet" + resume, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("the checkpoint stands inside epoch 2 (after batch 1 of 5): --epochs 1 ends "
                                     "before that epoch"));
}

TEST_CASE("ember train --save-every without --save is a usage error", "[cli][save-every]") {
  int code = -1;
  std::string output = run_ember("train --data toy --epochs 1 --save-every 10", &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("--save-every: needs --save PATH (the checkpoint it writes)"));
  output = run_ember("train --data toy --epochs 1 --save-every 0 --save x.st", &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("--save-every: must be at least 1, got 0"));
}

TEST_CASE("ember train on 2 ranks: --save-every, stopped mid-epoch and resumed, equals the straight job",
          "[cli][distributed][save-every]") {
  // 24 examples, 2 ranks of batch 3: 4 steps per epoch. Saves at 3, 6 (epoch 2 after
  // batch 2), 9 (epoch 3 after batch 1); every rank stops at step 10.
  ScratchDir scratch("save_every_distributed");
  const std::string job = launch::bin("ember-run") + " --nproc-per-node 2 -- " + launch::bin("ember") +
                          " train --device cpu --data idx:" + fixtures_dir() +
                          "/idx --hidden 8 --batch-size 3 --lr 0.1 --momentum 0.9 --dropout 0.1 --seed 4 --epochs 4 "
                          "--quiet --log-every 1 --workers 1";
  int code = -1;
  std::string output =
      run_shell(job + " --save " + scratch / "straight.st" + " --log " + scratch / "straight.jsonl" + " 2>&1", &code);
  INFO(output);
  REQUIRE(code == 0);
  output = run_shell("EMBER_TEST_INTERRUPT_AT_STEP=10 " + job + " --save-every 3 --save " + scratch / "half.st" +
                         " --log " + scratch / "resumed.jsonl" + " 2>&1",
                     &code);
  INFO(output);
  CHECK(code != 0);
  nlohmann::json position = position_of(scratch / "half.st");
  REQUIRE(position.is_object());
  CHECK(position.at("batches_done") == 1);
  CHECK(position.at("seen").size() == 2);  // each rank's running totals
  output = run_shell(job + " --resume " + scratch / "half.st" + " --save " + scratch / "resumed.st" + " --log " +
                         scratch / "resumed.jsonl" + " 2>&1",
                     &code);
  INFO(output);
  REQUIRE(code == 0);
  require_identical(scratch / "straight.st", scratch / "resumed.st");
  CHECK(logged_step_losses(scratch / "resumed.jsonl") == logged_step_losses(scratch / "straight.jsonl"));
  CHECK(epoch_metrics(scratch / "resumed.jsonl") == epoch_metrics(scratch / "straight.jsonl"));
}

TEST_CASE("ember train --resume: a damaged mid-epoch position is an error naming the file", "[cli][resume][save-every]") {
  ScratchDir scratch("save_every_damaged");
  const std::string idx = "--data idx:" + fixtures_dir() + "/idx";
  const std::string train = "train " + idx + " --hidden 8 --batch-size 5 --epochs 3 --quiet";
  int code = -1;
  run_shell("EMBER_TEST_INTERRUPT_AT_STEP=8 " + launch::bin("ember") + " " + train + " --save-every 3 --save " +
                scratch / "ck.st" + " 2>&1",
            &code);
  REQUIRE(code == 130);
  ember::Metadata metadata;
  ember::nn::StateDict tensors = ember::load(scratch / "ck.st", &metadata);
  const nlohmann::json position = nlohmann::json::parse(metadata.at("position"));
  auto with_position = [&](const nlohmann::json& changed) {
    ember::Metadata damaged = metadata;
    damaged["position"] = changed.dump();
    ember::save(tensors, scratch / "damaged.st", damaged);
    return run_ember(train + " --resume " + scratch / "damaged.st", &code);
  };
  nlohmann::json beyond = position;
  beyond["batches_done"] = 7;
  std::string output = with_position(beyond);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: " + scratch / "damaged.st" +
                                     ": the checkpoint's position, batch 7 of 5, is not inside an epoch"));
  nlohmann::json two_ranks = position;
  two_ranks["loss_sums"].push_back("0");
  two_ranks["correct"].push_back(0);
  two_ranks["seen"].push_back(0);
  output = with_position(two_ranks);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("(after batch 1 of 5), written by 2 ranks; now 1"));
  nlohmann::json other_count = position;
  other_count["batches_in_epoch"] = 6;
  output = with_position(other_count);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("(after batch 1 of 6), but an epoch now has 5 batches"));
  ember::Metadata junk = metadata;
  junk["position"] = "{\"batches_done\": \"one\"}";
  ember::save(tensors, scratch / "damaged.st", junk);
  output = run_ember(train + " --resume " + scratch / "damaged.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains(scratch / "damaged.st" + ": the checkpoint's position metadata is damaged"));
}
