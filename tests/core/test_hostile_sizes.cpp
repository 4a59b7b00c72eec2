// tests/core/test_hostile_sizes.cpp — sizes that overflow int64 (or a byte count) wherever a
// shape is made: factories, views, reshapes, as_strided / from_blob, cat, and allocations
// too large to succeed. Each must throw an ember::Error with PyTorch's message (probed with
// torch 2.15; core/shape.h has the checked arithmetic), never wrap into a small tensor that
// is then read out of bounds, and never escape as std::length_error / std::bad_alloc.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include <ember/core/native.h>
#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::to_vector;

namespace {
constexpr std::int64_t k2to31 = std::int64_t{1} << 31;
constexpr std::int64_t k2to32 = std::int64_t{1} << 32;
constexpr std::int64_t k2to40 = std::int64_t{1} << 40;
constexpr std::int64_t k2to62 = std::int64_t{1} << 62;
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
}  // namespace

TEST_CASE("factories refuse sizes whose byte count overflows, with PyTorch's message", "[core][hostile]") {
  // 2^62 floats are 2^64 bytes: before, the byte count wrapped to 0 and writes went past it.
  REQUIRE_THROWS_AS(zeros({k2to62}), ShapeError);
  REQUIRE_THROWS_WITH(zeros({k2to62}), "Storage size calculation overflowed with sizes=[4611686018427387904]");
  // The element count itself overflows (2^80): before, numel() was 0 and a read segfaulted.
  REQUIRE_THROWS_WITH(empty({k2to40, k2to40}),
                      "Storage size calculation overflowed with sizes=[1099511627776, 1099511627776]");
  REQUIRE_THROWS_WITH(full({k2to62}, 1.5), "Storage size calculation overflowed with sizes=[4611686018427387904]");
  REQUIRE_THROWS_WITH(ones({2, k2to62}, kInt64), "Storage size calculation overflowed with sizes=[2, 4611686018427387904]");
  // A 0 among huge sizes has no elements but row-major strides past int64.
  REQUIRE_THROWS_WITH(empty({0, k2to40, k2to40}), "Stride calculation overflowed");
  // Large but fine: 0 elements, and strides that fit.
  CHECK(empty({0, k2to40}).numel() == 0);
  CHECK(empty({k2to40, 0}).strides() == Shape{1, 1});  // as torch.empty(2**40, 0).stride()
}

TEST_CASE("eye, linspace, arange, one_hot and randperm check their sizes", "[core][hostile]") {
  REQUIRE_THROWS_WITH(eye(k2to32), "numel: integer multiplication overflow");
  REQUIRE_THROWS_WITH(eye(k2to31), "Storage size calculation overflowed with sizes=[2147483648, 2147483648]");
  REQUIRE_THROWS_WITH(eye(2, k2to62 / 2), "Storage size calculation overflowed with sizes=[2, 2305843009213693952]");
  REQUIRE_THROWS_WITH(linspace(0, 1, k2to62), "Storage size calculation overflowed with sizes=[4611686018427387904]");
  REQUIRE_THROWS_WITH(arange(0, k2to62), "Storage size calculation overflowed with sizes=[4611686018427387904]");
  REQUIRE_THROWS_WITH(one_hot(tensor({0, 1}), k2to62),
                      "Storage size calculation overflowed with sizes=[2, 4611686018427387904]");
  // num_classes = -1 takes the largest value + 1: a huge value asks for just as much (KNOWN-5).
  REQUIRE_THROWS_WITH(one_hot(tensor({std::int64_t{0}, k2to62}), -1),
                      "Storage size calculation overflowed with sizes=[2, 4611686018427387905]");
  // randperm built a std::vector of n first: std::length_error, not an ember::Error.
  REQUIRE_THROWS_AS(randperm(k2to62), ShapeError);
  REQUIRE_THROWS_WITH(randperm(k2to62), "Storage size calculation overflowed with sizes=[4611686018427387904]");
}

