// tests/core/test_dim_vector.cpp — DimVector (core/dim_vector.h), the list behind a tensor's
// sizes and strides: std::vector's behaviour on both sides of its inline capacity, and
// tensors of up to 5 dims keeping their sizes and strides inside the TensorImpl.
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include <ember/core/dim_vector.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/tensor.h>

using namespace ember;

namespace {

std::vector<std::int64_t> as_vector(const DimVector& values) { return {values.begin(), values.end()}; }

// True when the values live inside `owner` (no heap block).
template <class Owner>
bool held_inside(const DimVector& values, const Owner& owner) {
  const auto* begin = reinterpret_cast<const char*>(&owner);
  const auto* data = reinterpret_cast<const char*>(values.data());
  return data >= begin && data < begin + sizeof(Owner);
}

}  // namespace

TEST_CASE("DimVector is built as a std::vector is", "[shape][dim_vector]") {
  CHECK(as_vector(DimVector{2, 3, 4}) == std::vector<std::int64_t>{2, 3, 4});
  CHECK(as_vector(DimVector(3, 7)) == std::vector<std::int64_t>{7, 7, 7});  // (count, value)
  CHECK(as_vector(DimVector(2)) == std::vector<std::int64_t>{0, 0});
  CHECK(as_vector(DimVector{5}) == std::vector<std::int64_t>{5});  // braces: one element
  const std::vector<std::int64_t> source{1, 2, 3, 4, 5, 6, 7};
  CHECK(as_vector(DimVector(source.begin(), source.end())) == source);
  const DimVector converted = source;  // implicit, both ways
  const std::vector<std::int64_t> back = converted;
  CHECK(back == source);
  CHECK(converted == source);
  CHECK(source == converted);
  CHECK_FALSE(DimVector{1, 2} == DimVector{1, 2, 3});
  CHECK(DimVector{} == DimVector());
}

TEST_CASE("DimVector grows past its inline capacity and keeps every value", "[shape][dim_vector]") {
  DimVector values{10, 11};
  std::vector<std::int64_t> expected{10, 11};
  for (std::int64_t i = 0; i < 40; ++i) {
    values.push_back(i);
    expected.push_back(i);
    REQUIRE(as_vector(values) == expected);
  }
  CHECK(values.capacity() >= 42);
  DimVector small(DimVector::kInlineDims, 1);
  CHECK(held_inside(small, small));
  small.push_back(2);  // the sixth value moves them to the heap
  CHECK_FALSE(held_inside(small, small));
  CHECK(as_vector(small) == std::vector<std::int64_t>{1, 1, 1, 1, 1, 2});
}

TEST_CASE("DimVector copies and moves, inline and on the heap", "[shape][dim_vector]") {
  for (std::size_t count : {std::size_t{3}, std::size_t{9}}) {
    DimVector original(count, 4);
    original[0] = -1;
    DimVector copy = original;
    CHECK(copy == original);
    copy[1] = 8;
    CHECK(original[1] == 4);  // a copy owns its values
    const std::int64_t* heap_block = original.data();
    DimVector moved = std::move(original);
    CHECK(moved.size() == count);
    CHECK(moved[0] == -1);
    CHECK(original.empty());  // NOLINT: moved-from is empty, as std::vector
    if (count > DimVector::kInlineDims) CHECK(moved.data() == heap_block);  // the block changes owner
    DimVector assigned{1};
    assigned = moved;
    CHECK(assigned == moved);
    assigned = std::move(copy);
    CHECK(assigned[1] == 8);
    assigned = assigned;  // NOLINT: self-assignment keeps the values
    CHECK(assigned[1] == 8);
    DimVector other{5, 6};
    other.swap(assigned);
    CHECK(other[1] == 8);
    CHECK(assigned == DimVector{5, 6});
  }
}

TEST_CASE("DimVector inserts, erases and resizes as std::vector does", "[shape][dim_vector]") {
  DimVector values{1, 2, 3};
  std::vector<std::int64_t> expected{1, 2, 3};
  values.insert(values.begin() + 1, 9);
  expected.insert(expected.begin() + 1, 9);
  CHECK(as_vector(values) == expected);
  values.insert(values.end(), std::size_t{3}, 0);
  expected.insert(expected.end(), std::size_t{3}, 0);
  CHECK(as_vector(values) == expected);
  values.insert(values.begin(), values.begin(), values.end());  // from itself, growing
  CHECK(as_vector(values) == std::vector<std::int64_t>{1, 9, 2, 3, 0, 0, 0, 1, 9, 2, 3, 0, 0, 0});
  values.erase(values.begin() + 2, values.begin() + 9);
  CHECK(as_vector(values) == std::vector<std::int64_t>{1, 9, 2, 3, 0, 0, 0});
  values.erase(values.begin());
  CHECK(values.front() == 9);
  CHECK(values.back() == 0);
  values.resize(2);
  CHECK(as_vector(values) == std::vector<std::int64_t>{9, 2});
  values.resize(4, 7);
  CHECK(as_vector(values) == std::vector<std::int64_t>{9, 2, 7, 7});
  values.pop_back();
  values.assign({4, 5});
  CHECK(as_vector(values) == std::vector<std::int64_t>{4, 5});
  CHECK(std::vector<std::int64_t>(values.rbegin(), values.rend()) == std::vector<std::int64_t>{5, 4});
  CHECK(std::span<const std::int64_t>(values).size() == 2);
  CHECK_THROWS_AS(values.at(2), std::out_of_range);
  // A hostile count is refused before any byte count is computed from it.
  CHECK_THROWS_AS(DimVector(std::size_t{1} << 62, 0), std::length_error);
  CHECK_THROWS_AS(values.resize(~std::size_t{0}), std::length_error);
  values.clear();
  CHECK(values.empty());
}

TEST_CASE("tensors of up to 5 dims hold their sizes and strides inline", "[shape][dim_vector][overhead]") {
  // With std::vector each of these was a heap block per tensor and per view.
  for (const Shape& sizes : {Shape{}, Shape{3}, Shape{2, 3, 4, 5, 6}}) {
    const Tensor t = zeros(sizes);
    CHECK(held_inside(t.sizes(), t.impl()));
    CHECK(held_inside(t.strides(), t.impl()));
  }
  const Tensor viewed = native::transpose(zeros({2, 3, 4, 5}), 0, 3);
  CHECK(held_inside(viewed.sizes(), viewed.impl()));
  CHECK(viewed.sizes() == Shape{5, 3, 4, 2});
  CHECK(viewed.strides() == Shape{1, 20, 5, 60});
  const Tensor six_dims = zeros({1, 2, 1, 2, 1, 2});  // beyond: the heap, same values
  CHECK_FALSE(held_inside(six_dims.sizes(), six_dims.impl()));
  CHECK(six_dims.strides() == Shape{8, 4, 4, 2, 2, 1});
}
