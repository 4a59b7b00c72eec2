// benchmarks/ember_bench/cuda_support_cuda.cpp — CUDA events, memory queries and the GPU peers.
//
// Everything runs on the legacy default stream, the stream ember's kernels use
// (cuda/cuda_context.h), so an event pair around ember calls brackets exactly their kernels.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

#include "cuda_support.h"
#include "gemm_plan.h"

namespace ember_bench {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + " failed, status " + std::to_string(status));
}

class CudaEventTimer : public Timer {
 public:
  explicit CudaEventTimer(int device) : device_(device) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    check(cudaEventCreate(&begin_), "cudaEventCreate");
    check(cudaEventCreate(&end_), "cudaEventCreate");
  }
  ~CudaEventTimer() override {
    cudaEventDestroy(begin_);
    cudaEventDestroy(end_);
  }
  void start() override { check(cudaEventRecord(begin_, cudaStreamLegacy), "cudaEventRecord"); }
  double stop() override {
    check(cudaEventRecord(end_, cudaStreamLegacy), "cudaEventRecord");
    check(cudaEventSynchronize(end_), "cudaEventSynchronize");
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, begin_, end_), "cudaEventElapsedTime");
    return milliseconds / 1000.0;
  }

 private:
  int device_;
  cudaEvent_t begin_{}, end_{};
};

// A device buffer freed on scope exit.
struct DeviceBuffer {
  void* pointer = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { check(cudaMalloc(&pointer, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(pointer); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct PinnedBuffer {
  void* pointer = nullptr;
  explicit PinnedBuffer(std::size_t bytes) { check(cudaMallocHost(&pointer, bytes), "cudaMallocHost"); }
  ~PinnedBuffer() { cudaFreeHost(pointer); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
};

}  // namespace

bool cuda_peers_built() { return true; }

std::string cuda_runtime_version() {
  int version = 0;
  if (cudaRuntimeGetVersion(&version) != cudaSuccess) return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::unique_ptr<Timer> make_cuda_timer(int device) { return std::make_unique<CudaEventTimer>(device); }

std::optional<std::size_t> cuda_free_memory(int device) {
  if (cudaSetDevice(device) != cudaSuccess) return std::nullopt;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return std::nullopt;
  return free_bytes;
}

Measurement cublas_sgemm(int device, std::int64_t m, std::int64_t k, std::int64_t n, const Policy& policy) {
  check(cudaSetDevice(device), "cudaSetDevice");
  DeviceBuffer a(sizeof(float) * m * k), b(sizeof(float) * k * n), c(sizeof(float) * m * n);
  check(cudaMemset(a.pointer, 0, sizeof(float) * m * k), "cudaMemset");
  check(cudaMemset(b.pointer, 0, sizeof(float) * k * n), "cudaMemset");
  cublasHandle_t handle = nullptr;
  check(cublasCreate(&handle), "cublasCreate");
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands, no transposes.
  auto body = [&] {
    check(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                      &one, static_cast<const float*>(b.pointer), static_cast<int>(n),
                      static_cast<const float*>(a.pointer), static_cast<int>(k), &zero, static_cast<float*>(c.pointer),
                      static_cast<int>(n)),
          "cublasSgemm");
  };
  CudaEventTimer timer(device);
  Measurement result;
  try {
    result = measure(body, policy, timer);
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
  cublasDestroy(handle);
  return result;
}

Measurement cublas_gemm_plan(int device, const Workload& w, const Policy& policy) {
  check(cudaSetDevice(device), "cudaSetDevice");
  std::vector<std::vector<GemmCall>> plans;  // one per step; the buffers fit the first
  for (std::int64_t batch : plan_batches(w)) plans.push_back(gemm_plan(w, batch));
  std::vector<std::unique_ptr<DeviceBuffer>> a, b, c;
  for (const auto& call : plans.front()) {
    for (auto [list, elements] : {std::pair{&a, call.m * call.k}, std::pair{&b, call.k * call.n}, std::pair{&c, call.m * call.n}}) {
      list->push_back(std::make_unique<DeviceBuffer>(sizeof(float) * elements));
      check(cudaMemset(list->back()->pointer, 0, sizeof(float) * elements), "cudaMemset");
    }
  }
  cublasHandle_t handle = nullptr;
  check(cublasCreate(&handle), "cublasCreate");
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands and keep
  // each one's transpose flag (a row-major k x n B read column-major is already n x k).
  auto body = [&] {
    for (const auto& plan : plans)
      for (std::size_t i = 0; i < plan.size(); ++i) {
        const GemmCall& g = plan[i];
        const int m = static_cast<int>(g.m), k = static_cast<int>(g.k), n = static_cast<int>(g.n);
        for (std::int64_t repeat = 0; repeat < g.count; ++repeat)
          check(cublasSgemm(handle, g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                            n, m, k, &one, static_cast<const float*>(b[i]->pointer), g.transpose_b ? k : n,
                            static_cast<const float*>(a[i]->pointer), g.transpose_a ? m : k, &zero,
                            static_cast<float*>(c[i]->pointer), n),
                "cublasSgemm");
      }
  };
  CudaEventTimer timer(device);
  Measurement result;
  try {
    result = measure(body, policy, timer);
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
  cublasDestroy(handle);
  return result;
}

std::optional<DevicePeak> cuda_fp32_peak(int device) {
  auto attribute = [&](cudaDeviceAttr which, const char* what) {
    int value = 0;
    check(cudaDeviceGetAttribute(&value, which, device), what);
    return value;
  };
  const int sms = attribute(cudaDevAttrMultiProcessorCount, "cudaDevAttrMultiProcessorCount");
  const int clock_khz = attribute(cudaDevAttrClockRate, "cudaDevAttrClockRate");
  const int major = attribute(cudaDevAttrComputeCapabilityMajor, "cudaDevAttrComputeCapabilityMajor");
  const int minor = attribute(cudaDevAttrComputeCapabilityMinor, "cudaDevAttrComputeCapabilityMinor");
  // 32-bit floating-point multiply-adds per clock per SM, by compute capability.
  int lanes = 0;
  if (major == 6 && minor == 0) lanes = 64;
  else if (major == 7 || (major == 8 && minor == 0)) lanes = 64;
  else if (major == 5 || major == 6 || major >= 8) lanes = 128;
  if (lanes == 0 || sms <= 0 || clock_khz <= 0) return std::nullopt;
  DevicePeak peak;
  peak.flops_per_second = static_cast<double>(sms) * lanes * 2.0 * clock_khz * 1e3;
  char formula[96];
  std::snprintf(formula, sizeof formula, "%d SMs x %d lanes x 2 x %.2f GHz", sms, lanes, clock_khz / 1e6);
  peak.formula = formula;
  return peak;
}

Measurement cuda_memcpy(int device, const std::string& direction, std::size_t bytes, const Policy& policy) {
  check(cudaSetDevice(device), "cudaSetDevice");
  DeviceBuffer source(bytes), target(bytes);
  check(cudaMemset(source.pointer, 0, bytes), "cudaMemset");
  CudaEventTimer timer(device);
  if (direction == "d2d")
    return measure([&] { check(cudaMemcpy(target.pointer, source.pointer, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy"); },
                   policy, timer);
  PinnedBuffer host(bytes);
  if (direction == "h2d")
    return measure([&] { check(cudaMemcpy(target.pointer, host.pointer, bytes, cudaMemcpyHostToDevice), "cudaMemcpy"); },
                   policy, timer);
  return measure([&] { check(cudaMemcpy(host.pointer, source.pointer, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy"); },
                 policy, timer);
}

}  // namespace ember_bench
