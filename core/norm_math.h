// core/norm_math.h — one p-norm, element by element, defined once for every backend of
// foreach_norm (core/fused_plans.h: the CPU loop, the reference loop, the CUDA kernel and
// the emulator that runs it): the term each element adds, how two partial results combine,
// and the root taken at the end.
//   p = 2:   term x², combine +, finish sqrt        p = 1:  term |x|, combine +
//   p = inf: term |x|, combine max (NaN wins)       other:  term |x|^p, combine +, finish ^(1/p)
// Acc is the accumulator (double on the CPU; the dtype's accumulate type on the GPU).
#pragma once

#include <ember/core/element_math.h>
#include <ember/core/host_device.h>

namespace ember::norm {

// max_norm: p is +inf (the caller's test, once, rather than isinf on every element).
template <class Acc>
EMBER_HOST_DEVICE EMBER_INLINE Acc term(Acc x, Acc p, bool max_norm) {
  if (p == Acc(2)) return x * x;
  const Acc magnitude = math::fabs(x);
  if (p == Acc(1) || max_norm) return magnitude;
  return math::pow(magnitude, p);
}

// Sums for finite p; the max norm keeps the larger magnitude, and NaN once seen.
template <class Acc>
EMBER_HOST_DEVICE EMBER_INLINE Acc combine(Acc a, Acc b, bool max_norm) {
  if (!max_norm) return a + b;
  if (math::isnan(a) || math::isnan(b)) return math::isnan(a) ? a : b;
  return a > b ? a : b;
}

template <class Acc>
EMBER_HOST_DEVICE EMBER_INLINE Acc finish(Acc accumulated, Acc p, bool max_norm) {
  if (p == Acc(2)) return math::sqrt(accumulated);
  if (p == Acc(1) || max_norm) return accumulated;
  return math::pow(accumulated, Acc(1) / p);
}

}  // namespace ember::norm
