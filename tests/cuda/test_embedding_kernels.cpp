// tests/cuda/test_embedding_kernels.cpp — the GPU embedding backward (cuda/kernels/embedding.cuh:
// a stable radix sort of (index, position) pairs, then one block per row summing its segment)
// through the emulator against the CPU kernel (core/cpu/embedding_kernels.cpp), which
// tests/nn/test_embedding.cpp checks against PyTorch and the reference loop. The two must
// agree bit for bit: both add each row's gradients in input order. Gradients of mixed
// magnitude make any other order show in the last bits. Cases: one row (no sort), rows
// needing 1..9 radix passes, many duplicates and a hot row, the padding row, an empty index,
// columns below, at and past a block's width, and several tiles of the sort.
#include <cstring>
#include <vector>

#include "cuda_test_support.h"
#include "emulator_schedules.h"
#include "host_scratch.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/embedding.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

struct EmbeddingShape {
  std::int64_t num_weights, count, dim, padding_idx;
};

// Values times 10^k, k in [-4, 4]: a sum of them depends on its order.
template <class T>
std::vector<T> mixed_magnitudes(std::int64_t n, unsigned seed) {
  auto values = random_values<T>(n, -1, 1, seed);
  auto exponents = random_values<std::int64_t>(n, -4, 4, seed + 1000);
  for (std::int64_t i = 0; i < n; ++i) values[i] *= static_cast<T>(std::pow(10.0, exponents[i]));
  return values;
}

// Indices in [0, num_weights); about half of them the hot row 0 (when there is more than one).
std::vector<std::int64_t> skewed_indices(std::int64_t count, std::int64_t num_weights, unsigned seed) {
  auto indices = random_values<std::int64_t>(count, 0, num_weights - 1, seed);
  auto coin = random_values<std::int64_t>(count, 0, 1, seed + 7);
  for (std::int64_t i = 0; i < count; ++i)
    if (coin[i] == 1) indices[i] = 0;
  return indices;
}

template <class T>
void check_against_cpu(const EmbeddingShape& s, unsigned seed) {
  INFO("num_weights " << s.num_weights << ", count " << s.count << ", dim " << s.dim << ", padding_idx "
                      << s.padding_idx);
  const auto grad = mixed_magnitudes<T>(s.count * s.dim, seed);
  const auto indices = skewed_indices(s.count, s.num_weights, seed + 1);
  EmbeddingBackwardPlan plan;
  plan.grad = grad.data();
  plan.indices = indices.data();
  plan.count = s.count;
  plan.dim = s.dim;
  plan.num_weights = s.num_weights;
  plan.padding_idx = s.padding_idx;
  plan.dtype = std::is_same_v<T, float> ? DType::Float32 : DType::Float64;
  // Filled with a value no kernel writes, so an element left unwritten shows.
  std::vector<T> on_gpu(static_cast<std::size_t>(s.num_weights * s.dim), T(-7.25));
  std::vector<T> on_cpu(on_gpu.size(), T(-7.25));
  HostScratch scratch;
  plan.grad_weight = on_gpu.data();
  gpu::dispatch_embedding_backward(plan, nullptr, &scratch);
  plan.grad_weight = on_cpu.data();
  cpu::embedding_backward(plan);
  REQUIRE(std::memcmp(on_gpu.data(), on_cpu.data(), on_gpu.size() * sizeof(T)) == 0);
  if (s.padding_idx >= 0 && s.padding_idx < s.num_weights) {
    for (std::int64_t d = 0; d < s.dim; ++d) REQUIRE(on_gpu[s.padding_idx * s.dim + d] == T(0));
  }
}

}  // namespace

TEST_CASE("cuda kernels (emulated): embedding backward equals the CPU kernel bit for bit", "[cuda][embedding]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  const std::vector<EmbeddingShape> shapes = {
      {1, 40, 5, -1},     // one row: no radix pass
      {2, 33, 3, -1},     // one pass
      {5, 300, 7, 2},     // many duplicates, padding row
      {5, 300, 7, 0},     // the hot row is the padding row
      {300, 700, 33, -1}, // 9 passes, 3 tiles, a column past one warp
      {17, 513, 1, 16},   // a tile boundary plus one, one column
      {6, 0, 4, -1},      // empty index: all zeros
      {3, 20, 300, -1},   // columns past the block's 256 threads
  };
  unsigned seed = 1;
  for (const EmbeddingShape& s : shapes) {
    check_against_cpu<float>(s, seed);
    check_against_cpu<double>(s, seed + 50);
    seed += 100;
  }
}

TEST_CASE("cuda kernels (emulated): the embedding radix sort is stable", "[cuda][embedding]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // Direct check of the segments the sum relies on: after the sort, each row's positions
  // are ascending (input order), and the keys ascend.
  const std::int64_t count = 600, num_weights = 11;
  const auto indices = skewed_indices(count, num_weights, 3);
  const int bits = gpu::embedding_key_bits(num_weights);
  REQUIRE(bits == 4);
  const std::int64_t tiles = (count + gpu::kEmbeddingSortThreads - 1) / gpu::kEmbeddingSortThreads;
  std::vector<std::int64_t> keys[2] = {std::vector<std::int64_t>(count), std::vector<std::int64_t>(count)};
  std::vector<std::int64_t> positions[2] = {std::vector<std::int64_t>(count), std::vector<std::int64_t>(count)};
  std::vector<std::int64_t> zeros_per_tile(static_cast<std::size_t>(tiles) + 1);
  const std::int64_t* keys_in = indices.data();
  const std::int64_t* positions_in = nullptr;
  for (int bit = 0; bit < bits; ++bit) {
    std::int64_t* keys_out = keys[bit % 2].data();
    std::int64_t* positions_out = positions[bit % 2].data();
    const dim3 grid(static_cast<unsigned>(tiles)), block(gpu::kEmbeddingSortThreads);
    EMBER_LAUNCH(gpu::radix_count_kernel, grid, block, nullptr, keys_in, count, bit, tiles, zeros_per_tile.data());
    EMBER_LAUNCH(gpu::exclusive_scan_kernel, dim3(1), block, nullptr, zeros_per_tile.data(), tiles,
                 zeros_per_tile.data() + tiles);
    EMBER_LAUNCH(gpu::radix_scatter_kernel, grid, block, nullptr, keys_in, positions_in, keys_out, positions_out,
                 count, bit, tiles, zeros_per_tile.data(), zeros_per_tile.data() + tiles);
    keys_in = keys_out;
    positions_in = positions_out;
  }
  for (std::int64_t k = 0; k < count; ++k) {
    REQUIRE(keys_in[k] == indices[positions_in[k]]);
    if (k > 0) {
      REQUIRE(keys_in[k - 1] <= keys_in[k]);
      if (keys_in[k - 1] == keys_in[k]) REQUIRE(positions_in[k - 1] < positions_in[k]);
    }
  }
}
