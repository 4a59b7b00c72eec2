// benchmarks/cuda_kernels_bench.cpp — ember's CUDA kernels against cuBLAS and the memory roof.
//
// Run by scripts/gpu-check.sh on an H200. Measures, with the GPU synchronised around each
// timed loop (warm-up first, so allocator and cuBLAS set-up are excluded):
//   * GEMM fp32 (square, M=N=K): ember's tiled kernel vs cuBLAS, in TFLOP/s;
//   * elementwise add and softmax, in GB/s of memory traffic;
//   * device-to-device copy bandwidth through ember's copy kernel (clone) in GB/s.
// Prints a summary table last. Without a GPU it says so and exits 0 (so the CPU build's
// benchmark targets still build and run).
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <ember/ember.h>

namespace {

using namespace ember;

struct Row {
  std::string name;
  double value;
  std::string unit;
};

// Seconds per call of `body`, averaged over `iterations` after `warmup` calls.
double time_per_call(const std::function<void()>& body, int warmup = 3, int iterations = 10) {
  for (int i = 0; i < warmup; ++i) body();
  cuda::synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) body();
  cuda::synchronize();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda::is_available()) {
    std::printf("cuda_kernels_bench: no CUDA GPU visible — nothing to measure\n");
    return 0;
  }
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const cuda::DeviceProperties properties = cuda::get_device_properties(0);
  std::printf("device: %s, %d SMs, %.1f GiB, compute capability %d.%d\n", properties.name.c_str(),
              properties.multiprocessors, properties.total_memory / 1073741824.0, properties.major, properties.minor);
  std::vector<Row> rows;
  NoGradGuard no_grad;

  for (std::int64_t n : quick ? std::vector<std::int64_t>{1024} : std::vector<std::int64_t>{1024, 4096}) {
    Tensor a = ember::randn({n, n}).cuda(), b = ember::randn({n, n}).cuda();
    const double flops = 2.0 * n * n * n;
    for (auto backend : {cuda::MatmulBackend::Ember, cuda::MatmulBackend::Cublas}) {
      cuda::set_matmul_backend(backend);
      const double seconds = time_per_call([&] { (void)a.matmul(b); });
      rows.push_back({std::string("gemm fp32 ") + std::to_string(n) + "^3 " +
                          (backend == cuda::MatmulBackend::Ember ? "ember" : "cuBLAS"),
                      flops / seconds / 1e12, "TFLOP/s"});
    }
    cuda::set_matmul_backend(cuda::MatmulBackend::Ember);
  }

  const std::int64_t elements = quick ? (1 << 24) : (1 << 26);  // 64 Mi floats = 256 MiB
  Tensor x = ember::randn({elements}).cuda(), y = ember::randn({elements}).cuda();
  {
    const double seconds = time_per_call([&] { (void)(x + y); });
    rows.push_back({"elementwise add fp32 (2 reads + 1 write)", 3.0 * 4 * elements / seconds / 1e9, "GB/s"});
  }
  {
    const double seconds = time_per_call([&] { (void)x.clone(); });
    rows.push_back({"device-to-device copy (clone)", 2.0 * 4 * elements / seconds / 1e9, "GB/s"});
  }
  {
    Tensor logits = x.view({elements / 4096, 4096});
    const double seconds = time_per_call([&] { (void)logits.softmax(1); });
    rows.push_back({"softmax fp32 rows of 4096 (2 reads + 1 write)", 3.0 * 4 * elements / seconds / 1e9, "GB/s"});
  }
  {
    const double seconds = time_per_call([&] { (void)x.sum(); });
    rows.push_back({"sum fp32 (1 read)", 4.0 * elements / seconds / 1e9, "GB/s"});
  }

  std::printf("\n%-48s %12s\n", "benchmark", "result");
  std::printf("%-48s %12s\n", "------------------------------------------------", "------------");
  for (const Row& row : rows) std::printf("%-48s %8.2f %s\n", row.name.c_str(), row.value, row.unit.c_str());
  return 0;
}
