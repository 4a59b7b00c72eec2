// tests/apps/test_cli_distributed.cpp — `ember-run --nproc-per-node N -- ember train ...` (§9.3).
//
// The promise of data parallelism, checked on the committed IDX fixture (24 examples):
// 2 ranks with --batch-size 3 take the same steps as 1 rank with --batch-size 6. Both runs
// go through ember-run, so both draw their data order from a DistributedSampler with the
// same seed: with 1 replica it yields the whole permutation p, with 2 replicas rank r gets
// p[r], p[r+2], ..., so a 2-rank step covers exactly the 6 examples of the 1-rank step.
// A mean loss over the same 6 examples gives the same gradient up to float rounding, hence
// the tolerance of 1e-6 rather than bit equality. (Plain `ember train` shuffles with a
// RandomSampler from the default generator, a different order, so it is not the reference.)
//
// Every job says which device it means: `--device auto` under ember-run becomes
// cuda:LOCAL_RANK with NCCL on a GPU machine, where rank 1 of a one-GPU machine has no GPU.
// The CPU (Gloo) cases pass `--device cpu`; the NCCL cases at the end run only where the
// GPUs they need are visible, and are skipped (EMBER_SKIP) elsewhere.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>

#include <ember/core/cuda_hooks.h>
#include <ember/nn/serialize.h>

#include "launch_test_helpers.h"
#include "test_cli_helpers.h"

using namespace ember::testing::cli;
using namespace ember::testing::launch;

