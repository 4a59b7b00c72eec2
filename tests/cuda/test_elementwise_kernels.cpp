// tests/cuda/test_elementwise_kernels.cpp — fill, copy/cast, unary, binary and where kernels
// (cuda/kernels/elementwise*.cuh) run through the emulator against core's CPU kernels.
//
// Each case builds one plan layout twice — over buffers for the emulated CUDA kernel and
// over buffers for cpu:: — and compares. Layouts cover both kernel paths: contiguous and
// aligned (16-byte vector path, with a tail), contiguous but misaligned, transposed,
// broadcast (stride 0), 0-d (ndim 0) and empty (numel 0), on sizes up to 1000 (several
// blocks). Special values (NaN, ±0, ±inf, denormals, integer extremes) through every public
// op are the conformance sweep's (tests/conformance/), which runs the same kernels bit for
// bit against the CPU and PyTorch; only what it cannot reach stays here.
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_support.h"
#include "emulator_schedules.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/elementwise_ops.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

enum class Layout { Contiguous, Misaligned, Transposed, Broadcast, ZeroDim, Empty };
const std::vector<Layout> kLayouts{Layout::Contiguous, Layout::Misaligned, Layout::Transposed,
                                   Layout::Broadcast, Layout::ZeroDim, Layout::Empty};

std::string layout_name(Layout layout) {
  switch (layout) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Misaligned: return "misaligned";
    case Layout::Transposed: return "transposed";
    case Layout::Broadcast: return "broadcast";
    case Layout::ZeroDim: return "0-d";
    case Layout::Empty: return "empty";
  }
  return "?";
}

// Operands of one elementwise case: output 0 and `inputs` inputs, each of `n` logical
// elements in the given layout. Inputs hold values from `fill_input`; the output starts 0.
struct Case {
  StridedPlan plan;
  std::vector<HostBuffer> buffers;
  std::int64_t physical = 0;  // elements each buffer spans
};

// Builds plan + buffers. Logical shape: [rows, cols] with rows * cols = n (cols = n, rows =
// 1, except Transposed uses 2 × n with the inputs stored column-major).
Case make_case(Layout layout, std::int64_t n, std::vector<DType> dtypes,
               const std::function<void(int operand, void* data, std::int64_t count)>& fill_input) {
  Case c;
  const int operands = static_cast<int>(dtypes.size());
  std::vector<std::int64_t> sizes;
  std::vector<std::vector<std::int64_t>> strides(operands);
  std::int64_t offset = 0;
  bool contiguous = false;
  switch (layout) {
    case Layout::Contiguous: sizes = {n}; for (auto& s : strides) s = {1}; contiguous = true; c.physical = n; break;
    case Layout::Misaligned: sizes = {n}; for (auto& s : strides) s = {1}; contiguous = true; c.physical = n + 1; offset = 1; break;
    case Layout::Transposed:
      // inner dim (size n) walks a column-major [2, n] input with stride 2; output row-major.
      sizes = {n, 2};
      strides[0] = {1, n};
      for (int k = 1; k < operands; ++k) strides[k] = {2, 1};
      c.physical = 2 * n;
      break;
    case Layout::Broadcast:
      // [3, n]: the last input is a length-n row broadcast over 3 rows (stride 0).
      sizes = {n, 3};
      for (int k = 0; k < operands; ++k) strides[k] = {1, n};
      strides[operands - 1] = {1, 0};
      c.physical = 3 * n;
      break;
    case Layout::ZeroDim: sizes = {}; for (auto& s : strides) s = {}; c.physical = 1; contiguous = true; break;
    case Layout::Empty: sizes = {0}; for (auto& s : strides) s = {1}; c.physical = 0; contiguous = true; break;
  }
  std::vector<void*> data;
  for (int k = 0; k < operands; ++k) {
    c.buffers.emplace_back(c.physical + 1, itemsize(dtypes[k]));
    if (k > 0) fill_input(k, c.buffers.back().at(offset), c.physical - offset);
  }
  for (int k = 0; k < operands; ++k) data.push_back(c.buffers[k].at(offset));
  c.plan = make_plan(sizes, strides, data, dtypes, contiguous);
  return c;
}

