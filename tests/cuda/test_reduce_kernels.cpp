// tests/cuda/test_reduce_kernels.cpp — reductions and softmax (cuda/kernels/reduce.cuh,
// softmax.cuh) run through the emulator against core's CPU kernels.
//
// Shapes [outer, reduce, inner] cover inner == 1 (the rows kernel) and inner > 1 (the
// columns kernel: full and partial 32-wide tiles, tiles narrower than a warp), reduce
// lengths on both sides of a warp and of a block (1, 7, 31, 33, 1000), empty reductions and
// empty outputs. Float sums are compared with a tolerance: the GPU adds in a tree (in float),
// the CPU in order (in double), so the last bits may differ; max/min/arg* must match exactly.
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

#include "cuda_test_support.h"
#include "host_scratch.h"
#include "emulator_schedules.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/reduced_float.h>
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

// inner > 1: the columns kernel. 70 and 129 end in a partial tile; 33 leaves one column
// in the second tile; 2, 5, 12 and 17 take tiles of 2, 8, 16 and 32 columns; reduce 0
// stores identities, reduce 1 one element per column.
std::vector<ReduceShape> column_shapes() {
  return {{1, 37, 70}, {3, 5, 33}, {2, 300, 129}, {1, 1, 64}, {4, 0, 40},
          {2, 7, 2},   {3, 33, 5}, {1, 100, 12},  {2, 9, 17}};
}

// Floats for max/min: rounded to whole numbers when `ties` (so the first-index rule decides
// often), and every `nan_every`-th element (from a shape-dependent start) NaN: max/min must
// return the first NaN of each output, and its index.
template <class T>
void add_ties_and_nans(HostVector<T>& values, bool ties, std::int64_t nan_every, unsigned seed) {
  if constexpr (std::is_floating_point_v<T>) {
    if (ties)
      for (auto& v : values) v = std::round(v);
    if (nan_every <= 0) return;
    for (std::size_t k = seed % static_cast<unsigned>(nan_every); k < values.size(); k += static_cast<std::size_t>(nan_every))
      values[k] = std::numeric_limits<T>::quiet_NaN();
  }
}

template <class In, class Out>
void check_reduce(ReduceOp op, double low, double high, bool with_indices = false,
                  const std::vector<ReduceShape>& shapes = reduce_shapes(), std::int64_t nan_every = 0,
                  bool ties = false) {
  const bool extremum = op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Prod;
  for (const ReduceShape& s : shapes) {
    if (extremum && s.reduce == 0) continue;  // native:: rejects max over an empty dim
    const std::int64_t numel = s.outer * s.reduce * s.inner, outputs = s.outer * s.inner;
    const unsigned seed = 42u + static_cast<unsigned>(s.reduce + 7 * s.inner);
    auto input = random_values<In>(numel, low, high, seed);
    add_ties_and_nans<In>(input, ties, nan_every, seed);
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
    // The winner of max/min is one input element: the same bits as the CPU's (NaNs included).
    if (extremum) REQUIRE(std::memcmp(got.data(), want.data(), sizeof(Out) * got.size()) == 0);
    if (with_indices) REQUIRE(got_index == want_index);
  }
}

// One reduction of `input` (host memory) as the emulated kernel computes it.
template <class Out>
std::vector<Out> reduce_on_emulator(ReduceOp op, ReduceShape s, const void* input, DType input_dtype,
                                    gpu::ScratchAllocator* scratch = nullptr) {
  std::vector<Out> out(static_cast<std::size_t>(s.outer * s.inner));
  ReducePlan plan;
  plan.outer = s.outer;
  plan.reduce = s.reduce;
  plan.inner = s.inner;
  plan.input = input;
  plan.input_dtype = input_dtype;
  plan.output = out.data();
  plan.output_dtype = dtype_of_v<Out>;
  gpu::dispatch_reduce(op, plan, nullptr, scratch);
  return out;
}

