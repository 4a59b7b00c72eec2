// core/reference/layer_norm_loops.cpp — the reference loops of layer norm (plans:
// core/layer_norm_plan.h): the obviously-correct statement of what the fused CPU kernels
// (core/cpu/layer_norm_kernels.cpp) compute, one row at a time, on the calling thread.
//
// Per row i of the [rows, row_size] input, over its N = row_size values, every sum in double
// and in index order, each result rounded to T once:
//   mean = Σx / N,  var = Σ(x - mean)² / N,  rstd = 1 / sqrt(var + eps)
//   y = (x - mean) · rstd · weight + bias
//   dx = rstd · (g - Σg / N - x̂ · Σ(g · x̂) / N),  g = dy · weight,  x̂ = (x - mean) · rstd
//   grad_weight[j] = Σ_i dy · x̂,  grad_bias[j] = Σ_i dy
// The fast kernels sum in T, in vector lanes; the two agree to float rounding (the test
// tests/nn/test_layer_norm.cpp compares them), not bit for bit.
#include <cmath>
#include <cstdint>

#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

template <class T>
void layer_norm_typed(const LayerNormPlan& plan) {
  const T* x = static_cast<const T*>(plan.input);
  T* y = static_cast<T*>(plan.output);
  const T* weight = static_cast<const T*>(plan.weight);
  const T* bias = static_cast<const T*>(plan.bias);
  const std::int64_t n = plan.row_size;
  for (std::int64_t i = 0; i < plan.rows; ++i) {
    const T* row = x + i * n;
    double sum = 0.0;
    for (std::int64_t j = 0; j < n; ++j) sum += static_cast<double>(row[j]);
    const double mean = sum / static_cast<double>(n);
    double squares = 0.0;
    for (std::int64_t j = 0; j < n; ++j) squares += (row[j] - mean) * (row[j] - mean);
    const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(n) + plan.eps);
    static_cast<T*>(plan.mean)[i] = static_cast<T>(mean);
    static_cast<T*>(plan.rstd)[i] = static_cast<T>(rstd);
    for (std::int64_t j = 0; j < n; ++j) {
      const double w = weight != nullptr ? static_cast<double>(weight[j]) : 1.0;
      const double b = bias != nullptr ? static_cast<double>(bias[j]) : 0.0;
      y[i * n + j] = static_cast<T>((row[j] - mean) * rstd * w + b);
    }
  }
}

template <class T>
void layer_norm_backward_typed(const LayerNormBackwardPlan& plan) {
  const T* x = static_cast<const T*>(plan.input);
  const T* dy = static_cast<const T*>(plan.grad_output);
  const T* weight = static_cast<const T*>(plan.weight);
  const std::int64_t n = plan.row_size;
  auto normalised = [&](std::int64_t i, std::int64_t j) {
    const double mean = static_cast<const T*>(plan.mean)[i], rstd = static_cast<const T*>(plan.rstd)[i];
    return (static_cast<double>(x[i * n + j]) - mean) * rstd;
  };
  auto g = [&](std::int64_t i, std::int64_t j) {
    return static_cast<double>(dy[i * n + j]) * (weight != nullptr ? static_cast<double>(weight[j]) : 1.0);
  };
  if (plan.grad_input != nullptr) {
    T* dx = static_cast<T*>(plan.grad_input);
    for (std::int64_t i = 0; i < plan.rows; ++i) {
      double sum_g = 0.0, sum_gx = 0.0;
      for (std::int64_t j = 0; j < n; ++j) {
        sum_g += g(i, j);
        sum_gx += g(i, j) * normalised(i, j);
      }
      const double rstd = static_cast<const T*>(plan.rstd)[i];
      for (std::int64_t j = 0; j < n; ++j)
        dx[i * n + j] = static_cast<T>(
            rstd * (g(i, j) - sum_g / static_cast<double>(n) - normalised(i, j) * sum_gx / static_cast<double>(n)));
    }
  }
  for (std::int64_t j = 0; j < n; ++j) {
    double sum_dy = 0.0, sum_dyx = 0.0;
    for (std::int64_t i = 0; i < plan.rows; ++i) {
      sum_dy += static_cast<double>(dy[i * n + j]);
      sum_dyx += static_cast<double>(dy[i * n + j]) * normalised(i, j);
    }
    if (plan.grad_weight != nullptr) static_cast<T*>(plan.grad_weight)[j] = static_cast<T>(sum_dyx);
    if (plan.grad_bias != nullptr) static_cast<T*>(plan.grad_bias)[j] = static_cast<T>(sum_dy);
  }
}

}  // namespace

void layer_norm(const LayerNormPlan& plan) { EMBER_DISPATCH_FLOATING(plan.dtype, layer_norm_typed<scalar_t>(plan)); }

void layer_norm_backward(const LayerNormBackwardPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, layer_norm_backward_typed<scalar_t>(plan));
}

EMBER_REGISTER_KERNEL(::ember::layer_norm_kernel, CPUReference, layer_norm);
EMBER_REGISTER_KERNEL(::ember::layer_norm_backward_kernel, CPUReference, layer_norm_backward);

}  // namespace ember::reference
