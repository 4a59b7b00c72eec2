// core/cpu/fused_kernels.cpp — the CPU loops of the fused training ops (core/fused_plans.h):
// cross-entropy forward + backward in one pass per row, the SGD step in one pass per
// parameter, one_hot, and the norms of a list of tensors (clip_grad_norm_).
//
// Issue 8 ("fused where the training step benefits", tutorial §7's training loop). Each
// replaces a chain of elementwise / reduction passes that read and wrote whole tensors;
// here every element is loaded once into L1 and finished there. docs/performance.md
// ("Fused ops") counts the bytes. Bounds (memory, itemsize b): cross-entropy reads the
// logits once from memory (the second read of a row hits L1/L2) and writes the gradient,
// 2·b per logit; SGD reads param, grad, buffer and writes param, buffer, 5·b per element
// with momentum (3·b without); one_hot writes 8 bytes per output element.
//
// Exactness. The cross-entropy loss is computed with exactly the operations of the
// composite log_softmax + nll_loss (reduce_kernels.cpp: max in T, Σ exp in double, log in
// double), so losses are bit-identical to the unfused path; its gradient is computed in
// double from the same sums (more accurate than the composite, equal within an ulp or
// so). The SGD step rounds every product and sum to T exactly where the composite
// mul_/add_ calls round them (a + alpha * b as one fused multiply-add, as element::AddScaled
// and PyTorch 2.x compute it), so parameters are bit-identical to nn/sgd.cpp's composite path.
#include <algorithm>
#include <cmath>
#include <vector>

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/wide_clones.h>
#include <ember/core/error.h>
#include <ember/core/norm_math.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

// Rows per thread chunk: enough rows that a chunk is about kDefaultGrainSize elements.
std::int64_t row_grain(std::int64_t row_length) {
  return std::max<std::int64_t>(1, kDefaultGrainSize / std::max<std::int64_t>(row_length, 1));
}

// ------------------------------------------------------------------ cross-entropy
// Per row: (1) max, (2) e_c = exp(x_c - max) kept in a double scratch row and summed,
// (3) loss = log Σe - (x_t - max), (4) gradient (e_c / Σe - [c == t]) * scale from the
// scratch row. The logits are read twice (max, exp) while the row sits in L1; passes (1)
// and (4) are plain loops the compiler vectorises, (2) calls scalar libm exp as the
// softmax kernel does.
template <class T>
void cross_entropy_typed(const CrossEntropyPlan& plan) {
  const T* logits = static_cast<const T*>(plan.logits);
  T* losses = static_cast<T*>(plan.losses);
  T* grad = static_cast<T*>(plan.grad_logits);
  const std::int64_t classes = plan.classes;
  const double scale = plan.scale;
  parallel_for(0, plan.rows, row_grain(classes), [&](std::int64_t begin, std::int64_t end) {
    // The scratch row: on the stack for up to kStackClasses classes (a classifier's 2 or 10
    // logits: no heap block per call), on the heap beyond (a GPT's vocabulary).
    constexpr std::int64_t kStackClasses = 64;
    double stack_row[kStackClasses];
    std::vector<double> heap_row(grad != nullptr && classes > kStackClasses ? static_cast<std::size_t>(classes) : 0);
    double* const exps = classes > kStackClasses ? heap_row.data() : stack_row;
    for (std::int64_t r = begin; r < end; ++r) {
      const T* x = logits + r * classes;
      T* dx = grad != nullptr ? grad + r * classes : nullptr;
      const std::int64_t target = plan.targets[r];
      if (target == plan.ignore_index) {  // contributes nothing, and receives no gradient
        losses[r] = T(0);
        if (dx != nullptr) std::fill(dx, dx + classes, T(0));
        continue;
      }
      T max_value = x[0];  // classes >= 1 here: the target is a class
      for (std::int64_t c = 1; c < classes; ++c) max_value = std::max(max_value, x[c]);
      double total = 0.0;
      if (dx != nullptr) {
        for (std::int64_t c = 0; c < classes; ++c) {
          exps[c] = std::exp(static_cast<double>(x[c] - max_value));
          total += exps[c];
        }
      } else {
        for (std::int64_t c = 0; c < classes; ++c) total += std::exp(static_cast<double>(x[c] - max_value));
      }
      // -log_softmax(x)[t], rounded exactly as the composite log_softmax rounds it.
      losses[r] = static_cast<T>(-static_cast<T>(static_cast<double>(x[target] - max_value) - std::log(total)));
      if (dx == nullptr) continue;
      for (std::int64_t c = 0; c < classes; ++c) dx[c] = static_cast<T>(exps[c] / total * scale);
      dx[target] = static_cast<T>((exps[target] / total - 1.0) * scale);
    }
  });
}

