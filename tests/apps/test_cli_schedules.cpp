// tests/apps/test_cli_schedules.cpp — `ember train --lr-schedule / --warmup-steps /
// --clip-grad-* / --grad-accum` against PyTorch, and their checkpoints.
//
// tests/reference/gen_cli_schedules.py runs each configuration below in PyTorch (the
// tutorial's §7 loop with torch.optim.lr_scheduler, clip_grad_norm_ and accumulation, as
// apps/cli/lr_schedule.h and optimizer_step.h describe) and wrote cli_schedules.json. Here
// the same flags run through build/bin/ember: every logged step's lr must be PyTorch's
// exactly (the float64 the schedule computed), its loss and pre-clip grad norm close, each
// epoch's val_loss close, and the final parameters close. Then: --grad-accum 4 of batches
// of 8 equals batches of 32; --resume mid-schedule continues exactly; bad flag
// combinations are usage errors; a changed schedule is refused on --resume.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>

#include <string>
#include <vector>

#include <ember/core/factories.h>
#include <ember/nn/serialize.h>

#include "launch_test_helpers.h"
#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {

std::string with_absolute_paths(std::string flags) {
  const std::string relative = "tests/apps/fixtures/cli";
  const std::string absolute = fixtures_dir();
  for (auto at = flags.find(relative); at != std::string::npos; at = flags.find(relative, at + absolute.size())) {
    flags.replace(at, relative.size(), absolute);
  }
  return flags;
}

std::vector<nlohmann::json> events(const std::string& log, const std::string& kind) {
  std::vector<nlohmann::json> result;
  for (const nlohmann::json& entry : log_entries(log)) {
    if (entry.at("event") == kind) result.push_back(entry);
  }
  return result;
}

void require_identical(const ember::nn::StateDict& a, const ember::nn::StateDict& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, tensor] : a) {
    INFO(name);
    const ember::Tensor* other = b.find(name);
    REQUIRE(other != nullptr);
    CHECK(tensor.equal(*other));
  }
}

}  // namespace

TEST_CASE("ember train's lr schedules, clipping and accumulation match PyTorch step for step",
          "[cli][schedule][parity]") {
  const nlohmann::json reference = load_reference("cli_schedules.json");
  ScratchDir scratch("schedules");
  for (const auto& config : reference.at("configs")) {
    const std::string flags = with_absolute_paths(config.at("flags").get<std::string>());
    INFO("ember train " << flags);
    const std::string log = scratch / "log.jsonl", checkpoint = scratch / "model.safetensors";
    int code = -1;
    std::string output =
        run_ember("train " + flags + " --quiet --log-every 1 --log " + log + " --save " + checkpoint, &code);
    INFO(output);
    REQUIRE(code == 0);

    const std::vector<nlohmann::json> steps = events(log, "step");
    const auto& expected = config.at("steps");
    REQUIRE(steps.size() == expected.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      INFO("optimizer step " << i + 1);
      CHECK(steps[i].at("lr").get<double>() == expected[i].at("lr").get<double>());  // exactly
      CHECK(steps[i].at("loss").get<double>() == Approx(expected[i].at("loss").get<double>()).margin(2e-6).epsilon(2e-5));
      CHECK(steps[i].at("grad_norm").get<double>() ==
            Approx(expected[i].at("grad_norm").get<double>()).margin(1e-6).epsilon(1e-4));
    }
    const std::vector<nlohmann::json> epochs = events(log, "epoch");
    REQUIRE(epochs.size() == config.at("epochs").size());
    for (std::size_t e = 0; e < epochs.size(); ++e) {
      INFO("epoch " << e + 1);
      const auto& want = config.at("epochs")[e];
      CHECK(epochs[e].at("train_loss").get<double>() == Approx(want.at("train_loss").get<double>()).epsilon(2e-5));
      if (want.contains("val_loss")) {
        CHECK(epochs[e].at("val_loss").get<double>() == Approx(want.at("val_loss").get<double>()).epsilon(2e-5));
        CHECK(epochs[e].at("val_acc").get<double>() == Approx(want.at("val_acc").get<double>()));
      }
    }
    ember::nn::StateDict saved = ember::load(checkpoint);
    for (const auto& [name, value] : config.at("parameters").items()) {
      INFO("parameter " << name);
      const ember::Tensor* tensor = saved.find("model." + name);
      REQUIRE(tensor != nullptr);
      CHECK(tensor->allclose(tensor_from_json(value), 1e-4, 1e-5));
    }
  }
}

