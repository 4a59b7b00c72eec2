// tests/cuda/test_gemm_kernel.cpp — the tiled GEMMs (cuda/kernels/gemm.cuh, the reading
// kernel, and gemm_fast.cuh, the 128×128 float32 kernel) through the emulator against core's
// CPU gemm.
//
// Sizes straddle the 64×64×16 and 128×128×8 tiles (1, 7, 31, 33, 65, 100, 129, 130),
// operands come row-major,
// transposed (swapped strides — no copy) or with padded rows, so every tile-load mode
// (vector along columns, vector along rows, scalar) and every edge runs; batched plans,
// alpha/beta and fp64 too. Also the launch math (tiles on grid.x, blocks looping over
// tiles: any M and N) and the addmm bias epilogue.
#include <algorithm>
#include <vector>

#include "cuda_test_support.h"
#include "emulator_schedules.h"
#include "row_major_gemm_plan.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/gemm.cuh>
#include <ember/cuda/kernels/gemm_fast.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

using Layout = testing::MatrixStorage;

// Which of ember's two CUDA GEMM kernels a test runs (the fast one is float32 only).
enum class Kernel { Reading, Fast };
const Kernel kKernels[] = {Kernel::Reading, Kernel::Fast};

void run_gemm(const GemmPlan& plan, Kernel kernel, std::int64_t max_blocks_x = gpu::kGemmMaxGridX) {
  if (kernel == Kernel::Fast) gpu::dispatch_gemm_fast(plan, nullptr, max_blocks_x);
  else gpu::dispatch_gemm(plan, nullptr, max_blocks_x);
}

template <class T>
void check_gemm(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, Layout sa, Layout sb,
                double alpha, double beta, Kernel kernel = Kernel::Reading, Layout sc = Layout::RowMajor) {
  GemmPlan plan;
  plan.batch = batch;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  plan.alpha = alpha;
  plan.beta = beta;
  plan.dtype = dtype_of_v<T>;
  const std::int64_t span_a = testing::matrix_strides(sa, m, k, plan.row_stride_a, plan.col_stride_a);
  const std::int64_t span_b = testing::matrix_strides(sb, k, n, plan.row_stride_b, plan.col_stride_b);
  plan.batch_stride_a = span_a;
  plan.batch_stride_b = span_b;
  const std::int64_t span_c = testing::matrix_strides(sc, m, n, plan.row_stride_c, plan.col_stride_c);
  plan.batch_stride_c = span_c;
  auto a = random_values<T>(batch * span_a, -1, 1, 1);
  auto b = random_values<T>(batch * span_b, -1, 1, 2);
  auto c_start = random_values<T>(batch * span_c, -1, 1, 3);
  std::vector<T> got = c_start, want = c_start;
  plan.a = a.data();
  plan.b = b.data();
  GemmPlan cpu_plan = plan;
  plan.c = got.data();
  cpu_plan.c = want.data();
  run_gemm(plan, kernel);
  cpu::gemm(cpu_plan);
  INFO((kernel == Kernel::Fast ? "fast kernel" : "reading kernel") << " batch " << batch << " m " << m << " n " << n << " k " << k << " storage " << int(sa) << "," << int(sb) << "," << int(sc)
                << " alpha " << alpha << " beta " << beta);
  const double tolerance = sizeof(T) == 4 ? 1e-4 : 1e-10;
  // Over all of C's span: a padded C's gaps must come back untouched too.
  REQUIRE(first_mismatch(got.data(), want.data(), batch * span_c, tolerance, tolerance) == -1);
}

}  // namespace

TEST_CASE("cuda kernels (emulated): gemm matches the CPU on sizes around the tile edges", "[cuda][gemm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (std::int64_t m : {1, 7, 33, 65})
    for (std::int64_t n : {1, 31, 64, 100})
      for (std::int64_t k : {1, 16, 33}) check_gemm<float>(1, m, n, k, Layout::RowMajor, Layout::RowMajor, 1.0, 0.0);
  // The fast kernel's 128×128×8 tiles: edges on every side, one slab, a part slab, several.
  for (std::int64_t m : {1, 33, 129})
    for (std::int64_t n : {1, 100, 130})
      for (std::int64_t k : {1, 8, 9, 17})
        check_gemm<float>(1, m, n, k, Layout::RowMajor, Layout::RowMajor, 1.0, 0.0, Kernel::Fast);
}

