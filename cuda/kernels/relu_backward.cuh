// cuda/kernels/relu_backward.cuh — ReLU's backward, PyTorch's threshold_backward(grad, result, 0).
//
// grad_input = result <= 0 ? 0 : grad_output. The gradient passes where relu's result is
// positive and is 0 elsewhere, including at exactly 0; a NaN result (relu(NaN) = NaN)
// passes it, as in PyTorch (`NaN <= 0` is false). Its functor, element::ReluBackward
// (core/element_functions.h, shared with the CPU loops), runs in the shared elementwise
// kernel (elementwise.cuh), so it gets the 16-byte vectorised path for
// contiguous tensors and the strided path otherwise. The backend reaches it as
// BinaryOp::ReluBackward (elementwise_ops.cuh's binary dispatch, operands
// [grad_input, grad_output, result]); autograd's ReluBackward0 calls it through
// native::relu_backward. ReLU forward is element::Relu.
// Bound: memory bandwidth — 2 reads + 1 write of itemsize × numel (the composite
// gt + cast + mul it replaces made three passes and two temporaries: 6 reads/writes of
// a full tensor plus a bool one).
#pragma once

#include <ember/core/element_functions.h>
#include <ember/cuda/kernels/elementwise.cuh>

EMBER_KERNELS_BEGIN

// plan operands: [grad_input, grad_output, result], one floating dtype (the emulator tests
// call this directly; the backend goes through dispatch_binary).
inline void dispatch_relu_backward(const StridedPlan& plan, cudaStream_t stream) {
  EMBER_DISPATCH_FLOATING(plan.dtypes[0],
                          (launch_elementwise<scalar_t, scalar_t, scalar_t>(plan, element::ReluBackward<scalar_t>{}, stream)));
}

EMBER_KERNELS_END
