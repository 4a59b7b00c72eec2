// tests/distributed/test_collectives.cpp — Gloo collectives in 2 and 3 real processes.
//
// Expected values are computed locally: rank r contributes base * (r + 1), so the SUM over
// R ranks is base * R(R+1)/2, MAX is base * R, MIN is base * 1 (for base >= 0).
// Covered: float32/float64/int64, sizes 0 (empty), 0-d, 1, 7 and 1000, a non-contiguous
// (transposed) tensor, broadcast from the last rank, all_gather, reduce_scatter, barrier,
// and the errors a rank can hit.
#include <catch2/catch.hpp>

#include <csignal>

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

void require_workers_passed(const std::vector<ember::testing::WorkerResult>& results) {
  for (std::size_t rank = 0; rank < results.size(); ++rank) {
    INFO("rank " << rank << " output:\n" << results[rank].output);
    REQUIRE_FALSE(results[rank].killed_by_limit);
    REQUIRE(results[rank].exit_code == 0);
  }
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
  require_workers_passed(ember::testing::run_workers("worker: collectives", 2));
}

TEST_CASE("collectives: all_reduce, broadcast, all_gather, reduce_scatter in 3 processes", "[distributed]") {
  require_workers_passed(ember::testing::run_workers("worker: collectives", 3));
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
  INFO("rank 0 output:\n" << results[0].output);
  REQUIRE_FALSE(results[0].killed_by_limit);
  REQUIRE(results[0].exit_code == 0);
  REQUIRE(results[1].signal == SIGKILL);
}

TEST_CASE("process group: errors without a running group", "[distributed]") {
  REQUIRE_FALSE(dist::is_initialized());
  REQUIRE_THROWS_WITH(dist::get_rank(),
                      "Default process group has not been initialized, please make sure to call init_process_group.");
  REQUIRE_THROWS_AS(dist::get_world_size(), dist::DistributedError);
  REQUIRE_THROWS_WITH(dist::init_process_group("nccl", 0, 1),
                      Catch::StartsWith("NCCL backend not built yet"));
  REQUIRE_THROWS_AS(dist::init_process_group("nccl", 0, 1), ember::NotImplementedError);
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
