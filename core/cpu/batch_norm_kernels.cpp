// core/cpu/batch_norm_kernels.cpp — the CPU's fused batch-norm kernels (core/batch_norm_plan.h):
// the forward (per-channel statistics, the running-statistics update and the normalisation)
// and the backward (Σdy and Σdy·x̂ per channel, then dx in one pass), each one call.
//
// Issue 19. The composite version (mean, sub, pow, mean, add, rsqrt, mul, mul, add) reads
// the input six times and writes five temporaries; here the forward reads it three times
// (sum, sum of squares about the mean, normalise) and writes the output once, the backward
// reads dy and x twice and writes dx once.
//
// Arithmetic, as PyTorch's CPU kernels (aten/src/ATen/native/cpu/batch_norm_kernel.cpp and
// Normalization.cpp): the mean and the sum of squared deviations are accumulated in double
// (two passes, each deviation (x - mean)² rounded to T first); mean and var_sum are rounded
// to T; invstd = 1 / sqrt(var_sum / count + eps) in double; the running statistics mix in
// double, with the unbiased variance var_sum / (count - 1) divided in T; the output is
// x · α + β with α = invstd · weight and β = bias - mean · α in T. The backward accumulates
// Σdy and Σ(x - mean)·dy in double (PyTorch: in T, in vector lanes; double is never less
// accurate). Every channel's values are summed in the order n = 0.., i = 0.., which is also
// the reference loop's order (core/reference/batch_norm_loops.cpp), so the two agree bit for bit.
//
// Layout [batch, channels, inner]: with inner > 1 (BatchNorm2d, BatchNorm1d on [N, C, L])
// threads split the channels and each channel walks `batch` runs of `inner` contiguous
// values; with inner == 1 (BatchNorm1d on [N, C]) a channel's values are `channels` apart,
// so one thread walks the rows instead and keeps a running sum per channel.
#include <algorithm>
#include <cmath>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

// Channels per thread chunk: about kDefaultGrainSize elements of work per chunk.
std::int64_t channel_grain(std::int64_t values_per_channel) {
  return std::max<std::int64_t>(1, kDefaultGrainSize / std::max<std::int64_t>(values_per_channel, 1));
}

// The per-channel statistics of a training forward: mean (rounded to T) and var_sum
// (Σ (x - mean)², rounded to T).
template <class T>
void batch_statistics(const BatchNormPlan& plan, std::vector<T>& mean, std::vector<T>& var_sum) {
  const T* x = static_cast<const T*>(plan.input);
  const std::int64_t channels = plan.channels, inner = plan.inner, batch = plan.batch;
  const double count = static_cast<double>(batch * inner);
  if (inner == 1) {
    std::vector<double> sums(static_cast<std::size_t>(channels), 0.0);
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t c = 0; c < channels; ++c) sums[c] += static_cast<double>(x[n * channels + c]);
    for (std::int64_t c = 0; c < channels; ++c) mean[c] = static_cast<T>(sums[c] / count);
    std::fill(sums.begin(), sums.end(), 0.0);
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t c = 0; c < channels; ++c) {
        const T deviation = x[n * channels + c] - mean[c];
        sums[c] += static_cast<double>(deviation * deviation);
      }
    for (std::int64_t c = 0; c < channels; ++c) var_sum[c] = static_cast<T>(sums[c]);
    return;
  }
  parallel_for(0, channels, channel_grain(batch * inner), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      double sum = 0.0;
      for (std::int64_t n = 0; n < batch; ++n) {
        const T* run = x + (n * channels + c) * inner;
        for (std::int64_t i = 0; i < inner; ++i) sum += static_cast<double>(run[i]);
      }
      const T m = static_cast<T>(sum / count);
      double squares = 0.0;
      for (std::int64_t n = 0; n < batch; ++n) {
        const T* run = x + (n * channels + c) * inner;
        for (std::int64_t i = 0; i < inner; ++i) {
          const T deviation = run[i] - m;
          squares += static_cast<double>(deviation * deviation);
        }
      }
      mean[c] = m;
      var_sum[c] = static_cast<T>(squares);
    }
  });
}

