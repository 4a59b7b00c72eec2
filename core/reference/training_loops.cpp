// core/reference/training_loops.cpp — the reference loops of the training ops' kernels:
// cross-entropy over rows, the SGD and Adam steps, one_hot, foreach_norm (plans:
// core/fused_plans.h).
//
// Tutorial §7 (the training loop). In reference mode the training step does not reach the
// first two at all: autograd/loss_ops.cpp computes cross_entropy as log_softmax then
// nll_loss, and nn/sgd.cpp updates each parameter with plain tensor ops (SGD's
// composite_update). They are here so that every kernel has a reference, for code that calls
// native::cross_entropy_rows or native::sgd_step_ directly, and as the one-element-at-a-time
// statement of what the fused fast kernels (core/cpu/fused_kernels.cpp, which work in
// blocks of 1024 elements with threads) compute.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <ember/core/adam_update.h>
#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/norm_math.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

// Per row r with target t (fused_plans.h, CrossEntropyPlan):
//   loss[r]      = -log_softmax(x[r, :])[t] = log Σ_c exp(x_c - m) - (x_t - m),  m = max_c x_c
//   grad[r, c]   = (softmax(x[r, :])[c] - [c == t]) * scale
// and both 0 when t is ignore_index. The loss is rounded exactly as log_softmax rounds it
// (softmax_loops.cpp), so it equals the composite path's bits.
template <class T>
void cross_entropy_typed(const CrossEntropyPlan& plan) {
  const T* logits = static_cast<const T*>(plan.logits);
  T* losses = static_cast<T*>(plan.losses);
  T* grad = static_cast<T*>(plan.grad_logits);
  for (std::int64_t r = 0; r < plan.rows; ++r) {
    const T* x = logits + r * plan.classes;
    const std::int64_t target = plan.targets[r];
    if (target == plan.ignore_index) {
      losses[r] = T(0);
      if (grad != nullptr)
        for (std::int64_t c = 0; c < plan.classes; ++c) grad[r * plan.classes + c] = T(0);
      continue;
    }
    T max_value = x[0];
    for (std::int64_t c = 1; c < plan.classes; ++c) max_value = std::max(max_value, x[c]);
    double total = 0.0;
    for (std::int64_t c = 0; c < plan.classes; ++c) total += std::exp(static_cast<double>(x[c] - max_value));
    const T log_probability = static_cast<T>(static_cast<double>(x[target] - max_value) - std::log(total));
    losses[r] = -log_probability;
    if (grad == nullptr) continue;
    for (std::int64_t c = 0; c < plan.classes; ++c) {
      const double probability = std::exp(static_cast<double>(x[c] - max_value)) / total;
      const double is_target = c == target ? 1.0 : 0.0;
      grad[r * plan.classes + c] = static_cast<T>((probability - is_target) * plan.scale);
    }
  }
}

// torch.optim.SGD's update of one parameter, element by element (fused_plans.h, SgdPlan).
// Each hyperparameter is first rounded to the parameter's dtype and every product and sum
// rounded to it, as the composite tensor ops in nn/sgd.cpp round them: `x + alpha · y` (add_
// with an alpha) as one fused multiply-add, buf.mul_(momentum) as a plain product.
template <class T>
void sgd_typed(const SgdPlan& plan) {
  T* param = static_cast<T*>(plan.param);
  const T* grad = static_cast<const T*>(plan.grad);
  T* buffer = static_cast<T*>(plan.momentum_buffer);
  const T lr = static_cast<T>(-plan.options.lr);  // param.add_(d, alpha=-lr)
  const T weight_decay = static_cast<T>(plan.options.weight_decay);
  const T momentum = static_cast<T>(plan.options.momentum);
  const T keep_fraction = static_cast<T>(1.0 - plan.options.dampening);
  for (std::int64_t e = 0; e < plan.numel; ++e) {
    T d = plan.options.maximize ? static_cast<T>(-grad[e]) : grad[e];
    if (plan.options.weight_decay != 0.0) d = std::fma(weight_decay, param[e], d);
    if (plan.options.momentum != 0.0) {
      if (plan.first_step) {
        buffer[e] = d;  // the buffer starts as the direction itself (no dampening)
      } else {
        const T decayed = static_cast<T>(buffer[e] * momentum);            // buf.mul_(momentum)
        buffer[e] = std::fma(keep_fraction, d, decayed);                   // buf.add_(d, 1 - dampening)
      }
      d = plan.options.nesterov ? std::fma(momentum, buffer[e], d) : buffer[e];
    }
    param[e] = std::fma(lr, d, param[e]);
  }
}

}  // namespace

