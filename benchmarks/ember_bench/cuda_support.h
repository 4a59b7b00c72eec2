// benchmarks/ember_bench/cuda_support.h — what ember-bench needs from the CUDA runtime itself.
//
// ember's public API (ember::cuda::*) covers devices and synchronisation; timing with CUDA
// events, free-memory queries and the peers (cuBLAS sgemm, cudaMemcpy) need the runtime
// directly. cuda_support_cuda.cpp implements this in a CUDA build (plain C++ against
// cuda_runtime_api.h and cublas_v2.h: no .cu file); cuda_support_none.cpp answers "not
// built" in a CPU-only build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness.h"

namespace ember_bench {

bool cuda_peers_built();
std::string cuda_runtime_version();  // "13.0", or "" when not built
// CUDA events on `device`'s default stream; nullptr when not built.
std::unique_ptr<Timer> make_cuda_timer(int device);
std::optional<std::size_t> cuda_free_memory(int device);

// cuBLAS sgemm C = A·B (row-major M×K by K×N, as ember's matmul) on `device`.
Measurement cublas_sgemm(int device, std::int64_t m, std::int64_t k, std::int64_t n, const Policy& policy);
// The GEMMs of a conv2d or training figure (gemm_plan.h) by cuBLAS on `device`: its ceiling.
Measurement cublas_gemm_plan(int device, const Workload& w, const Policy& policy);
// The device's fp32 peak in FLOP/s: SMs × fp32 lanes per SM × 2 (an FMA is two FLOPs) × the
// SM clock, and that product written out (`formula`). No measurement: the ceiling of the
// attention figures on a GPU. nullopt when not built, or for an architecture whose lane
// count (the CUDA Programming Guide's arithmetic-throughput table) is not listed here.
struct DevicePeak {
  double flops_per_second = 0;
  std::string formula;  // "132 SMs × 128 lanes × 2 × 1.98 GHz"
};
std::optional<DevicePeak> cuda_fp32_peak(int device);

// cudaMemcpy of `bytes`: "d2d" (device to device), "h2d" / "d2h" (from/to pinned host memory).
Measurement cuda_memcpy(int device, const std::string& direction, std::size_t bytes, const Policy& policy);

}  // namespace ember_bench