// The rows kernel reads 16-byte vectors when a row starts 16-byte aligned, single elements
// otherwise, folding the same elements in the same order either way: the same row placed
// at every offset within a vector (the emulator checks each vector load's alignment) gives
// the same bits, and equals the CPU's result.
template <class In, class Out>
void check_row_alignments(ReduceOp op, double low, double high, std::int64_t length) {
  constexpr std::int64_t V = gpu::row_vector_width<In>();
  const auto values = random_values<In>(length, low, high, 13u + static_cast<unsigned>(length));
  std::vector<Out> want(1);
  ReducePlan cpu_plan;
  cpu_plan.reduce = length;
  cpu_plan.input = values.data();
  cpu_plan.input_dtype = dtype_of_v<In>;
  cpu_plan.output = want.data();
  cpu_plan.output_dtype = dtype_of_v<Out>;
  cpu::reduce(op, cpu_plan);
  std::vector<Out> aligned_result;
  for (std::int64_t offset = 0; offset < V; ++offset) {
    HostBuffer buffer(length + V, sizeof(In));
    REQUIRE(reinterpret_cast<std::uintptr_t>(buffer.at(0)) % 16 == 0);
    std::memcpy(buffer.at(offset), values.data(), sizeof(In) * static_cast<std::size_t>(length));
    const auto got = reduce_on_emulator<Out>(op, {1, length, 1}, buffer.at(offset), dtype_of_v<In>);
    INFO("op " << static_cast<int>(op) << " length " << length << " row start misaligned by " << offset << " elements");
    REQUIRE(first_mismatch(got.data(), want.data(), 1, 1e-4, 1e-4) == -1);
    if (offset == 0) aligned_result = got;
    REQUIRE(std::memcmp(got.data(), aligned_result.data(), sizeof(Out)) == 0);
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

TEST_CASE("cuda kernels (emulated): column reductions (inner > 1) match the CPU backend for every op",
          "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  const std::vector<ReduceShape> shapes = column_shapes();
  check_reduce<float, float>(ReduceOp::Sum, -1, 1, false, shapes);
  check_reduce<double, double>(ReduceOp::Sum, -1, 1, false, shapes);
  check_reduce<std::int32_t, std::int32_t>(ReduceOp::Sum, -100, 100, false, shapes);
  check_reduce<std::int64_t, std::int64_t>(ReduceOp::Sum, -100, 100, false, shapes);
  check_reduce<float, float>(ReduceOp::Mean, -1, 1, false, shapes);
  check_reduce<double, double>(ReduceOp::Mean, -1, 1, false, shapes);
  check_reduce<float, float>(ReduceOp::Prod, 0.9, 1.1, false, shapes);
  check_reduce<double, double>(ReduceOp::Prod, 0.9, 1.1, false, shapes);
  check_reduce<std::int32_t, std::int32_t>(ReduceOp::Prod, -1, 1, false, shapes);
  check_reduce<std::int64_t, std::int64_t>(ReduceOp::Prod, -2, 2, false, shapes);
  // Small ranges of whole numbers: many ties (the first index wins); NaNs (the first wins).
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min}) {
    check_reduce<float, float>(op, -3, 3, true, shapes, 11, true);
    check_reduce<double, double>(op, -3, 3, true, shapes, 13, true);
    check_reduce<float, float>(op, -3, 3, true, shapes, 0, true);
    check_reduce<float, float>(op, -3, 3, false, shapes);
    check_reduce<std::int32_t, std::int32_t>(op, -3, 3, true, shapes);
    check_reduce<std::int64_t, std::int64_t>(op, -3, 3, false, shapes);
  }
  for (ReduceOp op : {ReduceOp::ArgMax, ReduceOp::ArgMin}) {
    check_reduce<float, std::int64_t>(op, -3, 3, false, shapes, 9, true);
    check_reduce<double, std::int64_t>(op, -3, 3, false, shapes, 0, true);
    check_reduce<std::int32_t, std::int64_t>(op, -3, 3, false, shapes);
    check_reduce<std::int64_t, std::int64_t>(op, -3, 3, false, shapes);
  }
}

