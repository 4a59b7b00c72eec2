// tests/core/test_gemm_bfloat16.cpp — the bfloat16 GEMM that reads 16-bit operands directly
// (core/cpu/gemm_kernel_bf16_avx512.cpp, vdpbf16ps) against the exact product and against the
// plain path (widen to float32, float32 GEMM, round once).
//
// Tutorial §12 (mixed precision). test_reduced_float.cpp checks small products against
// PyTorch's values on both kernel paths; this file reaches the kernel's own cases: sizes that
// straddle its 12 x 32 tiles and its 8-panel units, odd k (a padded pair), k = 0 and 1,
// transposed and strided operands (each packing branch), a strided C, alpha and beta, batches,
// one thread against two (the same bits), and special values. The bound for every element is
// the one float32 accumulation allows: the exact dot product of the bfloat16 inputs (in
// double), rounded to bfloat16, within one bfloat16 unit plus k float32 roundings of the sum
// of |products|. On a CPU without AVX512-BF16 the kernel cannot run: the case then checks that
// the library says so and that the plain path is what runs.
#include <catch2/catch.hpp>

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <ember/core/cpu/gemm_kernels.h>
#include "forced_gemm_kernel.h"
#include <ember/core/native.h>
#include <ember/core/parallel.h>
#include <ember/core/reduced_float.h>
#include <ember/core/strided_index.h>

namespace {

using namespace ember;

using testing::ForcedKernel;

// Sets EMBER_AMX for the life of the object ("0": the vdpbf16ps kernel even where the CPU has
// AMX), then unsets it; the library reads it again each time (it keeps what it read first).
class AmxSetting {
 public:
  explicit AmxSetting(const char* value) {
    ::setenv("EMBER_AMX", value, 1);
    cpu::reload_gemm_kernel_choice();
  }
  ~AmxSetting() {
    ::unsetenv("EMBER_AMX");
    cpu::reload_gemm_kernel_choice();
  }
  AmxSetting(const AmxSetting&) = delete;
  AmxSetting& operator=(const AmxSetting&) = delete;
};

// What the CPU says of AMX-BF16, and whether Linux grants this process the tile state, asked
// independently of the library.
bool cpu_runs_amx() {
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;  // cpuid leaf 7: EDX bits 24 (AMX-TILE), 22 (AMX-BF16)
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0 || ((edx >> 24) & 1U) == 0 || ((edx >> 22) & 1U) == 0)
    return false;
  return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
}

bool cpu_has_avx512_bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16");
}

// A bfloat16 matrix of normal values (a few exactly zero), its buffer `spread` times larger
// than needed so that a spread of 2 makes it non-contiguous in both dimensions.
struct Operand {
  std::vector<BFloat16> buffer;
  std::int64_t rows, cols, row_stride, col_stride;
  float at(std::int64_t i, std::int64_t j) const { return buffer[i * row_stride + j * col_stride]; }
};

Operand random_operand(std::int64_t rows, std::int64_t cols, bool transposed, std::int64_t spread, std::mt19937& rng) {
  Operand op{{}, rows, cols, transposed ? spread : cols * spread, transposed ? rows * spread : spread};
  op.buffer.assign(static_cast<std::size_t>(std::max<std::int64_t>(rows * cols * spread * spread, 1)), BFloat16(0.0f));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) op.buffer[i * op.row_stride + j * op.col_stride] = BFloat16(normal(rng));
  return op;
}

double bfloat16_unit(double value) {  // the spacing of bfloat16 numbers at |value|
  int exponent = 0;
  std::frexp(value == 0.0 ? 1e-30 : value, &exponent);
  return std::ldexp(1.0, std::max(exponent, -125) - 8);
}

struct Case {
  std::int64_t m, n, k;
  bool a_transposed, b_transposed;
  std::int64_t spread;
  float alpha, beta;
  std::int64_t c_col_stride = 1;  // > 1: C is written with a column stride (a strided view)
};