// Runs `emulated` and `reference` on identical cases and compares every output element:
// within rtol/atol, or with rtol = atol = 0 bit for bit (NaN matches any NaN: payloads are
// not semantics).
template <class Out>
void compare(Layout layout, std::int64_t n, std::vector<DType> dtypes,
             const std::function<void(int, void*, std::int64_t)>& fill_input,
             const std::function<void(const StridedPlan&)>& emulated,
             const std::function<void(const StridedPlan&)>& reference, double rtol = 1e-5, double atol = 1e-6) {
  Case got = make_case(layout, n, dtypes, fill_input);
  Case want = make_case(layout, n, dtypes, fill_input);
  emulated(got.plan);
  reference(want.plan);
  const std::int64_t offset = layout == Layout::Misaligned ? 1 : 0;
  const Out* g = static_cast<const Out*>(got.buffers[0].at(offset));
  const Out* w = static_cast<const Out*>(want.buffers[0].at(offset));
  const std::int64_t count = got.physical - offset;
  INFO("layout " << layout_name(layout) << ", n = " << n);
  if (rtol == 0 && atol == 0) {
    for (std::int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_floating_point_v<Out>) {
        if (std::isnan(g[i]) && std::isnan(w[i])) continue;
      }
      INFO("element " << i << ": got " << +g[i] << ", want " << +w[i]);
      REQUIRE(std::memcmp(&g[i], &w[i], sizeof(Out)) == 0);
    }
    return;
  }
  std::int64_t bad = first_mismatch(g, w, count, rtol, atol);
  if (bad >= 0) INFO("first mismatch at " << bad << ": got " << +g[bad] << ", want " << +w[bad]);
  REQUIRE(bad == -1);
}

template <class T>
std::function<void(int, void*, std::int64_t)> random_fill(double low, double high) {
  return [low, high](int operand, void* data, std::int64_t count) {
    if (count == 0) return;  // memcpy from an empty vector's nullptr is undefined
    auto values = random_values<T>(count, low, high, 1234u + static_cast<unsigned>(operand));
    std::memcpy(data, values.data(), values.size() * sizeof(T));
  };
}

template <class T>
void check_unary(UnaryOp op, double low, double high, UnaryParams params = {}) {
  const DType dt = dtype_of_v<T>;
  for (Layout layout : kLayouts)
    for (std::int64_t n : odd_sizes())
      compare<T>(layout, n, {dt, dt}, random_fill<T>(low, high),
                 [&](const StridedPlan& p) { gpu::dispatch_unary(op, p, params, nullptr); },
                 [&](const StridedPlan& p) { cpu::unary(op, p, params); });
}

template <class T>
void check_binary(BinaryOp op, double low, double high, Scalar alpha = 1) {
  const DType dt = dtype_of_v<T>;
  if (is_comparison(op)) {
    for (Layout layout : kLayouts)
      for (std::int64_t n : odd_sizes())
        compare<bool>(layout, n, {DType::Bool, dt, dt}, random_fill<T>(low, high),
                      [&](const StridedPlan& p) { gpu::dispatch_binary(op, p, alpha, nullptr); },
                      [&](const StridedPlan& p) { cpu::binary(op, p, alpha); });
    return;
  }
  for (Layout layout : kLayouts)
    for (std::int64_t n : odd_sizes())
      compare<T>(layout, n, {dt, dt, dt}, random_fill<T>(low, high),
                   [&](const StridedPlan& p) { gpu::dispatch_binary(op, p, alpha, nullptr); },
                   [&](const StridedPlan& p) { cpu::binary(op, p, alpha); });
}

}  // namespace

