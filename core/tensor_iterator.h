// core/tensor_iterator.h — turning "out = f(a, b, ...)" over strided tensors into one loop.
//
// Tutorial §2.3 (broadcasting) and §2.4 (views and strides). This is a miniature of
// PyTorch's TensorIterator. Every elementwise op, copy and fill goes through it:
//
//   1. broadcast   each input's sizes are lined up with the output's from the right; a
//                  missing or size-1 dim that the output stretches gets stride 0, so the
//                  same element is read again and again (no data is copied).
//   2. drop        size-1 dims of the output: they never move the index.
//   3. reorder     dims are sorted by the output's strides so the output's fastest-moving
//                  dim becomes dim 0 of the plan, the innermost loop (writes stay sequential
//                  even when the output is, say, a transposed view).
//   4. coalesce    two neighbouring dims merge into one when, for *every* operand, stepping
//                  off the end of the inner dim lands exactly on the next outer element
//                  (stride_outer == stride_inner * size_inner). A contiguous [64, 32, 8]
//                  tensor becomes a single dim of 16384.
//   5. fast path   when one dim of stride 1 is left for every operand, the plan is marked
//                  `contiguous` and kernels can run a plain `out[i] = f(a[i], b[i])` loop
//                  that the compiler vectorises.
//
// The result is a StridedPlan (core/strided_index.h), plain data that the CPU loops and the
// CUDA kernels read the same way. The iterator neither allocates nor checks dtypes: the
// native:: op decides the output's shape and dtype first (core/elementwise.cpp).
#pragma once

#include <initializer_list>
#include <span>
#include <vector>

#include <ember/core/strided_index.h>
#include <ember/core/tensor.h>

namespace ember {

// The broadcast shape of all the given tensors (ShapeError with PyTorch's message when two
// of them do not fit: "The size of tensor a (3) must match the size of tensor b (2) at
// non-singleton dimension 1").
Shape broadcast_shape_of(const std::vector<Tensor>& tensors);

// In-place ops and copy_ write through `output`; when two of its elements share memory (an
// expanded view: a dim of size > 1 with stride 0) the result would depend on the loop
// order, so PyTorch refuses: "unsupported operation: more than one element of the
// written-to tensor refers to a single memory location. Please clone() the tensor before
// performing the operation." (ValueError). fill_ writes one value everywhere and skips this.
void check_no_internal_overlap(const Tensor& output);

// How the memory of two tensors relates (PyTorch's MemOverlapStatus, same rules):
//   Full     the same elements in the same layout (the same tensor, or a view with equal
//            offset, sizes' extent and strides): an in-place op reads each element just
//            before writing it, which is safe;
//   Partial  they share some memory, or the same memory in another layout (x and x.t());
//   No       disjoint, or one of them has no elements;
//   TooHard  sharing a storage, but one of them is not a dense layout (x[::2], an expanded
//            view): the ranges cannot tell, and PyTorch lets such ops run.
enum class MemoryOverlap { No, Full, Partial, TooHard };
MemoryOverlap memory_overlap(const Tensor& a, const Tensor& b);

// A write into `written` that reads `input` while writing goes wrong when the two
// partially overlap (x.slice(0, 1).add_(x.slice(0, 0, n - 1)) would read values it has
// already overwritten; copy_ would reach memcpy over overlapping ranges). PyTorch refuses:
// "unsupported operation: some elements of the input tensor and the written-to tensor
// refer to a single memory location. Please clone() the tensor before performing the
// operation." (ValueError). make_strided_plan runs it for every input, so every in-place
// op, out= op and copy_ gets it.
void check_no_partial_overlap(const Tensor& written, const Tensor& input);

// Builds the loop plan for `output` (operand 0) and `inputs` (operands 1..). Every input
// must broadcast to output's shape; the output itself is never broadcast. At most
// kMaxOperands - 1 inputs. An input that partially overlaps the output is refused
// (check_no_partial_overlap); a fresh output costs one pointer comparison per input. Callers write make_strided_plan(out, {a, b}): the braced list
// picks the initializer_list overload, which costs no heap allocation.
StridedPlan make_strided_plan(const Tensor& output, std::span<const Tensor> inputs);
StridedPlan make_strided_plan(const Tensor& output, std::initializer_list<Tensor> inputs);
StridedPlan make_strided_plan(const Tensor& output, const std::vector<Tensor>& inputs);

}  // namespace ember
