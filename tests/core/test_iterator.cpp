// tests/core/test_iterator.cpp — the TensorIterator's plans and the thread pool.
//
// These check the *structure* the header promises (broadcast strides are 0, size-1 dims
// vanish, contiguous dims coalesce, the output's fastest dim becomes dim 0) and that
// parallel_for covers a range exactly once.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include <ember/core/parallel.h>
#include <ember/core/tensor_iterator.h>

using namespace ember;

namespace {
Tensor view_of(const Tensor& base, Shape sizes, Shape strides, std::int64_t offset = 0) {
  return make_tensor(base.storage(), std::move(sizes), std::move(strides), offset, base.dtype());
}
}  // namespace

TEST_CASE("iterator: contiguous operands coalesce into one fast dim", "[iterator]") {
  Tensor out = empty({4, 5, 6}), a = empty({4, 5, 6}), b = empty({4, 5, 6});
  StridedPlan plan = make_strided_plan(out, {a, b});
  CHECK(plan.num_operands == 3);
  CHECK(plan.numel == 120);
  CHECK(plan.ndim == 1);
  CHECK(plan.sizes[0] == 120);
  CHECK(plan.contiguous);
  CHECK(plan.data[1] == a.data_ptr());
  CHECK(plan.dtypes[0] == kFloat32);
}

TEST_CASE("iterator: contiguous operands of one shape get the one-dim plan whatever their size-1 strides", "[iterator]") {
  // Decided without the general steps (tensor_iterator.cpp): the same plan they would build.
  Tensor storage = empty({6});
  Tensor out = empty({2, 1, 3}), a = view_of(storage, {2, 1, 3}, {3, 99, 1}), b = empty({2, 1, 3}, kFloat64);
  StridedPlan plan = make_strided_plan(out, {a, b});
  REQUIRE(plan.ndim == 1);
  CHECK(plan.sizes[0] == 6);
  CHECK(plan.sizes[1] == 0);
  for (int k = 0; k < 3; ++k) {
    CHECK(plan.strides[k][0] == 1);
    CHECK(plan.strides[k][1] == 0);
  }
  CHECK(plan.contiguous);
  CHECK(plan.data[1] == storage.data_ptr());
  CHECK(plan.dtypes[2] == kFloat64);
  CHECK(plan.device == -1);

  StridedPlan one = make_strided_plan(empty({1, 1}), {empty({1, 1}), empty({1})});  // broadcast: the general steps
  StridedPlan one_alike = make_strided_plan(empty({1, 1}), {empty({1, 1})});
  CHECK(one.ndim == 0);
  CHECK(one_alike.ndim == 0);
  CHECK(one_alike.strides[1][0] == 0);
  CHECK(one_alike.contiguous);

  // One operand transposed: the general steps, two dims.
  Tensor transposed = view_of(empty({3, 2}), {2, 3}, {1, 2});
  StridedPlan mixed = make_strided_plan(empty({2, 3}), {transposed});
  CHECK(mixed.ndim == 2);
  CHECK_FALSE(mixed.contiguous);
}

TEST_CASE("iterator: broadcast dims get stride 0 and block coalescing", "[iterator]") {
  Tensor out = empty({4, 5}), row = empty({5}), column = empty({4, 1});
  StridedPlan plan = make_strided_plan(out, {row, column});
  REQUIRE(plan.ndim == 2);
  CHECK(plan.sizes[0] == 5);  // innermost first
  CHECK(plan.sizes[1] == 4);
  CHECK(plan.strides[1][0] == 1);
  CHECK(plan.strides[1][1] == 0);  // the row is re-read for every output row
  CHECK(plan.strides[2][0] == 0);  // the column's value is repeated along the row
  CHECK(plan.strides[2][1] == 1);
  CHECK_FALSE(plan.contiguous);
  // Linear index 7 = row 1, column 2.
  CHECK(operand_offset(plan, 0, 7) == 7);
  CHECK(operand_offset(plan, 1, 7) == 2);
  CHECK(operand_offset(plan, 2, 7) == 1);
}