TEST_CASE("cuda kernels (emulated): fill writes the value in every layout and dtype", "[cuda][elementwise]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  auto none = [](int, void*, std::int64_t) {};
  for (Layout layout : kLayouts)
    for (std::int64_t n : odd_sizes()) {
      compare<float>(layout, n, {DType::Float32}, none,
                     [](const StridedPlan& p) { gpu::dispatch_fill(p, 2.5, nullptr); },
                     [](const StridedPlan& p) { cpu::fill(p, 2.5); });
      compare<std::int64_t>(layout, n, {DType::Int64}, none,
                            [](const StridedPlan& p) { gpu::dispatch_fill(p, -7, nullptr); },
                            [](const StridedPlan& p) { cpu::fill(p, -7); });
      compare<bool>(layout, n, {DType::Bool}, none, [](const StridedPlan& p) { gpu::dispatch_fill(p, true, nullptr); },
                    [](const StridedPlan& p) { cpu::fill(p, true); });
    }
}

TEST_CASE("cuda kernels (emulated): copy casts between dtypes like the CPU backend", "[cuda][elementwise][copy]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (Layout layout : kLayouts)
    for (std::int64_t n : odd_sizes()) {
      compare<double>(layout, n, {DType::Float64, DType::Float32}, random_fill<float>(-3, 3),
                      [](const StridedPlan& p) { gpu::dispatch_copy(p, nullptr); }, [](const StridedPlan& p) { cpu::copy(p); });
      compare<std::int32_t>(layout, n, {DType::Int32, DType::Float32}, random_fill<float>(-100, 100),
                            [](const StridedPlan& p) { gpu::dispatch_copy(p, nullptr); },
                            [](const StridedPlan& p) { cpu::copy(p); });
      compare<bool>(layout, n, {DType::Bool, DType::Int64}, random_fill<std::int64_t>(-1, 1),
                    [](const StridedPlan& p) { gpu::dispatch_copy(p, nullptr); }, [](const StridedPlan& p) { cpu::copy(p); });
      compare<float>(layout, n, {DType::Float32, DType::UInt8}, random_fill<std::uint8_t>(0, 255),
                     [](const StridedPlan& p) { gpu::dispatch_copy(p, nullptr); }, [](const StridedPlan& p) { cpu::copy(p); });
      compare<float>(layout, n, {DType::Float32, DType::Float32}, random_fill<float>(-3, 3),
                     [](const StridedPlan& p) { gpu::dispatch_copy(p, nullptr); }, [](const StridedPlan& p) { cpu::copy(p); });
    }
}

TEST_CASE("cuda kernels (emulated): unary float ops match the CPU backend", "[cuda][elementwise][unary]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_unary<float>(UnaryOp::Neg, -3, 3);
  check_unary<float>(UnaryOp::Exp, -3, 3);
  check_unary<double>(UnaryOp::Exp, -3, 3);
  check_unary<float>(UnaryOp::Log, 0.01, 5);
  check_unary<float>(UnaryOp::Sqrt, 0, 5);
  check_unary<float>(UnaryOp::Abs, -3, 3);
  check_unary<float>(UnaryOp::Sign, -3, 3);
  check_unary<float>(UnaryOp::Sigmoid, -6, 6);
  check_unary<double>(UnaryOp::Tanh, -3, 3);
  check_unary<float>(UnaryOp::Relu, -3, 3);
  UnaryParams clamp;
  clamp.low = -0.5;
  clamp.high = 1.0;
  clamp.has_low = clamp.has_high = true;
  check_unary<float>(UnaryOp::Clamp, -3, 3, clamp);
  UnaryParams square;
  square.exponent = 2.0;
  check_unary<float>(UnaryOp::PowScalar, -3, 3, square);
}

TEST_CASE("cuda kernels (emulated): unary integer ops match the CPU backend", "[cuda][elementwise][unary]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_unary<std::int64_t>(UnaryOp::Neg, -50, 50);
  check_unary<std::int32_t>(UnaryOp::Abs, -50, 50);
  check_unary<std::int64_t>(UnaryOp::Sign, -5, 5);
  check_unary<std::int64_t>(UnaryOp::Relu, -5, 5);
  UnaryParams cube;
  cube.exponent = 3.0;
  check_unary<std::int64_t>(UnaryOp::PowScalar, -9, 9, cube);
}