TEST_CASE("ember train --batch-size 8 --grad-accum 4 gives the parameters of --batch-size 32", "[cli][schedule]") {
  ScratchDir scratch("grad_accum");
  write_idx_dataset(scratch / "data", 96, 8);
  for (const std::string extra : {"--lr 0.5", "--lr 0.1 --momentum 0.9 --lr-schedule cosine --clip-grad-norm 0.5"}) {
    INFO(extra);
    const std::string common = "train --data idx:" + scratch / "data" + " --hidden 16 --epochs 3 --seed 7 --quiet " + extra;
    int code = -1;
    run_ember(common + " --batch-size 32 --save " + scratch / "big.st", &code);
    REQUIRE(code == 0);
    run_ember(common + " --batch-size 8 --grad-accum 4 --save " + scratch / "accumulated.st", &code);
    REQUIRE(code == 0);
    ember::nn::StateDict big = ember::load(scratch / "big.st"), accumulated = ember::load(scratch / "accumulated.st");
    for (const auto& [name, tensor] : big) {
      if (name.rfind("model.", 0) != 0) continue;
      INFO(name);
      const ember::Tensor* other = accumulated.find(name);
      REQUIRE(other != nullptr);
      CHECK(other->allclose(tensor, 1e-5, 1e-7));
    }
  }
}

TEST_CASE("ember train --resume in the middle of a per-epoch schedule continues exactly", "[cli][schedule][resume]") {
  const std::string idx = "--data idx:" + fixtures_dir() + "/idx --hidden 8 --batch-size 4 --seed 3";
  const std::string settings[] = {
      idx + " --lr 0.5 --lr-schedule step --lr-step-size 2 --lr-gamma 0.5",
      idx + " --lr 3.0 --val-split 0.25 --lr-schedule plateau --lr-patience 0 --lr-gamma 0.5",
      idx + " --lr 0.5 --lr-schedule multistep --lr-milestones 3,5 --grad-accum 2 --clip-grad-norm 0.4",
  };
  ScratchDir scratch("schedule_resume");
  for (const std::string& flags : settings) {
    INFO(flags);
    const std::string common = "train " + flags + " --quiet --log-every 1";
    int code = -1;
    run_ember(common + " --epochs 6 --save " + scratch / "straight.st" + " --log " + scratch / "straight.jsonl", &code);
    REQUIRE(code == 0);
    run_ember(common + " --epochs 3 --save " + scratch / "half.st" + " --log " + scratch / "resumed.jsonl", &code);
    REQUIRE(code == 0);
    run_ember(common + " --epochs 6 --resume " + scratch / "half.st" + " --save " + scratch / "resumed.st" + " --log " +
                  scratch / "resumed.jsonl",
              &code);
    REQUIRE(code == 0);
    // model.*, optimizer.* and scheduler.* tensors, bit for bit.
    require_identical(ember::load(scratch / "straight.st"), ember::load(scratch / "resumed.st"));
    std::vector<double> straight_lrs, resumed_lrs;
    for (const auto& step : events(scratch / "straight.jsonl", "step")) straight_lrs.push_back(step.at("lr"));
    for (const auto& step : events(scratch / "resumed.jsonl", "step")) resumed_lrs.push_back(step.at("lr"));
    CHECK(resumed_lrs == straight_lrs);
    CHECK(logged_step_losses(scratch / "resumed.jsonl") == logged_step_losses(scratch / "straight.jsonl"));
  }
}