TEST_CASE("iterator: the output's fastest dim becomes the inner loop", "[iterator]") {
  Tensor storage = empty({6, 4});
  Tensor out = view_of(storage, {4, 6}, {1, 4});  // a transposed output
  Tensor in = empty({4, 6});
  StridedPlan plan = make_strided_plan(out, {in});
  REQUIRE(plan.ndim == 2);
  CHECK(plan.sizes[0] == 4);
  CHECK(plan.strides[0][0] == 1);  // writes are sequential
  CHECK(plan.strides[1][0] == 6);
  CHECK_FALSE(plan.contiguous);
}

TEST_CASE("iterator: size-1 dims vanish, 0-d and empty plans", "[iterator]") {
  Tensor storage = empty({3, 8});
  Tensor sliced = view_of(storage, {3, 1, 4}, {8, 99, 1});  // a [3, 1, 4] slice of the rows
  StridedPlan plan = make_strided_plan(empty({3, 1, 4}), {sliced});
  REQUIRE(plan.ndim == 2);  // rows 8 apart cannot merge with the dense output
  CHECK(plan.sizes[0] == 4);
  CHECK(plan.sizes[1] == 3);
  CHECK(plan.strides[1][1] == 8);

  StridedPlan scalar = make_strided_plan(empty({}), {empty({})});
  CHECK(scalar.ndim == 0);
  CHECK(scalar.numel == 1);
  CHECK(scalar.contiguous);
  CHECK(operand_offset(scalar, 1, 0) == 0);

  StridedPlan nothing = make_strided_plan(empty({0, 3}), {empty({3})});
  CHECK(nothing.numel == 0);
}

TEST_CASE("iterator: shapes that do not broadcast are refused", "[iterator][errors]") {
  REQUIRE_THROWS_AS(make_strided_plan(empty({3}), {empty({2, 3})}), ShapeError);
  REQUIRE_THROWS_WITH(make_strided_plan(empty({4}), {empty({3})}),
                      "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 0");
  CHECK(broadcast_shape_of({empty({2, 3}), empty({3}), empty({4, 1, 1})}) == Shape{4, 2, 3});
  REQUIRE_THROWS_WITH(broadcast_shape_of({empty({2, 3}), empty({2})}),
                      "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1");
}

TEST_CASE("parallel: parallel_for covers the range exactly once", "[parallel]") {
  const std::int64_t n = 100000;
  std::vector<std::atomic<int>> hits(n);
  parallel_for(0, n, 1000, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  bool all_once = true;
  for (auto& h : hits) all_once = all_once && h.load() == 1;
  CHECK(all_once);
  // Ranges that do not divide evenly among 4 threads: every chunk is non-empty and inside.
  const int original_threads = get_num_threads();
  set_num_threads(4);
  for (std::int64_t length : {3, 5, 7, 101}) {
    std::atomic<std::int64_t> covered{0};
    std::atomic<bool> well_formed{true};
    parallel_for(10, 10 + length, 1, [&](std::int64_t begin, std::int64_t end) {
      if (begin >= end || begin < 10 || end > 10 + length) well_formed = false;
      covered += end - begin;
    });
    CHECK(well_formed.load());
    CHECK(covered.load() == length);
  }
  set_num_threads(original_threads);
  int calls = 0;
  parallel_for(5, 10, 1000, [&](std::int64_t begin, std::int64_t end) {  // small: one inline call
    ++calls;
    CHECK(begin == 5);
    CHECK(end == 10);
  });
  CHECK(calls == 1);
  parallel_for(3, 3, 1, [&](std::int64_t, std::int64_t) { ++calls; });  // empty: no call
  CHECK(calls == 1);
}

TEST_CASE("parallel: exceptions reach the caller and nested calls run inline", "[parallel]") {
  REQUIRE_THROWS_WITH(parallel_for(0, 1000, 10, [](std::int64_t begin, std::int64_t) {
                        if (begin > 0) throw std::runtime_error("chunk failed");
                      }),
                      "chunk failed");
  std::atomic<std::int64_t> total{0};
  parallel_for(0, 4, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      parallel_for(0, 1000, 1, [&](std::int64_t b, std::int64_t e) { total += e - b; });
    }
  });
  CHECK(total.load() == 4000);
}

