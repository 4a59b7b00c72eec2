// core/backend.h — what a device implements: the kernel families, one slot each.
//
// native:: functions (core/native.h) check arguments, allocate outputs, describe the work
// as plain plans (core/strided_index.h) and call the family's slot with the device, e.g.
// unary_kernel(out.device(), UnaryOp::Exp, plan, params) (core/dispatch.h). The CPU's
// kernels register themselves in core/cpu/, CUDA's in cuda/*.cu when ember_cuda is linked.
//
// The element ops themselves (UnaryOp, BinaryOp) come from the op list in core/op_list.h;
// adding one is a row there plus its functor (docs/adding-an-op.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <ember/core/batch_norm_plan.h>
#include <ember/core/conv_plans.h>
#include <ember/core/device.h>
#include <ember/core/dispatch.h>
#include <ember/core/embedding_plan.h>
#include <ember/core/flash_attention_plan.h>
#include <ember/core/fused_plans.h>
#include <ember/core/layer_norm_plan.h>
#include <ember/core/op_list.h>
#include <ember/core/scalar.h>
#include <ember/core/strided_index.h>
#include <ember/core/topk_plan.h>

namespace ember {

// The unary kernels: every row of core/op_list.h, and the two that take parameters.
#define EMBER_UNARY_ENUMERATOR(name, Functor, ...) Functor,
#define EMBER_VARIANT_ENUMERATOR(Functor, ...) Functor,
enum class UnaryOp {
  EMBER_UNARY_OPS(EMBER_UNARY_ENUMERATOR) EMBER_UNARY_VARIANTS(EMBER_VARIANT_ENUMERATOR)
  Clamp,      // params.low/high with has_low/has_high
  PowScalar,  // params.exponent
};

struct UnaryParams {
  double low = 0.0, high = 0.0;
  // The same bounds as integers, for integral tensors: a double holds integers exactly only
  // up to 2^53. native::clamp keeps them inside the tensor dtype's range.
  std::int64_t low_int = 0, high_int = 0;
  bool has_low = false, has_high = false;
  double exponent = 1.0;

  // A clamp bound as the element type T (exact for integers).
  template <class T>
  T low_as() const { return bound_as<T>(low, low_int); }
  template <class T>
  T high_as() const { return bound_as<T>(high, high_int); }

 private:
  template <class T>
  static T bound_as(double as_double, std::int64_t as_int) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(as_int);
    else return static_cast<T>(as_double);
  }
};

// The binary kernels: add and sub (out = a ± alpha * b), then every binary and backward row
// of core/op_list.h. Comparisons (result Bool in the list) write a Bool output.
enum class BinaryOp {
  Add,
  Sub,
  EMBER_BINARY_OPS(EMBER_UNARY_ENUMERATOR) EMBER_BACKWARD_OPS(EMBER_UNARY_ENUMERATOR)
};
#undef EMBER_UNARY_ENUMERATOR
#undef EMBER_VARIANT_ENUMERATOR

constexpr bool is_comparison(BinaryOp op) {
  switch (op) {
#define EMBER_BOOL_RESULT_CASE(name, Functor, result, ...) \
  case BinaryOp::Functor: return OpResult::result == OpResult::Bool;
    EMBER_BINARY_OPS(EMBER_BOOL_RESULT_CASE)
#undef EMBER_BOOL_RESULT_CASE
    default: return false;
  }
}

enum class ReduceOp { Sum, Mean, Prod, Max, Min, ArgMax, ArgMin };