namespace {

const std::string kCommon = " --hidden 12,8 --epochs 4 --lr 0.2 --momentum 0.9 --seed 7 --log-every 1";

// `device` is ember train's --device: "cpu" trains with Gloo, "cuda" with NCCL (one GPU per rank).
std::string train_under_launcher(int ranks, int batch_size, const ScratchDir& scratch, const std::string& name,
                                 int* exit_code, const std::string& device = "cpu",
                                 const std::string& common = kCommon) {
  return run_shell(bin("ember-run") + " --nproc-per-node " + std::to_string(ranks) + " -- " + bin("ember") +
                       " train --device " + device + " --data idx:" + fixtures_dir() + "/idx --batch-size " +
                       std::to_string(batch_size) + common + " --save " + scratch / (name + ".st") + " --log " +
                       scratch / (name + ".jsonl"),
                   exit_code);
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

// Every tensor of the 1-rank checkpoint (parameters and momentum buffers) is in the 2-rank
// one, element for element within `close`.
void require_same_state(const std::string& one_path, const std::string& two_path) {
  ember::nn::StateDict one_state = ember::load(one_path), two_state = ember::load(two_path);
  REQUIRE(two_state.size() == one_state.size());
  for (const auto& [name, tensor] : one_state) {
    INFO(name);
    const ember::Tensor* other = two_state.find(name);
    REQUIRE(other != nullptr);
    auto a = ember::testing::to_vector(tensor);
    auto b = ember::testing::to_vector(*other);
    REQUIRE(a.size() == b.size());
    std::size_t far = 0;
    for (std::size_t i = 0; i < a.size(); ++i) far += close(b[i], a[i]) ? 0 : 1;
    CHECK(far == 0);
  }
}

// Both logs hold `steps` step losses (the mean over ranks), equal within `close`.
void require_same_step_losses(const std::string& one_log, const std::string& two_log, std::size_t steps) {
  auto one_losses = logged_step_losses(one_log);
  auto two_losses = logged_step_losses(two_log);
  REQUIRE(one_losses.size() == steps);
  REQUIRE(two_losses.size() == one_losses.size());
  for (std::size_t i = 0; i < one_losses.size(); ++i) {
    INFO("step " << i << ": 1 rank " << one_losses[i] << ", 2 ranks " << two_losses[i]);
    CHECK(close(two_losses[i], one_losses[i]));
  }
}

}  // namespace

TEST_CASE("ember train on 2 ranks with batch B takes the steps of 1 rank with batch 2B", "[cli][distributed]") {
  ScratchDir scratch("distributed_equivalence");
  int exit_code = -1;
  std::string two = train_under_launcher(2, 3, scratch, "two", &exit_code);
  INFO(two);
  REQUIRE(exit_code == 0);
  std::string one = train_under_launcher(1, 6, scratch, "one", &exit_code);
  INFO(one);
  REQUIRE(exit_code == 0);

  // Final parameters and momentum buffers; every step's loss (the mean over ranks) and every
  // epoch's loss and accuracy (summed over ranks).
  REQUIRE(ember::load(scratch / "one.st").size() >= 6);
  require_same_state(scratch / "one.st", scratch / "two.st");
  require_same_step_losses(scratch / "one.jsonl", scratch / "two.jsonl", 16);  // 4 epochs x 24 / 6
  std::vector<nlohmann::json> one_epochs, two_epochs;
  for (auto& entry : log_entries(scratch / "one.jsonl"))
    if (entry.at("event") == "epoch") one_epochs.push_back(entry);
  for (auto& entry : log_entries(scratch / "two.jsonl"))
    if (entry.at("event") == "epoch") two_epochs.push_back(entry);
  REQUIRE(one_epochs.size() == 4);
  REQUIRE(two_epochs.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(close(two_epochs[i].at("train_loss").get<double>(), one_epochs[i].at("train_loss").get<double>()));
    CHECK(two_epochs[i].at("train_acc").get<double>() == one_epochs[i].at("train_acc").get<double>());
  }
}

// The CNN (issue 19) under the launcher: its convolution and pooling gradients all-reduced
// like the MLP's, so 2 ranks of batch 3 again take the steps of 1 rank of batch 6.
TEST_CASE("ember train --model cnn on 2 ranks with batch B takes the steps of 1 rank with batch 2B",
          "[cli][distributed][cnn]") {
  const std::string cnn = " --model cnn --channels 3,4 --hidden 8 --epochs 2 --lr 0.1 --momentum 0.9 --seed 7 --log-every 1";
  ScratchDir scratch("distributed_cnn");
  int exit_code = -1;
  std::string two = train_under_launcher(2, 3, scratch, "two", &exit_code, "cpu", cnn);
  INFO(two);
  REQUIRE(exit_code == 0);
  std::string one = train_under_launcher(1, 6, scratch, "one", &exit_code, "cpu", cnn);
  INFO(one);
  REQUIRE(exit_code == 0);
  const ember::nn::StateDict one_state = ember::load(scratch / "one.st");
  REQUIRE(one_state.find("model.0.weight") != nullptr);  // the first Conv2d
  REQUIRE(one_state.find("model.0.weight")->sizes() == ember::Shape{3, 1, 3, 3});
  require_same_state(scratch / "one.st", scratch / "two.st");
  require_same_step_losses(scratch / "one.jsonl", scratch / "two.jsonl", 8);  // 2 epochs x 24 / 6
}

TEST_CASE("ember train on 2 ranks: only rank 0 prints, logs and saves", "[cli][distributed]") {
  ScratchDir scratch("distributed_rank0");
  int exit_code = -1;
  std::string output = train_under_launcher(2, 4, scratch, "run", &exit_code);
  INFO(output);
  REQUIRE(exit_code == 0);
  CHECK(rank_lines(output, 1).empty());
  auto lines = rank_lines(output, 0);
  REQUIRE_FALSE(lines.empty());
  CHECK(lines[2] == "  distributed: 2 ranks (gloo), batch size 4 per rank, 8 per step");
  CHECK(contains(output, "[rank 0] Summary"));
  CHECK(contains(output, "[rank 0]   checkpoint:      " + scratch / "run.st" + " (epoch 4)"));
  // One writer: 3 steps per epoch (24 examples, 8 per step), each logged once, one summary.
  auto entries = log_entries(scratch / "run.jsonl");
  std::size_t steps = 0, epochs = 0, summaries = 0;
  for (auto& entry : entries) {
    steps += entry.at("event") == "step";
    epochs += entry.at("event") == "epoch";
    summaries += entry.at("event") == "summary";
  }
  CHECK(steps == 12);
  CHECK(epochs == 4);
  CHECK(summaries == 1);
  ember::Metadata metadata;
  ember::load(scratch / "run.st", &metadata);
  CHECK(metadata.at("epoch") == "4");
  CHECK(metadata.at("step") == "12");
  // Nothing else was written next to them (no per-rank copies or temporary files).
  std::size_t files = 0;
  for ([[maybe_unused]] auto& entry : std::filesystem::directory_iterator(scratch.str())) ++files;
  CHECK(files == 2);
}

TEST_CASE("ember train on 2 ranks: a data error names the failed rank", "[cli][distributed]") {
  ScratchDir scratch("distributed_error");
  int exit_code = -1;
  std::string output = run_shell(bin("ember-run") + " --nproc-per-node 2 -- " + bin("ember") + " train --device cpu --data idx:" +
                                     scratch / "missing" + " --epochs 1",
                                 &exit_code);
  CHECK(exit_code == 1);
  CHECK(contains(output, "] ember: error: "));
  CHECK(contains(output, "ember-run: error: worker group failed: rank "));
  CHECK(contains(output, "exited with exit code 1"));
}

TEST_CASE("ember train on 2 ranks: --resume continues exactly: 2 + 2 epochs equal 4", "[cli][distributed]") {
  // Each epoch's share comes from the sampler's seed + epoch, the rest from the checkpoint
  // rank 0 wrote and every rank reads: the resumed job is bit-identical to the straight one.
  ScratchDir scratch("distributed_resume");
  const std::string job = bin("ember-run") + " --nproc-per-node 2 -- " + bin("ember") + " train --device cpu --data idx:" +
                          fixtures_dir() + "/idx --hidden 8 --batch-size 3 --lr 0.1 --momentum 0.9 --seed 4 --quiet";
  int exit_code = -1;
  run_shell(job + " --epochs 4 --save " + scratch / "straight.st", &exit_code);
  REQUIRE(exit_code == 0);
  run_shell(job + " --epochs 2 --save " + scratch / "half.st", &exit_code);
  REQUIRE(exit_code == 0);
  run_shell(job + " --epochs 4 --resume " + scratch / "half.st" + " --save " + scratch / "resumed.st", &exit_code);
  REQUIRE(exit_code == 0);
  ember::nn::StateDict straight = ember::load(scratch / "straight.st");
  ember::nn::StateDict resumed = ember::load(scratch / "resumed.st");
  REQUIRE(straight.size() == resumed.size());
  for (const auto& [name, tensor] : straight) {
    INFO(name);
    const ember::Tensor* other = resumed.find(name);
    REQUIRE(other != nullptr);
    CHECK(tensor.equal(*other));
  }
}

TEST_CASE("ember train on 2 ranks: a rank killed mid-training is named and the other stopped", "[cli][distributed]") {
  // Rank 1's shell starts a killer in the background and then becomes `ember train` (exec
  // keeps the pid); once rank 0 has logged a step, the killer notes the time and SIGKILLs
  // rank 1. Training is far too long to end by itself, so the job only ends because
  // ember-run stops rank 0 — which it must do within its grace period (5 s) plus a little.
  ScratchDir scratch("distributed_kill");
  const std::string log = scratch / "run.jsonl";
  const std::string killed_at = scratch / "killed_at";
  const std::string train = bin("ember") + " train --device cpu --data idx:" + fixtures_dir() +
                            "/idx --hidden 8 --batch-size 3 --epochs 1000000 --quiet --log-every 1 --log " + log;
  int exit_code = -1;
  std::string output = run_shell(
      bin("ember-run") + " --nproc-per-node 2 -- /bin/sh -c " +
          shell_quote("if [ $RANK = 1 ]; then (while ! grep -q step " + log + " 2>/dev/null; do sleep 0.05; done; "
                      "date +%s.%N > " + killed_at + "; kill -KILL $$) & fi; exec " + train),
      &exit_code);
  const double ended = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(exit_code == 1);
  CHECK(contains(output, "ember-run: rank 1 (local rank 1, pid "));
  CHECK(contains(output, "failed with signal 9 (SIGKILL); stopping the other workers"));
  CHECK(contains(output, "worker group failed: rank 1 (local rank 1) exited with signal 9 (SIGKILL)"));
  CHECK(logged_step_losses(log).size() >= 1);
  const double killed = std::stod(ember::testing::read_file(killed_at));
  INFO("the job ended " << ended - killed << " s after the kill");
  CHECK(ended - killed <= 5.0 + 5.0);
}

TEST_CASE("ember train on 1 rank with --device auto on a GPU trains there with NCCL", "[cli][distributed][gpu]") {
  if (!ember::cuda::is_available()) EMBER_SKIP("no CUDA GPU visible: --device auto means the CPU (Gloo) here");
  ScratchDir scratch("distributed_nccl_one");
  int exit_code = -1;
  std::string output = train_under_launcher(1, 4, scratch, "run", &exit_code, "auto");
  INFO(output);
  REQUIRE(exit_code == 0);
  auto lines = rank_lines(output, 0);
  REQUIRE(lines.size() > 2);
  CHECK(lines[2] == "  distributed: 1 ranks (nccl), batch size 4 per rank, 4 per step");
  CHECK(contains(output, "[rank 0]   device:          cuda:0"));
  CHECK(logged_step_losses(scratch / "run.jsonl").size() == 24);  // 4 epochs x 24 / 4
}

TEST_CASE("ember train on 2 ranks with --device cuda: NCCL, rank r on cuda:r, the steps of 1 rank",
          "[cli][distributed][gpu]") {
  if (ember::cuda::device_count() < 2) EMBER_SKIP("needs 2 CUDA GPUs (one per rank), found fewer");
  ScratchDir scratch("distributed_nccl_two");
  int exit_code = -1;
  std::string two = train_under_launcher(2, 3, scratch, "two", &exit_code, "cuda");
  INFO(two);
  REQUIRE(exit_code == 0);
  CHECK(contains(two, "[rank 0]   distributed: 2 ranks (nccl), batch size 3 per rank, 6 per step"));
  std::string one = train_under_launcher(1, 6, scratch, "one", &exit_code, "cuda");
  INFO(one);
  REQUIRE(exit_code == 0);
  auto one_losses = logged_step_losses(scratch / "one.jsonl");
  auto two_losses = logged_step_losses(scratch / "two.jsonl");
  REQUIRE(one_losses.size() == 16);  // 4 epochs x 24 / 6
  REQUIRE(two_losses.size() == one_losses.size());
  // The GPU sums in another order than the CPU: a looser tolerance than the CPU case's 1e-6.
  for (std::size_t i = 0; i < one_losses.size(); ++i)
    CHECK(std::abs(two_losses[i] - one_losses[i]) <= 1e-5 * std::max(1.0, std::abs(one_losses[i])));
}
