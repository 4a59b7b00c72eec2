// core/cpu/adam_step.cpp — performance code, safe to skip on a first read: the CPU kernel of
// adam_step_kernel (core/backend.h, plan in core/fused_plans.h). The update of each element is
// core/adam_update.h's, PyTorch's roundings; this file only runs it fast: the parameter split
// across the thread pool, each piece in a loop compiled for AVX-512, AVX2 and plain x86-64
// (core/cpu/wide_clones.h). The reference loop (core/reference/training_loops.cpp) runs the
// same update one element at a time and gives the same bits.
#include <cstdint>

#include <ember/core/adam_update.h>
#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/wide_clones.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

template <class T>
[[gnu::always_inline]] inline void adam_body(const adam::Scalars<T>& s, T* p, const T* g, T* m, T* v, T* v_max,
                                             std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) adam::update(s, p[i], g[i], m[i], v[i], v_max == nullptr ? nullptr : v_max + i);
}

// Built for AVX-512 and AVX2 too (core/cpu/wide_clones.h): each cpu::wide::fma one instruction.
EMBER_WIDE_CLONES void adam_run(const adam::Scalars<float>& s, float* p, const float* g, float* m, float* v,
                                float* v_max, std::int64_t n) {
  adam_body(s, p, g, m, v, v_max, n);
}
EMBER_WIDE_CLONES void adam_run(const adam::Scalars<double>& s, double* p, const double* g, double* m, double* v,
                                double* v_max, std::int64_t n) {
  adam_body(s, p, g, m, v, v_max, n);
}

template <class T>
void adam_typed(const AdamPlan& plan) {
  const adam::Scalars<T> s = adam::scalars<T>(plan);
  const adam::Buffers<T> b = adam::buffers<T>(plan);
  parallel_for(0, plan.numel, kDefaultGrainSize, [&](std::int64_t begin, std::int64_t end) {
    adam_run(s, b.param + begin, b.grad + begin, b.exp_avg + begin, b.exp_avg_sq + begin,
             b.max_exp_avg_sq == nullptr ? nullptr : b.max_exp_avg_sq + begin, end - begin);
  });
}

}  // namespace

void adam_step(const AdamPlan& plan) {
  if (plan.numel == 0) return;
  if (plan.dtype == DType::Float32) adam_typed<float>(plan);
  else if (plan.dtype == DType::Float64) adam_typed<double>(plan);
  else detail::throw_dtype_not_implemented(plan.dtype);
}

EMBER_REGISTER_KERNEL(::ember::adam_step_kernel, CPU, adam_step);

}  // namespace ember::cpu