// Random fills generated on the device by a counter-based generator (Philox4x32-10, as
// PyTorch's CUDA generator; cuda/kernels/philox.cuh). The scheme is PyTorch's seed + offset:
// the key is the generator's seed, and element e of the fill (in the plan's order) uses
// Philox counter `offset + e / 2` — two values per counter — so a fill of n elements
// consumes philox_counters(n) counters, which core/random.cpp reserves from the generator
// (Generator::reserve_philox_counters) before the launch. Same seed, same calls: same bits.
enum class RandomDistribution {
  Uniform,    // [a, b)
  Normal,     // mean a, standard deviation b (Box–Muller)
  Bernoulli,  // 1 with probability a, else 0 (any dtype)
};
struct PhiloxFill {
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;   // first Philox counter of this fill
  RandomDistribution distribution = RandomDistribution::Uniform;
  double a = 0.0, b = 1.0;
};
constexpr std::int64_t kPhiloxValuesPerCounter = 2;
inline std::uint64_t philox_counters(std::int64_t numel) {
  return static_cast<std::uint64_t>((numel + kPhiloxValuesPerCounter - 1) / kPhiloxValuesPerCounter);
}

// ----------------------------------------------------------------- the kernel families
// Each is a slot (core/dispatch.h) that a backend's kernel file fills with
// EMBER_REGISTER_KERNEL: the CPU's in core/cpu/, the reference loops in core/reference/,
// CUDA's in cuda/*.cu. Plans (core/strided_index.h, core/fused_plans.h) carry raw pointers,
// sizes and strides; a kernel only computes, it never checks user input.

// plan operands: [out]. Writes value (cast to out's dtype) everywhere.
EMBER_DECLARE_DISPATCH(fill_kernel, void(const StridedPlan& plan, Scalar value));
// plan operands: [dst, src], same device; dtypes may differ (the copy casts).
EMBER_DECLARE_DISPATCH(copy_kernel, void(const StridedPlan& plan));
// Raw byte copy between two devices; dispatched on the one that is not the CPU.
EMBER_DECLARE_DISPATCH(copy_bytes_kernel,
                       void(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes));
// The same, but may return before the bytes have arrived (to(device, non_blocking=true)
// from pinned memory); ordered with the device's later work. Device backends only.
EMBER_DECLARE_DISPATCH(copy_bytes_async_kernel,
                       void(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes));

// plan operands: [out, in], both of one dtype.
EMBER_DECLARE_DISPATCH(unary_kernel, void(UnaryOp op, const StridedPlan& plan, const UnaryParams& params));
// plan operands: [out, a, b]; a and b share a dtype; out has it too, or Bool for
// comparisons. alpha only for Add/Sub.
EMBER_DECLARE_DISPATCH(binary_kernel, void(BinaryOp op, const StridedPlan& plan, Scalar alpha));
// plan operands: [out, condition (Bool), a, b]; out, a, b share a dtype.
EMBER_DECLARE_DISPATCH(where_kernel, void(const StridedPlan& plan));

EMBER_DECLARE_DISPATCH(reduce_kernel, void(ReduceOp op, const ReducePlan& plan));
EMBER_DECLARE_DISPATCH(softmax_kernel, void(const SoftmaxPlan& plan, bool log));
// C = alpha * A·B + beta * C (GemmPlan). Ignores GemmPlan::bias.
EMBER_DECLARE_DISPATCH(gemm_kernel, void(const GemmPlan& plan));
// C = alpha * A·B + beta * bias, the bias broadcast over C (GemmPlan::bias). CUDA's GEMM
// epilogue reads the bias in place; the CPU's copies it into C row by row, then runs
// gemm_kernel. A backend without one leaves it empty, and core/linalg.cpp copies the bias
// into C (a general strided copy) and calls gemm_kernel instead.
EMBER_DECLARE_DISPATCH(addmm_kernel, void(const GemmPlan& plan));
// Whether gemm_kernel multiplies operands of `dtype` (a 16-bit float) itself, accumulating
// in float32 (the CPU's AVX512-BF16 kernel). Where it does not (a backend that registers
// nothing, the reference loops), core/linalg.cpp widens the operands to float32 first.
EMBER_DECLARE_DISPATCH(gemm_reads_16_bit_kernel, bool(DType dtype));
// Asks it for `device` (false for a backend that registers nothing). core/linalg.cpp asks
// before a product, core/conv.cpp before a forward convolution (which runs on the GEMM).
inline bool gemm_reads_16_bit_operands(Device device, DType dtype) {
  return gemm_reads_16_bit_kernel.has_kernel(device) && gemm_reads_16_bit_kernel(device, dtype);
}

