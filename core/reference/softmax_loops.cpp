// core/reference/softmax_loops.cpp — the reference loop of softmax and log_softmax.
//
// Tutorial §5 (softmax turns the network's scores into probabilities) and §7 (cross-entropy
// is log_softmax followed by nll_loss). The input is contiguous [outer, dim, inner]
// (SoftmaxPlan, core/strided_index.h); for every (o, i) the values x[d] = input[o, d, i]:
//
//     m = max_d x[d]                          subtracting it keeps exp() from overflowing;
//                                             it cancels in the ratio
//     softmax:      y[d] = e[d] / Σ e,        e[d] = exp(x[d] - m), rounded to the dtype
//     log_softmax:  y[d] = (x[d] - m) - log Σ exp(x[d] - m)
//
// The normaliser Σ is accumulated in double, in order of d. Where the fast loop differs
// (core/cpu/reduce_kernels.cpp): threads over the rows, and for softmax over the last dim
// its Σ adds 16 lanes (vectorised), so rows of 16 or more classes may differ in the last
// bit of a float; log_softmax, and softmax over other dims, are the same bits.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

template <class T>
void softmax_typed(const SoftmaxPlan& plan, bool log) {
  const T* input = static_cast<const T*>(plan.input);
  T* output = static_cast<T*>(plan.output);
  const std::int64_t size = plan.dim, inner = plan.inner;
  for (std::int64_t o = 0; o < plan.outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const T* x = input + o * size * inner + i;  // element d at x[d * inner]
      T* y = output + o * size * inner + i;
      T max_value = x[0];
      for (std::int64_t d = 1; d < size; ++d) max_value = std::max(max_value, x[d * inner]);
      double total = 0.0;
      if (log) {
        for (std::int64_t d = 0; d < size; ++d) total += std::exp(static_cast<double>(x[d * inner] - max_value));
        const double log_total = std::log(total);
        for (std::int64_t d = 0; d < size; ++d)
          y[d * inner] = static_cast<T>(static_cast<double>(x[d * inner] - max_value) - log_total);
      } else {
        // exp in the dtype (as PyTorch), each kept in the output, then scaled by 1 / Σ.
        for (std::int64_t d = 0; d < size; ++d) {
          y[d * inner] = std::exp(x[d * inner] - max_value);
          total += static_cast<double>(y[d * inner]);
        }
        const T scale = static_cast<T>(1.0 / total);
        for (std::int64_t d = 0; d < size; ++d) y[d * inner] *= scale;
      }
    }
  }
}

}  // namespace

void softmax(const SoftmaxPlan& plan, bool log) {
  EMBER_DISPATCH_FLOATING(plan.dtype, softmax_typed<scalar_t>(plan, log));
}

// The CPUReference slots (core/dispatch.h): served when EMBER_KERNELS=reference.
EMBER_REGISTER_KERNEL(::ember::softmax_kernel, CPUReference, softmax);

}  // namespace ember::reference