TEST_CASE("cuda kernels (emulated): gemm reads transposed and padded operands through strides",
          "[cuda][gemm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (Layout sa : {Layout::RowMajor, Layout::Transposed, Layout::Padded})
    for (Layout sb : {Layout::RowMajor, Layout::Transposed, Layout::Padded}) {
      check_gemm<float>(1, 33, 31, 20, sa, sb, 1.0, 0.0);
      check_gemm<float>(1, 64, 64, 32, sa, sb, 1.0, 0.0);  // whole tiles: the vector loads
      check_gemm<float>(1, 33, 31, 20, sa, sb, 1.0, 0.0, Kernel::Fast);
      check_gemm<float>(1, 128, 128, 24, sa, sb, 1.0, 0.0, Kernel::Fast);  // whole tiles
      check_gemm<float>(1, 130, 129, 21, sa, sb, 1.0, 0.0, Kernel::Fast);  // vectors crossing the edges
    }
}

TEST_CASE("cuda kernels (emulated): gemm writes a column-major or padded C through its strides",
          "[cuda][gemm]") {
  // A column-major C is what native::mm_transposed asks for when autograd wants a gradient in
  // its parameter's transposed layout; the epilogue's stores follow C's strides.
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (Layout sc : {Layout::Transposed, Layout::Padded})
    for (Kernel kernel : kKernels) {
      check_gemm<float>(1, 33, 31, 20, Layout::RowMajor, Layout::Transposed, 1.0, 0.0, kernel, sc);
      check_gemm<float>(2, 130, 129, 9, Layout::Transposed, Layout::RowMajor, 0.5, 1.0, kernel, sc);
    }
  check_gemm<double>(1, 65, 33, 17, Layout::RowMajor, Layout::RowMajor, 1.0, 0.0, Kernel::Reading, Layout::Transposed);
}

TEST_CASE("cuda kernels (emulated): gemm is batched and applies alpha and beta", "[cuda][gemm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (Kernel kernel : kKernels) {
    check_gemm<float>(3, 7, 9, 5, Layout::RowMajor, Layout::Transposed, 1.0, 0.0, kernel);
    check_gemm<float>(2, 20, 70, 17, Layout::RowMajor, Layout::RowMajor, 0.5, 2.0, kernel);
    check_gemm<float>(1, 10, 10, 0, Layout::RowMajor, Layout::RowMajor, 1.0, 0.5, kernel);  // k = 0: C = beta C
  }
}

TEST_CASE("cuda kernels (emulated): gemm in float64", "[cuda][gemm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_gemm<double>(1, 33, 65, 31, Layout::RowMajor, Layout::RowMajor, 1.0, 0.0);
  check_gemm<double>(2, 64, 32, 48, Layout::Transposed, Layout::Padded, -1.5, 1.0);
}

TEST_CASE("cuda kernels (emulated): gemm with beta 0 never reads C (NaN garbage does not leak)", "[cuda][gemm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (Kernel kernel : kKernels) {
  std::vector<float> a{1, 2, 3, 4}, b{1, 0, 0, 1}, c(4, std::nanf(""));
  GemmPlan plan;
  plan.m = plan.n = plan.k = 2;
  plan.a = a.data();
  plan.b = b.data();
  plan.c = c.data();
  plan.row_stride_a = plan.row_stride_b = plan.row_stride_c = 2;
  plan.col_stride_a = plan.col_stride_b = plan.col_stride_c = 1;
  run_gemm(plan, kernel);
  REQUIRE(c == std::vector<float>{1, 2, 3, 4});
  }
}

TEST_CASE("cuda kernels (emulated): gemm rejects integer dtypes", "[cuda][gemm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  GemmPlan plan;
  plan.m = plan.n = plan.k = 1;
  plan.dtype = DType::Int64;
  REQUIRE_THROWS_AS(gpu::dispatch_gemm(plan, nullptr), ember::DTypeError);
  plan.dtype = DType::Float64;  // the fast kernel is float32 only
  REQUIRE_THROWS_AS(gpu::dispatch_gemm_fast(plan, nullptr), ember::DTypeError);
}