TEST_CASE("an allocation too large for the machine is an ember::Error, not std::bad_alloc", "[core][hostile]") {
  // 2^50 bytes (1 PiB) do not overflow anything but exceed any address space.
  constexpr std::int64_t kPebibyte = std::int64_t{1} << 50;
  REQUIRE_THROWS_AS(empty({kPebibyte}, kUInt8), Error);
  REQUIRE_THROWS_WITH(empty({kPebibyte}, kUInt8), Catch::Contains("can't allocate memory") &&
                                                      Catch::Contains("1125899906842624 bytes"));
  REQUIRE_THROWS_AS(randperm(kPebibyte / 8), Error);
  // And the allocator still works afterwards.
  CHECK(to_vector(ones({3})) == std::vector<double>{1, 1, 1});
}

TEST_CASE("reshape and view refuse sizes whose product wraps", "[core][hostile]") {
  Tensor x = arange(4.0);
  // (2^62 + 1) * 4 wraps to 4 in int64: the request was accepted before.
  REQUIRE_THROWS_AS(x.reshape({k2to62 + 1, 4}), ShapeError);
  REQUIRE_THROWS_WITH(x.reshape({k2to62 + 1, 4}), "shape '[4611686018427387905, 4]' is invalid for input of size 4");
  REQUIRE_THROWS_WITH(x.view({k2to62 + 1, 4}), "shape '[4611686018427387905, 4]' is invalid for input of size 4");
  REQUIRE_THROWS_WITH(x.reshape({k2to62, k2to62, -1}),
                      "shape '[4611686018427387904, 4611686018427387904, -1]' is invalid for input of size 4");
  REQUIRE_THROWS_WITH(x.view({k2to62 + 1, -1}), "shape '[4611686018427387905, -1]' is invalid for input of size 4");
  // A 0 makes the product 0 whatever else is there: an empty tensor may take such a shape.
  CHECK(empty({0}).reshape({0, k2to40}).sizes() == Shape{0, k2to40});
}

TEST_CASE("expand refuses a result with more than 2^63 - 1 elements", "[core][hostile]") {
  Tensor one = tensor({1.0});
  // Before: numel() == 0 and sum() == 0 for 2^64 elements.
  REQUIRE_THROWS_AS(one.expand({k2to32, k2to32}), ShapeError);
  REQUIRE_THROWS_WITH(one.expand({k2to32, k2to32}), "numel: integer multiplication overflow");
  REQUIRE_THROWS_WITH(one.expand({k2to62, 2, 2}), "numel: integer multiplication overflow");
  // Huge but representable is a valid (stride-0) view, as in PyTorch.
  Tensor wide = one.expand({k2to31, k2to31});
  CHECK(wide.numel() == k2to62);
  CHECK(wide.strides() == Shape{0, 0});
  CHECK(wide.unsqueeze(0).sizes() == Shape{1, k2to31, k2to31});
}

TEST_CASE("cat refuses sizes that add up past int64", "[core][hostile]") {
  Tensor half = tensor({0.0}).expand({k2to62});
  REQUIRE_THROWS_AS(cat({half, half}), ShapeError);
  REQUIRE_THROWS_WITH(cat({half, half}), "torch.cat(): the sizes of the tensors in dimension 0 add up to more than 2^63 - 1");
}

TEST_CASE("slice with a step near INT64_MAX takes one element", "[core][hostile]") {
  Tensor x = arange(3.0);
  // (3 - 0 + step - 1) / step overflowed: shape [-1] before.
  Tensor first = x.slice(0, 0, 3, kInt64Max);
  CHECK(first.sizes() == Shape{1});
  CHECK(to_vector(first) == std::vector<double>{0});
  CHECK(to_vector(x.slice(0, 1, kInt64Max, kInt64Max - 1)) == std::vector<double>{1});
  CHECK(x.slice(0, 3, 3, kInt64Max).numel() == 0);
  // An ordinary step is unchanged.
  CHECK(to_vector(arange(10.0).slice(0, 1, 9, 3)) == std::vector<double>{1, 4, 7});
}

