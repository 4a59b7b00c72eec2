// core/cpu/elementwise_wide_runs.cpp — performance code: see elementwise_wide_runs.h. Each
// loop is the plain `out[i] = f(x[i])` of the elementwise kernels, compiled per instruction
// set; the selects in the element function become vector blends (-fno-trapping-math, as in
// elementwise_kernels.cpp).
#include <ember/core/cpu/elementwise_wide_runs.h>

#include <ember/core/cpu/wide_clones.h>

namespace ember::cpu::wide {


EMBER_WIDE_CLONES void run(element::Gelu<float> f, float* out, const float* x, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(x[i]);
}

EMBER_WIDE_CLONES void run(element::GeluBackward<float> f, float* out, const float* grad_output, const float* x,
                           std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(grad_output[i], x[i]);
}

// ReLU and its backward: selects, a few operations per element, but a training step runs them
// on activations that sit in L2 (a [128, 256] layer: 128 KiB), where four floats at a time,
// not memory, were the bound.
EMBER_WIDE_CLONES void run(element::Relu<float> f, float* out, const float* x, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(x[i]);
}

EMBER_WIDE_CLONES void run(element::ReluBackward<float> f, float* out, const float* grad_output, const float* result,
                           std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(grad_output[i], result[i]);
}

EMBER_WIDE_CLONES void run(element::AddScaled<float> f, float* out, const float* a, const float* b, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(a[i], b[i]);
}

EMBER_WIDE_CLONES void run(element::AddScaled<double> f, double* out, const double* a, const double* b,
                           std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(a[i], b[i]);
}

EMBER_WIDE_CLONES void run(element::Cast<BFloat16, float> cast, BFloat16* out, const float* x, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = cast(x[i]);
}

}  // namespace ember::cpu::wide