// Runs one case through cpu::gemm (the CPU's gemm_kernel) and checks every element.
void check_case(const Case& c, std::mt19937& rng) {
  INFO("m=" << c.m << " n=" << c.n << " k=" << c.k << " aT=" << c.a_transposed << " bT=" << c.b_transposed
            << " spread=" << c.spread << " alpha=" << c.alpha << " beta=" << c.beta << " c_col_stride=" << c.c_col_stride);
  const Operand a = random_operand(c.m, c.k, c.a_transposed, c.spread, rng);
  const Operand b = random_operand(c.k, c.n, c.b_transposed, c.spread, rng);
  const Operand c_start = random_operand(c.m, c.n, false, 1, rng);
  const std::int64_t c_row_stride = c.n * c.c_col_stride;
  std::vector<BFloat16> out(static_cast<std::size_t>(std::max<std::int64_t>(c.m * c_row_stride, 1)), BFloat16(7.0f));
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) out[i * c_row_stride + j * c.c_col_stride] = BFloat16(c_start.at(i, j));

  GemmPlan plan;
  plan.m = c.m;
  plan.n = c.n;
  plan.k = c.k;
  plan.a = a.buffer.data();
  plan.row_stride_a = a.row_stride;
  plan.col_stride_a = a.col_stride;
  plan.b = b.buffer.data();
  plan.row_stride_b = b.row_stride;
  plan.col_stride_b = b.col_stride;
  plan.c = out.data();
  plan.row_stride_c = c_row_stride;
  plan.col_stride_c = c.c_col_stride;
  plan.alpha = c.alpha;
  plan.beta = c.beta;
  plan.dtype = kBFloat16;
  cpu::gemm_bfloat16_avx512(plan);

  std::int64_t outside = 0;
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) {
      double exact = 0.0, magnitude = 0.0;
      for (std::int64_t p = 0; p < c.k; ++p) {
        exact += static_cast<double>(a.at(i, p)) * static_cast<double>(b.at(p, j));
        magnitude += std::fabs(static_cast<double>(a.at(i, p)) * static_cast<double>(b.at(p, j)));
      }
      double expected = c.alpha * exact;
      if (c.beta != 0.0f) expected += static_cast<double>(c.beta) * c_start.at(i, j);
      const double bound = bfloat16_unit(expected) +
                           (std::fabs(c.alpha) * magnitude + std::fabs(c.beta * c_start.at(i, j))) *
                               static_cast<double>(c.k + 2) * std::ldexp(1.0, -23);
      const double got = static_cast<float>(out[i * c_row_stride + j * c.c_col_stride]);
      if (!(std::fabs(got - expected) <= bound)) ++outside;
    }
  CHECK(outside == 0);
  // Elements of the buffer between the strided columns are never written.
  if (c.c_col_stride > 1)
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c_row_stride; ++j)
        if (j % c.c_col_stride != 0) REQUIRE(static_cast<float>(out[i * c_row_stride + j]) == 7.0f);
}

// A tensor's elements as floats, in row-major order.
std::vector<float> values(const Tensor& tensor) {
  const Tensor dense = native::contiguous(native::to_dtype(tensor, kFloat32));
  const auto* data = static_cast<const float*>(dense.data_ptr());
  return {data, data + dense.numel()};
}

// A bfloat16 tensor's elements as their bits, in row-major order.
std::vector<std::uint16_t> bits16(const Tensor& tensor) {
  const Tensor dense = native::contiguous(tensor);
  const auto* data = static_cast<const std::uint16_t*>(dense.data_ptr());
  return {data, data + dense.numel()};
}

Tensor from_values(const std::vector<float>& data, Shape sizes) {
  Tensor out = empty(sizes, TensorOptions().dtype(kFloat32));
  std::copy(data.begin(), data.end(), static_cast<float*>(out.data_ptr()));
  return out;
}

// `result`, a · b by one kernel, is within a bfloat16 unit of `other` (by another) and mostly the
// same bits (only sums near a rounding boundary may differ); and a · b computed now (the kernel
// this process picks by default), on one thread and on two, gives result's bits.
void check_close_and_thread_independent(const Tensor& a, const Tensor& b, const Tensor& result, const Tensor& other) {
  const std::vector<float> got = values(result), expected = values(other);
  std::size_t same = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::fabs(got[i] - expected[i]) <= bfloat16_unit(expected[i]));
    same += got[i] == expected[i] ? 1 : 0;
  }
  CHECK(same > got.size() * 9 / 10);

  const int threads = get_num_threads();
  set_num_threads(1);
  const Tensor one_thread = native::mm(a, b);
  for (int more : {2, 3, 5}) {  // owners with one column group, several, and none (core/cpu/gemm_bf16_schedule.h)
    set_num_threads(more);
    const Tensor several = native::mm(a, b);
    INFO(more << " threads");
    CHECK(values(one_thread) == values(several));
  }
  set_num_threads(threads);
  CHECK(values(one_thread) == got);
}

}  // namespace

