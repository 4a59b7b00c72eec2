// tests/distributed/test_collectives.cpp — Gloo collectives in 2 and 3 real processes.
//
// Expected values are computed locally: rank r contributes base * (r + 1), so the SUM over
// R ranks is base * R(R+1)/2, MAX is base * R, MIN is base * 1 (for base >= 0).
// Covered: float32/float64/int64, sizes 0 (empty), 0-d, 1, 7 and 1000, a float32 tensor
// larger than a 25 MB DDP bucket, a non-contiguous (transposed) tensor, broadcast from the
// last rank, all_gather, reduce_scatter, barrier, and the errors a rank can hit; a peer
// that is killed (connection reset) and one that hangs (the timeout fires).
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <thread>

#include <ember/ember.h>

#include "multiprocess.h"
#include "test_support.h"

namespace dist = ember::distributed;
using ember::Tensor;

namespace {

Tensor contribution(ember::IntArrayRef shape, ember::DType dtype, int rank) {
  std::int64_t numel = 1;
  for (auto size : shape) numel *= size;
  return (ember::arange(numel, ember::kFloat64) * static_cast<double>(rank + 1)).to(dtype).reshape(shape);
}

}  // namespace

TEST_CASE("worker: collectives", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo", -1, -1, std::chrono::seconds(20));
  const int rank = dist::get_rank();
  const int world = dist::get_world_size();
  REQUIRE(dist::is_initialized());
  REQUIRE(dist::get_backend() == "gloo");
  REQUIRE(dist::get_local_rank() == rank);
  const double sum_factor = world * (world + 1) / 2.0;

  const std::vector<ember::Shape> shapes{{0}, {}, {1}, {7}, {10, 100}};
  for (ember::DType dtype : {ember::kFloat32, ember::kFloat64, ember::kInt64}) {
    for (const auto& shape : shapes) {
      INFO("dtype " << ember::dtype_name(dtype) << " shape " << ember::shape_to_string(shape));
      Tensor base = contribution(shape, dtype, 0);
      Tensor summed = contribution(shape, dtype, rank);
      dist::all_reduce(summed, dist::ReduceOp::Sum);
      REQUIRE(summed.equal((base.to(ember::kFloat64) * sum_factor).to(dtype)));
      Tensor maximum = contribution(shape, dtype, rank);
      dist::all_reduce(maximum, dist::ReduceOp::Max);
      REQUIRE(maximum.equal(contribution(shape, dtype, world - 1)));
      Tensor minimum = contribution(shape, dtype, rank);
      dist::all_reduce(minimum, dist::ReduceOp::Min);
      REQUIRE(minimum.equal(base));
      if (ember::is_floating_point(dtype)) {
        Tensor average = contribution(shape, dtype, rank);
        dist::all_reduce(average, dist::ReduceOp::Avg);
        REQUIRE(average.allclose((base.to(ember::kFloat64) * (sum_factor / world)).to(dtype)));
      }
      Tensor broadcasted = contribution(shape, dtype, rank);
      dist::broadcast(broadcasted, world - 1);
      REQUIRE(broadcasted.equal(contribution(shape, dtype, world - 1)));

      std::vector<Tensor> gathered;
      for (int r = 0; r < world; ++r) gathered.push_back(ember::zeros(shape, dtype));
      dist::all_gather(gathered, contribution(shape, dtype, rank));
      for (int r = 0; r < world; ++r) REQUIRE(gathered[r].equal(contribution(shape, dtype, r)));

      // reduce_scatter: inputs[j] on rank r is contribution * (j + 1); rank r keeps the
      // sum over ranks of inputs[r] = base * (r + 1) * sum_factor.
      std::vector<Tensor> inputs;
      for (int j = 0; j < world; ++j) inputs.push_back(contribution(shape, dtype, rank) * static_cast<std::int64_t>(j + 1));
      Tensor scattered = ember::zeros(shape, dtype);
      dist::reduce_scatter(scattered, inputs, dist::ReduceOp::Sum);
      REQUIRE(scattered.equal((base.to(ember::kFloat64) * (sum_factor * (rank + 1))).to(dtype)));
    }
  }

  // Larger than one DDP bucket (25 MB): 7,000,000 float32 = 28 MB, summed in place.
  {
    const std::int64_t numel = 7'000'000;
    Tensor large = ember::full({numel}, static_cast<double>(rank + 1), ember::TensorOptions(ember::kFloat32));
    large.narrow(0, numel - 1, 1).fill_(ember::Scalar(static_cast<double>(10 * (rank + 1))));
    dist::all_reduce(large, dist::ReduceOp::Sum);
    REQUIRE(large.narrow(0, 0, numel - 1).equal(ember::full({numel - 1}, sum_factor, ember::TensorOptions(ember::kFloat32))));
    REQUIRE(large[numel - 1].item<float>() == static_cast<float>(10 * sum_factor));
  }

  // Non-contiguous: a transposed view is reduced in place, and its base sees the result.
  Tensor matrix = contribution({3, 4}, ember::kFloat32, rank);
  Tensor transposed = matrix.t();
  REQUIRE_FALSE(transposed.is_contiguous());
  dist::all_reduce(transposed, dist::ReduceOp::Sum);
  REQUIRE(matrix.equal(contribution({3, 4}, ember::kFloat32, 0) * static_cast<float>(sum_factor)));

  // Errors are thrown on every rank before any communication, so no rank is left waiting.
  Tensor flags = ember::ones({3}, ember::kBool);
  REQUIRE_THROWS_WITH(dist::all_reduce(flags), "all_reduce: unsupported dtype bool (use float32, float64, int64 or int32)");
  REQUIRE_THROWS_AS(dist::all_reduce(flags), ember::DTypeError);
  Tensor counts = ember::ones({3}, ember::kInt64);
  REQUIRE_THROWS_WITH(dist::all_reduce(counts, dist::ReduceOp::Avg),
                      "all_reduce: ReduceOp.AVG needs a floating point tensor, got int64");
  Tensor value = ember::ones({2});
  REQUIRE_THROWS_AS(dist::broadcast(value, world), ember::ValueError);
  std::vector<Tensor> too_few{ember::zeros({2})};
  REQUIRE_THROWS_AS(dist::all_gather(too_few, value), ember::ValueError);
  std::vector<Tensor> wrong_shape;
  for (int r = 0; r < world; ++r) wrong_shape.push_back(ember::zeros({3}));
  REQUIRE_THROWS_AS(dist::all_gather(wrong_shape, value), ember::ShapeError);
  REQUIRE_THROWS_WITH(dist::init_process_group("gloo"), "trying to initialize the default process group twice!");

  dist::barrier();
  dist::destroy_process_group();
  REQUIRE_FALSE(dist::is_initialized());
}

