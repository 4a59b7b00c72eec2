// tests/distributed/test_ddp.cpp — DistributedDataParallel trains like one big batch.
//
// The equivalence that makes data parallelism correct: with a mean loss, R ranks each on
// a batch of B train exactly like one process on the concatenated batch of R·B, because
// the average of the per-rank mean gradients is the mean gradient of the whole batch.
// Each worker trains both: a DDP model on its slice and, locally, a reference model on
// the full batch; after a few SGD steps their parameters must agree to 1e-6 (relative).
#include <catch2/catch.hpp>

#include <csignal>
#include <thread>

#include <ember/ember.h>

#include "ddp_test_model.h"
#include "elapsed_message.h"
#include "multiprocess.h"
#include "test_groups.h"
#include "test_support.h"

namespace dist = ember::distributed;
using ember::Tensor;

namespace {

// float64, so that the comparison measures DDP and not float32 rounding: averaging R
// per-rank means rounds differently from one mean over R·B rows (≈1e-7 relative in float32).
std::shared_ptr<ember::nn::Sequential> make_model() {
  auto model = std::make_shared<ember::nn::Sequential>(std::initializer_list<std::shared_ptr<ember::nn::Module>>{
      std::make_shared<ember::nn::Linear>(4, 16), std::make_shared<ember::nn::ReLU>(),
      std::make_shared<ember::nn::Linear>(16, 3)});
  model->to(ember::kFloat64);
  return model;
}

// A module with buffers whose values depend on the rank that builds it.
struct WithBuffers : ember::nn::Module {
  std::shared_ptr<ember::nn::Linear> linear;
  Tensor running;
  Tensor steps;
  explicit WithBuffers(int rank) {
    linear = register_module("linear", std::make_shared<ember::nn::Linear>(2, 2));
    running = register_buffer("running", ember::full({3}, 1.5 + rank, ember::TensorOptions(ember::kFloat32)));
    steps = register_buffer("steps", ember::tensor({static_cast<std::int64_t>(10 * rank + 7)}));
  }
  Tensor forward(const Tensor& x) override { return (*linear)(x); }
};

double max_relative_difference(const Tensor& a, const Tensor& b) {
  auto x = ember::testing::to_vector(a);
  auto y = ember::testing::to_vector(b);
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::abs(x[i] - y[i]) / std::max(1e-6, std::abs(y[i])));
  return worst;
}

}  // namespace

TEST_CASE("worker: ddp equivalence", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo", -1, -1, std::chrono::seconds(20));
  const int rank = dist::get_rank();
  const int world = dist::get_world_size();
  const std::int64_t per_rank = 5;

  // Buffers start equal too: every rank's buffers become rank 0's at construction, like
  // the parameters (a float buffer and an integer one, as BatchNorm's running_mean and
  // num_batches_tracked).
  {
    auto with_buffers = std::make_shared<WithBuffers>(rank);
    dist::DistributedDataParallel wrapped(with_buffers);
    REQUIRE(with_buffers->running.equal(WithBuffers(0).running));
    REQUIRE(with_buffers->steps.equal(WithBuffers(0).steps));
    REQUIRE(wrapped.buffers().size() == 2);
  }

  // Different initial weights on every rank: DDP's broadcast must make them rank 0's.
  ember::manual_seed(100 + static_cast<std::uint64_t>(rank));
  auto local = make_model();
  // A tiny bucket cap splits the 4 parameters into several buckets.
  dist::DistributedDataParallel ddp(local, nullptr, /*bucket_cap_mb=*/0.0001);
  REQUIRE(ddp.bucket_layout().size() > 1);
  REQUIRE(ddp.bucket_layout().front().front() == 3);  // reverse order: last bias first

  // The reference model starts from rank 0's weights (seed 100), on the whole batch.
  ember::manual_seed(100);
  auto reference = make_model();
  for (std::size_t i = 0; i < reference->parameters().size(); ++i)
    REQUIRE(reference->parameters()[i].equal(local->parameters()[i]));

  ember::Generator data_generator(7);
  ember::optim::SGD ddp_optimizer(ddp.parameters(), {.lr = 0.1});
  ember::optim::SGD reference_optimizer(reference->parameters(), {.lr = 0.1});
  for (int step = 0; step < 4; ++step) {
    Tensor inputs = ember::randn({per_rank * world, 4}, ember::TensorOptions(ember::kFloat64), &data_generator);
    Tensor targets = ember::randn({per_rank * world, 3}, ember::TensorOptions(ember::kFloat64), &data_generator);
    Tensor my_inputs = inputs.narrow(0, rank * per_rank, per_rank);
    Tensor my_targets = targets.narrow(0, rank * per_rank, per_rank);

    ddp_optimizer.zero_grad();
    ember::mse_loss(ddp(my_inputs), my_targets).backward();
    ddp_optimizer.step();

    reference_optimizer.zero_grad();
    ember::mse_loss((*reference)(inputs), targets).backward();
    reference_optimizer.step();
  }
  REQUIRE(ddp.reductions() == 4 * static_cast<std::int64_t>(ddp.bucket_layout().size()));
  for (std::size_t i = 0; i < reference->parameters().size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(max_relative_difference(local->parameters()[i], reference->parameters()[i]) <= 1e-6);
  }

  // no_sync: two local backwards accumulate without communicating, then one synced
  // backward averages the accumulated sum — like one backward on the summed losses.
  const auto reductions_before = ddp.reductions();
  ddp.zero_grad();
  Tensor inputs = ember::randn({per_rank * world, 4}, ember::TensorOptions(ember::kFloat64), &data_generator);
  Tensor targets = ember::randn({per_rank * world, 3}, ember::TensorOptions(ember::kFloat64), &data_generator);
  Tensor my_inputs = inputs.narrow(0, rank * per_rank, per_rank);
  Tensor my_targets = targets.narrow(0, rank * per_rank, per_rank);
  {
    auto guard = ddp.no_sync();
    ember::mse_loss(ddp(my_inputs), my_targets).backward();
  }
  REQUIRE(ddp.reductions() == reductions_before);
  ember::mse_loss(ddp(my_inputs), my_targets).backward();
  REQUIRE(ddp.reductions() > reductions_before);
  reference->zero_grad();
  (ember::mse_loss((*reference)(inputs), targets) * 2.0).backward();
  for (std::size_t i = 0; i < reference->parameters().size(); ++i)
    REQUIRE(max_relative_difference(local->parameters()[i].grad(), reference->parameters()[i].grad()) <= 1e-5);

  dist::destroy_process_group();
}