TEST_CASE("cuda kernels: the fast gemm runs float32 products with enough 128x128 tiles to fill a GPU",
          "[cuda][gemm]") {
  GemmPlan plan;
  plan.dtype = DType::Float32;
  plan.m = plan.n = plan.k = 2048;  // 16 × 16 = 256 tiles
  REQUIRE(gpu::gemm_uses_fast_kernel(plan));
  plan.m = plan.n = 1024;  // 64 tiles: the reading kernel's 256 blocks of 64×64 spread wider
  REQUIRE_FALSE(gpu::gemm_uses_fast_kernel(plan));
  plan.batch = 2;  // 128 tiles over two batches
  REQUIRE(gpu::gemm_uses_fast_kernel(plan));
  plan.batch = 1;
  plan.m = 262144;  // a tall activation matrix: 2048 × 8 tiles
  plan.n = 1000;
  REQUIRE(gpu::gemm_uses_fast_kernel(plan));
  plan.dtype = DType::Float64;
  REQUIRE_FALSE(gpu::gemm_uses_fast_kernel(plan));
  plan.dtype = DType::Float32;
  plan.m = 32;  // a training batch through a layer: one row of tiles
  plan.n = 256;
  REQUIRE_FALSE(gpu::gemm_uses_fast_kernel(plan));
}

TEST_CASE("cuda kernels (emulated): the tile-load mode follows strides and alignment", "[cuda][gemm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  alignas(16) float buffer[8] = {};
  REQUIRE(gpu::choose_tile_load<float>(buffer, 0, 8, 1) == gpu::TileLoad::VectorAlongCols);
  REQUIRE(gpu::choose_tile_load<float>(buffer, 0, 1, 8) == gpu::TileLoad::VectorAlongRows);
  REQUIRE(gpu::choose_tile_load<float>(buffer + 1, 0, 8, 1) == gpu::TileLoad::Scalar);  // misaligned base
  REQUIRE(gpu::choose_tile_load<float>(buffer, 0, 7, 1) == gpu::TileLoad::Scalar);      // rows not 16-byte spaced
  REQUIRE(gpu::choose_tile_load<float>(buffer, 0, 2, 2) == gpu::TileLoad::Scalar);      // no unit stride
}

// ---------------------------------------------------------------- launch math (host side)

TEST_CASE("cuda kernels: gemm tiles go on grid.x, so M beyond 65535 row tiles launches", "[cuda][gemm][launch]") {
  GemmPlan plan;
  plan.m = 65535 * 64 + 1;  // one row more than grid.y could ever hold
  plan.n = 100;
  plan.k = 8;
  const gpu::GemmLaunch launch = gpu::gemm_launch_shape(plan);
  REQUIRE(launch.tiles.row_tiles == 65536);
  REQUIRE(launch.tiles.col_tiles == 2);
  REQUIRE(launch.tiles.tiles == 131072);
  REQUIRE(launch.grid_x == 131072);  // well inside grid.x's 2^31 - 1
  REQUIRE(launch.grid_z == 1);

  // Past 2^31 - 1 tiles the grid is capped and blocks loop; batches cap at 65535 on z.
  plan.m = std::int64_t{1} << 26;
  plan.n = std::int64_t{1} << 26;
  plan.batch = 100000;
  const gpu::GemmLaunch huge = gpu::gemm_launch_shape(plan);
  REQUIRE(huge.tiles.tiles == (std::int64_t{1} << 40));
  REQUIRE(huge.grid_x == gpu::kGemmMaxGridX);
  REQUIRE(huge.grid_z == 65535);
}

TEST_CASE("cuda kernels: gemm tile numbering covers every tile exactly once for any grid", "[cuda][gemm][launch]") {
  for (std::int64_t m : {1, 64, 65, 200})
    for (std::int64_t n : {1, 63, 130})
      for (std::int64_t max_blocks : {1, 2, 3, 7, 1000}) {
        GemmPlan plan;
        plan.m = m;
        plan.n = n;
        const gpu::GemmLaunch launch = gpu::gemm_launch_shape(plan, max_blocks);
        REQUIRE(launch.grid_x >= 1);
        REQUIRE(launch.grid_x <= max_blocks);
        // The kernel's loop: block x handles tiles x, x + grid_x, ...; mark each tile's origin.
        std::vector<int> seen(static_cast<std::size_t>(launch.tiles.tiles), 0);
        for (std::int64_t block = 0; block < launch.grid_x; ++block)
          for (std::int64_t tile = block; tile < launch.tiles.tiles; tile += launch.grid_x) {
            std::int64_t row0 = -1, col0 = -1;
            gpu::gemm_tile_origin(tile, launch.tiles.col_tiles, row0, col0);
            REQUIRE(row0 % gpu::kGemmTileM == 0);
            REQUIRE(col0 % gpu::kGemmTileN == 0);
            REQUIRE(row0 < m);
            REQUIRE(col0 < n);
            ++seen[static_cast<std::size_t>((row0 / 64) * launch.tiles.col_tiles + col0 / 64)];
          }
        INFO("m " << m << " n " << n << " max_blocks " << max_blocks);
        REQUIRE(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(seen.size()));
      }
}