// ------------------------------------------------------------------ SGD
// Blocks of kSgdBlock elements: each formula line is one simple loop over the block (the
// compiler vectorises each), and the block's direction d stays in L1 between them, so
// param, grad and the buffer are each read once and written at most once.
constexpr std::int64_t kSgdBlock = 1024;

// The optimizer's numbers, each rounded to T once, as the composite ops' Scalar arguments are.
template <class T>
struct SgdScalars {
  T weight_decay, momentum, keep_fraction, step;
  bool decay, use_momentum, nesterov, maximize, first_step;
};

// One block. Every `x + alpha·y` is one fused multiply-add (wide::fma), as the composite
// add_ (element::AddScaled) and PyTorch 2.x's CPU kernels round it; buf.mul_(momentum) is a
// plain product, rounded on its own.
template <class T>
[[gnu::always_inline]] inline void sgd_block_body(const SgdScalars<T>& s, T* p, const T* g, T* b, std::int64_t n) {
  if (!s.maximize && !s.decay && !s.use_momentum) {  // plain SGD: the direction is the gradient itself
    for (std::int64_t j = 0; j < n; ++j) p[j] = wide::fma(s.step, g[j], p[j]);
    return;
  }
  T d[kSgdBlock];
  if (s.maximize) {
    for (std::int64_t j = 0; j < n; ++j) d[j] = static_cast<T>(-g[j]);
  } else {
    for (std::int64_t j = 0; j < n; ++j) d[j] = g[j];
  }
  if (s.decay) {
    for (std::int64_t j = 0; j < n; ++j) d[j] = wide::fma(s.weight_decay, p[j], d[j]);
  }
  if (s.use_momentum) {
    if (s.first_step) {
      for (std::int64_t j = 0; j < n; ++j) b[j] = d[j];
    } else {
      // buf.mul_(momentum) then buf.add_(d, 1 - dampening): two roundings, kept apart.
      for (std::int64_t j = 0; j < n; ++j) {
        const T decayed = static_cast<T>(b[j] * s.momentum);
        b[j] = wide::fma(s.keep_fraction, d[j], decayed);
      }
    }
    if (s.nesterov) {
      for (std::int64_t j = 0; j < n; ++j) d[j] = wide::fma(s.momentum, b[j], d[j]);
    } else {
      for (std::int64_t j = 0; j < n; ++j) d[j] = b[j];
    }
  }
  for (std::int64_t j = 0; j < n; ++j) p[j] = wide::fma(s.step, d[j], p[j]);
}

// Built for AVX-512 and AVX2 too (core/cpu/wide_clones.h): there each wide::fma is one
// vector instruction.
EMBER_WIDE_CLONES void sgd_block(const SgdScalars<float>& s, float* p, const float* g, float* b, std::int64_t n) {
  sgd_block_body(s, p, g, b, n);
}
EMBER_WIDE_CLONES void sgd_block(const SgdScalars<double>& s, double* p, const double* g, double* b, std::int64_t n) {
  sgd_block_body(s, p, g, b, n);
}