TEST_CASE("ddp: 2 ranks x batch B train like 1 process x batch 2B", "[distributed][ddp]") {
  ember::testing::require_all_passed(ember::testing::run_workers("worker: ddp equivalence", 2));
}

TEST_CASE("ddp: 3 ranks x batch B train like 1 process x batch 3B", "[distributed][ddp]") {
  ember::testing::require_all_passed(ember::testing::run_workers("worker: ddp equivalence", 3));
}

// The overlapped path (all-reduces on the communication thread during backward) must give
// bit-identical gradients to the inline path: same buckets, same arithmetic, only the
// thread differs. The first layer's weight (1024 × 7000 float32 = 28 MB) is larger than
// the default 25 MB bucket, so it gets a bucket of its own.
TEST_CASE("worker: ddp overlap", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo", -1, -1, std::chrono::seconds(30));
  const int rank = dist::get_rank();
  auto make_wide = [] {
    return std::make_shared<ember::nn::Sequential>(std::initializer_list<std::shared_ptr<ember::nn::Module>>{
        std::make_shared<ember::nn::Linear>(1024, 7000), std::make_shared<ember::nn::ReLU>(),
        std::make_shared<ember::nn::Linear>(7000, 8), std::make_shared<ember::nn::ReLU>(),
        std::make_shared<ember::nn::Linear>(8, 2)});
  };
  ember::manual_seed(11);
  auto overlapped_model = make_wide();
  ember::manual_seed(11);
  auto inline_model = make_wide();
  dist::DistributedDataParallel overlapped(overlapped_model);
  dist::DistributedDataParallel inline_ddp(inline_model);
  inline_ddp.set_communication_overlap(false);
  REQUIRE(overlapped.communication_overlap());
  // Buckets in reverse registration order: every small parameter (indices 5 .. 1) fits in
  // the first; the 28 MB weight (index 0) does not fit in any bucket and gets its own.
  const auto layout = overlapped.bucket_layout();
  REQUIRE(layout.size() == 2);
  REQUIRE(layout[0] == std::vector<std::size_t>{5, 4, 3, 2, 1});
  REQUIRE(layout[1] == std::vector<std::size_t>{0});

  ember::Generator data_generator(3 + static_cast<std::uint64_t>(rank));
  ember::optim::SGD overlapped_optimizer(overlapped.parameters(), {.lr = 0.01});
  ember::optim::SGD inline_optimizer(inline_ddp.parameters(), {.lr = 0.01});
  for (int step = 0; step < 3; ++step) {
    Tensor inputs = ember::randn({4, 1024}, {}, &data_generator);
    Tensor targets = ember::randn({4, 2}, {}, &data_generator);
    overlapped_optimizer.zero_grad();
    ember::mse_loss(overlapped(inputs), targets).backward();
    overlapped_optimizer.step();
    inline_optimizer.zero_grad();
    ember::mse_loss(inline_ddp(inputs), targets).backward();
    inline_optimizer.step();
  }
  REQUIRE(overlapped.last_reduction_thread() != std::this_thread::get_id());
  REQUIRE(inline_ddp.last_reduction_thread() == std::this_thread::get_id());
  REQUIRE(overlapped.reductions() == inline_ddp.reductions());
  for (std::size_t i = 0; i < overlapped_model->parameters().size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(overlapped_model->parameters()[i].equal(inline_model->parameters()[i]));
  }
  dist::destroy_process_group();
}

