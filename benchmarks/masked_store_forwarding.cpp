// benchmarks/masked_store_forwarding.cpp — what a GEMM tile's epilogue pays when C's rows are
// closer together than its vectors are wide (docs/performance.md, "The toy step's fixed
// costs, third pass").
//
// The SIMD GEMM kernels (core/cpu/gemm_kernel_simd.h) store the last, partial vector of each
// row of a tile with a masked store, and, when beta reads C (addmm's bias), load it first with
// a masked load. If the rows are only a few floats apart, row i + 1's load covers bytes that
// row i's masked store covered (in its masked-off lanes only). This program times 128 rows of
// "masked load, FMA, masked store" with a given row stride and width, in the order the kernel
// used to run them (each row's load right after the previous row's store) and with a tile's
// loads first, and the store alone. Needs AVX-512; prints a note and exits 0 elsewhere.
//
//   build/bin/masked_store_forwarding            # a table of strides and widths
#include <immintrin.h>

#include <chrono>
#include <cstdio>

namespace {

alignas(64) float rows_buffer[1 << 14];

enum class Order { LoadThenStorePerRow, TileLoadsFirst, StoreOnly };

// Nanoseconds per row: 128 rows, `width` lanes each, rows `stride` floats apart.
__attribute__((target("avx512f,fma"))) double time_rows(int stride, int width, Order order) {
  const __mmask16 mask = static_cast<__mmask16>((1U << width) - 1);
  const __m512 beta = _mm512_set1_ps(0.5F);
  __m512 sum = _mm512_set1_ps(1.0F);
  constexpr int kRows = 128, kTile = 8, kRepeats = 100000;
  const auto start = std::chrono::steady_clock::now();
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    sum = _mm512_add_ps(sum, beta);  // a new value each pass, so no pass can be skipped
    if (order == Order::LoadThenStorePerRow) {
      for (int i = 0; i < kRows; ++i) {
        float* row = rows_buffer + i * stride;
        _mm512_mask_storeu_ps(row, mask, _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(mask, row), sum));
      }
    } else if (order == Order::TileLoadsFirst) {
      for (int first = 0; first < kRows; first += kTile) {
        __m512 old[kTile];
        for (int i = 0; i < kTile; ++i) old[i] = _mm512_maskz_loadu_ps(mask, rows_buffer + (first + i) * stride);
        for (int i = 0; i < kTile; ++i)
          _mm512_mask_storeu_ps(rows_buffer + (first + i) * stride, mask, _mm512_fmadd_ps(beta, old[i], sum));
      }
    } else {
      for (int i = 0; i < kRows; ++i) _mm512_mask_storeu_ps(rows_buffer + i * stride, mask, sum);
    }
    asm volatile("" ::: "memory");
  }
  const double elapsed = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  return elapsed / kRepeats / kRows;
}

}  // namespace

int main() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("this CPU has no AVX-512: nothing to measure\n");
    return 0;
  }
  std::printf("%-8s %-7s %22s %18s %12s\n", "stride", "width", "load+store per row", "tile loads first",
              "store only");
  const int cases[][2] = {{2, 2}, {10, 10}, {15, 15}, {32, 2}, {32, 10}, {16, 16}};
  for (const auto& [stride, width] : cases) {
    std::printf("%-8d %-7d %19.2f ns %15.2f ns %9.2f ns\n", stride, width,
                time_rows(stride, width, Order::LoadThenStorePerRow), time_rows(stride, width, Order::TileLoadsFirst),
                time_rows(stride, width, Order::StoreOnly));
  }
  return 0;
}
