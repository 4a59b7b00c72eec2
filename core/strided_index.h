// core/strided_index.h — the plain-data description of a strided loop, shared by backends.
//
// An elementwise op over tensors out, a, b, ... is, after broadcasting, one loop over
// `numel` linear indices. For linear index i, operand k's element sits at
//     data[k] + itemsize * sum_d (digit_d(i) * strides[k][d])
// where digit_d are the mixed-radix digits of i in the (coalesced) sizes. The TensorIterator
// (core/tensor_iterator.h) builds a StridedPlan; the CPU loops and the CUDA kernels both
// read it with operand_offset() below, which is why it is POD and EMBER_HOST_DEVICE.
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>
#include <ember/core/host_device.h>

namespace ember {

constexpr int kMaxDims = 16;      // elementwise ops support up to 16 (coalesced) dims
constexpr int kMaxOperands = 4;   // out + up to 3 inputs (where(cond, a, b))

struct StridedPlan {
  int ndim = 0;                   // after coalescing; 0 means a single element
  int num_operands = 0;           // operand 0 is the output
  std::int64_t numel = 0;
  // sizes[0] is the *innermost* (fastest-varying) dim, so the inner loop walks dim 0.
  std::int64_t sizes[kMaxDims] = {};
  std::int64_t strides[kMaxOperands][kMaxDims] = {};  // in elements, per operand
  void* data[kMaxOperands] = {};                      // first element (offset applied)
  DType dtypes[kMaxOperands] = {};
  // True when every operand is contiguous in the same order with no broadcasting:
  // element i of every operand is at data[k] + i (the fast path).
  bool contiguous = false;
  // The device the operands live on: the CUDA backend runs the kernel on cuda:device
  // (a DeviceGuard); -1 on the CPU or for "the current device".
  int device = -1;
};

// Offset, in elements, of operand `k`'s element for linear index `linear`.
EMBER_HOST_DEVICE EMBER_INLINE std::int64_t operand_offset(const StridedPlan& plan, int k, std::int64_t linear) {
  std::int64_t offset = 0;
  for (int d = 0; d < plan.ndim; ++d) {
    std::int64_t size = plan.sizes[d];
    std::int64_t digit = linear % size;
    linear /= size;
    offset += digit * plan.strides[k][d];
  }
  return offset;
}

// The offsets of operands 0 .. Count-1 for linear index `linear`, all at once: the digits
// are found once (one division per dim), not once per operand, and in 32-bit arithmetic as
// soon as the remaining index fits in 32 bits. On a GPU a 64-bit division is a long software
// routine, and the strided elementwise kernel (cuda/kernels/elementwise.cuh) did one per dim
// per operand for every element. The offsets are operand_offset's, exactly.
template <int Count>
EMBER_HOST_DEVICE EMBER_INLINE void operand_offsets(const StridedPlan& plan, std::int64_t linear,
                                                    std::int64_t (&offsets)[Count]) {
  for (int k = 0; k < Count; ++k) offsets[k] = 0;
  constexpr std::int64_t kMax32 = 0xffffffff;
  for (int d = 0; d < plan.ndim; ++d) {
    const std::int64_t size = plan.sizes[d];
    std::int64_t digit;
    if (linear <= kMax32 && size <= kMax32) {  // sizes are positive here: numel > 0
      const auto narrow = static_cast<std::uint32_t>(linear), narrow_size = static_cast<std::uint32_t>(size);
      digit = narrow % narrow_size;
      linear = narrow / narrow_size;
    } else {
      digit = linear % size;
      linear /= size;
    }
    for (int k = 0; k < Count; ++k) offsets[k] += digit * plan.strides[k][d];
  }
}

// A reduction over a contiguous input viewed as [outer, reduce, inner]:
//     out[o * inner + i] = reduce_r input[(o * reduce + r) * inner + i]
// The API layer permutes/copies any other layout into this one.
struct ReducePlan {
  std::int64_t outer = 1, reduce = 1, inner = 1;
  const void* input = nullptr;
  void* output = nullptr;           // values (or indices for ArgMax/ArgMin)
  void* indices = nullptr;          // optional int64 indices for Max/Min with a dim
  DType input_dtype = DType::Float32;
  DType output_dtype = DType::Float32;
  int device = -1;                  // as StridedPlan::device
};

// softmax / log_softmax over the middle dim of a contiguous [outer, dim, inner] tensor.
struct SoftmaxPlan {
  std::int64_t outer = 1, dim = 1, inner = 1;
  const void* input = nullptr;
  void* output = nullptr;
  DType dtype = DType::Float32;
  int device = -1;                  // as StridedPlan::device
};

// Batched strided GEMM: for b < batch,  C_b = alpha * A_b · B_b + beta * C_b
// A_b is m×k with element (i, p) at a + b*batch_stride_a + i*row_stride_a + p*col_stride_a,
// and likewise for B (k×n) and C (m×n). Transposed operands are just swapped strides.
// beta == 0 means C is not read (it may be uninitialised).
// With `bias` set (addmm on a backend whose gemm_reads_bias() is true, core/backend.h),
// the addend is read from bias instead of C: C_b = alpha * A_b · B_b + beta * bias_b, where
// bias element (i, j) sits at bias + b*batch_stride_bias + i*row_stride_bias +
// j*col_stride_bias — stride 0 broadcasts, so a bias vector is one row read m times and
// is never first copied into C. Backends that do not read it are never given one.
struct GemmPlan {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  const void* a = nullptr;
  std::int64_t batch_stride_a = 0, row_stride_a = 0, col_stride_a = 0;
  const void* b = nullptr;
  std::int64_t batch_stride_b = 0, row_stride_b = 0, col_stride_b = 0;
  void* c = nullptr;
  std::int64_t batch_stride_c = 0, row_stride_c = 0, col_stride_c = 0;
  double alpha = 1.0, beta = 0.0;
  DType dtype = DType::Float32;
  const void* bias = nullptr;
  std::int64_t batch_stride_bias = 0, row_stride_bias = 0, col_stride_bias = 0;
  int device = -1;                  // as StridedPlan::device
};

// index_select / index_add over contiguous tensors viewed as [outer, size, inner]:
//   select: out[o, j, i] = in[o, index[j], i]          (out has index_count in the middle)
//   add:    out[o, index[j], i] += src[o, j, i]         (out has self_size in the middle)
// gather / scatter_add use the same shape with a full index tensor [outer, index_count, inner]:
//   gather:      out[o, j, i] = in[o, index[o, j, i], i]
//   scatter_add: out[o, index[o, j, i], i] += src[o, j, i]
struct IndexPlan {
  std::int64_t outer = 1, self_size = 1, index_count = 1, inner = 1;
  const void* source = nullptr;     // `in` for select/gather, `src` for the add forms
  void* output = nullptr;
  const std::int64_t* index = nullptr;
  DType dtype = DType::Float32;
  int device = -1;                  // as StridedPlan::device
};

}  // namespace ember
