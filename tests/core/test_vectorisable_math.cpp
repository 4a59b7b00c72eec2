// tests/core/test_vectorisable_math.cpp — core/vectorisable_math.h's float erf and exp
// against the C library's double functions, and the wide GELU runs
// (core/cpu/elementwise_wide_runs.h) against the element functions they vectorise.
//
// The accuracy bounds are the ones scripts/fit_element_polynomials.py measured when it
// fitted the coefficients; here they are checked over a sweep of float bit patterns, so a
// changed coefficient or a changed order of operations fails.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <ember/core/cpu/elementwise_wide_runs.h>
#include <ember/core/element_functions.h>
#include <ember/core/vectorisable_math.h>

using namespace ember;

namespace {

// Distance in ulps between two finite floats (of either sign: through the ordered integers).
std::int64_t ulps_apart(float a, float b) {
  auto ordered = [](float v) {
    const std::int32_t bits = std::bit_cast<std::int32_t>(v);
    return bits < 0 ? std::int64_t{std::numeric_limits<std::int32_t>::min()} - bits : std::int64_t{bits};
  };
  return std::abs(ordered(a) - ordered(b));
}

// Every float whose bit pattern is a multiple of `step`, both signs, from 0 to +inf.
std::vector<float> float_sweep(std::uint32_t step) {
  std::vector<float> values;
  for (std::uint32_t bits = 0; bits < 0x7f800000u; bits += step) {
    values.push_back(std::bit_cast<float>(bits));
    values.push_back(-std::bit_cast<float>(bits));
  }
  return values;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("vectorisable_erf: within 6 ulps of erf over the floats; +-0, +-inf and NaN exactly",
          "[vectorisable_math]") {
  std::int64_t worst = 0;
  float worst_at = 0;
  for (float x : float_sweep(331)) {
    const float expected = static_cast<float>(std::erf(static_cast<double>(x)));
    const std::int64_t distance = ulps_apart(math::vectorisable_erf(x), expected);
    if (distance > worst) worst = distance, worst_at = x;
  }
  INFO("worst at x = " << worst_at);
  CHECK(worst <= 6);
  CHECK(worst > 0);  // it is an approximation: the sweep does reach its error
  CHECK(std::bit_cast<std::uint32_t>(math::vectorisable_erf(0.0f)) == 0u);
  CHECK(std::signbit(math::vectorisable_erf(-0.0f)));
  CHECK(math::vectorisable_erf(kInf) == 1.0f);
  CHECK(math::vectorisable_erf(-kInf) == -1.0f);
  CHECK(math::vectorisable_erf(3.925f) == 1.0f);
  CHECK(std::isnan(math::vectorisable_erf(kNaN)));
}

TEST_CASE("vectorisable_exp: within 1 ulp of exp, subnormal results included; overflow, underflow, NaN",
          "[vectorisable_math]") {
  std::int64_t worst = 0;
  float worst_at = 0;
  for (float x : float_sweep(97)) {
    if (!(x > -110.0f && x < 88.7f)) continue;
    const float expected = static_cast<float>(std::exp(static_cast<double>(x)));
    const std::int64_t distance = ulps_apart(math::vectorisable_exp(x), expected);
    if (distance > worst) worst = distance, worst_at = x;
  }
  INFO("worst at x = " << worst_at);
  CHECK(worst <= 1);
  CHECK(math::vectorisable_exp(0.0f) == 1.0f);
  CHECK(math::vectorisable_exp(-100.0f) > 0.0f);  // subnormal, not flushed
  CHECK(math::vectorisable_exp(-100.0f) < std::numeric_limits<float>::min());
  CHECK(math::vectorisable_exp(-104.0f) == 0.0f);
  CHECK(math::vectorisable_exp(-kInf) == 0.0f);
  CHECK(math::vectorisable_exp(88.8f) == kInf);
  CHECK(math::vectorisable_exp(kInf) == kInf);
  CHECK(std::isnan(math::vectorisable_exp(kNaN)));
}

TEST_CASE("wide GELU runs: bit for bit the element functions, every length and alignment",
          "[vectorisable_math]") {
  // Specials first, then a spread of ordinary values; offsets 0..3 start the runs off the
  // vector alignment and the lengths up to 70 leave every possible tail.
  std::vector<float> x{kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, 3.925f, -3.925f, 12.0f, -12.0f};
  for (int i = 0; x.size() < 80; ++i) x.push_back(static_cast<float>(i % 23 - 11) * 0.37f + 0.01f * static_cast<float>(i));
  std::vector<float> grad(x.size());
  for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = 1.0f - 0.05f * static_cast<float>(i);
  const element::Gelu<float> gelu;
  const element::GeluBackward<float> gelu_backward;
  for (std::size_t offset = 0; offset < 4; ++offset) {
    for (std::size_t count = 0; count + offset <= 70; ++count) {
      std::vector<float> forward(count, 7.0f), backward(count, 7.0f);
      cpu::wide::run(gelu, forward.data(), x.data() + offset, static_cast<std::int64_t>(count));
      cpu::wide::run(gelu_backward, backward.data(), grad.data() + offset, x.data() + offset,
                     static_cast<std::int64_t>(count));
      for (std::size_t i = 0; i < count; ++i) {
        INFO("offset " << offset << ", count " << count << ", x = " << x[offset + i]);
        REQUIRE(std::bit_cast<std::uint32_t>(forward[i]) == std::bit_cast<std::uint32_t>(gelu(x[offset + i])));
        REQUIRE(std::bit_cast<std::uint32_t>(backward[i]) ==
                std::bit_cast<std::uint32_t>(gelu_backward(grad[offset + i], x[offset + i])));
      }
    }
  }
}
