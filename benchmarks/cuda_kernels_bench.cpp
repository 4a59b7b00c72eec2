// benchmarks/cuda_kernels_bench.cpp — ember's CUDA kernels against cuBLAS and cudaMemcpy.
//
// Run by scripts/gpu-check.sh on an H200. Each figure times ember and the peer that sets
// its ceiling, in the same run, with the GPU synchronised around each timed loop (warm-up
// first, so allocator and cuBLAS set-up are excluded):
//   * GEMM fp32 (square, tall-skinny, addmm with its bias epilogue): ember's kernels (the fast
//     128×128 one where ember picks it, and the 64×64 reading kernel beside it) vs
//     cuBLAS SGEMM, in GFLOP/s;
//   * memory-bound kernels (elementwise add, strided copy/clone, softmax, sum, Philox
//     randn): GB/s of memory traffic vs cudaMemcpy device-to-device (2 × bytes / time), the
//     practical bandwidth roof.
// Prints a table with the ratios; `--tsv FILE` also writes the rows for gpu-check.sh's
// final summary. Without a GPU it says so and exits 0 (so CPU builds still build and run it).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ember/ember.h>

#if defined(EMBER_BENCH_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace {

using namespace ember;

struct Row {
  std::string name;
  double ember;      // ember's figure
  std::string unit;  // GFLOP/s or GB/s
  std::string peer;  // cuBLAS or cudaMemcpy
  double peer_value;
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

double gemm_gflops(const Tensor& a, const Tensor& b, cuda::MatmulBackend backend, const Tensor& bias = {}) {
  cuda::set_matmul_backend(backend);
  const double flops = 2.0 * a.size(0) * a.size(1) * b.size(1);
  const double seconds = time_per_call([&] { (void)(bias.defined() ? ember::addmm(bias, a, b) : a.matmul(b)); });
  cuda::set_matmul_backend(cuda::MatmulBackend::Ember);
  return flops / seconds / 1e9;
}

#if defined(EMBER_BENCH_HAVE_CUDA)
// cudaMemcpy device-to-device of `bytes`, in GB/s of traffic (read + write).
double memcpy_gbps(std::int64_t bytes) {
  Tensor from = ember::empty({bytes}, TensorOptions().dtype(kUInt8).device(kCUDA));
  Tensor to = ember::empty({bytes}, TensorOptions().dtype(kUInt8).device(kCUDA));
  const double seconds = time_per_call([&] {
    if (cudaMemcpy(to.data_ptr(), from.data_ptr(), static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice) !=
        cudaSuccess)
      throw std::runtime_error("cudaMemcpy failed");
  });
  return 2.0 * static_cast<double>(bytes) / seconds / 1e9;
}
#else
double memcpy_gbps(std::int64_t) { return 0.0; }
#endif

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string tsv_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") quick = true;
    else if (arg == "--tsv" && i + 1 < argc) tsv_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: cuda_kernels_bench [--quick] [--tsv FILE]\n");
      return 2;
    }
  }
  if (!cuda::is_available()) {
    std::printf("cuda_kernels_bench: no CUDA GPU visible — nothing to measure\n");
    return 0;
  }
  const cuda::DeviceProperties properties = cuda::get_device_properties(0);
  std::printf("device: %s, %d SMs, %.1f GiB, compute capability %d.%d\n", properties.name.c_str(),
              properties.multiprocessors, properties.total_memory / 1073741824.0, properties.major, properties.minor);
  std::vector<Row> rows;
  NoGradGuard no_grad;
  using cuda::MatmulBackend;

  for (std::int64_t n : quick ? std::vector<std::int64_t>{1024, 2048} : std::vector<std::int64_t>{1024, 2048, 4096}) {
    Tensor a = ember::randn({n, n}, TensorOptions().device(kCUDA)), b = ember::randn({n, n}, TensorOptions().device(kCUDA));
    rows.push_back({"gemm fp32 " + std::to_string(n) + "^3", gemm_gflops(a, b, MatmulBackend::Ember), "GFLOP/s",
                    "cuBLAS", gemm_gflops(a, b, MatmulBackend::Cublas)});
    // Where ember picks the fast 128×128 kernel, the 64×64 reading kernel beside it.
    if (n >= 2048)
      rows.push_back({"gemm fp32 " + std::to_string(n) + "^3, 64x64 reading kernel",
                      gemm_gflops(a, b, MatmulBackend::EmberSimple), "GFLOP/s", "cuBLAS",
                      gemm_gflops(a, b, MatmulBackend::Cublas)});
  }
  {
    // Tall-skinny (a batch of activations through a layer): many row tiles on grid.x.
    Tensor a = ember::randn({1 << 18, 256}, TensorOptions().device(kCUDA));
    Tensor b = ember::randn({256, 128}, TensorOptions().device(kCUDA));
    Tensor bias = ember::randn({128}, TensorOptions().device(kCUDA));
    rows.push_back({"gemm fp32 262144x256x128", gemm_gflops(a, b, MatmulBackend::Ember), "GFLOP/s", "cuBLAS",
                    gemm_gflops(a, b, MatmulBackend::Cublas)});
    rows.push_back({"gemm fp32 262144x256x128, 64x64 reading kernel", gemm_gflops(a, b, MatmulBackend::EmberSimple),
                    "GFLOP/s", "cuBLAS", gemm_gflops(a, b, MatmulBackend::Cublas)});
    rows.push_back({"addmm fp32 262144x256x128 (bias epilogue)", gemm_gflops(a, b, MatmulBackend::Ember, bias), "GFLOP/s",
                    "cuBLAS", gemm_gflops(a, b, MatmulBackend::Cublas, bias)});
  }

  const std::int64_t elements = quick ? (1 << 24) : (1 << 26);  // 64 Mi floats = 256 MiB
  const double roof = memcpy_gbps(4 * elements);
  Tensor x = ember::randn({elements}, TensorOptions().device(kCUDA));
  Tensor y = ember::randn({elements}, TensorOptions().device(kCUDA));
  auto bandwidth = [&](const std::string& name, double bytes, const std::function<void()>& body) {
    rows.push_back({name, bytes / time_per_call(body) / 1e9, "GB/s", "cudaMemcpy", roof});
  };
  bandwidth("elementwise add fp32 (2 reads + 1 write)", 3.0 * 4 * elements, [&] { (void)(x + y); });
  bandwidth("copy kernel: clone fp32 (1 read + 1 write)", 2.0 * 4 * elements, [&] { (void)x.clone(); });
  {
    Tensor square = x.view({elements / 4096, 4096});
    bandwidth("strided copy: transpose().contiguous()", 2.0 * 4 * elements, [&] { (void)square.t().contiguous(); });
    bandwidth("softmax fp32 rows of 4096 (2 reads + 1 write)", 3.0 * 4 * elements, [&] { (void)square.softmax(1); });
  }
  bandwidth("sum fp32 (1 read)", 4.0 * elements, [&] { (void)x.sum(); });
  bandwidth("randn fp32, Philox on the device (1 write)", 4.0 * elements, [&] { ember::normal_(y); });

  std::printf("\n%-50s %12s %-8s %-10s %12s %7s\n", "kernel", "ember", "unit", "peer", "peer value", "ratio");
  for (const Row& row : rows) {
    std::printf("%-50s %12.1f %-8s %-10s %12.1f %6.1f%%\n", row.name.c_str(), row.ember, row.unit.c_str(),
                row.peer.c_str(), row.peer_value, row.peer_value > 0 ? 100.0 * row.ember / row.peer_value : 0.0);
  }
  if (!tsv_path.empty()) {
    std::ofstream tsv(tsv_path);
    for (const Row& row : rows)
      tsv << row.name << '\t' << row.ember << '\t' << row.unit << '\t' << row.peer << '\t' << row.peer_value << '\n';
  }
  return 0;
}