TEST_CASE("cuda kernels (emulated): gemm blocks loop over tiles when the grid is smaller than the tile count",
          "[cuda][gemm][launch]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // 3 × 2 tiles (and 2 batches) on grids of 1, 2 and 4 blocks: every block runs several
  // tiles (64×64 tiles for the reading kernel, 128×128 for the fast one).
  for (Kernel kernel : kKernels)
  for (std::int64_t blocks : {1, 2, 4}) {
    const std::int64_t m = kernel == Kernel::Fast ? 260 : 130, n = kernel == Kernel::Fast ? 140 : 70, k = 19;
    GemmPlan plan;
    plan.batch = 2;
    plan.m = m;
    plan.n = n;
    plan.k = k;
    plan.row_stride_a = k;
    plan.col_stride_a = 1;
    plan.batch_stride_a = m * k;
    plan.row_stride_b = n;
    plan.col_stride_b = 1;
    plan.batch_stride_b = k * n;
    plan.row_stride_c = n;
    plan.col_stride_c = 1;
    plan.batch_stride_c = m * n;
    auto a = random_values<float>(2 * m * k, -1, 1, 4);
    auto b = random_values<float>(2 * k * n, -1, 1, 5);
    std::vector<float> got(2 * m * n, std::nanf("")), want(2 * m * n, 0.0f);
    plan.a = a.data();
    plan.b = b.data();
    GemmPlan cpu_plan = plan;
    plan.c = got.data();
    cpu_plan.c = want.data();
    run_gemm(plan, kernel, blocks);
    cpu::gemm(cpu_plan);
    INFO((kernel == Kernel::Fast ? "fast kernel" : "reading kernel") << ", blocks " << blocks);
    REQUIRE(first_mismatch(got.data(), want.data(), 2 * m * n, 1e-4, 1e-4) == -1);
  }
}

TEST_CASE("cuda kernels (emulated): the gemm epilogue reads addmm's bias in place", "[cuda][gemm][bias]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // C = alpha · A·B + beta · bias, with bias a length-n vector broadcast over the rows
  // (row stride 0) and C full of NaN: a kernel that read C, or missed a row, would show it.
  for (Kernel kernel : kKernels)
  for (std::int64_t m : {1, 7, 65, 130})
    for (std::int64_t n : {1, 33, 70}) {
      const std::int64_t k = 9;
      const double alpha = 0.5, beta = 2.0;
      auto a = random_values<float>(m * k, -1, 1, 6);
      auto b = random_values<float>(k * n, -1, 1, 7);
      auto bias = random_values<float>(n, -1, 1, 8);
      std::vector<float> got(m * n, std::nanf(""));
      GemmPlan plan = testing::row_major_gemm_plan(m, n, k, a.data(), b.data(), got.data(), kFloat32);
      plan.alpha = alpha;
      plan.beta = beta;
      plan.bias = bias.data();
      plan.row_stride_bias = 0;
      plan.col_stride_bias = 1;
      run_gemm(plan, kernel);

      // Reference: the CPU gemm starting from C = the broadcast bias (what addmm did before).
      std::vector<float> want(m * n);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) want[i * n + j] = bias[j];
      GemmPlan cpu_plan = plan;
      cpu_plan.bias = nullptr;
      cpu_plan.c = want.data();
      cpu::gemm(cpu_plan);
      INFO((kernel == Kernel::Fast ? "fast kernel" : "reading kernel") << ", m " << m << " n " << n);
      REQUIRE(first_mismatch(got.data(), want.data(), m * n, 1e-5, 1e-5) == -1);
    }
}

TEST_CASE("cuda kernels (emulated): with beta 0 the bias is ignored, NaNs included", "[cuda][gemm][bias]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (Kernel kernel : kKernels) {
  std::vector<float> a{1, 2, 3, 4}, b{1, 0, 0, 1}, c(4, 0.0f), bias(2, std::nanf(""));
  GemmPlan plan;
  plan.m = plan.n = plan.k = 2;
  plan.a = a.data();
  plan.b = b.data();
  plan.c = c.data();
  plan.row_stride_a = plan.row_stride_b = plan.row_stride_c = 2;
  plan.col_stride_a = plan.col_stride_b = plan.col_stride_c = 1;
  plan.bias = bias.data();
  plan.col_stride_bias = 1;
  plan.beta = 0.0;
  run_gemm(plan, kernel);
  REQUIRE(c == std::vector<float>{1, 2, 3, 4});
  }
}
