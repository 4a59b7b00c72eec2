// tests/cuda/test_philox.cpp — the Philox4x32-10 generator (cuda/kernels/philox.cuh).
//
// Known-answer vectors from the algorithm's authors (Random123's kat_vectors, Salmon et
// al. 2011) pin the bit function; the rest checks the properties ember relies on:
// reproducible under one seed, different across seeds and offsets, independent of the
// launch shape, and uniform / normal in distribution.
#include <cmath>
#include <vector>

#include "cuda_test_support.h"

#include <ember/cuda/kernels/philox.cuh>

namespace {
namespace gpu = ember::cuda::kernels;
using ember::DType;

std::vector<float> philox_floats(std::int64_t n, std::uint64_t seed, std::uint64_t offset, gpu::RandomKind kind) {
  std::vector<float> out(n);
  gpu::dispatch_philox(out.data(), DType::Float32, n, seed, offset, kind, kind == gpu::RandomKind::Uniform ? 0.0 : 0.0,
                       1.0, nullptr);
  return out;
}
}  // namespace

TEST_CASE("philox: matches the published Philox4x32-10 known-answer vectors", "[cuda][random]") {
  auto zero = gpu::philox4x32_10(0, 0, 0);
  REQUIRE(zero.word[0] == 0x6627e8d5u);
  REQUIRE(zero.word[1] == 0xe169c58du);
  REQUIRE(zero.word[2] == 0xbc57ac4cu);
  REQUIRE(zero.word[3] == 0x9b00dbd8u);
  auto ones = gpu::philox4x32_10(~0ull, ~0ull, ~0ull);
  REQUIRE(ones.word[0] == 0x408f276du);
  REQUIRE(ones.word[1] == 0x41c83b0eu);
  REQUIRE(ones.word[2] == 0xa20bc7c6u);
  REQUIRE(ones.word[3] == 0x6d5451fdu);
  auto pi = gpu::philox4x32_10(0x85a308d3243f6a88ull, 0x0370734413198a2eull, 0x299f31d0a4093822ull);
  REQUIRE(pi.word[0] == 0xd16cfe09u);
  REQUIRE(pi.word[1] == 0x94fdccebu);
  REQUIRE(pi.word[2] == 0x5001e420u);
  REQUIRE(pi.word[3] == 0x24126ea1u);
}

TEST_CASE("philox: the same seed and offset reproduce the same numbers and others differ", "[cuda][random]") {
  auto a = philox_floats(1000, 123, 0, gpu::RandomKind::Uniform);
  auto b = philox_floats(1000, 123, 0, gpu::RandomKind::Uniform);
  auto other_seed = philox_floats(1000, 124, 0, gpu::RandomKind::Uniform);
  auto other_offset = philox_floats(1000, 123, 500, gpu::RandomKind::Uniform);
  REQUIRE(a == b);
  REQUIRE(a != other_seed);
  REQUIRE(a != other_offset);
  // offset counts Philox blocks of two values: offset 500 continues exactly at element 1000.
  auto longer = philox_floats(2000, 123, 0, gpu::RandomKind::Uniform);
  REQUIRE(std::vector<float>(longer.begin() + 1000, longer.end()) == other_offset);
}

TEST_CASE("philox: each element depends only on (seed, offset, index), not on the launch", "[cuda][random]") {
  auto launched = philox_floats(33, 7, 3, gpu::RandomKind::Normal);
  for (int e = 0; e < 33; ++e) REQUIRE(launched[e] == gpu::philox_value<float>(7, 3, e, gpu::RandomKind::Normal, 0.0, 1.0));
}

TEST_CASE("philox: uniform values lie between low and high with the right mean and variance", "[cuda][random]") {
  const int n = 20000;
  std::vector<double> out(n);
  gpu::dispatch_philox(out.data(), DType::Float64, n, 2024, 0, gpu::RandomKind::Uniform, -1.0, 3.0, nullptr);
  double sum = 0, square = 0;
  for (double v : out) {
    REQUIRE(v >= -1.0);
    REQUIRE(v < 3.0);
    sum += v;
    square += v * v;
  }
  const double mean = sum / n, variance = square / n - mean * mean;
  REQUIRE(std::fabs(mean - 1.0) < 0.05);                // 5 standard errors (σ/√n ≈ 0.008)
  REQUIRE(std::fabs(variance - 16.0 / 12.0) < 0.05);
}

TEST_CASE("philox: a uniform is one fused multiply-add low + (high - low) * u, as the GPU computes it",
          "[cuda][random]") {
  // nvcc contracts low + (high - low) * u into one FMA on the device; the host must round the
  // same way or test_cuda_random.cpp's exact host/GPU comparison fails by 1 ulp.
  const double low = -2.0, high = 3.0;
  const std::uint64_t seed = 2024, offset = 5;
  int unfused_differs = 0;
  for (std::int64_t e = 0; e < 4000; ++e) {
    const auto block = gpu::philox4x32_10(offset + static_cast<std::uint64_t>(e / 2), 0, seed);
    const double u = e % 2 == 0 ? gpu::bits_to_unit_double(block.word[0], block.word[1])
                                : gpu::bits_to_unit_double(block.word[2], block.word[3]);
    const double fused = std::fma(high - low, u, low);
    volatile double product = (high - low) * u;  // volatile: two roundings, never contracted
    unfused_differs += (low + product) != fused;
    INFO("element " << e);
    REQUIRE(gpu::philox_value<double>(seed, offset, e, gpu::RandomKind::Uniform, low, high) == fused);
  }
  REQUIRE(unfused_differs > 0);  // the comparison can tell the two roundings apart
}