TEST_CASE("collectives: all_reduce, broadcast, all_gather, reduce_scatter in 2 processes", "[distributed]") {
  ember::testing::require_all_passed(ember::testing::run_workers("worker: collectives", 2));
}

TEST_CASE("collectives: all_reduce, broadcast, all_gather, reduce_scatter in 3 processes", "[distributed]") {
  ember::testing::require_all_passed(ember::testing::run_workers("worker: collectives", 3));
}

// A peer that dies makes the survivor's next collective throw — not hang.
TEST_CASE("worker: killed peer", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo", -1, -1, std::chrono::seconds(2));
  dist::barrier();
  if (dist::get_rank() == 1) ::raise(SIGKILL);
  Tensor value = ember::ones({1000});
  try {
    dist::all_reduce(value);
    FAIL("all_reduce returned although rank 1 is dead");
  } catch (const dist::DistributedError& error) {
    const std::string message = error.what();
    INFO(message);
    REQUIRE_THAT(message, Catch::Contains("Gloo all_reduce failed on rank 0 after timeout 2000 ms"));
  }
}

TEST_CASE("collectives: a killed peer makes the survivor throw naming op, rank and timeout", "[distributed]") {
  // The limit (timeout 2 s + rendezvous + slack) bounds the test; the survivor must exit 0.
  auto results = ember::testing::run_workers("worker: killed peer", 2, std::chrono::seconds(30));
  INFO("rank 0: " << ember::testing::describe(results[0]));
  REQUIRE(results[0].exit_code == 0);
  REQUIRE(results[1].signal == SIGKILL);
}

