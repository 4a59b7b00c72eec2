// tests/core/test_shape.cpp — shape arithmetic, dims, devices and dtype tables.
// Expected messages are the ones torch 2.15 prints for the same mistakes (1.13 printed the same).
#include <catch2/catch.hpp>

#include <ember/core/device.h>
#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/core/shape.h>

using namespace ember;

TEST_CASE("broadcast_shapes aligns from the right and names the bad dim", "[shape]") {
  CHECK(broadcast_shapes({2, 1, 3}, {4, 1}) == Shape{2, 4, 3});
  CHECK(broadcast_shapes({}, {5}) == Shape{5});
  CHECK(broadcast_shapes({0, 3}, {1, 3}) == Shape{0, 3});
  REQUIRE_THROWS_AS(broadcast_shapes({2, 3}, {2, 2}), ShapeError);
  REQUIRE_THROWS_WITH(broadcast_shapes({2, 3}, {2, 2}),
                      "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1");
}

TEST_CASE("wrap_dim accepts negative dims and rejects out-of-range ones", "[shape]") {
  CHECK(wrap_dim(-1, 3) == 2);
  CHECK(wrap_dim(0, 0) == 0);   // a 0-d tensor accepts 0 and -1
  CHECK(wrap_dim(-1, 0) == 0);
  REQUIRE_THROWS_AS(wrap_dim(2, 2), IndexError);
  REQUIRE_THROWS_WITH(wrap_dim(2, 2), "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  REQUIRE_THROWS_WITH(wrap_dim(1, 0), "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

TEST_CASE("infer_size resolves -1 and explains impossible requests", "[shape]") {
  CHECK(infer_size({3, -1}, 6) == Shape{3, 2});
  CHECK(infer_size({-1, 3}, 0) == Shape{0, 3});
  REQUIRE_THROWS_WITH(infer_size({4, -1}, 6), "shape '[4, -1]' is invalid for input of size 6");
  REQUIRE_THROWS_WITH(infer_size({0, -1}, 0),
                      "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified dimension "
                      "size -1 can be any value and is ambiguous");
  REQUIRE_THROWS_AS(infer_size({-1, -1}, 4), ShapeError);
}

TEST_CASE("contiguous strides and the contiguity test", "[shape]") {
  CHECK(contiguous_strides({2, 3, 4}) == Shape{12, 4, 1});
  CHECK(contiguous_strides({}) == Shape{});
  CHECK(is_contiguous_layout({2, 3}, {3, 1}));
  CHECK_FALSE(is_contiguous_layout({2, 3}, {1, 2}));   // a transpose
  CHECK(is_contiguous_layout({2, 1}, {1, 7}));         // size-1 dims may have any stride
  CHECK(shape_to_string({2, 3}) == "[2, 3]");
  CHECK(compute_numel({}) == 1);
  CHECK(compute_numel({3, 0}) == 0);
}

TEST_CASE("devices parse and print like torch.device", "[device]") {
  CHECK(Device("cpu").is_cpu());
  CHECK(Device("cuda:1").index() == 1);
  CHECK(Device("cuda:0").str() == "cuda:0");
  CHECK(Device("cuda").str() == "cuda");
  CHECK(Device("cuda:0") != Device("cuda:1"));
  REQUIRE_THROWS_AS(Device("gpu"), ValueError);
  REQUIRE_THROWS_WITH(Device("gpu"), Catch::Contains("device type at start of device string: gpu"));
  REQUIRE_THROWS_AS(Device("cuda:x"), ValueError);
}

TEST_CASE("dtype tables and promote_types match torch.promote_types", "[dtype]") {
  CHECK(itemsize(kFloat32) == 4);
  CHECK(itemsize(kInt64) == 8);
  CHECK(dtype_name(kFloat64) == "float64");
  CHECK(scalar_type_name(kInt64) == "Long");
  CHECK(promote_types(kUInt8, kInt32) == kInt32);
  CHECK(promote_types(kBool, kUInt8) == kUInt8);
  CHECK(promote_types(kInt64, kFloat32) == kFloat32);
  CHECK(promote_types(kFloat32, kFloat64) == kFloat64);
  CHECK(is_floating_point(kFloat32));
  CHECK_FALSE(is_integral(kBool));
  CHECK(is_integral(kBool, /*include_bool=*/true));
}