TEST_CASE("parallel: every chunk of many short regions runs once, before the call returns", "[parallel]") {
  // Short regions back to back: some chunks are claimed by a worker, some (a worker still
  // waking up or busy finishing the previous region) are taken back by the caller
  // (core/parallel.cpp). Either way each runs exactly once and is finished when parallel_for
  // returns; a chunk that ran twice, late or never would show in the counts.
  const int original_threads = get_num_threads();
  set_num_threads(3);
  std::vector<std::atomic<int>> runs(3);
  bool all_complete = true;
  for (int region = 0; region < 20000; ++region) {
    for (auto& count : runs) count.store(0, std::memory_order_relaxed);
    parallel_for(0, 3, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t chunk = begin; chunk < end; ++chunk) runs[chunk].fetch_add(1, std::memory_order_relaxed);
    });
    for (auto& count : runs) all_complete = all_complete && count.load(std::memory_order_relaxed) == 1;
  }
  CHECK(all_complete);
  set_num_threads(original_threads);
}

TEST_CASE("parallel: a second thread's parallel_for runs inline while a region is running", "[parallel]") {
  // One region at a time: while thread A's region waits inside its chunk 0 for thread B,
  // B's parallel_for must run its whole range inline, as one call, and return.
  const int original_threads = get_num_threads();
  set_num_threads(2);
  std::atomic<bool> b_done{false};
  std::int64_t b_calls = 0, b_begin = -1, b_end = -1;
  parallel_for(0, 2, 1, [&](std::int64_t begin, std::int64_t) {
    if (begin != 0) return;
    std::thread other([&] {
      parallel_for(0, 100, 1, [&](std::int64_t chunk_begin, std::int64_t chunk_end) {
        ++b_calls;
        b_begin = chunk_begin;
        b_end = chunk_end;
      });
      b_done = true;
    });
    other.join();
  });
  CHECK(b_done.load());
  CHECK(b_calls == 1);
  CHECK(b_begin == 0);
  CHECK(b_end == 100);
  set_num_threads(original_threads);
}

TEST_CASE("parallel: set_num_threads changes the pool", "[parallel]") {
  int original = get_num_threads();
  CHECK(original >= 1);
  set_num_threads(3);
  CHECK(get_num_threads() == 3);
  std::atomic<std::int64_t> total{0};
  parallel_for(0, 90000, 10, [&](std::int64_t b, std::int64_t e) { total += e - b; });
  CHECK(total.load() == 90000);
  set_num_threads(1);
  CHECK(get_num_threads() == 1);
  set_num_threads(original);
  CHECK(get_num_threads() == original);
}

TEST_CASE("iterator: operand_offsets gives every operand's operand_offset, past 32 bits too", "[iterator]") {
  // Plans built by hand (only arithmetic, no memory): mixed sizes with broadcast (0),
  // negative and huge strides; linear indices on both sides of 2^32, and a dim larger than
  // 2^32, so both the 32-bit and the 64-bit division paths run.
  StridedPlan plan;
  plan.num_operands = 4;
  const std::int64_t sizes[] = {7, 3, std::int64_t{1} << 33, 5};
  plan.ndim = 4;
  plan.numel = 7 * 3 * 5 * (std::int64_t{1} << 33);
  for (int d = 0; d < plan.ndim; ++d) plan.sizes[d] = sizes[d];
  const std::int64_t strides[4][4] = {{1, 7, 21, 21 * (std::int64_t{1} << 33)},
                                      {0, 1, 3, 0},
                                      {-5, 40, -(std::int64_t{1} << 20), 9},
                                      {3, 0, 1000003, -(std::int64_t{1} << 40)}};
  for (int k = 0; k < 4; ++k)
    for (int d = 0; d < 4; ++d) plan.strides[k][d] = strides[k][d];
  const std::int64_t samples[] = {0,
                                  1,
                                  20,
                                  21,
                                  (std::int64_t{1} << 32) - 1,
                                  std::int64_t{1} << 32,
                                  (std::int64_t{1} << 32) + 12345,
                                  std::int64_t{1} << 40,
                                  plan.numel / 2 + 17,
                                  plan.numel - 1};
  for (std::int64_t linear : samples) {
    INFO("linear index " << linear);
    std::int64_t offsets[4];
    operand_offsets(plan, linear, offsets);
    for (int k = 0; k < 4; ++k) CHECK(offsets[k] == operand_offset(plan, k, linear));
  }
  // Fewer operands than the plan has: the first ones.
  std::int64_t first_two[2];
  operand_offsets(plan, 987654321, first_two);
  CHECK(first_two[0] == operand_offset(plan, 0, 987654321));
  CHECK(first_two[1] == operand_offset(plan, 1, 987654321));
}
