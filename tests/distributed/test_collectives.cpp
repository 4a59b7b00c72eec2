// tests/distributed/test_collectives.cpp — Gloo collectives in 2 and 3 real processes.
//
// Expected values are computed locally: rank r contributes base * (r + 1), so the SUM over
// R ranks is base * R(R+1)/2, MAX is base * R, MIN is base * 1 (for base >= 0).
// Covered: float32/float64/int64 (and bfloat16/float16 on small exact values), sizes 0
// (empty), 0-d, 1, 7 and 1000, tensors of every dtype larger than a 25 MB DDP bucket under
// every reduction, a non-contiguous (transposed) tensor, broadcast from the last rank,
// all_gather, reduce_scatter with SUM,
// MAX, MIN and AVG, barrier, and the errors a rank can hit; a peer that is killed
// (connection reset) and one that hangs (the timeout fires), each ending the survivor's
// wait within the timeout plus a few seconds; a rank alone in the rendezvous.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include <ember/ember.h>

#include "elapsed_message.h"
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

// Tensors larger than a DDP bucket: 28 MB of dtype T, rank r holding r + 1 everywhere
// except a last element of 10 (r + 1), so a mix-up between chunks (the ring cuts the
// tensor into world_size pieces) would show. Filled and checked with plain loops: ember's
// own ops on 7 million elements, in a Debug + ASan build, would make these cases take
// most of the test's time limit.
template <class T>
void fill_large(Tensor& tensor, double body, double last) {
  T* data = tensor.data_ptr<T>();
  const std::int64_t numel = tensor.numel();
  std::fill(data, data + numel - 1, static_cast<T>(body));
  data[numel - 1] = static_cast<T>(last);
}

template <class T>
std::int64_t first_wrong_element(const Tensor& tensor, double body, double last) {
  const T* data = tensor.data_ptr<T>();
  const std::int64_t numel = tensor.numel();
  for (std::int64_t i = 0; i < numel - 1; ++i)
    if (data[i] != static_cast<T>(body)) return i;
  return data[numel - 1] == static_cast<T>(last) ? -1 : numel - 1;
}

