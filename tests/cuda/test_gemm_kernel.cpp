// tests/cuda/test_gemm_kernel.cpp — the tiled GEMM (cuda/kernels/gemm.cuh) through the
// emulator against core's CPU gemm.
//
// Sizes straddle the 64×64×16 tiles (1, 7, 31, 33, 65, 100), operands come row-major,
// transposed (swapped strides — no copy) or with padded rows, so every tile-load mode
// (vector along columns, vector along rows, scalar) and every edge runs; batched plans,
// alpha/beta and fp64 too.
#include <vector>

#include "cuda_test_support.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/gemm.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

enum class Storage { RowMajor, Transposed, Padded };

// Strides (row, col) for a rows×cols operand stored as requested; returns elements spanned.
std::int64_t operand_layout(Storage storage, std::int64_t rows, std::int64_t cols, std::int64_t& rs, std::int64_t& cs) {
  switch (storage) {
    case Storage::RowMajor: rs = cols; cs = 1; return rows * cols;
    case Storage::Transposed: rs = 1; cs = rows; return rows * cols;
    case Storage::Padded: rs = cols + 3; cs = 1; return rows * (cols + 3);
  }
  return 0;
}

template <class T>
void check_gemm(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, Storage sa, Storage sb,
                double alpha, double beta) {
  GemmPlan plan;
  plan.batch = batch;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  plan.alpha = alpha;
  plan.beta = beta;
  plan.dtype = dtype_of_v<T>;
  const std::int64_t span_a = operand_layout(sa, m, k, plan.row_stride_a, plan.col_stride_a);
  const std::int64_t span_b = operand_layout(sb, k, n, plan.row_stride_b, plan.col_stride_b);
  plan.batch_stride_a = span_a;
  plan.batch_stride_b = span_b;
  plan.row_stride_c = n;
  plan.col_stride_c = 1;
  plan.batch_stride_c = m * n;
  auto a = random_values<T>(batch * span_a, -1, 1, 1);
  auto b = random_values<T>(batch * span_b, -1, 1, 2);
  auto c_start = random_values<T>(batch * m * n, -1, 1, 3);
  std::vector<T> got = c_start, want = c_start;
  plan.a = a.data();
  plan.b = b.data();
  GemmPlan cpu_plan = plan;
  plan.c = got.data();
  cpu_plan.c = want.data();
  gpu::dispatch_gemm(plan, nullptr);
  cpu::gemm(cpu_plan);
  INFO("batch " << batch << " m " << m << " n " << n << " k " << k << " storage " << int(sa) << "," << int(sb)
                << " alpha " << alpha << " beta " << beta);
  const double tolerance = sizeof(T) == 4 ? 1e-4 : 1e-10;
  REQUIRE(first_mismatch(got.data(), want.data(), batch * m * n, tolerance, tolerance) == -1);
}

}  // namespace

TEST_CASE("cuda kernels (emulated): gemm matches the CPU on sizes around the tile edges", "[cuda][gemm]") {
  for (std::int64_t m : {1, 7, 33, 65})
    for (std::int64_t n : {1, 31, 64, 100})
      for (std::int64_t k : {1, 16, 33}) check_gemm<float>(1, m, n, k, Storage::RowMajor, Storage::RowMajor, 1.0, 0.0);
}

TEST_CASE("cuda kernels (emulated): gemm reads transposed and padded operands through strides",
          "[cuda][gemm]") {
  for (Storage sa : {Storage::RowMajor, Storage::Transposed, Storage::Padded})
    for (Storage sb : {Storage::RowMajor, Storage::Transposed, Storage::Padded}) {
      check_gemm<float>(1, 33, 31, 20, sa, sb, 1.0, 0.0);
      check_gemm<float>(1, 64, 64, 32, sa, sb, 1.0, 0.0);  // whole tiles: the vector loads
    }
}

TEST_CASE("cuda kernels (emulated): gemm is batched and applies alpha and beta", "[cuda][gemm]") {
  check_gemm<float>(3, 7, 9, 5, Storage::RowMajor, Storage::Transposed, 1.0, 0.0);
  check_gemm<float>(2, 20, 70, 17, Storage::RowMajor, Storage::RowMajor, 0.5, 2.0);
  check_gemm<float>(1, 10, 10, 0, Storage::RowMajor, Storage::RowMajor, 1.0, 0.5);  // k = 0: C = beta C
}

TEST_CASE("cuda kernels (emulated): gemm in float64", "[cuda][gemm]") {
  check_gemm<double>(1, 33, 65, 31, Storage::RowMajor, Storage::RowMajor, 1.0, 0.0);
  check_gemm<double>(2, 64, 32, 48, Storage::Transposed, Storage::Padded, -1.5, 1.0);
}

TEST_CASE("cuda kernels (emulated): gemm with beta 0 never reads C (NaN garbage does not leak)", "[cuda][gemm]") {
  std::vector<float> a{1, 2, 3, 4}, b{1, 0, 0, 1}, c(4, std::nanf(""));
  GemmPlan plan;
  plan.m = plan.n = plan.k = 2;
  plan.a = a.data();
  plan.b = b.data();
  plan.c = c.data();
  plan.row_stride_a = plan.row_stride_b = plan.row_stride_c = 2;
  plan.col_stride_a = plan.col_stride_b = plan.col_stride_c = 1;
  gpu::dispatch_gemm(plan, nullptr);
  REQUIRE(c == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("cuda kernels (emulated): gemm rejects integer dtypes", "[cuda][gemm]") {
  GemmPlan plan;
  plan.m = plan.n = plan.k = 1;
  plan.dtype = DType::Int64;
  REQUIRE_THROWS_AS(gpu::dispatch_gemm(plan, nullptr), ember::DTypeError);
}

TEST_CASE("cuda kernels (emulated): the tile-load mode follows strides and alignment", "[cuda][gemm]") {
  alignas(16) float buffer[8] = {};
  REQUIRE(gpu::choose_tile_load<float>(buffer, 0, 8, 1) == gpu::TileLoad::VectorAlongCols);
  REQUIRE(gpu::choose_tile_load<float>(buffer, 0, 1, 8) == gpu::TileLoad::VectorAlongRows);
  REQUIRE(gpu::choose_tile_load<float>(buffer + 1, 0, 8, 1) == gpu::TileLoad::Scalar);  // misaligned base
  REQUIRE(gpu::choose_tile_load<float>(buffer, 0, 7, 1) == gpu::TileLoad::Scalar);      // rows not 16-byte spaced
  REQUIRE(gpu::choose_tile_load<float>(buffer, 0, 2, 2) == gpu::TileLoad::Scalar);      // no unit stride
}