// plan operands: [out]. Fills out with Philox numbers (see PhiloxFill). Device backends
// only: the CPU draws from its mt19937 stream in core/random.cpp (PyTorch's CPU bits).
EMBER_DECLARE_DISPATCH(random_fill_kernel, void(const StridedPlan& plan, const PhiloxFill& fill));

EMBER_DECLARE_DISPATCH(index_select_kernel, void(const IndexPlan& plan));
EMBER_DECLARE_DISPATCH(index_add_kernel, void(const IndexPlan& plan));    // output already holds self
EMBER_DECLARE_DISPATCH(gather_kernel, void(const IndexPlan& plan));
EMBER_DECLARE_DISPATCH(scatter_add_kernel, void(const IndexPlan& plan));  // output already holds self

// Fused training ops (core/fused_plans.h; docs/performance.md "Fused ops").
EMBER_DECLARE_DISPATCH(cross_entropy_kernel, void(const CrossEntropyPlan& plan));
EMBER_DECLARE_DISPATCH(sgd_step_kernel, void(const SgdPlan& plan));
EMBER_DECLARE_DISPATCH(adam_step_kernel, void(const AdamPlan& plan));
EMBER_DECLARE_DISPATCH(one_hot_kernel, void(const OneHotPlan& plan));
EMBER_DECLARE_DISPATCH(foreach_norm_kernel, void(const ForeachNormPlan& plan));

// Convolution and pooling (core/conv_plans.h; issue 19). The CPU's are im2col + GEMM
// (core/cpu/conv_kernels.cpp), the reference loops the direct seven-loop convolution.
EMBER_DECLARE_DISPATCH(conv2d_kernel, void(const Conv2dPlan& plan));
EMBER_DECLARE_DISPATCH(conv2d_backward_input_kernel, void(const Conv2dPlan& plan));
EMBER_DECLARE_DISPATCH(conv2d_backward_weight_kernel, void(const Conv2dPlan& plan));
EMBER_DECLARE_DISPATCH(pool2d_kernel, void(const Pool2dPlan& plan));
EMBER_DECLARE_DISPATCH(pool2d_backward_kernel, void(const Pool2dPlan& plan));

// Batch norm (core/batch_norm_plan.h): forward with the running-statistics update, backward.
EMBER_DECLARE_DISPATCH(batch_norm_kernel, void(const BatchNormPlan& plan));
EMBER_DECLARE_DISPATCH(batch_norm_backward_kernel, void(const BatchNormBackwardPlan& plan));

// The embedding's weight gradient (core/embedding_plan.h): rows summed in input order, no
// float atomics, so every backend gives the same bits.
EMBER_DECLARE_DISPATCH(embedding_backward_kernel, void(const EmbeddingBackwardPlan& plan));
// Layer norm (core/layer_norm_plan.h; issue 21): forward (mean, rstd, output) and backward.
EMBER_DECLARE_DISPATCH(layer_norm_kernel, void(const LayerNormPlan& plan));
EMBER_DECLARE_DISPATCH(layer_norm_backward_kernel, void(const LayerNormBackwardPlan& plan));
// Fused attention (core/flash_attention_plan.h; issue 21): the output and each row's
// logsumexp, never the L×S scores; the backward recomputes them tile by tile.
EMBER_DECLARE_DISPATCH(flash_attention_kernel, void(const FlashAttentionPlan& plan));
EMBER_DECLARE_DISPATCH(flash_attention_backward_kernel, void(const FlashAttentionBackwardPlan& plan));

// topk along the last dim of a contiguous [slices, size] input (core/topk_plan.h: the
// selection that fixes the order of ties). CPU only: core/topk.cpp copies device tensors.
EMBER_DECLARE_DISPATCH(topk_kernel, void(const TopkPlan& plan));

}  // namespace ember