template <class T>
void sgd_typed(const SgdPlan& plan) {
  T* param = static_cast<T*>(plan.param);
  const T* grad = static_cast<const T*>(plan.grad);
  T* buffer = static_cast<T*>(plan.momentum_buffer);
  const optim::SGDOptions& options = plan.options;  // the --lr the command line wrote
  const SgdScalars<T> scalars{static_cast<T>(options.weight_decay),
                              static_cast<T>(options.momentum),
                              static_cast<T>(1.0 - options.dampening),
                              static_cast<T>(-options.lr),
                              options.weight_decay != 0.0,
                              options.momentum != 0.0,
                              options.nesterov,
                              options.maximize,
                              plan.first_step};
  parallel_for(0, plan.numel, kDefaultGrainSize, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t start = begin; start < end; start += kSgdBlock) {
      sgd_block(scalars, param + start, grad + start, buffer == nullptr ? nullptr : buffer + start,
                std::min(kSgdBlock, end - start));
    }
  });
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

namespace {

// One tensor's accumulated norm terms (norm_math.h), in double: fixed blocks of 32768
// elements folded in parallel, 8 lanes each (they vectorise), then the blocks in order —
// the same bits for any thread count.
template <class T>
double norm_terms(const T* x, std::int64_t n, double p, bool max_norm) {
  constexpr std::int64_t kBlock = 32768;
  constexpr int kLanes = 8;
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partials(static_cast<std::size_t>(blocks), 0.0);
  parallel_for(0, blocks, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t b = first; b < last; ++b) {
      const std::int64_t begin = b * kBlock, end = std::min(n, begin + kBlock);
      double lanes[kLanes] = {};  // 0: the identity of the sum and of max |x|
      std::int64_t j = begin;
      for (; j + kLanes <= end; j += kLanes)
        for (int l = 0; l < kLanes; ++l)
          lanes[l] = norm::combine(lanes[l], norm::term<double>(static_cast<double>(x[j + l]), p, max_norm), max_norm);
      for (; j < end; ++j)
        lanes[0] = norm::combine(lanes[0], norm::term<double>(static_cast<double>(x[j]), p, max_norm), max_norm);
      double folded = lanes[0];
      for (int l = 1; l < kLanes; ++l) folded = norm::combine(folded, lanes[l], max_norm);
      partials[static_cast<std::size_t>(b)] = folded;
    }
  });
  double total = 0.0;
  for (double partial : partials) total = norm::combine(total, partial, max_norm);
  return total;
}

template <class T>
void foreach_norm_typed(const ForeachNormPlan& plan) {
  const bool max_norm = std::isinf(plan.p);
  for (int i = 0; i < plan.count; ++i) {
    const double total = norm_terms(static_cast<const T*>(plan.data[i]), plan.numel[i], plan.p, max_norm);
    static_cast<T*>(plan.output)[i] = static_cast<T>(norm::finish(total, plan.p, max_norm));
  }
}

}  // namespace

void foreach_norm(const ForeachNormPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, foreach_norm_typed<scalar_t>(plan));
}

// Row by row: zero the row (a vectorised fill), then set the one.
void one_hot(const OneHotPlan& plan) {
  if (plan.rows == 0 || plan.classes == 0) return;
  parallel_for(0, plan.rows, row_grain(plan.classes), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      std::int64_t* row = plan.out + r * plan.classes;
      std::fill(row, row + plan.classes, std::int64_t{0});
      row[plan.index[r]] = 1;
    }
  });
}

EMBER_REGISTER_KERNEL(::ember::cross_entropy_kernel, CPU, cross_entropy);
EMBER_REGISTER_KERNEL(::ember::sgd_step_kernel, CPU, sgd_step);
EMBER_REGISTER_KERNEL(::ember::one_hot_kernel, CPU, one_hot);
EMBER_REGISTER_KERNEL(::ember::foreach_norm_kernel, CPU, foreach_norm);

}  // namespace ember::cpu