void cross_entropy(const CrossEntropyPlan& plan) {
  if (plan.rows == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, cross_entropy_typed<scalar_t>(plan));
}

void sgd_step(const SgdPlan& plan) {
  if (plan.numel == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, sgd_typed<scalar_t>(plan));
}

// torch.optim.Adam / AdamW's update of one parameter, element by element, with PyTorch's
// roundings: core/adam_update.h says which multiply-adds are fused and why.
template <class T>
void adam_typed(const AdamPlan& plan) {
  const adam::Scalars<T> s = adam::scalars<T>(plan);
  const adam::Buffers<T> b = adam::buffers<T>(plan);
  for (std::int64_t e = 0; e < plan.numel; ++e)
    adam::update(s, b.param[e], b.grad[e], b.exp_avg[e], b.exp_avg_sq[e],
                 b.max_exp_avg_sq == nullptr ? nullptr : &b.max_exp_avg_sq[e]);
}

void adam_step(const AdamPlan& plan) {
  if (plan.numel == 0) return;
  if (plan.dtype == DType::Float32) adam_typed<float>(plan);
  else if (plan.dtype == DType::Float64) adam_typed<double>(plan);
  else detail::throw_dtype_not_implemented(plan.dtype);
}

// out[r, c] = 1 where c == index[r], else 0.
void one_hot(const OneHotPlan& plan) {
  for (std::int64_t r = 0; r < plan.rows; ++r)
    for (std::int64_t c = 0; c < plan.classes; ++c) plan.out[r * plan.classes + c] = plan.index[r] == c ? 1 : 0;
}

namespace {

// Each tensor's norm: its elements' terms added (or the largest kept) in order, in double,
// then the root (core/norm_math.h).
template <class T>
void foreach_norm_typed(const ForeachNormPlan& plan) {
  const bool max_norm = std::isinf(plan.p);
  for (int i = 0; i < plan.count; ++i) {
    const T* x = static_cast<const T*>(plan.data[i]);
    double total = 0.0;
    for (std::int64_t j = 0; j < plan.numel[i]; ++j) {
      const double term = norm::term<double>(static_cast<double>(x[j]), plan.p, max_norm);
      total = norm::combine(total, term, max_norm);
    }
    static_cast<T*>(plan.output)[i] = static_cast<T>(norm::finish(total, plan.p, max_norm));
  }
}

}  // namespace

void foreach_norm(const ForeachNormPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, foreach_norm_typed<scalar_t>(plan));
}

// The CPUReference slots (core/dispatch.h): served when EMBER_KERNELS=reference.
EMBER_REGISTER_KERNEL(::ember::cross_entropy_kernel, CPUReference, cross_entropy);
EMBER_REGISTER_KERNEL(::ember::sgd_step_kernel, CPUReference, sgd_step);
EMBER_REGISTER_KERNEL(::ember::adam_step_kernel, CPUReference, adam_step);
EMBER_REGISTER_KERNEL(::ember::one_hot_kernel, CPUReference, one_hot);
EMBER_REGISTER_KERNEL(::ember::foreach_norm_kernel, CPUReference, foreach_norm);

}  // namespace ember::reference