TEST_CASE("cuda kernels (emulated): row reductions give the same bits at every row alignment", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (std::int64_t length : {5, 1001}) {  // shorter than one vector per thread; many, with a tail
    check_row_alignments<float, float>(ReduceOp::Sum, -1, 1, length);
    check_row_alignments<float, float>(ReduceOp::Mean, -1, 1, length);
    check_row_alignments<double, double>(ReduceOp::Sum, -1, 1, length);
    check_row_alignments<double, double>(ReduceOp::Prod, 0.9, 1.1, length);
    check_row_alignments<std::int32_t, std::int32_t>(ReduceOp::Sum, -100, 100, length);
    check_row_alignments<std::int64_t, std::int64_t>(ReduceOp::Max, -3, 3, length);
    check_row_alignments<std::uint8_t, std::uint8_t>(ReduceOp::Sum, 0, 3, length);
    check_row_alignments<std::uint8_t, std::int64_t>(ReduceOp::ArgMax, 0, 9, length);
    check_row_alignments<float, std::int64_t>(ReduceOp::ArgMin, -3, 3, length);
  }
  // Rows of one tensor start at different alignments (1001 floats is not a whole number of
  // vectors): identical rows must still give identical bits.
  std::vector<float> rows;
  const auto row = random_values<float>(1001, -1, 1, 21);
  for (int copy = 0; copy < 4; ++copy) rows.insert(rows.end(), row.begin(), row.end());
  const auto sums = reduce_on_emulator<float>(ReduceOp::Sum, {4, 1001, 1}, rows.data(), DType::Float32);
  for (int copy = 1; copy < 4; ++copy) REQUIRE(std::memcmp(&sums[copy], &sums[0], sizeof(float)) == 0);
}

TEST_CASE("cuda kernels (emulated): a sum of -0.0 is +0.0 in rows and columns, as the CPU's", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (ReduceShape s : {ReduceShape{2, 5, 1}, ReduceShape{2, 5, 40}, ReduceShape{2, 5, 3}}) {
    const std::vector<float> zeros(static_cast<std::size_t>(s.outer * s.reduce * s.inner), -0.0f);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Prod}) {
      const auto got = reduce_on_emulator<float>(op, s, zeros.data(), DType::Float32);
      std::vector<float> want(got.size());
      ReducePlan cpu_plan;
      cpu_plan.outer = s.outer;
      cpu_plan.reduce = s.reduce;
      cpu_plan.inner = s.inner;
      cpu_plan.input = zeros.data();
      cpu_plan.output = want.data();
      cpu::reduce(op, cpu_plan);
      INFO("op " << static_cast<int>(op) << " inner " << s.inner);
      REQUIRE(std::signbit(got[0]) == (op == ReduceOp::Prod));  // -0 · -0 · ... five times: -0
      REQUIRE(std::memcmp(got.data(), want.data(), sizeof(float) * got.size()) == 0);
    }
  }
}

