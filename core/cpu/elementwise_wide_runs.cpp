// core/cpu/elementwise_wide_runs.cpp — performance code: see elementwise_wide_runs.h. Each
// loop is the plain `out[i] = f(x[i])` of the elementwise kernels, compiled per instruction
// set; the selects in the element function become vector blends (-fno-trapping-math, as in
// elementwise_kernels.cpp).
#include <ember/core/cpu/elementwise_wide_runs.h>

namespace ember::cpu::wide {

#if defined(__x86_64__) && defined(__GNUC__)
#define EMBER_WIDE_CLONES [[gnu::target_clones("avx512f", "avx2", "default")]]
#else
#define EMBER_WIDE_CLONES
#endif

EMBER_WIDE_CLONES void run(element::Gelu<float> f, float* out, const float* x, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(x[i]);
}

EMBER_WIDE_CLONES void run(element::GeluBackward<float> f, float* out, const float* grad_output, const float* x,
                           std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(grad_output[i], x[i]);
}

EMBER_WIDE_CLONES void run(element::Cast<BFloat16, float> cast, BFloat16* out, const float* x, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = cast(x[i]);
}

}  // namespace ember::cpu::wide
