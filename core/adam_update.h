// core/adam_update.h — Adam's update of one element, rounded as PyTorch 2.x's CPU Adam rounds
// it: the one definition that the fast pass (core/cpu/adam_step.cpp: threads, AVX-512/AVX2
// clones) and the reference loop (core/reference/training_loops.cpp: one element at a time)
// both run, so the two agree bit for bit.
//
// PyTorch's CPU Adam (torch/optim/adam.py, _single_tensor_adam) runs, per parameter:
//   param.mul_(1 - lr·wd)  (AdamW)      or  grad = grad.add(param, alpha=wd)  (Adam's L2)
//   exp_avg.lerp_(grad, 1 - beta1)
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
//   denom = (exp_avg_sq.sqrt() / sqrt(1 - beta2^t)).add_(eps)
//   param.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1^t))
// and its vectorised kernels round each line as follows (measured on 2.15, float32, against
// every candidate): add with alpha and lerp are fused multiply-adds (lerp: w·(end - start) +
// start for |w| < 0.5, else (w - 1)·(end - start) + end), addcmul is (value·a)·b + self with
// the last step fused, addcdiv is (value·a) / b + self with nothing fused. Every Python number
// is rounded to the tensor's dtype first. ember's composite path (nn/adam.cpp) writes
// mul_/add_ instead, whose plain roundings differ in the last bit for about one element in
// seven; this function gives PyTorch's bits — except that PyTorch's vectorised sqrt (AVX-512)
// is one unit off in about 0.7 % of elements and this one is correctly rounded.
//
// The math is written with cpu::wide::fma and friends (compiler builtins): the fast pass's
// AVX2 clone would otherwise call std::fma out of line per element (core/cpu/wide_clones.h).
// The files that include this are compiled with -ffp-contract=off (core/CMakeLists.txt):
// only the multiply-adds written as fma are fused.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <ember/core/cpu/wide_clones.h>
#include <ember/core/fused_plans.h>

namespace ember::adam {

// The plan's numbers, each rounded to T once, as PyTorch rounds its Python floats.
template <class T>
struct Scalars {
  T decay_factor, weight_decay, lerp_weight, beta2, square_weight, bias_correction2_sqrt, eps, step_value;
  bool decay, decoupled, amsgrad, maximize;
};

template <class T>
Scalars<T> scalars(const AdamPlan& plan) {
  const double bias_correction1 = 1.0 - std::pow(plan.beta1, plan.step);
  const double bias_correction2 = 1.0 - std::pow(plan.beta2, plan.step);
  const double step_size = plan.lr / bias_correction1;
  return Scalars<T>{static_cast<T>(1.0 - plan.lr * plan.weight_decay),
                    static_cast<T>(plan.weight_decay),
                    static_cast<T>(1.0 - plan.beta1),
                    static_cast<T>(plan.beta2),
                    static_cast<T>(1.0 - plan.beta2),
                    static_cast<T>(std::pow(bias_correction2, 0.5)),  // Python's ** 0.5
                    static_cast<T>(plan.eps),
                    static_cast<T>(-step_size),
                    plan.weight_decay != 0.0,
                    plan.decoupled_weight_decay,
                    plan.amsgrad,
                    plan.maximize};
}

// The plan's tensors as typed pointers (max_exp_avg_sq: nullptr without amsgrad).
template <class T>
struct Buffers {
  T* param;
  const T* grad;
  T *exp_avg, *exp_avg_sq, *max_exp_avg_sq;
};

template <class T>
Buffers<T> buffers(const AdamPlan& plan) {
  return {static_cast<T*>(plan.param), static_cast<const T*>(plan.grad), static_cast<T*>(plan.exp_avg),
          static_cast<T*>(plan.exp_avg_sq), plan.amsgrad ? static_cast<T*>(plan.max_exp_avg_sq) : nullptr};
}

// torch.lerp's two-sided formula (exact at both ends).
template <class T>
[[gnu::always_inline]] inline T lerp(T start, T end, T weight) {
  const T difference = end - start;
  return cpu::wide::abs(weight) < T(0.5) ? cpu::wide::fma(weight, difference, start)
                                         : cpu::wide::fma(weight - T(1), difference, end);
}

// One element: param p, its gradient g, the moments m and v, and v_max (amsgrad only).
template <class T>
[[gnu::always_inline]] inline void update(const Scalars<T>& s, T& p, T g, T& m, T& v, T* v_max) {
  T gradient = s.maximize ? -g : g;
  if (s.decay) {
    if (s.decoupled) p = p * s.decay_factor;
    else gradient = cpu::wide::fma(s.weight_decay, p, gradient);
  }
  m = lerp(m, gradient, s.lerp_weight);
  const T scaled_gradient = s.square_weight * gradient;  // addcmul's value · a, rounded
  v = cpu::wide::fma(scaled_gradient, gradient, v * s.beta2);
  T second_moment = v;
  if (s.amsgrad) {
    // torch.maximum: NaN wins.
    *v_max = cpu::wide::isnan(*v_max) || cpu::wide::isnan(v) ? *v_max + v : std::max(*v_max, v);
    second_moment = *v_max;
  }
  const T denominator = cpu::wide::sqrt(second_moment) / s.bias_correction2_sqrt + s.eps;
  p = (s.step_value * m) / denominator + p;
}

}  // namespace ember::adam