template <class T>
void batch_norm_typed(const BatchNormPlan& plan) {
  const std::int64_t channels = plan.channels, inner = plan.inner, batch = plan.batch;
  const std::int64_t count = batch * inner;
  T* save_mean = static_cast<T*>(plan.save_mean);
  T* save_invstd = static_cast<T*>(plan.save_invstd);
  T* running_mean = static_cast<T*>(plan.running_mean);
  T* running_var = static_cast<T*>(plan.running_var);
  if (plan.training) {
    std::vector<T> mean(static_cast<std::size_t>(channels)), var_sum(static_cast<std::size_t>(channels));
    if (count > 0) batch_statistics(plan, mean, var_sum);
    for (std::int64_t c = 0; c < channels; ++c) {
      save_mean[c] = mean[c];
      const T biased = static_cast<T>(var_sum[c] / static_cast<T>(count));
      // PyTorch's InvStd: 0 (not inf) for a constant channel with eps = 0.
      const double variance = static_cast<double>(biased);
      save_invstd[c] = variance == 0.0 && plan.eps == 0.0 ? T(0) : static_cast<T>(1.0 / std::sqrt(variance + plan.eps));
      if (running_mean != nullptr)
        running_mean[c] = static_cast<T>(plan.momentum * mean[c] + (1.0 - plan.momentum) * running_mean[c]);
      if (running_var != nullptr) {
        const T unbiased = static_cast<T>(var_sum[c] / static_cast<T>(count - 1));
        running_var[c] = static_cast<T>(plan.momentum * unbiased + (1.0 - plan.momentum) * running_var[c]);
      }
    }
  } else {
    for (std::int64_t c = 0; c < channels; ++c) {
      save_mean[c] = running_mean[c];
      save_invstd[c] = T(1) / std::sqrt(running_var[c] + static_cast<T>(plan.eps));
    }
  }
  if (count == 0) return;
  // y = x · α + β per channel.
  std::vector<T> alpha(static_cast<std::size_t>(channels)), beta(static_cast<std::size_t>(channels));
  const T* weight = static_cast<const T*>(plan.weight);
  const T* bias = static_cast<const T*>(plan.bias);
  for (std::int64_t c = 0; c < channels; ++c) {
    alpha[c] = save_invstd[c] * (weight != nullptr ? weight[c] : T(1));
    beta[c] = (bias != nullptr ? bias[c] : T(0)) - save_mean[c] * alpha[c];
  }
  const T* x = static_cast<const T*>(plan.input);
  T* y = static_cast<T*>(plan.output);
  // Rows of `inner` values (one channel of one sample) split across threads.
  parallel_for(0, batch * channels, std::max<std::int64_t>(1, kDefaultGrainSize / inner),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t row = begin; row < end; ++row) {
                   const T a = alpha[row % channels], b = beta[row % channels];
                   const T* in = x + row * inner;
                   T* out = y + row * inner;
                   for (std::int64_t i = 0; i < inner; ++i) out[i] = in[i] * a + b;
                 }
               });
}

// Σdy and Σ(x - mean)·dy per channel, in double.
template <class T>
void backward_sums(const BatchNormBackwardPlan& plan, std::vector<double>& sum_dy, std::vector<double>& dot) {
  const T* x = static_cast<const T*>(plan.input);
  const T* dy = static_cast<const T*>(plan.grad_output);
  const T* mean = static_cast<const T*>(plan.save_mean);
  const std::int64_t channels = plan.channels, inner = plan.inner, batch = plan.batch;
  if (inner == 1) {
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t c = 0; c < channels; ++c) {
        const std::int64_t k = n * channels + c;
        sum_dy[c] += static_cast<double>(dy[k]);
        dot[c] += static_cast<double>((x[k] - mean[c]) * dy[k]);
      }
    return;
  }
  parallel_for(0, channels, channel_grain(batch * inner), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      double s = 0.0, d = 0.0;
      const T m = mean[c];
      for (std::int64_t n = 0; n < batch; ++n) {
        const std::int64_t offset = (n * channels + c) * inner;
        for (std::int64_t i = 0; i < inner; ++i) {
          s += static_cast<double>(dy[offset + i]);
          d += static_cast<double>((x[offset + i] - m) * dy[offset + i]);
        }
      }
      sum_dy[c] = s;
      dot[c] = d;
    }
  });
}

