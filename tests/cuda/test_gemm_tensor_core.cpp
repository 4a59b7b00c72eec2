// tests/cuda/test_gemm_tensor_core.cpp — the tensor-core GEMM (cuda/kernels/gemm_tensor_core.cuh)
// and the mma instruction under it (cuda/kernels/mma.cuh), through the emulator (issue 22).
//
// First the instruction alone: one warp builds its fragments of known A, B and C from PTX's
// layout table (written out again here, independently of the emulator's), multiplies, and
// unpacks D; small integers make every product and sum exact, so D must equal A·B + C
// exactly — a value in the wrong lane or the wrong half of a register changes D. Then the
// GEMM in bfloat16 and float16 against the exact product of the same 16-bit values:
// sizes around the 64×64 block tile and the 16×8 mma tile, k around 16, transposed and padded
// operands, batches, alpha and beta, the addmm bias, beta = 0 over NaN garbage, and blocks
// that loop over tiles. Each element must be within one unit of the 16-bit format (the one
// rounding of a float32 sum) plus float32's summation error.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cuda_test_support.h"
#include "emulator_schedules.h"

#include <ember/core/reduced_float.h>
#include <ember/cuda/kernels/gemm_tensor_core.cuh>
#include <ember/cuda/kernels/mma.cuh>

namespace {

using namespace ember;
namespace gpu = ember::cuda::kernels;

template <class T>
std::uint16_t bits_of(float value) {
  return gpu::bits_of_float<T>(value);
}
template <class T>
float value_of(std::uint16_t bits) {
  return gpu::float_of_bits<T>(bits);
}

// One warp: D = A·B + C through mma_m16n8k16, fragments built and unpacked from PTX's table
// (lane l: g = l / 4, t = l % 4; the lower index in a register's low half).
template <class T>
void warp_mma(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b, const std::vector<float>& c,
              std::vector<float>& d) {
  auto kernel = [&] {
    const int lane = static_cast<int>(threadIdx.x), g = lane / 4, t = lane % 4;
    auto A = [&](int row, int col) { return a[static_cast<std::size_t>(row * 16 + col)]; };
    auto B = [&](int row, int col) { return b[static_cast<std::size_t>(row * 8 + col)]; };
    const std::uint32_t a_frag[4] = {gpu::pack_pair(A(g, 2 * t), A(g, 2 * t + 1)),
                                     gpu::pack_pair(A(g + 8, 2 * t), A(g + 8, 2 * t + 1)),
                                     gpu::pack_pair(A(g, 2 * t + 8), A(g, 2 * t + 9)),
                                     gpu::pack_pair(A(g + 8, 2 * t + 8), A(g + 8, 2 * t + 9))};
    const std::uint32_t b_frag[2] = {gpu::pack_pair(B(2 * t, g), B(2 * t + 1, g)),
                                     gpu::pack_pair(B(2 * t + 8, g), B(2 * t + 9, g))};
    const int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
    float c_frag[4], d_frag[4];
    for (int i = 0; i < 4; ++i) c_frag[i] = c[static_cast<std::size_t>(rows[i] * 8 + cols[i])];
    gpu::mma_m16n8k16<T>(d_frag, a_frag, b_frag, c_frag);
    for (int i = 0; i < 4; ++i) d[static_cast<std::size_t>(rows[i] * 8 + cols[i])] = d_frag[i];
  };
  emulate::launch(dim3(1), dim3(32), kernel, "warp_mma");
}

template <class T>
void check_mma_layout() {
  // Integers in [-8, 8]: exact in both formats, every product and sum exact in float.
  std::mt19937 engine(7);
  std::uniform_int_distribution<int> value(-8, 8);
  std::vector<std::uint16_t> a(16 * 16), b(16 * 8);
  std::vector<float> c(16 * 8), d(16 * 8, std::numeric_limits<float>::quiet_NaN());
  for (auto& x : a) x = bits_of<T>(static_cast<float>(value(engine)));
  for (auto& x : b) x = bits_of<T>(static_cast<float>(value(engine)));
  for (auto& x : c) x = static_cast<float>(value(engine));
  warp_mma<T>(a, b, c, d);
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col) {
      double want = c[static_cast<std::size_t>(row * 8 + col)];
      for (int k = 0; k < 16; ++k)
        want += double(value_of<T>(a[static_cast<std::size_t>(row * 16 + k)])) * value_of<T>(b[static_cast<std::size_t>(k * 8 + col)]);
      INFO("D[" << row << "][" << col << "]");
      REQUIRE(d[static_cast<std::size_t>(row * 8 + col)] == want);
    }
}