TEST_CASE("ddp: overlapped bucket all-reduces equal the inline path bit for bit", "[distributed][ddp]") {
  // Two 28 MB models trained three steps: ~20 s in a Debug + ASan build, so a longer limit.
  ember::testing::require_all_passed(ember::testing::run_workers("worker: ddp overlap", 2, std::chrono::seconds(75)));
}

// Overlap, observed: the all-reduce of the first bucket (the last two layers) must have
// *started* — entered the process group on the communication thread — before backward
// reaches the first layer. The first layer's gradient hook waits for that (up to 20 s; a
// DDP that only communicated at the end of backward would never get there) and records
// whether it happened. Step 0's loss is kept alive, so from step 1 on the gradient
// accumulators are old nodes, which must still run as soon as their gradients are ready.
TEST_CASE("worker: ddp overlap starts during backward", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo", -1, -1, std::chrono::seconds(30));
  ember::testing::RecordingGroup group(dist::default_group());
  ember::manual_seed(12);
  auto model = std::make_shared<ember::testing::ThreeLayers>();
  dist::DistributedDataParallel ddp(model, &group, ember::testing::ThreeLayers::kSplitCapMb);
  REQUIRE(ddp.communication_overlap());
  REQUIRE(ddp.bucket_layout() == std::vector<std::vector<std::size_t>>{{5, 4, 3, 2}, {1}, {0}});
  int started_at_step_begin = 0;
  int started_when_first_layer_began = -1;
  model->on_first_layer_gradient = [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (group.all_reduces_started.load() == started_at_step_begin && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    started_when_first_layer_began = group.all_reduces_started.load();
  };
  ember::Generator data(20 + static_cast<std::uint64_t>(dist::get_rank()));
  Tensor kept_loss;
  for (int step = 0; step < 3; ++step) {
    INFO("step " << step);
    started_at_step_begin = group.all_reduces_started.load();
    Tensor loss = ember::mse_loss(ddp(ember::randn({4, 64}, {}, &data)), ember::randn({4, 2}, {}, &data));
    loss.backward();
    REQUIRE(started_when_first_layer_began - started_at_step_begin >= 1);
    REQUIRE(group.all_reduces_started.load() - started_at_step_begin == 3);
    if (step == 0) kept_loss = loss;
  }
  REQUIRE(ddp.last_reduction_thread() != std::this_thread::get_id());
  dist::destroy_process_group();
}

TEST_CASE("ddp: a bucket's all-reduce starts while backward is still running", "[distributed][ddp]") {
  ember::testing::require_all_passed(ember::testing::run_workers("worker: ddp overlap starts during backward", 2));
}

// Mid-training, rank 1 is killed. Rank 0's next backward hands its buckets to the
// communication thread; the all-reduce fails there and backward() rethrows it on rank 0.
TEST_CASE("worker: ddp killed peer", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo", -1, -1, std::chrono::seconds(2));
  const int rank = dist::get_rank();
  ember::manual_seed(5);
  auto model = make_model();
  dist::DistributedDataParallel ddp(model, nullptr, /*bucket_cap_mb=*/0.0001);
  ember::optim::SGD optimizer(ddp.parameters(), {.lr = 0.1});
  ember::Generator data_generator(9);
  for (int step = 0; step < 10; ++step) {
    if (step == 3 && rank == 1) ::raise(SIGKILL);
    Tensor inputs = ember::randn({5, 4}, ember::TensorOptions(ember::kFloat64), &data_generator);
    Tensor targets = ember::randn({5, 3}, ember::TensorOptions(ember::kFloat64), &data_generator);
    optimizer.zero_grad();
    Tensor loss = ember::mse_loss(ddp(inputs), targets);
    if (step < 3) {
      loss.backward();
    } else {
      try {
        loss.backward();
        FAIL("backward returned although rank 1 is dead");
      } catch (const dist::DistributedError& error) {
        INFO(error.what());
        REQUIRE(ember::testing::reported_elapsed_ms(error.what(), "Gloo all_reduce failed on rank 0", 2000) >= 0);
        std::_Exit(0);
      }
    }
    optimizer.step();
  }
  FAIL("training finished although rank 1 died");
}

TEST_CASE("ddp: a rank killed mid-training makes the survivor's backward throw", "[distributed][ddp]") {
  auto results = ember::testing::run_workers("worker: ddp killed peer", 2, std::chrono::seconds(30));
  INFO("rank 0: " << ember::testing::describe(results[0]));
  REQUIRE(results[0].exit_code == 0);
  REQUIRE(results[1].signal == SIGKILL);
}

TEST_CASE("ddp: needs a process group and a module", "[distributed][ddp]") {
  REQUIRE_THROWS_WITH(dist::DistributedDataParallel(make_model()),
                      "Default process group has not been initialized, please make sure to call init_process_group.");
}
