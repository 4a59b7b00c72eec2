// tests/cuda/host_scratch.h — host memory standing in for the caching allocator as the
// emulated kernels' scratch (split reductions' partials, im2col columns, foreach_norm's
// chunk partials): each block lives until the test ends, with 8 spare bytes past its end.
#pragma once

#include <cstddef>
#include <vector>

#include <ember/cuda/kernels/reduce.cuh>

namespace ember::testing {

struct HostScratch final : ::ember::cuda::kernels::ScratchAllocator {
  std::vector<std::vector<char>> blocks;
  void* allocate(std::size_t bytes) override { return blocks.emplace_back(bytes + 8).data(); }
  void release(void*, std::size_t) override {}
};

}  // namespace ember::testing
