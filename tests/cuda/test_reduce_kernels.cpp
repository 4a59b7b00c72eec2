// tests/cuda/test_reduce_kernels.cpp — reductions and softmax (cuda/kernels/reduce.cuh,
// softmax.cuh) run through the emulator against core's CPU kernels.
//
// Shapes [outer, reduce, inner] cover inner == 1 (rows) and inner > 1 (columns), reduce
// lengths on both sides of a warp and of a block (1, 7, 31, 33, 1000), empty reductions and
// empty outputs. Float sums are compared with a tolerance: the GPU adds in a tree, the CPU
// in order, so the last bits may differ.
#include <tuple>
#include <vector>

#include "cuda_test_support.h"
#include "emulator_schedules.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/reduce.cuh>
#include <ember/cuda/kernels/softmax.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

struct ReduceShape {
  std::int64_t outer, reduce, inner;
};

std::vector<ReduceShape> reduce_shapes() {
  std::vector<ReduceShape> shapes;
  for (std::int64_t r : odd_sizes()) {
    shapes.push_back({1, r, 1});
    shapes.push_back({3, r, 1});
    shapes.push_back({2, r, 5});
  }
  shapes.push_back({4, 0, 3});  // empty reduction: identities
  shapes.push_back({0, 5, 2});  // no outputs at all
  return shapes;
}

template <class In, class Out>
void check_reduce(ReduceOp op, double low, double high, bool with_indices = false) {
  const bool extremum = op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Prod;
  for (const ReduceShape& s : reduce_shapes()) {
    if (extremum && s.reduce == 0) continue;  // native:: rejects max over an empty dim
    const std::int64_t numel = s.outer * s.reduce * s.inner, outputs = s.outer * s.inner;
    auto input = random_values<In>(numel, low, high, 42u + static_cast<unsigned>(s.reduce));
    std::vector<Out> got(outputs + 1, Out(0)), want(outputs + 1, Out(0));
    std::vector<std::int64_t> got_index(outputs + 1, -5), want_index(outputs + 1, -5);
    ReducePlan plan;
    plan.outer = s.outer;
    plan.reduce = s.reduce;
    plan.inner = s.inner;
    plan.input = input.data();
    plan.input_dtype = dtype_of_v<In>;
    plan.output_dtype = dtype_of_v<Out>;
    ReducePlan cpu_plan = plan;
    plan.output = got.data();
    cpu_plan.output = want.data();
    if (with_indices) {
      plan.indices = got_index.data();
      cpu_plan.indices = want_index.data();
    }
    gpu::dispatch_reduce(op, plan, nullptr);
    cpu::reduce(op, cpu_plan);
    INFO("op " << static_cast<int>(op) << " shape [" << s.outer << ", " << s.reduce << ", " << s.inner << "]");
    const std::int64_t bad = first_mismatch(got.data(), want.data(), outputs, 1e-4, 1e-4);
    INFO("first mismatch at output " << bad);
    REQUIRE(bad == -1);
    if (with_indices) REQUIRE(got_index == want_index);
  }
}

}  // namespace

TEST_CASE("cuda kernels (emulated): sum and mean match the CPU backend", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_reduce<float, float>(ReduceOp::Sum, -1, 1);
  check_reduce<double, double>(ReduceOp::Sum, -1, 1);
  check_reduce<std::int64_t, std::int64_t>(ReduceOp::Sum, -100, 100);
  check_reduce<std::int32_t, std::int32_t>(ReduceOp::Sum, -100, 100);
  check_reduce<float, float>(ReduceOp::Mean, -1, 1);
  check_reduce<double, double>(ReduceOp::Mean, -1, 1);
}

TEST_CASE("cuda kernels (emulated): prod matches the CPU backend", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_reduce<double, double>(ReduceOp::Prod, 0.9, 1.1);
  check_reduce<std::int64_t, std::int64_t>(ReduceOp::Prod, -1, 1);
}

TEST_CASE("cuda kernels (emulated): max/min with indices and argmax/argmin match the CPU backend",
          "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // Integer inputs in a small range: many ties, so the first-index rule is exercised.
  check_reduce<std::int64_t, std::int64_t>(ReduceOp::Max, -3, 3, true);
  check_reduce<std::int64_t, std::int64_t>(ReduceOp::Min, -3, 3, true);
  check_reduce<float, float>(ReduceOp::Max, -3, 3, true);
  check_reduce<double, double>(ReduceOp::Min, -3, 3, false);
  check_reduce<std::int32_t, std::int64_t>(ReduceOp::ArgMax, -3, 3);
  check_reduce<float, std::int64_t>(ReduceOp::ArgMin, -3, 3);
}

