// cuda/kernels/philox.cuh — Philox4x32-10, the counter-based generator behind GPU random fills.
//
// A counter-based generator maps (key, counter) -> 128 random bits (four 32-bit words) with a
// fixed function (ten rounds of multiply-and-xor, Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011). There is no sequential state: element e of a fill simply uses
// counter (offset + e/2) — two values per 128-bit block (kPhiloxValuesPerCounter in
// core/backend.h: a word pair per float64 uniform, a Box–Muller pair per normal) — so every
// GPU thread computes its own numbers and the result does not depend on the launch shape.
// key = the generator's seed; offset = the first counter this fill reserved from the
// generator (PyTorch's philox seed + offset scheme; core/random.cpp): the same seed and the
// same calls give the same tensors every run. Not bit-identical to PyTorch's CUDA generator
// (not required; see docs/cuda.md).
// Strategy: a grid-stride loop over the fill's elements in plan order (core/strided_index.h),
// so strided and non-contiguous outputs are written in place.
// Bound: memory — itemsize × numel bytes written; ten rounds of 32-bit multiplies per two
// values (plus log/sqrt/sincos for normal) keep it compute-light on any recent GPU.
#pragma once

#include <cmath>
#include <cstdint>

#include <type_traits>

#include <ember/core/backend.h>
#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/core/strided_index.h>
#include <ember/core/element_math.h>
#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

struct PhiloxBlock {
  std::uint32_t word[4];
};

EMBER_HOST_DEVICE inline void mul_hi_lo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(product >> 32);
  lo = static_cast<std::uint32_t>(product);
}

// The published round constants of Philox4x32.
constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

EMBER_HOST_DEVICE inline PhiloxBlock philox4x32_10(std::uint64_t counter_low, std::uint64_t counter_high,
                                                    std::uint64_t key) {
  std::uint32_t c0 = static_cast<std::uint32_t>(counter_low), c1 = static_cast<std::uint32_t>(counter_low >> 32);
  std::uint32_t c2 = static_cast<std::uint32_t>(counter_high), c3 = static_cast<std::uint32_t>(counter_high >> 32);
  std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kPhiloxM0, c0, hi0, lo0);
    mul_hi_lo(kPhiloxM1, c2, hi1, lo1);
    const std::uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return PhiloxBlock{{c0, c1, c2, c3}};
}