template <class T>
void large_collectives(ember::DType dtype, int rank, int world) {
  const double sum_factor = world * (world + 1) / 2.0;
  const auto numel = static_cast<std::int64_t>(28'000'000 / sizeof(T));
  Tensor large = ember::empty({numel}, ember::TensorOptions(dtype));
  std::vector<std::pair<dist::ReduceOp, double>> ops{
      {dist::ReduceOp::Sum, sum_factor}, {dist::ReduceOp::Max, world}, {dist::ReduceOp::Min, 1.0}};
  if (ember::is_floating_point(dtype)) ops.push_back({dist::ReduceOp::Avg, sum_factor / world});
  for (auto [op, factor] : ops) {
    INFO("large " << ember::dtype_name(dtype) << " all_reduce " << dist::reduce_op_name(op));
    fill_large<T>(large, rank + 1, 10 * (rank + 1));
    dist::all_reduce(large, op);
    REQUIRE(first_wrong_element<T>(large, factor, 10 * factor) == -1);
  }
  INFO("large " << ember::dtype_name(dtype) << " broadcast");
  fill_large<T>(large, rank + 1, 10 * (rank + 1));
  dist::broadcast(large, world - 1);
  REQUIRE(first_wrong_element<T>(large, world, 10 * world) == -1);
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
      // reduction over ranks q of inputs[r] = base * (q + 1) * (r + 1): SUM gives
      // base * (r + 1) * sum_factor, MAX base * (r + 1) * world, MIN base * (r + 1).
      std::vector<Tensor> inputs;
      for (int j = 0; j < world; ++j) inputs.push_back(contribution(shape, dtype, rank) * static_cast<std::int64_t>(j + 1));
      const Tensor mine = base.to(ember::kFloat64) * static_cast<double>(rank + 1);
      std::vector<std::pair<dist::ReduceOp, double>> scatter_ops{
          {dist::ReduceOp::Sum, sum_factor}, {dist::ReduceOp::Max, world}, {dist::ReduceOp::Min, 1.0}};
      if (ember::is_floating_point(dtype)) scatter_ops.push_back({dist::ReduceOp::Avg, sum_factor / world});
      for (auto [op, factor] : scatter_ops) {
        INFO("reduce_scatter " << dist::reduce_op_name(op));
        Tensor scattered = ember::zeros(shape, dtype);
        dist::reduce_scatter(scattered, inputs, op);
        REQUIRE(scattered.allclose((mine * factor).to(dtype)));
        if (!ember::is_floating_point(dtype)) REQUIRE(scattered.equal((mine * factor).to(dtype)));
      }
    }
  }

  // bfloat16 and float16 (a model whose parameters are 16-bit: DDP's buckets of its
  // gradients): each pair summed in float32 and rounded (as PyTorch's Gloo backend). Small
  // integers here, exact in both dtypes, so every reduction order gives the same bits; a
  // transposed view is reduced in place.
  for (ember::DType dtype : {ember::kBFloat16, ember::kFloat16}) {
    INFO("dtype " << ember::dtype_name(dtype));
    auto small = [&](double factor) { return (ember::arange(16, ember::kFloat64) * factor).to(dtype).reshape({4, 4}); };
    Tensor summed = small(rank + 1).t();
    dist::all_reduce(summed, dist::ReduceOp::Sum);
    REQUIRE(summed.equal(small(sum_factor).t()));
    Tensor maximum = small(rank + 1);
    dist::all_reduce(maximum, dist::ReduceOp::Max);
    REQUIRE(maximum.equal(small(world)));
    Tensor minimum = small(rank + 1);
    dist::all_reduce(minimum, dist::ReduceOp::Min);
    REQUIRE(minimum.equal(small(1)));
    Tensor average = small(rank + 1);
    dist::all_reduce(average, dist::ReduceOp::Avg);
    REQUIRE(average.equal(small(sum_factor / world)));
    Tensor broadcasted = small(rank + 1);
    dist::broadcast(broadcasted, world - 1);
    REQUIRE(broadcasted.equal(small(world)));
    std::vector<Tensor> gathered;
    for (int r = 0; r < world; ++r) gathered.push_back(ember::zeros({4, 4}, dtype));
    dist::all_gather(gathered, small(rank + 1));
    for (int r = 0; r < world; ++r) REQUIRE(gathered[r].equal(small(r + 1)));
    std::vector<Tensor> inputs;
    for (int j = 0; j < world; ++j) inputs.push_back(small((rank + 1) * (j + 1)));
    Tensor scattered = ember::zeros({4, 4}, dtype);
    dist::reduce_scatter(scattered, inputs, dist::ReduceOp::Sum);
    REQUIRE(scattered.equal(small(sum_factor * (rank + 1))));
  }

  // Larger than one DDP bucket (25 MB): 28 MB of each dtype, every reduction and a
  // broadcast (large_collectives above).
  large_collectives<float>(ember::kFloat32, rank, world);
  large_collectives<double>(ember::kFloat64, rank, world);
  large_collectives<std::int64_t>(ember::kInt64, rank, world);

  // Non-contiguous: a transposed view is reduced in place, and its base sees the result.
  Tensor matrix = contribution({3, 4}, ember::kFloat32, rank);
  Tensor transposed = matrix.t();
  REQUIRE_FALSE(transposed.is_contiguous());
  dist::all_reduce(transposed, dist::ReduceOp::Sum);
  REQUIRE(matrix.equal(contribution({3, 4}, ember::kFloat32, 0) * static_cast<float>(sum_factor)));

  // Errors are thrown on every rank before any communication, so no rank is left waiting.
  Tensor flags = ember::ones({3}, ember::kBool);
  REQUIRE_THROWS_WITH(dist::all_reduce(flags),
                      "all_reduce: unsupported dtype bool (use float32, float64, bfloat16, float16, int64 or int32)");
  REQUIRE_THROWS_AS(dist::all_reduce(flags), ember::DTypeError);
  Tensor counts = ember::ones({3}, ember::kInt64);
  REQUIRE_THROWS_WITH(dist::all_reduce(counts, dist::ReduceOp::Avg),
                      "all_reduce: ReduceOp.AVG needs a floating point tensor, got int64");
  std::vector<Tensor> count_inputs;
  for (int r = 0; r < world; ++r) count_inputs.push_back(ember::ones({3}, ember::kInt64));
  REQUIRE_THROWS_WITH(dist::reduce_scatter(counts, count_inputs, dist::ReduceOp::Avg),
                      "reduce_scatter: ReduceOp.AVG needs a floating point tensor, got int64");
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

// A peer that dies makes the survivor's next collective throw — not hang — and the
// survivor is out within the configured timeout (2 s) plus a few seconds.
constexpr double kKilledPeerTimeoutSeconds = 2.0;
constexpr double kSlackSeconds = 4.0;  // process exit, a loaded 2-core CI machine

