// cuda/kernels/philox.cuh — Philox4x32-10, the counter-based generator behind GPU rand/randn.
//
// A counter-based generator maps (key, counter) -> 128 random bits with a fixed function
// (ten rounds of multiply-and-xor, Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011). There is no sequential state: element e of a tensor simply uses
// counter (offset + e/4), so every GPU thread computes its own numbers independently and
// the result does not depend on the launch shape. key = the seed, offset = how many
// 4-value groups earlier calls consumed: the same seed gives the same tensor every run.
// Not bit-identical to PyTorch's CUDA generator (not required; see docs/cuda.md).
// Bound: compute-light, memory-bound by the writes (itemsize × numel bytes).
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/cuda/kernels/device_math.cuh>
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

enum class RandomKind : int { Uniform, Normal };

// Element e uses Philox block (offset + e / 2) — two values per block for both kinds (two
// words each for double, a Box–Muller pair for normal) keep the mapping uniform.
template <class T>
EMBER_HOST_DEVICE inline T philox_value(std::uint64_t seed, std::uint64_t offset, std::int64_t e, RandomKind kind,
                                        double a, double b) {
  const PhiloxBlock block = philox4x32_10(offset + static_cast<std::uint64_t>(e / 2), 0, seed);
  const int half = static_cast<int>(e % 2);
  double u1, u2;
  if constexpr (sizeof(T) == 4) {
    u1 = bits_to_unit_float(block.word[2 * half]);
    u2 = bits_to_unit_float(block.word[2 * half + 1]);
  } else {
    u1 = bits_to_unit_double(block.word[0], block.word[1]);
    u2 = bits_to_unit_double(block.word[2], block.word[3]);
  }
  if (kind == RandomKind::Uniform) return static_cast<T>(a + (b - a) * (half == 0 || sizeof(T) == 4 ? u1 : u2));
  // Box–Muller: radius from u1 (kept away from 0), angle from u2; the pair's two values are
  // the cosine and sine projections.
  const double radius = ::sqrt(-2.0 * ::log(1.0 - u1));
  const double angle = 6.283185307179586 * u2;
  const double z = (sizeof(T) == 8 && half == 1) ? radius * ::sin(angle) : radius * ::cos(angle);
  return static_cast<T>(a + b * z);
}

template <class T>
EMBER_GLOBAL void philox_kernel(T* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset, RandomKind kind,
                                double a, double b) {
  for (std::int64_t e = global_thread_index(); e < numel; e += grid_thread_count())
    out[e] = philox_value<T>(seed, offset, e, kind, a, b);
}

// Fills a contiguous buffer; (a, b) = (low, high) for Uniform, (mean, std) for Normal.
// Returns how many Philox blocks it consumed, to advance the caller's offset.
inline std::uint64_t dispatch_philox(void* out, DType dtype, std::int64_t numel, std::uint64_t seed,
                                     std::uint64_t offset, RandomKind kind, double a, double b, cudaStream_t stream) {
  if (numel == 0) return 0;
  EMBER_DISPATCH_FLOATING(dtype, {
    auto kernel = &philox_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(numel, 256)), dim3(256), stream, static_cast<scalar_t*>(out), numel, seed,
                 offset, kind, a, b);
  });
  return static_cast<std::uint64_t>((numel + 1) / 2);
}

EMBER_KERNELS_END