TEST_CASE("narrow reports a start out of range as PyTorch does", "[core][hostile]") {
  Tensor x = arange(10);
  REQUIRE_THROWS_AS(x.narrow(0, 12, 0), IndexError);
  REQUIRE_THROWS_WITH(x.narrow(0, 12, 0), "start out of range (expected to be in range of [-10, 10], but got 12)");
  REQUIRE_THROWS_WITH(x.narrow(0, -11, 0), "start out of range (expected to be in range of [-10, 10], but got -11)");
  REQUIRE_THROWS_WITH(x.narrow(0, 5, 6), "start (5) + length (6) exceeds dimension size (10).");
  REQUIRE_THROWS_WITH(x.narrow(0, 5, -1), "narrow(): length must be non-negative.");
  CHECK(x.narrow(0, 10, 0).numel() == 0);
  CHECK(to_vector(x.narrow(0, -3, 2)) == std::vector<double>{7, 8});
}

TEST_CASE("native::as_strided refuses negative and overflowing strides", "[core][hostile]") {
  Tensor x = arange(4.0);
  REQUIRE_THROWS_AS(native::as_strided(x, {2}, {-1}, 1), ValueError);
  REQUIRE_THROWS_WITH(native::as_strided(x, {2}, {-1}, 1),
                      "as_strided: Negative strides are not supported at the moment, got strides: [-1]");
  REQUIRE_THROWS_WITH(native::as_strided(x, {0}, {-1}, 0),
                      "as_strided: Negative strides are not supported at the moment, got strides: [-1]");
  // (2 - 1) * 2^62 elements * 4 bytes wrapped to a small number before, and passed the bounds check.
  REQUIRE_THROWS_AS(native::as_strided(x, {2}, {k2to62}, 0), ShapeError);
  REQUIRE_THROWS_WITH(native::as_strided(x, {2}, {k2to62}, 0),
                      "Storage size calculation overflowed with sizes=[2] and strides=[4611686018427387904]");
  REQUIRE_THROWS_WITH(native::as_strided(x, {2, 2}, {k2to62, k2to62}, 0),
                      "Storage size calculation overflowed with sizes=[2, 2] and strides=[4611686018427387904, "
                      "4611686018427387904]");
  REQUIRE_THROWS_WITH(native::as_strided(x, {2}, {1}, kInt64Max),
                      "Storage size calculation overflowed with sizes=[2] and strides=[1]");
  // No element, but data_ptr() would still compute offset · itemsize.
  REQUIRE_THROWS_WITH(native::as_strided(x, {0}, {1}, kInt64Max),
                      "Storage size calculation overflowed with sizes=[0] and strides=[1]");
  // Large strides that do not overflow are out of bounds, as before.
  REQUIRE_THROWS_WITH(native::as_strided(x, {2}, {k2to40}, 0),
                      "setStorage: sizes [2], strides [1099511627776], storage offset 0, and itemsize 4 requiring a "
                      "storage size of 4398046511108 are out of bounds for storage of size 16");
  // Valid layouts still work, a size-1 dim may have any stride.
  CHECK(to_vector(native::as_strided(x, {2, 2}, {1, 2}, 0)) == std::vector<double>{0, 2, 1, 3});
  CHECK(to_vector(native::as_strided(x, {1}, {kInt64Max}, 3)) == std::vector<double>{3});
}

TEST_CASE("from_blob refuses negative and overflowing strides", "[core][hostile]") {
  std::vector<float> buffer{0, 1, 2, 3};
  REQUIRE_THROWS_AS(from_blob(buffer.data(), {2}, {-1}), ValueError);
  REQUIRE_THROWS_WITH(from_blob(buffer.data(), {2}, {-1}),
                      "from_blob: Negative strides are not supported at the moment, got strides: [-1]");
  REQUIRE_THROWS_WITH(from_blob(buffer.data(), {2}, {k2to62}),
                      "Storage size calculation overflowed with sizes=[2] and strides=[4611686018427387904]");
  REQUIRE_THROWS_WITH(from_blob(buffer.data(), {k2to62}),
                      "Storage size calculation overflowed with sizes=[4611686018427387904] and strides=[1]");
  Tensor view = from_blob(buffer.data(), {2, 2}, {1, 2});
  CHECK(view.storage()->nbytes() == 16);
  CHECK(to_vector(view) == std::vector<double>{0, 2, 1, 3});
}
