// core/reference/reduce_loops.cpp — the reference loops of sum, mean, prod, max, min,
// argmax and argmin.
//
// Tutorial §2.3 (sum, mean, max). Read this before core/cpu/reduce_kernels.cpp. The native
// layer (core/reduce.cpp) has made the input contiguous and shaped it [outer, reduce, inner]
// (ReducePlan, core/strided_index.h), so one reduction is
//
//     for o, i:   out[o, i] = fold over r = 0 .. reduce-1 of input[o, r, i]
//
// taken in order of r. Sums and products accumulate in double for floating types (so a
// float32 sum of a million values keeps float32 precision) and in uint64 for integers and
// bool (wrapping modulo 2^64, which converted back is PyTorch's two's-complement wrap).
//
// Where the fast loops differ: threads split the outputs (and a long row into 32768-element
// blocks), and a contiguous row is summed over 16 independent lanes (float32: runs of 256
// values in float lanes first) that the compiler vectorises. That reorders the additions of
// a float sum over the last dim (inner == 1) of 16 or more values, so such sums may differ
// from this loop in the last bits; every other result (prod, max, min, arg*, integer sums,
// float sums over inner > 1 or of fewer than 16 values) is the same bits.
#include <cstdint>
#include <type_traits>

#include <ember/core/dispatch.h>
#include <ember/core/element_math.h>
#include <ember/core/error.h>
#include <ember/core/reduce_dispatch.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

template <class T>
using accumulate_t = std::conditional_t<is_floating_v<T>, double, std::uint64_t>;  // bfloat16/float16 too

// input[o, r, i] of the [outer, reduce, inner] view.
template <class T>
T input_at(const ReducePlan& plan, std::int64_t o, std::int64_t r, std::int64_t i) {
  return static_cast<const T*>(plan.input)[(o * plan.reduce + r) * plan.inner + i];
}

// Sum, Mean, Prod: input of dtype T, output of dtype Out (T, or float32 for a 16-bit T: the
// partial sums of a sum over scattered dims, core/reduce.cpp).
template <class T, class Out = T>
void accumulate(ReduceOp op, const ReducePlan& plan) {
  using acc_t = accumulate_t<T>;
  Out* output = static_cast<Out*>(plan.output);
  for (std::int64_t o = 0; o < plan.outer; ++o) {
    for (std::int64_t i = 0; i < plan.inner; ++i) {
      acc_t total = op == ReduceOp::Prod ? acc_t(1) : acc_t(0);
      for (std::int64_t r = 0; r < plan.reduce; ++r) {
        const acc_t value = static_cast<acc_t>(input_at<T>(plan, o, r, i));
        if (op == ReduceOp::Prod) total *= value;
        else total += value;
      }
      // A mean of an empty dim is 0 / 0 = NaN, as torch.mean gives.
      output[o * plan.inner + i] = op == ReduceOp::Mean
                                       ? static_cast<Out>(static_cast<double>(total) / static_cast<double>(plan.reduce))
                                       : static_cast<Out>(total);
    }
  }
}

// Max, Min (values, and indices when plan.indices is set), ArgMax, ArgMin (indices only).
// NaN beats every number, and the first of equal candidates wins, as in PyTorch.
template <class T>
void extremum(ReduceOp op, const ReducePlan& plan) {
  if (plan.reduce == 0) return;  // the native layer refuses this with PyTorch's message
  const bool want_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
  const bool arg_only = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  T* values = arg_only ? nullptr : static_cast<T*>(plan.output);
  auto* indices = static_cast<std::int64_t*>(arg_only ? plan.output : plan.indices);
  for (std::int64_t o = 0; o < plan.outer; ++o) {
    for (std::int64_t i = 0; i < plan.inner; ++i) {
      T best = input_at<T>(plan, o, 0, i);
      std::int64_t best_index = 0;
      for (std::int64_t r = 1; r < plan.reduce; ++r) {
        const T candidate = input_at<T>(plan, o, r, i);
        // Replace the best when it is not NaN and the candidate is NaN or strictly better.
        const bool better = !math::isnan(best) &&
                            (math::isnan(candidate) || (want_max ? candidate > best : candidate < best));
        if (better) {
          best = candidate;
          best_index = r;
        }
      }
      if (values != nullptr) values[o * plan.inner + i] = best;
      if (indices != nullptr) indices[o * plan.inner + i] = best_index;
    }
  }
}

}  // namespace

void reduce(ReduceOp op, const ReducePlan& plan) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
    case ReduceOp::Prod:
      dispatch_accumulate(plan, [&]<class In, class Out>() { accumulate<In, Out>(op, plan); });
      return;
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      EMBER_DISPATCH_ALL_AND_REDUCED(plan.input_dtype, extremum<scalar_t>(op, plan));
      return;
  }
}

// The CPUReference slots (core/dispatch.h): served when EMBER_KERNELS=reference.
EMBER_REGISTER_KERNEL(::ember::reduce_kernel, CPUReference, reduce);

}  // namespace ember::reference
