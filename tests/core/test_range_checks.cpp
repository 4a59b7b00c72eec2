// tests/core/test_range_checks.cpp — numbers that a tensor's dtype cannot hold: fills
// (full, fill_), clamp bounds, randint's range, randperm's n, uniform_'s bounds
// (core/value_range.h). Before, each wrapped silently or reached an undefined cast
// (NaN -> int64); now each is PyTorch's range error, and every value PyTorch accepts (e.g.
// -1 into uint8, which wraps to 255) is still accepted. Outcomes probed with torch 2.15.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::to_vector;

TEST_CASE("full and fill_ refuse values outside the dtype's range", "[core][range]") {
  REQUIRE_THROWS_AS(full({2}, 1e20, kInt64), ValueError);
  REQUIRE_THROWS_WITH(full({2}, 1e20, kInt64), "value cannot be converted to type int64_t without overflow");
  REQUIRE_THROWS_WITH(full({2}, NAN, kInt64), "value cannot be converted to type int64_t without overflow");
  REQUIRE_THROWS_WITH(full({2}, INFINITY, kInt32), "value cannot be converted to type int without overflow");
  REQUIRE_THROWS_WITH(full({2}, std::int64_t{1} << 31, kInt32), "value cannot be converted to type int without overflow");
  REQUIRE_THROWS_WITH(full({2}, 256.0, kUInt8), "value cannot be converted to type uint8_t without overflow");
  REQUIRE_THROWS_WITH(full({2}, -0.5, kUInt8), "value cannot be converted to type uint8_t without overflow");
  REQUIRE_THROWS_WITH(full({2}, -256, kUInt8), "value cannot be converted to type uint8_t without overflow");
  REQUIRE_THROWS_WITH(full({2}, 1e39, kFloat32), "value cannot be converted to type float without overflow");
  REQUIRE_THROWS_WITH(full({2}, std::ldexp(1.0, 63), kInt64), "value cannot be converted to type int64_t without overflow");
  Tensor bytes = zeros({2}, kUInt8);
  REQUIRE_THROWS_WITH(bytes.fill_(300), "value cannot be converted to type uint8_t without overflow");
  CHECK(to_vector(bytes) == std::vector<double>{0, 0});  // untouched
  REQUIRE_THROWS_WITH(zeros({2}).fill_(1e300), "value cannot be converted to type float without overflow");
  REQUIRE_THROWS_WITH(full_like(zeros({2}, kInt64), NAN), "value cannot be converted to type int64_t without overflow");
}

TEST_CASE("full and fill_ still accept what PyTorch accepts", "[core][range]") {
  CHECK(to_vector(full({1}, -1, kUInt8)) == std::vector<double>{255});  // wraps, two's complement
  CHECK(to_vector(full({1}, -255, kUInt8)) == std::vector<double>{1});
  CHECK(to_vector(full({1}, 255.9, kUInt8)) == std::vector<double>{255});  // the fraction is dropped
  CHECK(to_vector(full({1}, -2147483648.0, kInt32)) == std::vector<double>{-2147483648.0});
  CHECK(to_vector(full({1}, -std::ldexp(1.0, 63), kInt64)) == std::vector<double>{-std::ldexp(1.0, 63)});
  CHECK(full({1}, std::numeric_limits<std::int64_t>::max(), kInt64).item<std::int64_t>() ==
        std::numeric_limits<std::int64_t>::max());
  CHECK(std::isinf(full({1}, INFINITY, kFloat32).item<float>()));
  CHECK(std::isnan(full({1}, NAN, kFloat32).item<float>()));
  CHECK(full({1}, 1e300, kFloat64).item<double>() == 1e300);
  CHECK(full({1}, NAN, kBool).item<bool>());
  CHECK(full({1}, 5, kBool).item<bool>());
  CHECK(to_vector(full({1}, std::numeric_limits<float>::max(), kFloat32))[0] == std::numeric_limits<float>::max());
}

TEST_CASE("clamp keeps int64 bounds exact and checks narrower dtypes", "[core][range]") {
  constexpr std::int64_t kBig = (std::int64_t{1} << 53) + 1;  // not a double
  Tensor x = tensor({std::int64_t{1} << 62, std::int64_t{0}, -(std::int64_t{1} << 62)});
  Tensor both = x.clamp(-kBig, kBig);
  CHECK(both.dtype() == kInt64);
  CHECK(both.data_ptr<std::int64_t>()[0] == kBig);
  CHECK(both.data_ptr<std::int64_t>()[1] == 0);
  CHECK(both.data_ptr<std::int64_t>()[2] == -kBig);
  // INT64_MAX as a double is 2^63, whose cast back to int64 was undefined.
  Tensor top = x.clamp(std::numeric_limits<std::int64_t>::max());
  CHECK(top.data_ptr<std::int64_t>()[0] == std::numeric_limits<std::int64_t>::max());
  CHECK(top.data_ptr<std::int64_t>()[2] == std::numeric_limits<std::int64_t>::max());

  Tensor bytes = tensor({2, 0, 200}, kUInt8);
  REQUIRE_THROWS_AS(bytes.clamp(300), ValueError);
  REQUIRE_THROWS_WITH(bytes.clamp(300), "Clamp min value 300 is outside the representable range of Byte");
  REQUIRE_THROWS_WITH(bytes.clamp(std::nullopt, -1), "Clamp max value -1 is outside the representable range of Byte");
  REQUIRE_THROWS_WITH(tensor({1, 2}, kInt32).clamp(std::int64_t{1} << 40),
                      "Clamp min value 1.09951e+12 is outside the representable range of Int");
  // Bounds that cannot bind change nothing (before: 261 reached an out-of-range cast to uint8).
  CHECK(to_vector(bytes.clamp(-1)) == std::vector<double>{2, 0, 200});
  CHECK(to_vector(bytes.clamp(std::nullopt, 261)) == std::vector<double>{2, 0, 200});
  CHECK(to_vector(bytes.clamp(1, 100)) == std::vector<double>{2, 1, 100});
  // A floating bound promotes, as before.
  CHECK(bytes.clamp(std::nullopt, 3.5).dtype() == kFloat32);
}

