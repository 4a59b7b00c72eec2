// tests/cuda/test_index_kernels.cpp — index_select / index_add / gather / scatter_add
// (cuda/kernels/index.cuh) through the emulator against core's CPU index kernels.
#include <type_traits>
#include <vector>

#include "cuda_test_support.h"
#include "emulator_schedules.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/index.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

struct IndexShape {
  std::int64_t outer, self_size, index_count, inner;
};

std::vector<IndexShape> index_shapes() {
  std::vector<IndexShape> shapes;
  for (std::int64_t count : odd_sizes()) {
    shapes.push_back({1, 5, count, 1});
    shapes.push_back({3, 7, count, 4});
  }
  shapes.push_back({2, 3, 0, 2});  // empty index
  return shapes;
}

template <class T>
void check_index(gpu::IndexKind kind) {
  for (const IndexShape& s : index_shapes()) {
    const bool full = kind == gpu::IndexKind::Gather || kind == gpu::IndexKind::ScatterAdd;
    const bool adds = kind == gpu::IndexKind::Add || kind == gpu::IndexKind::ScatterAdd;
    const std::int64_t small = s.outer * s.index_count * s.inner, large = s.outer * s.self_size * s.inner;
    auto index = random_values<std::int64_t>(full ? small : s.index_count, 0, s.self_size - 1, 17);
    // select/gather read the large side and write the small; the add forms the reverse.
    auto source = random_values<T>(adds ? small : large, -4, 4, 23);
    auto start = random_values<T>(adds ? large : small, -4, 4, 29);
    HostVector<T> got = start, want = start;
    IndexPlan plan;
    plan.outer = s.outer;
    plan.self_size = s.self_size;
    plan.index_count = s.index_count;
    plan.inner = s.inner;
    plan.source = source.data();
    plan.index = index.data();
    plan.dtype = dtype_of_v<T>;
    IndexPlan cpu_plan = plan;
    plan.output = got.data();
    cpu_plan.output = want.data();
    gpu::dispatch_index(kind, plan, nullptr);
    switch (kind) {
      case gpu::IndexKind::Select: cpu::index_select(cpu_plan); break;
      case gpu::IndexKind::Add: cpu::index_add(cpu_plan); break;
      case gpu::IndexKind::Gather: cpu::gather(cpu_plan); break;
      case gpu::IndexKind::ScatterAdd: cpu::scatter_add(cpu_plan); break;
    }
    INFO("kind " << int(kind) << " shape [" << s.outer << ", " << s.self_size << ", " << s.index_count << ", "
                 << s.inner << "]");
    // The add forms use atomics, whose order is undefined on a GPU (and varies here with the
    // emulator's schedule and concurrent blocks), so a float slot that sums n of the
    // index_count terms may differ from the CPU's in-order sum by about n·ε·Σ|x|: the
    // absolute tolerance grows with index_count. A lost update (|x| up to 4) still fails.
    const double atol = adds && std::is_floating_point_v<T> ? 1e-5 * static_cast<double>(s.index_count + 1) : 1e-5;
    REQUIRE(first_mismatch(reinterpret_cast<const T*>(got.data()), reinterpret_cast<const T*>(want.data()),
                           static_cast<std::int64_t>(got.size()), 1e-5, atol) == -1);
  }
}

}  // namespace

TEST_CASE("cuda kernels (emulated): index_select and gather match the CPU backend", "[cuda][index]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_index<float>(gpu::IndexKind::Select);
  check_index<std::int64_t>(gpu::IndexKind::Select);
  check_index<float>(gpu::IndexKind::Gather);
  check_index<bool>(gpu::IndexKind::Gather);
}

TEST_CASE("cuda kernels (emulated): index_add and scatter_add accumulate repeated indices", "[cuda][index]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  check_index<float>(gpu::IndexKind::Add);
  check_index<double>(gpu::IndexKind::ScatterAdd);
  check_index<std::int64_t>(gpu::IndexKind::ScatterAdd);
  check_index<std::int32_t>(gpu::IndexKind::Add);
  check_index<std::uint8_t>(gpu::IndexKind::Add);  // one-byte atomics (compare-and-swap on the GPU)
}