namespace {

// Inputs cycling through the values where backends drift apart: NaN, ±inf, ±0, denormals,
// values no integer dtype holds (floats); the extremes and their neighbours (integers).
template <class T>
std::function<void(int, void*, std::int64_t)> special_fill() {
  return [](int operand, void* data, std::int64_t count) {
    std::vector<T> values;
    if constexpr (std::is_floating_point_v<T>) {
      const T inf = std::numeric_limits<T>::infinity();
      values = {std::numeric_limits<T>::quiet_NaN(), inf, -inf, T(-0.0), T(0.0), T(1), T(-1), T(2.5), T(-2.5),
                T(1e20), T(-1e20), T(3e9), T(-3e9), T(300), T(-300), T(255.5), T(88.75), T(-88.75),
                std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min()};
    } else if constexpr (std::is_same_v<T, bool>) {
      values = {true, false};
    } else {
      values = {std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T(0), T(1), T(3),
                static_cast<T>(std::numeric_limits<T>::max() / 2 + 1), static_cast<T>(-1)};
    }
    auto* out = static_cast<T*>(data);
    for (std::int64_t i = 0; i < count; ++i) out[i] = values[static_cast<std::size_t>(i + 3 * operand) % values.size()];
  };
}

// Every output element has the CPU's bits.
template <class Out>
void compare_bits(Layout layout, std::int64_t n, std::vector<DType> dtypes,
                  const std::function<void(int, void*, std::int64_t)>& fill_input,
                  const std::function<void(const StridedPlan&)>& emulated,
                  const std::function<void(const StridedPlan&)>& reference) {
  compare<Out>(layout, n, std::move(dtypes), fill_input, emulated, reference, 0.0, 0.0);
}

template <class T>
void check_special_unary(UnaryOp op, UnaryParams params = {}) {
  const DType dt = dtype_of_v<T>;
  for (Layout layout : kLayouts)
    compare_bits<T>(layout, 45, {dt, dt}, special_fill<T>(),
                    [&](const StridedPlan& p) { gpu::dispatch_unary(op, p, params, nullptr); },
                    [&](const StridedPlan& p) { cpu::unary(op, p, params); });
}

template <class T>
void check_special_binary(BinaryOp op, Scalar alpha = 1) {
  const DType dt = dtype_of_v<T>;
  const bool comparison = is_comparison(op);
  for (Layout layout : kLayouts) {
    if (comparison) {
      compare_bits<bool>(layout, 45, {DType::Bool, dt, dt}, special_fill<T>(),
                         [&](const StridedPlan& p) { gpu::dispatch_binary(op, p, alpha, nullptr); },
                         [&](const StridedPlan& p) { cpu::binary(op, p, alpha); });
    } else {
      compare_bits<T>(layout, 45, {dt, dt, dt}, special_fill<T>(),
                      [&](const StridedPlan& p) { gpu::dispatch_binary(op, p, alpha, nullptr); },
                      [&](const StridedPlan& p) { cpu::binary(op, p, alpha); });
    }
  }
}

}  // namespace

TEST_CASE("cuda kernels (emulated): special values give the CPU backend's bits where the conformance sweep does not reach",
          "[cuda][elementwise][special]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // NaN, ±inf, ±0, denormals and integer extremes through every public elementwise op and
  // cast, in every layout, on the CPU and the emulated kernels against PyTorch: the
  // conformance sweep (tests/conformance/). Left here: ReLU's backward (an internal op, no
  // public call to sweep) and pow with exponent 1, 3 and 0.5 in every layout (the sweep runs
  // those exponents on contiguous, misaligned, 0-d and long inputs).
  UnaryParams identity, cube, root;
  cube.exponent = 3.0;
  root.exponent = 0.5;
  for (const UnaryParams& params : {identity, cube, root}) check_special_unary<float>(UnaryOp::PowScalar, params);
  check_special_binary<float>(BinaryOp::ReluBackward);
  check_special_binary<double>(BinaryOp::ReluBackward);
}

