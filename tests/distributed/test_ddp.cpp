// tests/distributed/test_ddp.cpp — DistributedDataParallel trains like one big batch.
//
// The equivalence that makes data parallelism correct: with a mean loss, R ranks each on
// a batch of B train exactly like one process on the concatenated batch of R·B, because
// the average of the per-rank mean gradients is the mean gradient of the whole batch.
// Each worker trains both: a DDP model on its slice and, locally, a reference model on
// the full batch; after a few SGD steps their parameters must agree to 1e-6 (relative).
#include <catch2/catch.hpp>

#include <ember/ember.h>

#include "multiprocess.h"
#include "test_support.h"

namespace dist = ember::distributed;
using ember::Tensor;

namespace {

std::shared_ptr<ember::nn::Sequential> make_model() {
  return std::make_shared<ember::nn::Sequential>(std::initializer_list<std::shared_ptr<ember::nn::Module>>{
      std::make_shared<ember::nn::Linear>(4, 16), std::make_shared<ember::nn::ReLU>(),
      std::make_shared<ember::nn::Linear>(16, 3)});
}

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
    Tensor inputs = ember::randn({per_rank * world, 4}, {}, &data_generator);
    Tensor targets = ember::randn({per_rank * world, 3}, {}, &data_generator);
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
  Tensor inputs = ember::randn({per_rank * world, 4}, {}, &data_generator);
  Tensor targets = ember::randn({per_rank * world, 3}, {}, &data_generator);
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
  auto results = ember::testing::run_workers("worker: ddp equivalence", 2);
  for (std::size_t rank = 0; rank < results.size(); ++rank) {
    INFO("rank " << rank << " output:\n" << results[rank].output);
    REQUIRE_FALSE(results[rank].killed_by_limit);
    REQUIRE(results[rank].exit_code == 0);
  }
}

TEST_CASE("ddp: 3 ranks x batch B train like 1 process x batch 3B", "[distributed][ddp]") {
  auto results = ember::testing::run_workers("worker: ddp equivalence", 3);
  for (std::size_t rank = 0; rank < results.size(); ++rank) {
    INFO("rank " << rank << " output:\n" << results[rank].output);
    REQUIRE_FALSE(results[rank].killed_by_limit);
    REQUIRE(results[rank].exit_code == 0);
  }
}

TEST_CASE("ddp: needs a process group and a module", "[distributed][ddp]") {
  REQUIRE_THROWS_WITH(dist::DistributedDataParallel(make_model()),
                      "Default process group has not been initialized, please make sure to call init_process_group.");
}