TEST_CASE("ember train --resume in the middle of a per-step schedule (stopped by Ctrl-C) continues exactly",
          "[cli][schedule][resume][interrupt]") {
  ScratchDir scratch("schedule_resume_step");
  // Epochs long enough (a second or so) that the Ctrl-C sent after epoch 2's log line
  // lands in epoch 3: the checkpoint of epoch 2 is the run's state in mid-schedule.
  write_idx_dataset(scratch / "data", 12000, 8);
  const std::string data = "--data idx:" + scratch / "data" + " --hidden 16 --batch-size 2 --epochs 4 --seed 3";
  const std::string settings[] = {
      data + " --lr 0.05 --lr-schedule cosine --warmup-steps 7000 --lr-min 0.001",
      data + " --lr 0.05 --momentum 0.9 --lr-schedule onecycle",
  };
  for (const std::string& flags : settings) {
    INFO(flags);
    const std::string common = "train " + flags + " --log-every 1000";
    int code = -1;
    run_ember(common + " --quiet --save " + scratch / "straight.st" + " --log " + scratch / "straight.jsonl", &code);
    REQUIRE(code == 0);
    const std::string log = scratch / "resumed.jsonl";
    std::filesystem::remove(log);  // the ready check must not see the previous setting's log
    InterruptedRun stopped =
        run_ember_interrupted(scratch, common + " --save " + scratch / "half.st" + " --log " + log,
                              "grep -q '\"epoch\":2,\"event\":\"epoch\"' '" + log + "'");
    INFO(stopped.output);
    REQUIRE(stopped.exit_code == 130);
    ember::Metadata half;
    ember::load(scratch / "half.st", &half);
    REQUIRE(half.at("epoch") == "2");
    run_ember(common + " --quiet --resume " + scratch / "half.st" + " --save " + scratch / "resumed.st" + " --log " + log,
              &code);
    REQUIRE(code == 0);
    require_identical(ember::load(scratch / "straight.st"), ember::load(scratch / "resumed.st"));
    std::vector<double> straight_lrs, resumed_lrs;
    for (const auto& step : events(scratch / "straight.jsonl", "step")) straight_lrs.push_back(step.at("lr"));
    for (const auto& step : events(log, "step")) resumed_lrs.push_back(step.at("lr"));
    CHECK(resumed_lrs == straight_lrs);
  }
}

TEST_CASE("ember train refuses schedule flags that do not go together (exit 2)", "[cli][schedule]") {
  const std::pair<const char*, const char*> cases[] = {
      {"--lr-schedule step", "step needs --lr-step-size"},
      {"--lr-schedule multistep", "multistep needs --lr-milestones"},
      {"--lr-schedule multistep --lr-milestones 3,3", "--lr-milestones: must be increasing, got 3 after 3"},
      {"--lr-schedule cosine --lr-step-size 2", "--lr-step-size: only --lr-schedule step takes it (got cosine)"},
      {"--lr-patience 2", "--lr-patience: only --lr-schedule plateau takes it (got constant)"},
      {"--lr-schedule plateau --lr-gamma 1.5", "plateau: the factor must be below 1"},
      {"--lr-schedule onecycle --warmup-steps 3", "onecycle has its own warm-up phase"},
      {"--grad-accum 0", "--grad-accum: must be at least 1, got 0"},
      {"--clip-grad-norm 0", "--clip-grad-norm: must be positive, got 0"},
      {"--clip-grad-norm 1 --clip-grad-value 1", "use either --clip-grad-norm or --clip-grad-value, not both"},
      {"--lr-schedule linear", "--lr-schedule"},
      {"--lr-schedule plateau --monitor val_loss", "val_loss needs a validation split"},
  };
  for (const auto& [flags, message] : cases) {
    INFO(flags);
    int code = -1;
    std::string output = run_ember(std::string("train --data toy --epochs 1 ") + flags, &code);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains(message));
  }
  // Known only once the data is loaded: a warm-up longer than the run (toy: 1 step per epoch).
  int code = -1;
  std::string output = run_ember("train --data toy --epochs 2 --lr-schedule cosine --warmup-steps 2", &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("--warmup-steps 2 leaves no step for --lr-schedule cosine (2 optimizer steps in all)"));
}