TEST_CASE("cuda kernels (emulated): binary arithmetic matches the CPU backend", "[cuda][elementwise][binary]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_binary<float>(BinaryOp::Add, -3, 3, 1);
  check_binary<float>(BinaryOp::Add, -3, 3, 2.5);
  check_binary<double>(BinaryOp::Sub, -3, 3, 0.5);
  check_binary<float>(BinaryOp::Mul, -3, 3);
  check_binary<float>(BinaryOp::Div, 0.5, 3);
  check_binary<float>(BinaryOp::Pow, 0.5, 2);
  check_binary<float>(BinaryOp::Maximum, -3, 3);
  check_binary<double>(BinaryOp::Minimum, -3, 3);
  check_binary<std::int64_t>(BinaryOp::Add, -100, 100, 3);
  check_binary<std::int32_t>(BinaryOp::Mul, -100, 100);
  check_binary<std::uint8_t>(BinaryOp::Add, 0, 100);
}

TEST_CASE("cuda kernels (emulated): comparisons produce bool like the CPU backend", "[cuda][elementwise][binary]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (BinaryOp op : {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge,
                      BinaryOp::LogicalAnd}) {
    check_binary<std::int64_t>(op, -2, 2);  // small range: plenty of equal pairs
    check_binary<float>(op, -2, 2);
  }
}

TEST_CASE("cuda kernels (emulated): where picks a or b by a bool condition", "[cuda][elementwise][where]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  auto fill = [](int operand, void* data, std::int64_t count) {
    if (count == 0) return;
    if (operand == 1) {
      auto c = random_values<bool>(count, 0, 1, 99);
      std::memcpy(data, c.data(), count);
    } else {
      auto v = random_values<float>(count, -5, 5, 7u + operand);
      std::memcpy(data, v.data(), count * sizeof(float));
    }
  };
  for (Layout layout : kLayouts)
    for (std::int64_t n : odd_sizes())
      compare<float>(layout, n, {DType::Float32, DType::Bool, DType::Float32, DType::Float32}, fill,
                     [](const StridedPlan& p) { gpu::dispatch_where(p, nullptr); },
                     [](const StridedPlan& p) { cpu::where(p); });
}

TEST_CASE("cuda kernels (emulated): the vector path is taken only when every operand is aligned",
          "[cuda][elementwise]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // 1000 floats = 250 vectors of 4: the vector kernel launches ceil(250/256) = 1 block; the
  // strided kernel needs ceil(1000/256) = 4. The emulator's block counter tells them apart.
  HostBuffer a(1001, 4), out(1001, 4);
  auto launch_blocks = [&](std::int64_t offset) {
    StridedPlan plan = make_plan({1000}, {{1}, {1}}, {out.at(offset), a.at(offset)}, {DType::Float32, DType::Float32}, true);
    const auto before = ember::emulate::stats().blocks;
    gpu::dispatch_unary(UnaryOp::Neg, plan, {}, nullptr);
    return ember::emulate::stats().blocks - before;
  };
  REQUIRE(launch_blocks(0) == 1);
  REQUIRE(launch_blocks(1) == 4);
}

TEST_CASE("cuda kernels (emulated): the rows added on the op list (gelu, silu, erf, rsqrt, backward kernels)",
          "[cuda][elementwise][op_list]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (UnaryOp op : {UnaryOp::Gelu, UnaryOp::GeluTanh, UnaryOp::Silu, UnaryOp::Erf, UnaryOp::Rsqrt}) {
    check_unary<float>(op, -4, 4);
    check_unary<double>(op, -4, 4);
    check_special_unary<float>(op);
    check_special_unary<double>(op);
  }
  for (BinaryOp op : {BinaryOp::TanhBackward, BinaryOp::GeluBackward, BinaryOp::GeluTanhBackward,
                      BinaryOp::SiluBackward}) {
    check_binary<float>(op, -4, 4);
    check_binary<double>(op, -4, 4);
    check_special_binary<float>(op);
  }
}
