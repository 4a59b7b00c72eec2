// benchmarks/ember_bench/cuda_support_none.cpp — the CPU-only build's cuda_support.h: no peers.
#include <stdexcept>

#include "cuda_support.h"

namespace ember_bench {

bool cuda_peers_built() { return false; }
std::string cuda_runtime_version() { return ""; }
std::unique_ptr<Timer> make_cuda_timer(int) { return nullptr; }
std::optional<std::size_t> cuda_free_memory(int) { return std::nullopt; }
Measurement cublas_sgemm(int, std::int64_t, std::int64_t, std::int64_t, const Policy&) {
  throw std::runtime_error("cuBLAS peer not built (CPU-only build)");
}
Measurement cublas_gemm_plan(int, const Workload&, const Policy&) {
  throw std::runtime_error("cuBLAS peer not built (CPU-only build)");
}
std::optional<DevicePeak> cuda_fp32_peak(int) { return std::nullopt; }
Measurement cuda_memcpy(int, const std::string&, std::size_t, const Policy&) {
  throw std::runtime_error("cudaMemcpy peer not built (CPU-only build)");
}

}  // namespace ember_bench