TEST_CASE("bfloat16 GEMM (vdpbf16ps): every element within float32 accumulation of the exact product",
          "[gemm][reduced_float]") {
  if (!cpu_has_avx512_bf16()) {
    CHECK_FALSE(cpu::bfloat16_gemm_usable());
    return;
  }
  // Both kernels where the CPU has AMX: the tiles (the default there) and vdpbf16ps.
  for (const char* amx : {"1", "0"}) {
    AmxSetting setting(amx);
    if (std::string(amx) == "1" && !cpu::amx_bfloat16_usable()) continue;
    INFO("EMBER_AMX=" << amx);
    std::mt19937 rng(22);
    // vdpbf16ps tiles are 12 x 32 (an edge tile 4, 8 or 12 rows of 16 or 32 columns) and a unit
    // is 8 row panels (96 rows); AMX blocks are 32 x 32 and its tiles 32 values of k deep: sizes
    // on both sides of each.
    const std::int64_t sizes[][3] = {{1, 1, 1},    {12, 32, 2},    {13, 33, 3},   {11, 31, 17},  {96, 64, 64},
                                     {97, 65, 65},  {130, 70, 301}, {1, 100, 40},  {100, 1, 40},  {5, 7, 0},
                                     {40, 50, 1},   {128, 256, 784}, {200, 3, 1000}, {31, 33, 31}, {32, 32, 32},
                                     {33, 65, 33},  {64, 96, 97},   {129, 31, 63}, {70, 40, 128},
                                     {33, 64, 512}, {64, 64, 0}};  // {70, 40, 128}, {33, 64, 512}: AMX tiles
                                                                   // read A's rows directly
    for (const auto& size : sizes)
      for (int layout = 0; layout < 4; ++layout)
        for (std::int64_t spread : {1, 2})
          check_case({size[0], size[1], size[2], (layout & 1) != 0, (layout & 2) != 0, spread, 1.0f, 0.0f}, rng);
    // addmm's alpha and beta (C read back and scaled), and a strided C.
    check_case({37, 45, 29, false, false, 1, 2.0f, 0.5f}, rng);
    check_case({37, 45, 29, true, true, 2, -1.5f, 1.0f}, rng);
    check_case({25, 40, 19, false, true, 1, 1.0f, 0.0f, 3}, rng);
    check_case({25, 40, 19, true, false, 2, 0.5f, 2.0f, 2}, rng);
    // Whole 32 x 32 blocks (AMX's epilogue without per-row checks) with each alpha/beta case.
    check_case({70, 64, 40, false, false, 1, 2.0f, 0.5f}, rng);
    check_case({64, 96, 33, true, false, 1, -1.5f, 1.0f}, rng);
    check_case({64, 64, 20, false, true, 1, 1.0f, 1.0f}, rng);
    check_case({64, 64, 20, false, false, 1, 0.5f, 0.0f}, rng);
    check_case({64, 96, 0, false, false, 1, 2.0f, 0.5f}, rng);  // k = 0: C = beta · C, block after block
  }
}

TEST_CASE("bfloat16 GEMM on AMX tiles: chosen where the CPU and Linux allow it, EMBER_AMX=0 turns it off, "
          "a bfloat16 unit from vdpbf16ps, threads change no bit",
          "[gemm][reduced_float]") {
  {
    AmxSetting setting("bogus");
    CHECK_THROWS_WITH(cpu::amx_bfloat16_usable(), Catch::Contains("EMBER_AMX must be 0 or 1 (or unset), got 'bogus'"));
  }
  {
    AmxSetting setting("0");
    CHECK_FALSE(cpu::amx_bfloat16_usable());
  }
  {
    ForcedKernel forced("avx2");  // a kernel below AVX-512: no bfloat16 GEMM of its own, no AMX
    CHECK_FALSE(cpu::amx_bfloat16_usable());
  }
  CHECK(cpu::amx_bfloat16_usable() == (cpu_runs_amx() && cpu_has_avx512_bf16()));
  if (!cpu::amx_bfloat16_usable()) return;  // the cases above ran the vdpbf16ps kernel only

  // Wide enough for threads to own column groups, and tall and narrow (one column group), where
  // they own row panels (core/cpu/gemm_bf16_schedule.h).
  // And k = 64: A's rows read directly by the tiles (but for the last, partial block of rows).
  for (const auto& [m, k, n] : {std::array<std::int64_t, 3>{150, 260, 90}, std::array<std::int64_t, 3>{600, 70, 40},
                                std::array<std::int64_t, 3>{600, 64, 40}}) {
    INFO(m << " x " << k << " x " << n);
    const Tensor a = native::to_dtype(randn({m, k}), kBFloat16);
    const Tensor b = native::to_dtype(randn({k, n}), kBFloat16);
    const Tensor on_tiles = native::mm(a, b);
    Tensor on_vectors;
    {
      AmxSetting setting("0");
      on_vectors = native::mm(a, b);
    }
    check_close_and_thread_independent(a, b, on_tiles, on_vectors);
  }
}