TEST_CASE("cuda kernels (emulated): long reductions split over blocks in two passes", "[cuda][reduce]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  HostScratch scratch;
  // Rows (the last with chunks rounded up to whole vectors: 4097 → 4112 elements), then
  // columns: a narrow tile, two 32-wide tiles with a partial one, ten tiles.
  for (const ReduceShape& s : {ReduceShape{1, 20000, 1}, ReduceShape{3, 9000, 1}, ReduceShape{1, 8194, 1},
                               ReduceShape{2, 8193, 3}, ReduceShape{1, 5000, 40}, ReduceShape{2, 1024, 300}}) {
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
  // Columns, in one pass and split: the order is fixed by the shape, not by the schedule.
  HostScratch scratch;
  for (ReduceShape s : {ReduceShape{2, 300, 129}, ReduceShape{1, 5000, 40}}) {
    auto columns = random_values<float>(s.outer * s.reduce * s.inner, -1, 1, 6);
    for (gpu::ScratchAllocator* split : {static_cast<gpu::ScratchAllocator*>(nullptr), static_cast<gpu::ScratchAllocator*>(&scratch)}) {
      const auto a = reduce_on_emulator<float>(ReduceOp::Sum, s, columns.data(), DType::Float32, split);
      const auto b = reduce_on_emulator<float>(ReduceOp::Sum, s, columns.data(), DType::Float32, split);
      REQUIRE(std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0);
    }
  }
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

namespace {

// A reduction of 16-bit values on the emulator against the CPU kernel: sums and means within
// one unit of the 16-bit result (the GPU adds in a float tree, the CPU in order in double;
// both round once), max/min/arg* the same bits and indices.
template <class T>
void check_reduced_float_reduction(ReduceOp op, const ReduceShape& s, bool with_nans) {
  const std::int64_t numel = s.outer * s.reduce * s.inner, outputs = s.outer * s.inner;
  const auto floats = random_values<float>(numel, -4, 4, 77u + static_cast<unsigned>(s.reduce * 3 + s.inner));
  std::vector<T> input(static_cast<std::size_t>(numel));
  for (std::size_t i = 0; i < input.size(); ++i)
    input[i] = T(with_nans && i % 37 == 5 ? std::numeric_limits<float>::quiet_NaN() : floats[i]);
  std::vector<T> got(static_cast<std::size_t>(outputs) + 1, T(0.0f)), want(got);
  std::vector<std::int64_t> got_index(static_cast<std::size_t>(outputs) + 1, -5), want_index(got_index);
  const bool extremum = op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Prod;
  ReducePlan plan;
  plan.outer = s.outer;
  plan.reduce = s.reduce;
  plan.inner = s.inner;
  plan.input = input.data();
  plan.input_dtype = plan.output_dtype = dtype_of_v<T>;
  ReducePlan cpu_plan = plan;
  plan.output = got.data();
  cpu_plan.output = want.data();
  if (extremum) {
    plan.indices = got_index.data();
    cpu_plan.indices = want_index.data();
  }
  gpu::dispatch_reduce(op, plan, nullptr);
  cpu::reduce(op, cpu_plan);
  INFO("op " << static_cast<int>(op) << " shape [" << s.outer << ", " << s.reduce << ", " << s.inner << "]");
  for (std::int64_t o = 0; o < outputs; ++o) {
    const float g = got[static_cast<std::size_t>(o)], w = want[static_cast<std::size_t>(o)];
    INFO("output " << o << ": emulated " << g << ", CPU " << w);
    if (std::isnan(w)) {
      // A NaN's sign is not part of the contract (nor PyTorch's): x86 computes 0/0 as a
      // negative NaN, a compiler that folds it makes a positive one (clang did, in the
      // sanitized build, for the mean of an empty dim).
      REQUIRE(std::isnan(g));
    } else if (extremum) {
      REQUIRE(std::memcmp(&got[static_cast<std::size_t>(o)], &want[static_cast<std::size_t>(o)], sizeof(T)) == 0);
    } else {
      // One unit of the 16-bit format at the result's size (8 bits of bfloat16, 11 of float16).
      const int digits = std::is_same_v<T, BFloat16> ? 8 : 11;
      int exponent = 0;
      std::frexp(w == 0.0f ? 1e-3f : w, &exponent);
      REQUIRE(std::fabs(g - w) <= std::ldexp(1.0f, exponent - digits) + 1e-6f);
    }
  }
  if (extremum) REQUIRE(got_index == want_index);
  // The element past the outputs is never written.
  REQUIRE(static_cast<float>(got.back()) == 0.0f);
}

}  // namespace

TEST_CASE("cuda kernels (emulated): bfloat16 and float16 reductions accumulate in float and round once",
          "[cuda][reduce][reduced_float]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  std::vector<ReduceShape> shapes = reduce_shapes();
  for (const ReduceShape& s : column_shapes()) shapes.push_back(s);
  for (const ReduceShape& s : shapes) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean}) {
      check_reduced_float_reduction<BFloat16>(op, s, false);
      check_reduced_float_reduction<Half>(op, s, false);
    }
    if (s.reduce == 0) continue;  // native:: rejects max over an empty dim
    for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min}) {  // with indices: what argmax/argmin read
      check_reduced_float_reduction<BFloat16>(op, s, s.reduce > 10);
      check_reduced_float_reduction<Half>(op, s, false);
    }
  }
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
