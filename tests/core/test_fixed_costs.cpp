// tests/core/test_fixed_costs.cpp — the per-op fast paths of docs/performance.md ("Fixed
// costs per step") compute what the general paths compute.
//
// The elementwise loop steps from row to row instead of dividing a linear index per row
// (core/cpu/elementwise_kernels.cpp, for_each_run); a small 2-D plan runs row by row without
// the thread pool. Both are checked against values computed here element by element, with
// shapes whose thread chunks start in the middle of a row and plans of two and three dims.
// Tensors, storages, autograd fields and graph nodes come from a per-thread pool
// (core/small_object_pool.h): a freed block is reused, and one freed on another thread is fine.
#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>
#include <vector>

#include <ember/core/address_sanitizer.h>
#include <ember/core/native.h>
#include <ember/core/parallel.h>
#include <ember/core/small_object_pool.h>
#include <ember/core/tensor.h>

using namespace ember;

namespace {

// A float tensor of the given sizes holding 0, 1, 2, ... in row-major order.
Tensor iota(IntArrayRef sizes) {
  Tensor t = empty(sizes);
  float* p = t.data_ptr<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i % 1000);
  return t;
}

}  // namespace

TEST_CASE("fixed costs: a broadcast add over rows that thread chunks split mid-row", "[iterator][overhead]") {
  // [3, 7, 5003] + [7, 1]: 105 063 elements (several chunks of 32 768 when threads split
  // it; 32 768 is not a multiple of 5003) over a 2-D plan: rows of 5003, 21 of them.
  const int previous_threads = get_num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    Tensor a = iota({3, 7, 5003}), b = iota({7, 1});
    Tensor out = native::add(a, b);
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    const float* po = out.data_ptr<float>();
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 7; ++j)
        for (std::int64_t k = 0; k < 5003; ++k) {
          const std::int64_t at = (i * 7 + j) * 5003 + k;
          wrong += po[at] != pa[at] + pb[j];
        }
    CHECK(wrong == 0);
  }
  set_num_threads(previous_threads);
}

TEST_CASE("fixed costs: a three-dim plan steps its rows like an odometer", "[iterator][overhead]") {
  // A permuted input keeps three dims after coalescing: out[i][j][k] = x[k][j][i] + 1.
  const int previous_threads = get_num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    Tensor x = iota({41, 29, 37});
    Tensor xt = native::permute(x, {2, 1, 0});  // [37, 29, 41], strides [1, 41, 1189]
    Tensor out = native::add(xt, scalar_to_tensor(1.0));
    const float* px = x.data_ptr<float>();
    const float* po = out.data_ptr<float>();
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < 37; ++i)
      for (std::int64_t j = 0; j < 29; ++j)
        for (std::int64_t k = 0; k < 41; ++k) wrong += po[(i * 29 + j) * 41 + k] != px[(k * 29 + j) * 37 + i] + 1.0f;
    CHECK(wrong == 0);
  }
  set_num_threads(previous_threads);
}

TEST_CASE("fixed costs: a small 2-D broadcast copy runs row by row", "[iterator][overhead]") {
  // addmm's bias: a [30] row copied into each row of [32, 30]; and a column [32, 1] too.
  Tensor bias = iota({30});
  Tensor rows = native::contiguous(native::expand(bias, {32, 30}));
  Tensor column = iota({32, 1});
  Tensor columns = native::contiguous(native::expand(column, {32, 30}));
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < 32; ++i)
    for (std::int64_t j = 0; j < 30; ++j) {
      wrong += rows.data_ptr<float>()[i * 30 + j] != static_cast<float>(j);
      wrong += columns.data_ptr<float>()[i * 30 + j] != static_cast<float>(i);
    }
  CHECK(wrong == 0);
}

TEST_CASE("fixed costs: parallel_for runs a small range inline, once", "[parallel][overhead]") {
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  const std::thread::id caller = std::this_thread::get_id();
  bool same_thread = true;
  parallel_for(3, 40, 100, [&](std::int64_t begin, std::int64_t end) {
    calls.emplace_back(begin, end);
    same_thread = same_thread && std::this_thread::get_id() == caller;
  });
  REQUIRE(calls.size() == 1);
  CHECK(calls[0] == std::make_pair(std::int64_t{3}, std::int64_t{40}));
  CHECK(same_thread);
  calls.clear();
  parallel_for(5, 5, 100, [&](std::int64_t begin, std::int64_t end) { calls.emplace_back(begin, end); });
  CHECK(calls.empty());
}

namespace {
struct Counted {
  static inline int alive = 0;
  std::int64_t payload[5];
  explicit Counted(std::int64_t value) {
    for (auto& p : payload) p = value;
    ++alive;
  }
  ~Counted() { --alive; }
};
}  // namespace

TEST_CASE("fixed costs: pooled objects are built, destroyed and their blocks reused", "[pool][overhead]") {
  [[maybe_unused]] const void* first_block = nullptr;  // compared only where the pool is on (not under ASan)
  {
    auto object = detail::make_pooled<Counted>(7);
    CHECK(Counted::alive == 1);
    CHECK(object->payload[4] == 7);
    first_block = object.get();
  }
  CHECK(Counted::alive == 0);
  auto again = detail::make_pooled<Counted>(9);
  CHECK(again->payload[0] == 9);
#if !EMBER_ADDRESS_SANITIZER
  CHECK(static_cast<const void*>(again.get()) == first_block);  // the same block, from the free list
#endif
  // Made here, freed on another thread (as a DataLoader worker's batch is freed on the main
  // thread), then made again: every object stays intact and is destroyed once.
  std::vector<std::shared_ptr<Counted>> made;
  for (int i = 0; i < 1000; ++i) made.push_back(detail::make_pooled<Counted>(i));
  std::thread([&] { made.clear(); }).join();
  CHECK(Counted::alive == 1);
  for (int i = 0; i < 1000; ++i) made.push_back(detail::make_pooled<Counted>(i));
  bool intact = true;
  for (int i = 0; i < 1000; ++i) intact = intact && made[static_cast<std::size_t>(i)]->payload[2] == i;
  CHECK(intact);
  made.clear();
  again.reset();
  CHECK(Counted::alive == 0);
}