// A peer that is alive but stuck (it never calls the collective) only shows as silence:
// the survivor must give up when its timeout (1 s here) expires, not hang.
TEST_CASE("worker: hung peer", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo", -1, -1, std::chrono::seconds(1));
  dist::barrier();
  if (dist::get_rank() == 1) {
    // Stuck in "training" well past the survivor's timeout, then gone without a word.
    std::this_thread::sleep_for(std::chrono::seconds(4));
    std::_Exit(0);
  }
  Tensor value = ember::ones({1000});
  const auto start = std::chrono::steady_clock::now();
  try {
    dist::all_reduce(value);
    FAIL("all_reduce returned although rank 1 never joined it");
  } catch (const dist::DistributedError& error) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(error.what() << " (after " << waited << " s)");
    REQUIRE_THAT(std::string(error.what()), Catch::Contains("Gloo all_reduce failed on rank 0 after timeout 1000 ms"));
    // It is the timeout that ended the wait (not a closed connection): at least 1 s passed.
    REQUIRE(waited >= 0.9);
  }
  std::_Exit(0);  // skip destroying a group whose peer is still in a collective
}

TEST_CASE("collectives: a hung peer makes the survivor throw when the timeout expires", "[distributed]") {
  auto results = ember::testing::run_workers("worker: hung peer", 2, std::chrono::seconds(30));
  INFO("rank 0: " << ember::testing::describe(results[0]));
  INFO("rank 1: " << ember::testing::describe(results[1]));
  REQUIRE(results[0].exit_code == 0);
  REQUIRE(results[1].exit_code == 0);
}

// torchrun's contract: with no rank or world size given, both come from the environment,
// and a missing variable is named in the error.
TEST_CASE("worker: env contract", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo");  // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the env
  REQUIRE(dist::get_rank() == std::stoi(std::getenv("RANK")));
  REQUIRE(dist::get_world_size() == 3);
  REQUIRE(dist::get_local_rank() == dist::get_rank());
  Tensor rank_value = ember::tensor({static_cast<std::int64_t>(dist::get_rank())});
  dist::all_reduce(rank_value, dist::ReduceOp::Sum);
  REQUIRE(rank_value.item<std::int64_t>() == 0 + 1 + 2);
  dist::destroy_process_group();
}

TEST_CASE("process group: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT from the environment",
          "[distributed]") {
  ember::testing::require_all_passed(ember::testing::run_workers("worker: env contract", 3));
  // Outside a launcher RANK is unset: the error names the variable (PyTorch's wording).
  if (std::getenv("RANK") == nullptr) {
    REQUIRE_THROWS_WITH(dist::init_process_group("gloo"),
                        "Error initializing torch.distributed using env:// rendezvous: environment variable RANK "
                        "expected, but not set");
  }
}

TEST_CASE("process group: errors without a running group", "[distributed]") {
  REQUIRE_FALSE(dist::is_initialized());
  REQUIRE_THROWS_WITH(dist::get_rank(),
                      "Default process group has not been initialized, please make sure to call init_process_group.");
  REQUIRE_THROWS_AS(dist::get_world_size(), dist::DistributedError);
#ifndef EMBER_HAVE_NCCL
  // A build without CUDA and NCCL says so, before touching the network.
  REQUIRE_THROWS_WITH(dist::init_process_group("nccl", 0, 1),
                      Catch::StartsWith("Distributed package doesn't have NCCL built in"));
  REQUIRE_THROWS_AS(dist::init_process_group("nccl", 0, 1), dist::DistributedError);
#endif
  REQUIRE_THROWS_WITH(dist::init_process_group("mpi", 0, 1),
                      "Invalid backend: 'mpi' (expected \"gloo\" or \"nccl\")");
  REQUIRE_THROWS_WITH(dist::init_process_group("gloo", 2, 2), "Invalid rank 2, rank should be in the interval [0, 1]");
  REQUIRE(dist::reduce_op_name(dist::ReduceOp::Avg) == "AVG");
  REQUIRE_FALSE(dist::is_initialized());
}

TEST_CASE("process group: a world of one process works in place", "[distributed]") {
  auto store = std::make_shared<dist::TCPStore>("127.0.0.1", 0, true, std::chrono::seconds(5));
  dist::ProcessGroupGloo group(store, 0, 1, std::chrono::seconds(5));
  Tensor value = ember::tensor({1.5, 2.5});
  group.all_reduce(value, dist::ReduceOp::Avg);
  REQUIRE(value.equal(ember::tensor({1.5, 2.5})));
  std::vector<Tensor> outputs{ember::zeros({2})};
  group.all_gather(outputs, value);
  REQUIRE(outputs[0].equal(value));
  group.barrier();
  REQUIRE(group.size() == 1);
  Tensor gpu_error_free = ember::ones({2});
  REQUIRE_THROWS_WITH(group.broadcast(gpu_error_free, 1), "broadcast: invalid root rank 1 for world size 1");
}