TEST_CASE("philox: normal values have the requested mean and standard deviation", "[cuda][random]") {
  const int n = 20000;
  std::vector<float> out(n);
  gpu::dispatch_philox(out.data(), DType::Float32, n, 99, 0, gpu::RandomKind::Normal, 2.0, 0.5, nullptr);
  double sum = 0, square = 0;
  for (float v : out) {
    REQUIRE(std::isfinite(v));
    sum += v;
    square += double(v) * v;
  }
  const double mean = sum / n, std_dev = std::sqrt(square / n - mean * mean);
  REQUIRE(std::fabs(mean - 2.0) < 0.02);
  REQUIRE(std::fabs(std_dev - 0.5) < 0.02);
}

TEST_CASE("philox: integer dtypes are rejected", "[cuda][random]") {
  std::vector<std::int64_t> out(4);
  REQUIRE_THROWS_AS(gpu::dispatch_philox(out.data(), DType::Int64, 4, 1, 0, gpu::RandomKind::Uniform, 0, 1, nullptr),
                    ember::DTypeError);
}

// ---------------------------------------------------------------- the plan-based fill
// (what random_fill_kernel runs for rand / randn / bernoulli_ / dropout on a GPU)

namespace {
using ember::PhiloxFill;
using ember::StridedPlan;
using ember::testing::make_plan;
}  // namespace

TEST_CASE("philox: a strided fill writes element e of the plan's order at its offset", "[cuda][random]") {
  // A 5×7 output stored transposed (column-major): plan order walks dim 0 (size 5) fastest.
  std::vector<double> out(35, -1.0);
  StridedPlan plan = make_plan({5, 7}, {{7, 1}}, {out.data()}, {DType::Float64}, false);
  gpu::dispatch_philox(plan, PhiloxFill{11, 4, gpu::RandomKind::Normal, 0.5, 2.0}, nullptr);
  for (std::int64_t e = 0; e < 35; ++e) {
    const std::int64_t at = ember::operand_offset(plan, 0, e);
    REQUIRE(out[at] == gpu::philox_value<double>(11, 4, e, gpu::RandomKind::Normal, 0.5, 2.0));
  }
}

TEST_CASE("philox: a fill of n values consumes ceil(n / 2) counters", "[cuda][random]") {
  REQUIRE(ember::philox_counters(0) == 0);
  REQUIRE(ember::philox_counters(1) == 1);
  REQUIRE(ember::philox_counters(7) == 4);
  REQUIRE(ember::philox_counters(8) == 4);
  // Two fills back to back, each at the offset the previous one left, never share a counter:
  // the second fill's first value is not the first fill's last-but-one or last value.
  std::vector<float> first(7), second(7);
  const std::uint64_t used = gpu::dispatch_philox(first.data(), DType::Float32, 7, 5, 0, gpu::RandomKind::Uniform, 0, 1,
                                                  nullptr);
  REQUIRE(used == 4);
  gpu::dispatch_philox(second.data(), DType::Float32, 7, 5, used, gpu::RandomKind::Uniform, 0, 1, nullptr);
  auto eighth = philox_floats(9, 5, 0, gpu::RandomKind::Uniform);  // element 8 = counter 4, first half
  REQUIRE(second[0] == eighth[8]);
}

TEST_CASE("philox: bernoulli fills any dtype with 0/1 at rate p", "[cuda][random]") {
  const int n = 20000;
  std::vector<std::uint8_t> bytes(n, 7);
  StridedPlan plan = make_plan({n}, {{1}}, {bytes.data()}, {DType::UInt8}, true);
  gpu::dispatch_philox(plan, PhiloxFill{3, 0, gpu::RandomKind::Bernoulli, 0.3, 0.0}, nullptr);
  double ones = 0;
  for (std::uint8_t v : bytes) {
    REQUIRE((v == 0 || v == 1));
    ones += v;
  }
  REQUIRE(std::fabs(ones / n - 0.3) < 0.02);  // σ ≈ 0.0032
  std::vector<float> never(50, 5.0f), always(50, 5.0f);
  gpu::dispatch_philox(make_plan({50}, {{1}}, {never.data()}, {DType::Float32}, true),
                       PhiloxFill{3, 0, gpu::RandomKind::Bernoulli, 0.0, 0.0}, nullptr);
  gpu::dispatch_philox(make_plan({50}, {{1}}, {always.data()}, {DType::Float32}, true),
                       PhiloxFill{3, 0, gpu::RandomKind::Bernoulli, 1.0, 0.0}, nullptr);
  REQUIRE(never == std::vector<float>(50, 0.0f));
  REQUIRE(always == std::vector<float>(50, 1.0f));
}

TEST_CASE("philox: a float32 uniform never returns the upper bound, even when rounding lands on it",
          "[cuda][random]") {
  // [1, 1 + 2^-23) holds no float32 between its ends: every draw above the midpoint rounds
  // to the upper bound, which [a, b) excludes, so it must come back as a.
  const double low = 1.0, high = 1.0 + std::ldexp(1.0, -23);
  std::vector<float> out(1000);
  gpu::dispatch_philox(out.data(), DType::Float32, 1000, 17, 0, gpu::RandomKind::Uniform, low, high, nullptr);
  for (float v : out) REQUIRE(v == 1.0f);
}