TEST_CASE("cuda kernels (emulated): long reductions split over blocks in two passes", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // Host memory stands in for the caching allocator.
  struct HostScratch final : gpu::ScratchAllocator {
    std::vector<std::vector<char>> blocks;
    void* allocate(std::size_t bytes) override { return blocks.emplace_back(bytes).data(); }
    void release(void*, std::size_t) override {}
  } scratch;
  for (const ReduceShape& s : {ReduceShape{1, 20000, 1}, ReduceShape{3, 9000, 1}, ReduceShape{2, 8193, 3}}) {
    ReducePlan probe;
    probe.outer = s.outer;
    probe.reduce = s.reduce;
    probe.inner = s.inner;
    REQUIRE(gpu::reduce_chunks(probe) > 1);
    const std::int64_t numel = s.outer * s.reduce * s.inner, outputs = s.outer * s.inner;
    auto input = random_values<float>(numel, -1, 1, 77);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::ArgMin}) {
      const bool arg = op == ReduceOp::ArgMin;
      std::vector<float> got(outputs), want(outputs);
      std::vector<std::int64_t> got_index(outputs, -5), want_index(outputs, -5);
      ReducePlan plan = probe;
      plan.input = input.data();
      plan.output_dtype = arg ? DType::Int64 : DType::Float32;
      ReducePlan cpu_plan = plan;
      plan.output = arg ? static_cast<void*>(got_index.data()) : got.data();
      cpu_plan.output = arg ? static_cast<void*>(want_index.data()) : want.data();
      if (op == ReduceOp::Max) {
        plan.indices = got_index.data();
        cpu_plan.indices = want_index.data();
      }
      const auto launches = ember::emulate::stats().launches;
      gpu::dispatch_reduce(op, plan, nullptr, &scratch);
      REQUIRE(ember::emulate::stats().launches - launches == 2);
      cpu::reduce(op, cpu_plan);
      INFO("op " << static_cast<int>(op) << " shape [" << s.outer << ", " << s.reduce << ", " << s.inner << "]");
      REQUIRE(first_mismatch(got.data(), want.data(), outputs, 1e-4, 1e-4) == -1);
      REQUIRE(got_index == want_index);
    }
  }
}

TEST_CASE("cuda kernels (emulated): max propagates NaN and reports its index", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  std::vector<float> input{1.0f, std::nanf(""), 5.0f, std::nanf(""), 2.0f};
  float value = 0;
  std::int64_t index = -1;
  ReducePlan plan;
  plan.reduce = 5;
  plan.input = input.data();
  plan.output = &value;
  plan.indices = &index;
  gpu::dispatch_reduce(ReduceOp::Max, plan, nullptr);
  REQUIRE(std::isnan(value));
  REQUIRE(index == 1);
}

TEST_CASE("cuda kernels (emulated): repeated reductions give bit-identical results", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  auto input = random_values<float>(1000, -1, 1, 5);
  float first = 0, second = 0;
  ReducePlan plan;
  plan.reduce = 1000;
  plan.input = input.data();
  plan.output = &first;
  gpu::dispatch_reduce(ReduceOp::Sum, plan, nullptr);
  plan.output = &second;
  gpu::dispatch_reduce(ReduceOp::Sum, plan, nullptr);
  REQUIRE(std::memcmp(&first, &second, sizeof(float)) == 0);
}

