// core/reference/batch_norm_loops.cpp — the reference loops of batch norm (plans:
// core/batch_norm_plan.h): the obviously-correct statement of what the fused CPU kernels
// (core/cpu/batch_norm_kernels.cpp) compute, one channel at a time, on the calling thread.
//
// Per channel c of the [batch, channels, inner] input, over its count = batch · inner values:
//   training: mean = Σx / count, var_sum = Σ(x - mean)², invstd = 1 / sqrt(var_sum / count + eps),
//             running_mean ← (1 - m)·running_mean + m·mean,
//             running_var  ← (1 - m)·running_var  + m·var_sum / (count - 1)   (unbiased)
//   eval:     mean = running_mean, invstd = 1 / sqrt(running_var + eps)
//   y = (x - mean) · invstd · weight + bias, written as x · α + β (α = invstd·weight, β = bias - mean·α)
// rounded where PyTorch's CPU kernel rounds (the header of batch_norm_kernels.cpp), so the
// fast kernels agree with these loops bit for bit.
#include <cmath>
#include <cstdint>

#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

// Element (n, c, i) of a contiguous [batch, channels, inner] tensor.
std::int64_t at(const BatchNormPlan& plan, std::int64_t n, std::int64_t c, std::int64_t i) {
  return (n * plan.channels + c) * plan.inner + i;
}

template <class T>
void batch_norm_typed(const BatchNormPlan& plan) {
  const T* x = static_cast<const T*>(plan.input);
  T* y = static_cast<T*>(plan.output);
  const T* weight = static_cast<const T*>(plan.weight);
  const T* bias = static_cast<const T*>(plan.bias);
  T* running_mean = static_cast<T*>(plan.running_mean);
  T* running_var = static_cast<T*>(plan.running_var);
  T* save_mean = static_cast<T*>(plan.save_mean);
  T* save_invstd = static_cast<T*>(plan.save_invstd);
  const std::int64_t count = plan.batch * plan.inner;
  for (std::int64_t c = 0; c < plan.channels; ++c) {
    T mean, invstd;
    if (plan.training) {
      double sum = 0.0;
      for (std::int64_t n = 0; n < plan.batch; ++n)
        for (std::int64_t i = 0; i < plan.inner; ++i) sum += static_cast<double>(x[at(plan, n, c, i)]);
      mean = count > 0 ? static_cast<T>(sum / static_cast<double>(count)) : T(0);
      double squares = 0.0;
      for (std::int64_t n = 0; n < plan.batch; ++n)
        for (std::int64_t i = 0; i < plan.inner; ++i) {
          const T deviation = x[at(plan, n, c, i)] - mean;
          squares += static_cast<double>(deviation * deviation);
        }
      const T var_sum = static_cast<T>(squares);
      const double variance = static_cast<double>(static_cast<T>(var_sum / static_cast<T>(count)));
      invstd = variance == 0.0 && plan.eps == 0.0 ? T(0) : static_cast<T>(1.0 / std::sqrt(variance + plan.eps));
      if (running_mean != nullptr)
        running_mean[c] = static_cast<T>(plan.momentum * mean + (1.0 - plan.momentum) * running_mean[c]);
      if (running_var != nullptr) {
        const T unbiased = static_cast<T>(var_sum / static_cast<T>(count - 1));
        running_var[c] = static_cast<T>(plan.momentum * unbiased + (1.0 - plan.momentum) * running_var[c]);
      }
    } else {
      mean = running_mean[c];
      invstd = T(1) / std::sqrt(running_var[c] + static_cast<T>(plan.eps));
    }
    save_mean[c] = mean;
    save_invstd[c] = invstd;
    const T alpha = invstd * (weight != nullptr ? weight[c] : T(1));
    const T beta = (bias != nullptr ? bias[c] : T(0)) - mean * alpha;
    for (std::int64_t n = 0; n < plan.batch; ++n)
      for (std::int64_t i = 0; i < plan.inner; ++i) y[at(plan, n, c, i)] = x[at(plan, n, c, i)] * alpha + beta;
  }
}

template <class T>
void batch_norm_backward_typed(const BatchNormBackwardPlan& plan) {
  const T* x = static_cast<const T*>(plan.input);
  const T* dy = static_cast<const T*>(plan.grad_output);
  const T* weight = static_cast<const T*>(plan.weight);
  const T* save_mean = static_cast<const T*>(plan.save_mean);
  const T* save_invstd = static_cast<const T*>(plan.save_invstd);
  T* dx = static_cast<T*>(plan.grad_input);
  const std::int64_t count = plan.batch * plan.inner;
  auto index = [&](std::int64_t n, std::int64_t c, std::int64_t i) { return (n * plan.channels + c) * plan.inner + i; };
  for (std::int64_t c = 0; c < plan.channels; ++c) {
    const T mean = save_mean[c], invstd = save_invstd[c];
    double sum_dy = 0.0, dot = 0.0;  // Σdy and Σ(x - mean)·dy
    for (std::int64_t n = 0; n < plan.batch; ++n)
      for (std::int64_t i = 0; i < plan.inner; ++i) {
        sum_dy += static_cast<double>(dy[index(n, c, i)]);
        dot += static_cast<double>((x[index(n, c, i)] - mean) * dy[index(n, c, i)]);
      }
    if (plan.grad_weight != nullptr) static_cast<T*>(plan.grad_weight)[c] = static_cast<T>(dot * invstd);
    if (plan.grad_bias != nullptr) static_cast<T*>(plan.grad_bias)[c] = static_cast<T>(sum_dy);
    if (dx == nullptr || count == 0) continue;
    const T scale = invstd * (weight != nullptr ? weight[c] : T(1));
    const T k = static_cast<T>(dot * invstd * invstd / static_cast<double>(count));
    const T grad_mean = static_cast<T>(sum_dy / static_cast<double>(count));
    for (std::int64_t n = 0; n < plan.batch; ++n)
      for (std::int64_t i = 0; i < plan.inner; ++i) {
        const std::int64_t e = index(n, c, i);
        dx[e] = plan.training ? (dy[e] - grad_mean - (x[e] - mean) * k) * scale : dy[e] * scale;
      }
  }
}

}  // namespace

void batch_norm(const BatchNormPlan& plan) { EMBER_DISPATCH_FLOATING(plan.dtype, batch_norm_typed<scalar_t>(plan)); }

void batch_norm_backward(const BatchNormBackwardPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, batch_norm_backward_typed<scalar_t>(plan));
}

EMBER_REGISTER_KERNEL(::ember::batch_norm_kernel, CPUReference, batch_norm);
EMBER_REGISTER_KERNEL(::ember::batch_norm_backward_kernel, CPUReference, batch_norm_backward);

}  // namespace ember::reference