using Layout = testing::MatrixStorage;

template <class T>
std::vector<std::uint16_t> random_bits(std::int64_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::uint16_t> values(static_cast<std::size_t>(n));
  for (auto& v : values) v = bits_of<T>(uniform(engine));
  return values;
}

struct Case {
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
  Layout a = Layout::RowMajor, b = Layout::RowMajor;
  double alpha = 1.0, beta = 0.0;
  bool bias = false;            // addmm: the addend is a broadcast row, not C
  bool garbage_c = false;       // C starts as NaN (beta must be 0: never read)
  std::int64_t max_blocks_x = gpu::kGemmMaxGridX;
};

template <class T>
void check_gemm(const Case& s) {
  GemmPlan plan;
  plan.batch = s.batch;
  plan.m = s.m;
  plan.n = s.n;
  plan.k = s.k;
  plan.alpha = s.alpha;
  plan.beta = s.beta;
  plan.dtype = dtype_of_v<T>;
  plan.batch_stride_a = testing::matrix_strides(s.a, s.m, s.k, plan.row_stride_a, plan.col_stride_a);
  plan.batch_stride_b = testing::matrix_strides(s.b, s.k, s.n, plan.row_stride_b, plan.col_stride_b);
  plan.row_stride_c = s.n;
  plan.col_stride_c = 1;
  plan.batch_stride_c = s.m * s.n;
  const auto a = random_bits<T>(s.batch * plan.batch_stride_a, 1);
  const auto b = random_bits<T>(s.batch * plan.batch_stride_b, 2);
  const auto bias = random_bits<T>(s.batch * s.n, 4);
  std::vector<std::uint16_t> c = random_bits<T>(s.batch * s.m * s.n, 3);
  if (s.garbage_c) c.assign(c.size(), bits_of<T>(std::numeric_limits<float>::quiet_NaN()));
  const std::vector<std::uint16_t> c_start = c;
  plan.a = a.data();
  plan.b = b.data();
  plan.c = c.data();
  if (s.bias) {
    plan.bias = bias.data();
    plan.row_stride_bias = 0;  // one row, broadcast
    plan.col_stride_bias = 1;
    plan.batch_stride_bias = s.n;
  }
  gpu::dispatch_gemm_tensor_core(plan, nullptr, s.max_blocks_x);

  INFO("batch " << s.batch << " m " << s.m << " n " << s.n << " k " << s.k << " layouts " << int(s.a) << ","
                << int(s.b) << " alpha " << s.alpha << " beta " << s.beta << " bias " << s.bias);
  const double unit = std::is_same_v<T, BFloat16> ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);  // half an ulp at 1
  for (std::int64_t batch = 0; batch < s.batch; ++batch)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double product = 0, magnitude = 0;
        for (std::int64_t p = 0; p < s.k; ++p) {
          const double term =
              double(value_of<T>(a[batch * plan.batch_stride_a + i * plan.row_stride_a + p * plan.col_stride_a])) *
              value_of<T>(b[batch * plan.batch_stride_b + p * plan.row_stride_b + j * plan.col_stride_b]);
          product += term;
          magnitude += std::fabs(term);
        }
        double want = s.alpha * product;
        if (s.beta != 0.0) {
          const std::uint16_t addend = s.bias ? bias[batch * s.n + j] : c_start[batch * s.m * s.n + i * s.n + j];
          want += s.beta * value_of<T>(addend);
        }
        const double got = value_of<T>(c[batch * s.m * s.n + i * s.n + j]);
        INFO("C[" << batch << "][" << i << "][" << j << "] = " << got << ", want " << want);
        // One rounding of the 16-bit result (half a unit of the format at |want|, up to a
        // unit across a power of two) plus float32's error in the sum.
        const double tolerance = 2 * unit * std::max(std::fabs(want), 1e-30) + 1e-6 * magnitude * std::fabs(s.alpha);
        REQUIRE(std::fabs(got - want) <= tolerance);
      }
}

}  // namespace