TEST_CASE("randint refuses a range the dtype cannot hold", "[core][range]") {
  REQUIRE_THROWS_AS(randint(0, 1000, {4}, kUInt8), ValueError);
  REQUIRE_THROWS_WITH(randint(0, 1000, {4}, kUInt8), "to - 1 is out of bounds for unsigned char");
  REQUIRE_THROWS_WITH(randint(-1, 10, {4}, kUInt8), "from is out of bounds for unsigned char");
  REQUIRE_THROWS_WITH(randint(0, std::int64_t{1} << 40, {4}, kInt32), "to - 1 is out of bounds for int");
  REQUIRE_THROWS_WITH(randint(0, 3, {4}, kBool), "to - 1 is out of bounds for bool");
  Tensor bytes = zeros({4}, kUInt8);
  REQUIRE_THROWS_WITH(random_(bytes, -5, std::nullopt), "from is out of bounds for unsigned char");
  // The edges of the range are fine.
  Tensor full_range = randint(0, 256, {64}, kUInt8);
  for (double v : to_vector(full_range)) CHECK((v >= 0 && v <= 255));
  CHECK(randint(0, 2, {4}, kBool).dtype() == kBool);
}

TEST_CASE("randperm refuses an n whose numbers the dtype cannot all hold", "[core][range]") {
  // 300 values in uint8 had duplicates (256..299 wrapped onto 0..43).
  REQUIRE_THROWS_AS(randperm(300, kUInt8), ValueError);
  REQUIRE_THROWS_WITH(randperm(300, kUInt8), "value cannot be converted to type uint8_t without overflow");
  REQUIRE_THROWS_WITH(randperm(257, kUInt8), "value cannot be converted to type uint8_t without overflow");
  REQUIRE_THROWS_WITH(randperm((std::int64_t{1} << 24) + 2, kFloat32), "n cannot be greater than 2^24+1 for Float type.");
  REQUIRE_THROWS_AS(randperm(3, kBool), NotImplementedError);
  REQUIRE_THROWS_WITH(randperm(3, kBool), "\"randperm\" not implemented for 'Bool'");
  REQUIRE_THROWS_WITH(randperm(-1), "Trying to create tensor with negative dimension -1: [-1]");
  // 256 values are exactly uint8's range: a permutation of 0..255.
  std::vector<double> values = to_vector(randperm(256, kUInt8));
  std::sort(values.begin(), values.end());
  for (int i = 0; i < 256; ++i) CHECK(values[static_cast<std::size_t>(i)] == i);
  CHECK(randperm(0, kUInt8).numel() == 0);
}

TEST_CASE("uniform_ refuses bounds whose range the dtype cannot hold", "[core][range]") {
  Tensor x = empty({2});
  // Before: uniform_(-1e308, 1e308) on float32 gave inf.
  REQUIRE_THROWS_AS(uniform_(x, -1e308, 1e308), ValueError);
  REQUIRE_THROWS_WITH(uniform_(x, -1e308, 1e308), "from is out of bounds for float");
  REQUIRE_THROWS_WITH(uniform_(x, 0, 1e39), "to is out of bounds for float");
  REQUIRE_THROWS_WITH(uniform_(x, NAN, 1), "from is out of bounds for float");
  REQUIRE_THROWS_WITH(uniform_(x, 0, INFINITY), "to is out of bounds for float");
  REQUIRE_THROWS_WITH(uniform_(x, -3e38, 3e38),
                      "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3e+38 and "
                      "from=-3e+38 which result in to-from to exceed the limit");
  Tensor d = empty({2}, kFloat64);
  REQUIRE_THROWS_WITH(uniform_(d, -1e308, 1e308),
                      "uniform_ expects to-from <= std::numeric_limits<Double>::max(), but found to=1e+308 and "
                      "from=-1e+308 which result in to-from to exceed the limit");
  REQUIRE_THROWS_WITH(uniform_(x, 2, 1), "uniform_ expects to return a [from, to) range, but found from=2 > to=1");
  // Wide but representable ranges are fine, and finite.
  uniform_(x, -1e38, 1e38);
  for (double v : to_vector(x)) CHECK(std::isfinite(v));
  uniform_(d, -1e307, 1e307);
  for (double v : to_vector(d)) CHECK(std::isfinite(v));
}