TEST_CASE("ember train --resume refuses another schedule unless --allow-config-change", "[cli][schedule][resume]") {
  ScratchDir scratch("schedule_change");
  const std::string common = "train --data toy --quiet --lr-schedule exponential";
  int code = -1;
  run_ember(common + " --lr-gamma 0.9 --epochs 1 --save " + scratch / "one.st", &code);
  REQUIRE(code == 0);
  std::string output = run_ember("train --data toy --quiet --epochs 2 --lr-schedule step --lr-step-size 1 --resume " +
                                     scratch / "one.st",
                                 &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--lr-schedule: checkpoint exponential, now step"));
  output = run_ember(common + " --epochs 2 --lr-gamma 0.5 --resume " + scratch / "one.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--lr-gamma: checkpoint 0.9, now 0.5"));
  output = run_ember(common + " --lr-gamma 0.9 --epochs 2 --grad-accum 2 --allow-config-change --resume " +
                         scratch / "one.st",
                     &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("the learning-rate schedule starts afresh"));
}

TEST_CASE("ember train --resume: a chained warm-up needs the checkpoint's lr, whole and finite",
          "[cli][schedule][resume]") {
  ScratchDir scratch("chained_lr");
  const std::string common = "train --data toy --quiet --lr-schedule step --lr-step-size 1 --warmup-steps 5";
  int code = -1;
  run_ember(common + " --epochs 1 --save " + scratch / "one.st", &code);
  REQUIRE(code == 0);
  ember::Metadata metadata;
  const ember::nn::StateDict saved = ember::load(scratch / "one.st", &metadata);
  REQUIRE(saved.contains("scheduler.chained_lr"));
  REQUIRE(saved.contains("scheduler.warmup.last_epoch"));
  struct Case {
    const char* what;
    std::optional<ember::Tensor> chained_lr;  // nullopt: the entry removed
    const char* message;
  };
  const Case cases[] = {
      {"removed", std::nullopt, "the checkpoint's scheduler state has no chained_lr"},
      {"nan", ember::full({}, std::nan(""), ember::kFloat64), "the checkpoint's scheduler.chained_lr is nan: not a learning rate"},
      {"negative", ember::full({}, -0.5, ember::kFloat64), "the checkpoint's scheduler.chained_lr is -0.5: not a learning rate"},
      {"two values", ember::zeros({2}, ember::kFloat64), "the checkpoint's scheduler.chained_lr must be one floating-point number"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    ember::nn::StateDict edited;
    for (const auto& [name, tensor] : saved.items()) {
      if (name != "scheduler.chained_lr") edited.insert(name, tensor);
    }
    if (c.chained_lr) edited.insert("scheduler.chained_lr", *c.chained_lr);
    ember::save(edited, scratch / "bad.st", metadata);
    const std::string output = run_ember(common + " --epochs 2 --resume " + scratch / "bad.st", &code);
    INFO(output);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains(c.message));
  }
}

TEST_CASE("ember train on 2 ranks with --grad-accum: batches 2 x 3 micro-batches x 2 ranks equal one rank's 12",
          "[cli][schedule][distributed]") {
  using ember::testing::launch::bin;
  using ember::testing::launch::run_shell;
  ScratchDir scratch("grad_accum_distributed");
  auto job = [&](int ranks, const std::string& flags, const std::string& name) {
    int code = -1;
    std::string output = run_shell(bin("ember-run") + " --nproc-per-node " + std::to_string(ranks) + " -- " +
                                       bin("ember") + " train --device cpu --data idx:" + fixtures_dir() +
                                       "/idx --hidden 12,8 --epochs 3 --lr 0.2 --momentum 0.9 --seed 7 --quiet "
                                       "--lr-schedule cosine --clip-grad-norm 0.5 " +
                                       flags + " --save " + scratch / (name + ".st"),
                                   &code);
    INFO(output);
    REQUIRE(code == 0);
    return ember::load(scratch / (name + ".st"));
  };
  // The first two micro-batches of each group skip the all-reduce (no_sync); the sum of
  // the three, averaged over the ranks, is the gradient of the 12 examples.
  ember::nn::StateDict accumulated = job(2, "--batch-size 2 --grad-accum 3", "two");
  ember::nn::StateDict single = job(1, "--batch-size 12", "one");
  for (const auto& [name, tensor] : single) {
    if (name.rfind("model.", 0) != 0 && name.rfind("optimizer.state", 0) != 0) continue;
    INFO(name);
    const ember::Tensor* other = accumulated.find(name);
    REQUIRE(other != nullptr);
    CHECK(other->allclose(tensor, 1e-5, 1e-6));
  }
}
