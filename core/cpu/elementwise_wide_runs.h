// core/cpu/elementwise_wide_runs.h — performance code, safe to skip on a first read: the
// contiguous runs of the compute-heavy element functions, built for AVX-512 and AVX2 too.
//
// core/cpu/elementwise_kernels.cpp is compiled for plain x86-64 (SSE2, four floats at a
// time) so the library runs on any x86-64 CPU. That is enough for loops that wait on memory,
// but GELU's erf and exp (core/vectorisable_math.h) are some forty operations per element:
// those loops are bound by arithmetic (and ReLU's, on activations that fit in L2, by the
// four-float vectors), and a wider vector does the same work in a quarter
// of the time. Each function here is compiled three times with GCC's target_clones (AVX-512,
// AVX2 with FMA, plain x86-64) and the dynamic loader picks the widest the CPU has, once. The element
// function is the same in every clone, and no clone contracts a multiply-add into an FMA
// (-ffp-contract=off, core/CMakeLists.txt), so all three round alike: the results stay bit
// for bit those of the reference loops and the emulated CUDA kernels.
#pragma once

#include <cstdint>

#include <ember/core/element_functions.h>

namespace ember::cpu::wide {

// out[i] = gelu(x[i]) and out[i] = gelu_backward(grad_output[i], x[i]) for i < count.
void run(element::Gelu<float>, float* out, const float* x, std::int64_t count);
void run(element::GeluBackward<float>, float* out, const float* grad_output, const float* x, std::int64_t count);

// out[i] = relu(x[i]) and out[i] = relu_backward(grad_output[i], result[i]) (ReLU's backward,
// PyTorch's threshold_backward at 0) for i < count.
void run(element::Relu<float>, float* out, const float* x, std::int64_t count);
void run(element::ReluBackward<float>, float* out, const float* grad_output, const float* result, std::int64_t count);

// out[i] = a[i] + alpha·b[i] rounded once (element::AddScaled, torch.add's alpha): a fused
// multiply-add, one vector instruction in the AVX-512 and AVX2 (+FMA) clones; the plain
// x86-64 clone calls the C library's fma, as the elementwise loops do.
void run(element::AddScaled<float> f, float* out, const float* a, const float* b, std::int64_t count);
void run(element::AddScaled<double> f, double* out, const double* a, const double* b, std::int64_t count);

// float32 <-> float16 casts with F16C, eight at a time (core/cpu/half_conversions_f16c.cpp):
// the same bits as element::Cast.
void run(element::Cast<Half, float> cast, Half* out, const float* x, std::int64_t count);
void run(element::Cast<float, Half> cast, float* out, const Half* x, std::int64_t count);

// float32 -> bfloat16, rounding as element::Cast: SSE2 has no 32-to-16-bit pack, so the
// plain loop spends a dozen shuffles on every four values; the AVX-512 and AVX2 clones do not.
void run(element::Cast<BFloat16, float> cast, BFloat16* out, const float* x, std::int64_t count);

// Is F one of the functions above (so the loops call wide::run for a contiguous run)?
template <class F> inline constexpr bool has_wide_run = false;
template <> inline constexpr bool has_wide_run<element::Gelu<float>> = true;
template <> inline constexpr bool has_wide_run<element::GeluBackward<float>> = true;
template <> inline constexpr bool has_wide_run<element::Relu<float>> = true;
template <> inline constexpr bool has_wide_run<element::ReluBackward<float>> = true;
template <> inline constexpr bool has_wide_run<element::AddScaled<float>> = true;
template <> inline constexpr bool has_wide_run<element::AddScaled<double>> = true;
template <> inline constexpr bool has_wide_run<element::Cast<Half, float>> = true;
template <> inline constexpr bool has_wide_run<element::Cast<float, Half>> = true;
template <> inline constexpr bool has_wide_run<element::Cast<BFloat16, float>> = true;

}  // namespace ember::cpu::wide