TEST_CASE("worker: killed peer", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  dist::init_process_group("gloo", -1, -1, std::chrono::milliseconds(static_cast<int>(kKilledPeerTimeoutSeconds * 1000)));
  dist::barrier();
  if (dist::get_rank() == 1) ::raise(SIGKILL);
  Tensor value = ember::ones({1000});
  const auto start = std::chrono::steady_clock::now();
  try {
    dist::all_reduce(value);
    FAIL("all_reduce returned although rank 1 is dead");
  } catch (const dist::DistributedError& error) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string message = error.what();
    INFO(message << " (after " << waited << " s)");
    // The message tells the time really spent (a closed connection fails fast), then the timeout.
    const long long reported = ember::testing::reported_elapsed_ms(message, "Gloo all_reduce failed on rank 0", 2000);
    REQUIRE(reported >= 0);
    REQUIRE(static_cast<double>(reported) <= waited * 1000.0 + 1.0);
    REQUIRE(waited <= kKilledPeerTimeoutSeconds + kSlackSeconds);
  }
  std::_Exit(0);  // the group's peer is gone: leave without the orderly goodbye
}

TEST_CASE("collectives: a killed peer makes the survivor throw naming op, rank and timeout", "[distributed]") {
  // The limit (timeout 2 s + rendezvous + slack) bounds the test; the survivor must exit 0.
  auto results = ember::testing::run_workers("worker: killed peer", 2, std::chrono::seconds(30));
  INFO("rank 0: " << ember::testing::describe(results[0]));
  REQUIRE(results[0].exit_code == 0);
  REQUIRE(results[1].signal == SIGKILL);
  // Both times count from the same start: the survivor exited at most timeout + slack
  // after its peer died (the parent polls exits every 10 ms).
  REQUIRE(results[0].seconds - results[1].seconds <= kKilledPeerTimeoutSeconds + kSlackSeconds);
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
    const long long reported =
        ember::testing::reported_elapsed_ms(error.what(), "Gloo all_reduce failed on rank 0", 1000);
    REQUIRE(reported >= 900);
    REQUIRE(static_cast<double>(reported) <= waited * 1000.0 + 1.0);
    // It is the timeout that ended the wait (not a closed connection): at least 1 s passed,
    // and not much more.
    REQUIRE(waited >= 0.9);
    REQUIRE(waited <= 1.0 + kSlackSeconds);
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

// A rendezvous that cannot complete says which rank gave up, at what step and after how
// long — here rank 0 of a world of 2 whose rank 1 never comes (it serves the store itself,
// as without a launcher), and rank 1 whose rank 0 never comes.
TEST_CASE("worker: alone in the rendezvous", "[.worker]") {
  if (!ember::testing::is_worker()) return;
  const int rank = std::stoi(std::getenv("RANK"));
  const auto start = std::chrono::steady_clock::now();
  try {
    dist::init_process_group("gloo", -1, -1, std::chrono::seconds(1));
    FAIL("init_process_group returned although the other rank never came");
  } catch (const dist::DistributedError& error) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string message = error.what();
    std::cout << "rank " << rank << ": " << message << "\n";
    INFO(message << " (after " << waited << " s)");
    if (rank == 0) {
      REQUIRE_THAT(message, Catch::Matches("Gloo rendezvous failed on rank 0 of 2 after \\d+ ms \\(timeout 1000 ms\\) "
                                           "while exchanging addresses with the other ranks \\(full mesh\\): [\\s\\S]*"));
      REQUIRE(ember::testing::reported_elapsed_ms(message, "rank 0 of 2", 1000) >= 900);
      REQUIRE_THAT(message, Catch::EndsWith("; ranks that never reached the store: 1"));
    } else {
      REQUIRE_THAT(message, Catch::StartsWith("Gloo rendezvous failed on rank 1 of 2 after "));
      REQUIRE_THAT(message, Catch::Contains(" ms (timeout 1000 ms) while connecting to the store at 127.0.0.1:" +
                                            std::string(std::getenv("MASTER_PORT"))));
      REQUIRE(ember::testing::reported_elapsed_ms(message, "rank 1 of 2", 1000) >= 900);
      REQUIRE_THAT(message, Catch::Contains("is rank 0 running"));
    }
    REQUIRE(waited < 1.0 + 4.0);
  }
  REQUIRE_FALSE(dist::is_initialized());
}

TEST_CASE("process group: a rank alone in the rendezvous names its rank, the step and the timeout",
          "[distributed]") {
  const std::string port = std::to_string(ember::testing::free_port());
  // Rank 0 with WORLD_SIZE=2 and nobody else: it serves the store and waits for rank 1.
  auto alone = ember::testing::run_workers(
      "worker: alone in the rendezvous", 1, std::chrono::seconds(20),
      {{"WORLD_SIZE", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", ""}, {"MASTER_PORT", port}});
  ember::testing::require_all_passed(alone);
  // Rank 1 with nobody serving MASTER_PORT.
  auto orphan = ember::testing::run_workers(
      "worker: alone in the rendezvous", 1, std::chrono::seconds(20),
      {{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"TORCHELASTIC_USE_AGENT_STORE", ""}, {"MASTER_PORT", port}});
  ember::testing::require_all_passed(orphan);
}