// 32 random bits -> uniform in [0, 1): the top 24 bits for float, 53 bits (two words) for double.
EMBER_HOST_DEVICE inline float bits_to_unit_float(std::uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}
EMBER_HOST_DEVICE inline double bits_to_unit_double(std::uint32_t high, std::uint32_t low) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(high) << 21) ^ (low >> 11);
  return static_cast<double>(bits & ((std::uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

// The distributions (core/backend.h); RandomKind is the kernels' historical name for them.
using RandomKind = ::ember::RandomDistribution;

// Element e uses Philox block (offset + e / 2). Within the block, half = e % 2 picks:
//   float32 uniform/normal: words (2·half, 2·half + 1) — a 24-bit uniform each;
//   float64 uniform, bernoulli (every dtype): the 53-bit uniform of word pair `half`;
//   float64 normal: both word pairs feed one Box–Muller pair, half 0 = cos, half 1 = sin.
// (a, b) = (low, high) for Uniform, (mean, std) for Normal, (p, unused) for Bernoulli.
template <class T>
EMBER_HOST_DEVICE inline T philox_value(std::uint64_t seed, std::uint64_t offset, std::int64_t e, RandomKind kind,
                                        double a, double b) {
  const PhiloxBlock block =
      philox4x32_10(offset + static_cast<std::uint64_t>(e / kPhiloxValuesPerCounter), 0, seed);
  const int half = static_cast<int>(e % kPhiloxValuesPerCounter);
  const double wide1 = bits_to_unit_double(block.word[0], block.word[1]);
  const double wide2 = bits_to_unit_double(block.word[2], block.word[3]);
  if (kind == RandomKind::Bernoulli) return static_cast<T>((half == 0 ? wide1 : wide2) < a ? 1 : 0);
  if constexpr (!std::is_floating_point_v<T>) {
    return T(0);  // unreachable: dispatch_philox accepts integer outputs for Bernoulli only
  } else {
    double u1, u2;
    if constexpr (sizeof(T) == 4) {
      u1 = bits_to_unit_float(block.word[2 * half]);
      u2 = bits_to_unit_float(block.word[2 * half + 1]);
    } else {
      u1 = wide1;
      u2 = wide2;
    }
    // Every multiply-add below is an explicit fused multiply-add (one rounding): nvcc
    // contracts `a + (b - a) * u` into an FMA on the device, a host compiler for x86-64
    // without -mfma does not, and the two differ in the last bit. Written as ::fma, the
    // host (tests, the emulator) and the GPU compute the same bits.
    if (kind == RandomKind::Uniform) {
      const T value = static_cast<T>(::fma(b - a, half == 0 || sizeof(T) == 4 ? u1 : u2, a));
      // Rounding to T can land on b itself; [a, b) excludes it, so that value maps to a
      // (PyTorch's CUDA uniform folds its top value back onto `from` the same way).
      return (b > a && value >= static_cast<T>(b)) ? static_cast<T>(a) : value;
    }
    // Box–Muller: radius from u1 (kept away from 0), angle from u2; the pair's two values
    // are the cosine and sine projections.
    const double radius = ::sqrt(-2.0 * ::log(1.0 - u1));
    const double angle = 6.283185307179586 * u2;
    const double z = (sizeof(T) == 8 && half == 1) ? radius * ::sin(angle) : radius * ::cos(angle);
    return static_cast<T>(::fma(b, z, a));
  }
}

// One thread per element (grid-stride): element e of the plan's order lands at operand 0's
// offset for e, so a transposed or sliced output is filled in place.
template <class T>
EMBER_GLOBAL void philox_kernel(StridedPlan plan, PhiloxFill fill) {
  T* out = static_cast<T*>(plan.data[0]);
  for (std::int64_t e = global_thread_index(); e < plan.numel; e += grid_thread_count()) {
    std::int64_t at[1] = {e};
    if (!plan.contiguous) operand_offsets(plan, e, at);
    out[at[0]] = philox_value<T>(fill.seed, fill.offset, e, fill.distribution, fill.a, fill.b);
  }
}

// Fills plan operand 0 (any dtype for Bernoulli, float32/float64 otherwise). The caller
// reserved philox_counters(plan.numel) counters starting at fill.offset.
inline void dispatch_philox(const StridedPlan& plan, const PhiloxFill& fill, cudaStream_t stream) {
  if (plan.numel == 0) return;
  const DType dtype = plan.dtypes[0];
  EMBER_CHECK(fill.distribution == RandomKind::Bernoulli || is_floating_point(dtype), DTypeError,
              "expected a floating point dtype, got ", dtype_name(dtype));
  EMBER_DISPATCH_ALL(dtype, {
    auto kernel = &philox_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.numel, 256)), dim3(256), stream, plan, fill);
  });
}

// A contiguous buffer of numel values; returns the counters consumed (to advance an offset).
inline std::uint64_t dispatch_philox(void* out, DType dtype, std::int64_t numel, std::uint64_t seed,
                                     std::uint64_t offset, RandomKind kind, double a, double b, cudaStream_t stream) {
  StridedPlan plan;
  plan.ndim = 1;
  plan.num_operands = 1;
  plan.numel = numel;
  plan.sizes[0] = numel;
  plan.strides[0][0] = 1;
  plan.data[0] = out;
  plan.dtypes[0] = dtype;
  plan.contiguous = true;
  dispatch_philox(plan, PhiloxFill{seed, offset, kind, a, b}, stream);
  return philox_counters(numel);
}

EMBER_KERNELS_END