TEST_CASE("bfloat16 GEMM: the direct kernel and the float32 path agree to a bfloat16 unit, threads change no bit",
          "[gemm][reduced_float]") {
  if (!cpu_has_avx512_bf16()) return;  // the case above checks the detection
  for (const auto& [m, k, n] : {std::array<std::int64_t, 3>{150, 260, 90}, std::array<std::int64_t, 3>{600, 70, 40}}) {
    INFO(m << " x " << k << " x " << n);
    const Tensor a = native::to_dtype(randn({m, k}), kBFloat16);
    const Tensor b = native::to_dtype(randn({k, n}), kBFloat16);
    Tensor direct, widened;
    {
      ForcedKernel forced("avx512");
      REQUIRE(cpu::bfloat16_gemm_usable());
      direct = native::mm(a, b);
    }
    {
      ForcedKernel forced("portable");
      REQUIRE_FALSE(cpu::bfloat16_gemm_usable());
      widened = native::mm(a, b);
    }
    check_close_and_thread_independent(a, b, direct, widened);
  }
}

TEST_CASE("bfloat16 GEMM: inf and NaN propagate as in float32", "[gemm][reduced_float]") {
  if (!cpu_has_avx512_bf16()) return;
  ForcedKernel forced("avx512");
  const std::int64_t m = 20, n = 35, k = 40;
  std::vector<float> a_values(m * k, 1.0f), b_values(k * n, 0.5f);
  a_values[3 * k + 5] = std::numeric_limits<float>::infinity();
  a_values[4 * k + 6] = std::numeric_limits<float>::quiet_NaN();
  b_values[5 * n + 0] = 0.0f;  // meets the inf: inf · 0 is NaN
  const Tensor a = native::to_dtype(from_values(a_values, {m, k}), kBFloat16);
  const Tensor b = native::to_dtype(from_values(b_values, {k, n}), kBFloat16);
  const std::vector<float> c = values(native::mm(a, b));
  CHECK(c[0] == 19.5f);  // row 0 meets the zero of column 0
  CHECK(c[n - 1] == 20.0f);
  CHECK(std::isnan(c[3 * n + 0]));
  for (std::int64_t j = 1; j < n; ++j) CHECK(std::isinf(c[3 * n + j]));
  for (std::int64_t j = 0; j < n; ++j) CHECK(std::isnan(c[4 * n + j]));
}