TEST_CASE("cuda kernels (emulated): softmax and log_softmax match the CPU backend", "[cuda][softmax]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  std::vector<ReduceShape> shapes;
  for (std::int64_t d : odd_sizes()) {
    shapes.push_back({1, d, 1});
    shapes.push_back({3, d, 1});
    shapes.push_back({2, d, 4});
  }
  shapes.push_back({0, 3, 1});
  for (bool log : {false, true})
    for (const ReduceShape& s : shapes) {
      const std::int64_t numel = s.outer * s.reduce * s.inner;
      // Large magnitudes: without the max subtraction exp() would overflow.
      auto input = random_values<float>(numel, -60, 60, 3u + static_cast<unsigned>(s.reduce));
      std::vector<float> got(numel + 1, 0.0f), want(numel + 1, 0.0f);
      SoftmaxPlan plan;
      plan.outer = s.outer;
      plan.dim = s.reduce;
      plan.inner = s.inner;
      plan.input = input.data();
      SoftmaxPlan cpu_plan = plan;
      plan.output = got.data();
      cpu_plan.output = want.data();
      gpu::dispatch_softmax(plan, log, nullptr);
      cpu::softmax(cpu_plan, log);
      INFO("log " << log << " shape [" << s.outer << ", " << s.reduce << ", " << s.inner << "]");
      REQUIRE(first_mismatch(got.data(), want.data(), numel, 1e-4, 1e-6) == -1);
    }
}

TEST_CASE("cuda kernels (emulated): reductions convert to a wider output dtype", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // sum(int32) is int64 and sum(float32, dtype=float64) accumulates in double; the CPU
  // kernels expect native:: to cast first, so the reference here is a plain loop.
  auto ints = random_values<std::int32_t>(1000, -100000, 100000, 8);
  std::int64_t int_total = 0, int_expected = 0;
  for (std::int32_t v : ints) int_expected += v;
  ReducePlan plan;
  plan.reduce = 1000;
  plan.input = ints.data();
  plan.input_dtype = DType::Int32;
  plan.output = &int_total;
  plan.output_dtype = DType::Int64;
  gpu::dispatch_reduce(ReduceOp::Sum, plan, nullptr);
  REQUIRE(int_total == int_expected);
  auto bools = random_values<bool>(33, 0, 1, 9);
  std::int64_t true_count = 0, expected_true = 0;
  for (auto b : bools) expected_true += b;
  plan.reduce = 33;
  plan.input = bools.data();
  plan.input_dtype = DType::Bool;
  plan.output = &true_count;
  gpu::dispatch_reduce(ReduceOp::Sum, plan, nullptr);
  REQUIRE(true_count == expected_true);
  auto floats = random_values<float>(1000, -1, 1, 10);
  double wide = 0, expected_wide = 0;
  for (float v : floats) expected_wide += v;
  plan.reduce = 1000;
  plan.input = floats.data();
  plan.input_dtype = DType::Float32;
  plan.output = &wide;
  plan.output_dtype = DType::Float64;
  gpu::dispatch_reduce(ReduceOp::Sum, plan, nullptr);
  REQUIRE(std::fabs(wide - expected_wide) < 1e-12);
}

TEST_CASE("cuda kernels (emulated): softmax over an empty dim writes nothing", "[cuda][softmax]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  std::vector<float> out(4, 7.0f);
  SoftmaxPlan plan;
  plan.outer = 2;
  plan.dim = 0;
  plan.inner = 2;
  plan.output = out.data();
  const auto launches = ember::emulate::stats().launches;
  gpu::dispatch_softmax(plan, false, nullptr);
  REQUIRE(ember::emulate::stats().launches == launches);
  REQUIRE(out == std::vector<float>(4, 7.0f));
}

TEST_CASE("cuda kernels (emulated): softmax of float64 rows sums to one", "[cuda][softmax]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  auto input = random_values<double>(3 * 33, -5, 5, 11);
  std::vector<double> out(3 * 33);
  SoftmaxPlan plan;
  plan.outer = 3;
  plan.dim = 33;
  plan.input = input.data();
  plan.output = out.data();
  plan.dtype = DType::Float64;
  gpu::dispatch_softmax(plan, false, nullptr);
  for (int row = 0; row < 3; ++row) {
    double total = 0;
    for (int d = 0; d < 33; ++d) total += out[row * 33 + d];
    REQUIRE(std::fabs(total - 1.0) < 1e-12);
  }
}

TEST_CASE("cuda kernels (emulated): softmax rejects integer dtypes", "[cuda][softmax]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  std::vector<std::int64_t> in(4), out(4);
  SoftmaxPlan plan;
  plan.dim = 4;
  plan.input = in.data();
  plan.output = out.data();
  plan.dtype = DType::Int64;
  REQUIRE_THROWS_AS(gpu::dispatch_softmax(plan, false, nullptr), ember::DTypeError);
}
