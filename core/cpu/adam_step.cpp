// core/cpu/adam_step.cpp — performance and exactness code for core/adam_step.h: Adam's update
// as one pass over each parameter, with PyTorch 2.15's roundings.
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
// seven; this loop gives PyTorch's bits — except that PyTorch's vectorised sqrt (AVX-512) is
// one unit off in about 0.7 % of elements and this one is correctly rounded.
#include <ember/core/adam_step.h>

#include <algorithm>
#include <cmath>

#include <ember/core/cpu/wide_clones.h>
#include <ember/core/parallel.h>

namespace ember::native {

namespace {

template <class T>
struct AdamScalars {
  T decay_factor, weight_decay, lerp_weight, beta2, square_weight, bias_correction2_sqrt, eps, step_value;
  bool decay, decoupled, amsgrad, maximize;
};

template <class T>
[[gnu::always_inline]] inline T lerp(T start, T end, T weight) {
  const T difference = end - start;
  return cpu::wide::abs(weight) < T(0.5) ? cpu::wide::fma(weight, difference, start) : cpu::wide::fma(weight - T(1), difference, end);
}

template <class T>
[[gnu::always_inline]] inline void adam_body(const AdamScalars<T>& s, T* p, const T* g, T* m, T* v, T* v_max,
                                             std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    T gradient = s.maximize ? -g[i] : g[i];
    if (s.decay) {
      if (s.decoupled) p[i] = p[i] * s.decay_factor;
      else gradient = cpu::wide::fma(s.weight_decay, p[i], gradient);
    }
    m[i] = lerp(m[i], gradient, s.lerp_weight);
    const T scaled_gradient = s.square_weight * gradient;  // addcmul's value · a, rounded
    v[i] = cpu::wide::fma(scaled_gradient, gradient, v[i] * s.beta2);
    T second_moment = v[i];
    if (s.amsgrad) {
      // torch.maximum: NaN wins.
      v_max[i] = cpu::wide::isnan(v_max[i]) || cpu::wide::isnan(v[i]) ? v_max[i] + v[i] : std::max(v_max[i], v[i]);
      second_moment = v_max[i];
    }
    const T denominator = cpu::wide::sqrt(second_moment) / s.bias_correction2_sqrt + s.eps;
    p[i] = (s.step_value * m[i]) / denominator + p[i];
  }
}

// Built for AVX-512 and AVX2 too (core/cpu/wide_clones.h): each cpu::wide::fma one instruction.
EMBER_WIDE_CLONES void adam_run(const AdamScalars<float>& s, float* p, const float* g, float* m, float* v, float* v_max,
                                std::int64_t n) {
  adam_body(s, p, g, m, v, v_max, n);
}
EMBER_WIDE_CLONES void adam_run(const AdamScalars<double>& s, double* p, const double* g, double* m, double* v,
                                double* v_max, std::int64_t n) {
  adam_body(s, p, g, m, v, v_max, n);
}

template <class T>
void adam_typed(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStepOptions& o) {
  const double bias_correction1 = 1.0 - std::pow(o.beta1, o.step);
  const double bias_correction2 = 1.0 - std::pow(o.beta2, o.step);
  const double step_size = o.lr / bias_correction1;
  const AdamScalars<T> s{static_cast<T>(1.0 - o.lr * o.weight_decay),
                         static_cast<T>(o.weight_decay),
                         static_cast<T>(1.0 - o.beta1),
                         static_cast<T>(o.beta2),
                         static_cast<T>(1.0 - o.beta2),
                         static_cast<T>(std::pow(bias_correction2, 0.5)),  // Python's ** 0.5
                         static_cast<T>(o.eps),
                         static_cast<T>(-step_size),
                         o.weight_decay != 0.0,
                         o.decoupled_weight_decay,
                         o.amsgrad,
                         o.maximize};
  T* p = param.data_ptr<T>();
  const T* g = grad.data_ptr<T>();
  T* m = exp_avg.data_ptr<T>();
  T* v = exp_avg_sq.data_ptr<T>();
  T* v_max = o.amsgrad ? max_exp_avg_sq.data_ptr<T>() : nullptr;
  parallel_for(0, param.numel(), kDefaultGrainSize, [&](std::int64_t begin, std::int64_t end) {
    adam_run(s, p + begin, g + begin, m + begin, v + begin, v_max == nullptr ? nullptr : v_max + begin, end - begin);
  });
}

bool usable(const Tensor& t, const Tensor& param) {
  return t.defined() && t.is_cpu() && t.dtype() == param.dtype() && t.is_contiguous() &&
         IntArrayRef(t.sizes()) == IntArrayRef(param.sizes());
}

}  // namespace

bool adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStepOptions& options) {
  if (param.dtype() != DType::Float32 && param.dtype() != DType::Float64) return false;
  for (const Tensor* t : {&param, &grad, &exp_avg, &exp_avg_sq})
    if (!usable(*t, param)) return false;
  if (options.amsgrad && !usable(max_exp_avg_sq, param)) return false;
  if (param.numel() > 0) {
    if (param.dtype() == DType::Float32) adam_typed<float>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, options);
    else adam_typed<double>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, options);
  }
  // In place, like the composite mul_/add_: a graph that saved the old values notices.
  for (const Tensor* t : {&param, &exp_avg, &exp_avg_sq}) t->bump_version();
  if (options.amsgrad) max_exp_avg_sq.bump_version();
  return true;
}

}  // namespace ember::native