// The epilogue rounds with vcvtne2ps2bf16 and rounds a row again with integer operations where a
// result word is zero, subnormal or NaN: there that instruction's answer may differ from ember's
// rounding (core/reduced_float.h): a subnormal input taken as zero, a NaN's sign and payload
// kept (x86's inf · 0 is a negative NaN). Small integer
// operands make every sum exact, so alpha · sum is exactly the float32 the epilogue rounds, and
// each element must be bfloat16_bits_from_float of it, bit for bit: alpha 2^-140 puts the sums
// below float32's smallest normal (2^-126), 2^-100 above it.
TEST_CASE("bfloat16 GEMM: the epilogue rounds subnormal and NaN results bit for bit as ember rounds a float",
          "[gemm][reduced_float]") {
  if (!cpu_has_avx512_bf16()) return;
  ForcedKernel forced("avx512");
  for (const char* amx : {"1", "0"}) {
    AmxSetting setting(amx);
    if (std::string(amx) == "1" && !cpu::amx_bfloat16_usable()) continue;
    // 64 x 64: whole 32 x 32 blocks (AMX's whole-block epilogue); 45 x 37: partial ones.
    for (const auto& [m, n] : {std::array<std::int64_t, 2>{64, 64}, std::array<std::int64_t, 2>{45, 37}}) {
      for (const float alpha : {0x1p-140f, 0x1p-100f}) {
        INFO("EMBER_AMX=" << amx << " m=" << m << " n=" << n << " alpha=" << alpha);
        const std::int64_t k = 32;
        std::vector<float> a_values(m * k), b_values(k * n);
        for (std::size_t i = 0; i < a_values.size(); ++i) a_values[i] = static_cast<float>(static_cast<int>(i * 7 % 9) - 4);
        for (std::size_t i = 0; i < b_values.size(); ++i) b_values[i] = static_cast<float>(static_cast<int>(i * 5 % 7) - 3);
        a_values[5 * k + 3] = std::numeric_limits<float>::infinity();  // row 5 meets B's zeros: NaN there
        a_values[9 * k + 1] = std::numeric_limits<float>::quiet_NaN();  // row 9: NaN everywhere
        const std::vector<BFloat16> a(a_values.begin(), a_values.end()), b(b_values.begin(), b_values.end());
        std::vector<BFloat16> c(static_cast<std::size_t>(m * n), BFloat16(7.0f));
        GemmPlan plan;
        plan.m = m;
        plan.n = n;
        plan.k = k;
        plan.a = a.data();
        plan.row_stride_a = k;
        plan.col_stride_a = 1;
        plan.b = b.data();
        plan.row_stride_b = n;
        plan.col_stride_b = 1;
        plan.c = c.data();
        plan.row_stride_c = n;
        plan.col_stride_c = 1;
        plan.alpha = alpha;
        plan.beta = 0.0;
        plan.dtype = kBFloat16;
        cpu::gemm_bfloat16_avx512(plan);
        std::vector<std::uint16_t> got(c.size());
        std::memcpy(got.data(), c.data(), got.size() * sizeof(std::uint16_t));
        std::int64_t differ = 0, subnormal = 0, nan = 0;
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (std::int64_t p = 0; p < k; ++p) sum += a_values[i * k + p] * b_values[p * n + j];
            const float scaled = alpha * sum;
            subnormal += std::fpclassify(scaled) == FP_SUBNORMAL;
            nan += std::isnan(scaled);
            differ += got[i * n + j] != reduced_float::bfloat16_bits_from_float(scaled);
          }
        CHECK(differ == 0);
        CHECK(nan >= n);  // the case reaches what it is about
        if (alpha < 0x1p-126f) CHECK(subnormal > m * n / 2);
      }
    }
  }
}

namespace {

// A convolution's shapes and arguments, and how a failing case names itself.
struct ConvCase {
  Shape input, weight;
  native::Conv2dArgs args;
};
std::string describe(const ConvCase& c) {
  std::ostringstream text;
  text << "input [" << c.input[0] << ", " << c.input[1] << ", " << c.input[2] << ", " << c.input[3] << "] weight ["
       << c.weight[0] << ", " << c.weight[1] << ", " << c.weight[2] << ", " << c.weight[3] << "] groups " << c.args.groups;
  return text.str();
}

}  // namespace

