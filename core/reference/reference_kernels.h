// core/reference/reference_kernels.h — the reference CPU kernels: plain loops to read first.
//
// Issue 18 item 4 (EMBER_KERNELS=reference, core/kernel_mode.h). One function per kernel,
// with exactly the signatures of the fast CPU kernels in core/cpu/cpu_kernels.h, reading the
// same plans (core/strided_index.h, core/fused_plans.h). Each is the obviously-correct
// loop: one element at a time, on the calling thread, no SIMD, no blocking, no streaming
// stores, no scratch buffers; the arithmetic on one element comes from
// core/element_functions.h, the functors the fast CPU loops and the CUDA kernels use, so
// the three agree on NaN, -0.0, overflow and casts.
//
// Files, one per family:
//   elementwise_loops.cpp  fill, copy (with casts), unary, binary, where
//   reduce_loops.cpp       sum, mean, prod, max, min, argmax, argmin
//   softmax_loops.cpp      softmax / log_softmax
//   gemm_loops.cpp         the triple-loop matrix multiply
//   index_loops.cpp        index_select, index_add, gather, scatter_add
//   training_loops.cpp     the training ops' kernels: cross-entropy rows, the SGD step, one_hot,
//                          foreach_norm
//   conv_loops.cpp         the direct seven-loop convolution and its two gradients
//   pool_loops.cpp         max / average / adaptive average pooling and their gradients
//   batch_norm_loops.cpp   batch norm forward and backward
//   embedding_loops.cpp    the embedding's weight gradient
//   layer_norm_loops.cpp   layer norm forward and backward
//   topk_loops.cpp         topk along the last dim, one row at a time
//   flash_attention_loops.cpp  fused attention forward and backward, one query row at a time
// Each file registers its functions in the CPUReference slots of core/dispatch.h
// (EMBER_REGISTER_KERNEL), which serve CPU tensors when the mode is Reference. Families
// without a reference loop here (copy_bytes: a memcpy) fall back to the CPU slot.
#pragma once

#include <ember/core/backend.h>

namespace ember::reference {

void fill(const StridedPlan& plan, Scalar value);
void copy(const StridedPlan& plan);
void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params);
void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha);
void where(const StridedPlan& plan);

void reduce(ReduceOp op, const ReducePlan& plan);
void softmax(const SoftmaxPlan& plan, bool log);

void gemm(const GemmPlan& plan);

void index_select(const IndexPlan& plan);
void index_add(const IndexPlan& plan);
void gather(const IndexPlan& plan);
void scatter_add(const IndexPlan& plan);

void cross_entropy(const CrossEntropyPlan& plan);
void sgd_step(const SgdPlan& plan);
void adam_step(const AdamPlan& plan);
void one_hot(const OneHotPlan& plan);
void foreach_norm(const ForeachNormPlan& plan);

void conv2d(const Conv2dPlan& plan);
void conv2d_backward_input(const Conv2dPlan& plan);
void conv2d_backward_weight(const Conv2dPlan& plan);
void pool2d(const Pool2dPlan& plan);
void pool2d_backward(const Pool2dPlan& plan);
void batch_norm(const BatchNormPlan& plan);
void batch_norm_backward(const BatchNormBackwardPlan& plan);
void embedding_backward(const EmbeddingBackwardPlan& plan);
void layer_norm(const LayerNormPlan& plan);
void layer_norm_backward(const LayerNormBackwardPlan& plan);
void topk(const TopkPlan& plan);
void flash_attention(const FlashAttentionPlan& plan);
void flash_attention_backward(const FlashAttentionBackwardPlan& plan);

}  // namespace ember::reference