TEST_CASE("cuda kernels (emulated): mma m16n8k16 puts every fragment value where PTX's layout says",
          "[cuda][gemm][tensor_core]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_mma_layout<BFloat16>();
  check_mma_layout<Half>();
}

TEST_CASE("cuda kernels (emulated): mma m16n8k16 needs the whole warp", "[cuda][gemm][tensor_core]") {
  auto partial = [] {
    const std::uint32_t a[4] = {}, b[2] = {};
    const float c[4] = {};
    float d[4];
    gpu::mma_m16n8k16<BFloat16>(d, a, b, c);
  };
  REQUIRE_THROWS_WITH(emulate::launch(dim3(1), dim3(16), partial, "partial_mma"), Catch::Contains("partial-warp mma"));
}

TEST_CASE("cuda kernels (emulated): the tensor-core gemm on sizes around its tiles, bfloat16 and float16",
          "[cuda][gemm][tensor_core]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (std::int64_t m : {1, 17, 64, 100})
    for (std::int64_t n : {1, 8, 33, 130})
      for (std::int64_t k : {1, 15, 16, 40}) {
        Case s;
        s.m = m;
        s.n = n;
        s.k = k;
        check_gemm<BFloat16>(s);
      }
  for (std::int64_t k : {7, 16, 33}) {
    Case s;
    s.m = 65;
    s.n = 70;
    s.k = k;
    check_gemm<Half>(s);
  }
}

TEST_CASE("cuda kernels (emulated): the tensor-core gemm reads transposed and padded operands, batches, alpha and beta",
          "[cuda][gemm][tensor_core]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (Layout a : {Layout::RowMajor, Layout::Transposed, Layout::Padded})
    for (Layout b : {Layout::RowMajor, Layout::Transposed, Layout::Padded}) {
      Case s;
      s.batch = 2;
      s.m = 37;
      s.n = 72;
      s.k = 24;
      s.a = a;
      s.b = b;
      s.alpha = 0.5;
      s.beta = -1.5;
      check_gemm<BFloat16>(s);
      check_gemm<Half>(s);
    }
}

TEST_CASE("cuda kernels (emulated): the tensor-core gemm's epilogue: addmm's bias, beta 0 over NaN, looping blocks",
          "[cuda][gemm][tensor_core]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  Case with_bias;
  with_bias.m = 20;
  with_bias.n = 70;
  with_bias.k = 16;
  with_bias.bias = true;
  with_bias.beta = 1.0;
  check_gemm<BFloat16>(with_bias);
  Case garbage;
  garbage.m = 33;
  garbage.n = 9;
  garbage.k = 5;
  garbage.garbage_c = true;  // beta 0: C's NaNs must not leak into the result
  check_gemm<Half>(garbage);
  Case looping;
  looping.batch = 2;
  looping.m = 130;
  looping.n = 65;
  looping.k = 16;
  looping.max_blocks_x = 2;  // 6 tiles per batch on 2 blocks
  check_gemm<BFloat16>(looping);
  Case empty_k;  // k = 0: C = beta · C
  empty_k.m = 5;
  empty_k.n = 6;
  empty_k.k = 0;
  empty_k.beta = 2.0;
  check_gemm<BFloat16>(empty_k);
}