TEST_CASE("bfloat16 convolution on the bfloat16 GEMM: forward and both gradients within a unit of the float32 path",
          "[gemm][reduced_float][conv]") {
  if (!cpu_has_avx512_bf16()) return;
  // The direct path (im2col in 16 bits, the products into float32 sums rounded once) against
  // the widened one (EMBER_GEMM_KERNEL=portable: every operand widened, float32 kernels),
  // each element within a bfloat16 unit of the scale of its terms (sums of products of size
  // ~1 that cancel). Shapes: padding and stride, a pointwise 1x1, groups, dilation, and a batch
  // of 19 (the weight gradient's blocks of 8 samples, added in float32). The input gradient of
  // a stride-1 same-width convolution with 32 or more input channels per group is a
  // convolution itself (core/cpu/conv_kernels.cpp, conv2d_backward_input_as_convolution): the
  // last three cases; the one before them has too few channels and a 1-high kernel padded in
  // height (the product and col2im).
  const ConvCase cases[] = {
      {{3, 4, 9, 9}, {6, 4, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},
      {{2, 5, 10, 7}, {4, 5, 3, 2}, {{2, 1}, {0, 1}, {1, 1}, 1}},
      {{4, 8, 6, 6}, {12, 8, 1, 1}, {{1, 1}, {0, 0}, {1, 1}, 1}},
      {{2, 6, 8, 8}, {4, 3, 3, 3}, {{1, 1}, {2, 2}, {2, 2}, 2}},
      {{19, 3, 7, 7}, {5, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},
      {{2, 3, 5, 6}, {4, 3, 1, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},
      // 3x3 "same"; groups of 32 channels with dilation 2; 33 channels (a second, nearly empty
      // block of rows) with same-width rows whose height shrinks (padding 0 of a kernel 3 high:
      // d out padded by 2 in height).
      {{2, 32, 8, 8}, {8, 32, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},
      {{2, 64, 6, 7}, {6, 32, 3, 3}, {{1, 1}, {2, 2}, {2, 2}, 2}},
      {{2, 33, 8, 9}, {6, 33, 3, 5}, {{1, 1}, {0, 2}, {1, 1}, 1}},
  };
  for (const ConvCase& c : cases) {
    INFO(describe(c));
    const Tensor input = native::to_dtype(randn(c.input), kBFloat16);
    const Tensor weight = native::to_dtype(randn(c.weight), kBFloat16);
    const Tensor bias = native::to_dtype(randn({c.weight[0]}), kBFloat16);
    Tensor grad_output;
    std::vector<float> results[2][3];
    for (int widened = 0; widened < 2; ++widened) {
      ForcedKernel forced(widened != 0 ? "portable" : "avx512");
      REQUIRE(cpu::bfloat16_gemm_usable() == (widened == 0));
      const Tensor output = native::conv2d(input, weight, bias, c.args);
      if (!grad_output.defined()) grad_output = native::to_dtype(randn(output.sizes()), kBFloat16);
      const Tensor grad_input = native::conv2d_backward_input(grad_output, weight, c.input, c.args);
      const Tensor grad_weight = native::conv2d_backward_weight(input, grad_output, c.weight, c.args);
      REQUIRE(grad_input.dtype() == kBFloat16);
      REQUIRE(grad_weight.dtype() == kBFloat16);
      results[widened][0] = values(output);
      results[widened][1] = values(grad_input);
      results[widened][2] = values(grad_weight);
    }
    // Terms are products of unit normals: a sum of n of them is of size ~sqrt(n), so a unit
    // of bfloat16 at the largest |value| bounds the float32 rounding differences of both paths.
    for (int which = 0; which < 3; ++which) {
      INFO((which == 0 ? "output" : which == 1 ? "input gradient" : "weight gradient"));
      const std::vector<float>& direct = results[0][which];
      const std::vector<float>& plain = results[1][which];
      REQUIRE(direct.size() == plain.size());
      float largest = 0.0f;
      for (float v : plain) largest = std::max(largest, std::fabs(v));
      std::size_t same = 0;
      for (std::size_t i = 0; i < direct.size(); ++i) {
        INFO("element " << i << ": direct " << direct[i] << ", widened " << plain[i]);
        REQUIRE(std::fabs(direct[i] - plain[i]) <= bfloat16_unit(largest));
        same += direct[i] == plain[i] ? 1 : 0;
      }
      CHECK(same > direct.size() / 2);  // mostly the same bits: the sums differ only in order
    }
  }
}

TEST_CASE("bfloat16 convolution: im2col written into the GEMM's packed panels gives the bits of im2col then mm",
          "[gemm][reduced_float][conv]") {
  if (!cpu_has_avx512_bf16()) return;
  // Same-width ("same") convolutions pack their cols rows straight into the bfloat16 GEMM's
  // B panels (core/cpu/conv_kernels.cpp, im2col_bfloat16_panels): the same values in the same
  // places, so the output must be, bit for bit, ember::mm(W as [O, K], cols) with cols built
  // here by the definition. Odd K (a half-empty last pair), L across 32-column panels and not,
  // dilation, padding larger than the kernel's reach on one side, groups; AMX and vdpbf16ps.
  const ConvCase cases[] = {
      {{2, 3, 7, 7}, {5, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},   // K 27, L 49
      {{1, 2, 6, 9}, {4, 2, 5, 5}, {{1, 1}, {2, 2}, {1, 1}, 1}},   // K 50, L 54
      {{1, 4, 8, 8}, {3, 4, 3, 3}, {{1, 1}, {2, 2}, {2, 2}, 1}},   // K 36, L 64: two whole panels
      {{2, 4, 5, 4}, {6, 2, 3, 1}, {{1, 1}, {3, 0}, {1, 1}, 2}},   // out_h 9 > in_h, groups 2
      {{1, 32, 14, 14}, {64, 32, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},  // the CNN's second layer
      {{3, 32, 14, 14}, {64, 32, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}},  // its weights packed once (vdpbf16ps)
  };
  for (const char* amx : {"1", "0"}) {
    AmxSetting setting(amx);
    if (std::string(amx) == "1" && !cpu::amx_bfloat16_usable()) continue;
    for (const ConvCase& c : cases) {
      INFO("EMBER_AMX=" << amx << ", " << describe(c));
      const Tensor input = native::to_dtype(randn(c.input), kBFloat16);
      const Tensor weight = native::to_dtype(randn(c.weight), kBFloat16);
      const Tensor output = native::conv2d(input, weight, Tensor(), c.args);
      const std::int64_t groups = c.args.groups, in_per_group = c.input[1] / groups, out_per_group = c.weight[0] / groups;
      const std::int64_t kh = c.weight[2], kw = c.weight[3], out_h = output.size(2), out_w = output.size(3);
      const std::int64_t k = in_per_group * kh * kw, l = out_h * out_w;
      const std::vector<float> x = values(input);
      for (std::int64_t n = 0; n < c.input[0]; ++n) {
        for (std::int64_t g = 0; g < groups; ++g) {
          std::vector<float> cols(static_cast<std::size_t>(k * l), 0.0f);
          for (std::int64_t ch = 0; ch < in_per_group; ++ch)
            for (std::int64_t i = 0; i < kh; ++i)
              for (std::int64_t j = 0; j < kw; ++j)
                for (std::int64_t y = 0; y < out_h; ++y)
                  for (std::int64_t xo = 0; xo < out_w; ++xo) {
                    const std::int64_t h = y - c.args.padding[0] + i * c.args.dilation[0];
                    const std::int64_t w = xo - c.args.padding[1] + j * c.args.dilation[1];
                    if (h < 0 || h >= c.input[2] || w < 0 || w >= c.input[3]) continue;
                    cols[static_cast<std::size_t>(((ch * kh + i) * kw + j) * l + y * out_w + xo)] =
                        x[static_cast<std::size_t>(((n * c.input[1] + g * in_per_group + ch) * c.input[2] + h) * c.input[3] + w)];
                  }
          const Tensor w_g = native::reshape(native::slice(weight, 0, g * out_per_group, (g + 1) * out_per_group, 1),
                                             {out_per_group, k});
          const Tensor expected = native::mm(native::contiguous(w_g), native::to_dtype(from_values(cols, {k, l}), kBFloat16));
          const Tensor got = native::reshape(
              native::slice(native::select(output, 0, n), 0, g * out_per_group, (g + 1) * out_per_group, 1),
              {out_per_group, l});
          REQUIRE(bits16(got) == bits16(expected));
          if (c.input[0] == 1) {
            // The weight gradient writes colsᵀ into the panels the same way
            // (im2col_bfloat16_transposed_panels): for one sample it is d out · colsᵀ, rounded once.
            const Tensor grad_output = native::to_dtype(randn(output.sizes()), kBFloat16);
            const Tensor grad_weight = native::conv2d_backward_weight(input, grad_output, c.weight, c.args);
            const Tensor d_out_g = native::reshape(
                native::slice(native::select(grad_output, 0, 0), 0, g * out_per_group, (g + 1) * out_per_group, 1),
                {out_per_group, l});
            const Tensor cols_t = native::transpose(native::to_dtype(from_values(cols, {k, l}), kBFloat16), 0, 1);
            const Tensor expected_weight = native::mm(native::contiguous(d_out_g), cols_t);
            const Tensor got_weight = native::reshape(
                native::slice(grad_weight, 0, g * out_per_group, (g + 1) * out_per_group, 1), {out_per_group, k});
            REQUIRE(bits16(got_weight) == bits16(expected_weight));
          }
        }
      }
    }
  }
}

TEST_CASE("bfloat16 GEMM: a prepacked A is refused with an AMX layout, whose A blocks differ",
          "[gemm][reduced_float]") {
  if (!cpu_has_avx512_bf16()) return;
  cpu::BFloat16PanelLayout layout;
  layout.amx = true;
  const std::uint16_t word = 0;
  GemmPlan plan;
  plan.m = plan.n = plan.k = 1;
  REQUIRE_THROWS_AS(cpu::gemm_bfloat16_packed_b_avx512(plan, layout, &word, false, &word), ValueError);
}