template <class T>
void batch_norm_backward_typed(const BatchNormBackwardPlan& plan) {
  const std::int64_t channels = plan.channels, inner = plan.inner, batch = plan.batch;
  const std::int64_t count = batch * inner;
  const T* mean = static_cast<const T*>(plan.save_mean);
  const T* invstd = static_cast<const T*>(plan.save_invstd);
  const T* weight = static_cast<const T*>(plan.weight);
  std::vector<double> sum_dy(static_cast<std::size_t>(channels), 0.0), dot(static_cast<std::size_t>(channels), 0.0);
  const bool need_sums = plan.grad_weight != nullptr || plan.grad_bias != nullptr ||
                         (plan.training && plan.grad_input != nullptr);
  if (need_sums && count > 0) backward_sums<T>(plan, sum_dy, dot);
  for (std::int64_t c = 0; c < channels; ++c) {
    if (plan.grad_weight != nullptr) static_cast<T*>(plan.grad_weight)[c] = static_cast<T>(dot[c] * invstd[c]);
    if (plan.grad_bias != nullptr) static_cast<T*>(plan.grad_bias)[c] = static_cast<T>(sum_dy[c]);
  }
  if (plan.grad_input == nullptr || count == 0) return;
  // dx = (dy - grad_mean - (x - mean) · k) · invstd · w, with k = Σ(x-mean)dy · invstd² / count
  // (training); dx = dy · invstd · w (eval).
  std::vector<T> k(static_cast<std::size_t>(channels)), grad_mean(static_cast<std::size_t>(channels)),
      scale(static_cast<std::size_t>(channels));
  for (std::int64_t c = 0; c < channels; ++c) {
    k[c] = static_cast<T>(dot[c] * invstd[c] * invstd[c] / static_cast<double>(count));
    grad_mean[c] = static_cast<T>(sum_dy[c] / static_cast<double>(count));
    scale[c] = invstd[c] * (weight != nullptr ? weight[c] : T(1));
  }
  const T* x = static_cast<const T*>(plan.input);
  const T* dy = static_cast<const T*>(plan.grad_output);
  T* dx = static_cast<T*>(plan.grad_input);
  const bool training = plan.training;
  parallel_for(0, batch * channels, std::max<std::int64_t>(1, kDefaultGrainSize / inner),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t row = begin; row < end; ++row) {
                   const std::int64_t c = row % channels;
                   const T* in = x + row * inner;
                   const T* g = dy + row * inner;
                   T* out = dx + row * inner;
                   if (training) {
                     const T m = mean[c], kc = k[c], gm = grad_mean[c], s = scale[c];
                     for (std::int64_t i = 0; i < inner; ++i) out[i] = (g[i] - gm - (in[i] - m) * kc) * s;
                   } else {
                     const T s = scale[c];
                     for (std::int64_t i = 0; i < inner; ++i) out[i] = g[i] * s;
                   }
                 }
               });
}

}  // namespace

void batch_norm(const BatchNormPlan& plan) { EMBER_DISPATCH_FLOATING(plan.dtype, batch_norm_typed<scalar_t>(plan)); }

void batch_norm_backward(const BatchNormBackwardPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, batch_norm_backward_typed<scalar_t>(plan));
}

EMBER_REGISTER_KERNEL(::ember::batch_norm_kernel, CPU, batch_norm);
EMBER_REGISTER_KERNEL(::ember::batch_norm_backward_kernel, CPU, batch_norm_backward);

}  // namespace ember::cpu
