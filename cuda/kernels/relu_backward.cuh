// cuda/kernels/relu_backward.cuh — ReLU's backward, grad_input = grad_output · [input > 0].
//
// PyTorch's threshold_backward: the gradient passes where the forward input (or output,
// the same sign) was positive and is 0 elsewhere, including at 0 and for NaN inputs.
// It is one more functor for the shared elementwise kernel (elementwise.cuh): operands
// [grad_input, grad_output, input] of one dtype, so it gets the 16-byte vectorised path
// for contiguous tensors and the strided path otherwise. ReLU forward is ReluOp in
// elementwise_ops.cuh.
// Bound: memory bandwidth — 2 reads + 1 write of itemsize × numel.
// Status: exercised by the emulator tests (tests/cuda/test_fused_kernels.cpp); not yet a
// Backend method, so autograd's relu backward runs gt + mul kernels (docs/cuda.md).
#pragma once

#include <ember/cuda/kernels/elementwise_ops.cuh>

EMBER_KERNELS_BEGIN

template <class T>
struct ReluBackwardOp {
  EMBER_HOST_DEVICE T operator()(T grad_output, T input) const { return input > T(0) ? grad_output : T(0); }
};

// plan operands: [grad_input, grad_output, input], one floating dtype.
inline void dispatch_relu_backward(const StridedPlan& plan, cudaStream_t stream) {
  EMBER_DISPATCH_FLOATING(plan.dtypes[0],
                          (launch_elementwise<scalar_t, scalar_t, scalar_t>(plan, ReluBackwardOp<scalar_t>{}, stream)));
}

EMBER_KERNELS_END
