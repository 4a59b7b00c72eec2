// core/cpu/cpu_kernels.h — the CPU backend's kernels, one free function per kernel family
// of core/backend.h. Each file registers its functions in the family's slot
// (EMBER_REGISTER_KERNEL, core/dispatch.h); tests call them directly too. Files:
//   elementwise_kernels.cpp  fill, copy (with casts), unary, binary, where
//   reduce_kernels.cpp       reductions, softmax / log_softmax
//   gemm.cpp                 batched strided matrix multiply
//   index_kernels.cpp        index_select, index_add, gather, scatter_add
//   fused_kernels.cpp        fused cross-entropy, the SGD step, one_hot, foreach_norm (core/fused_plans.h)
//   conv_kernels.cpp         conv2d and its two gradients: im2col + gemm (core/conv_plans.h)
//   pool_kernels.cpp         max / average / adaptive average pooling and their gradients
//                            (MaxPool2d(2): max_pool_2x2_avx512.cpp, max_pool_2x2_avx2.cpp where cpuid allows)
//   batch_norm_kernels.cpp   batch norm forward and backward (core/batch_norm_plan.h)
//   embedding_kernels.cpp    the embedding's weight gradient (core/embedding_plan.h)
//   layer_norm_kernels.cpp   layer norm forward and backward (core/layer_norm_plan.h)
//   topk_kernels.cpp         topk along the last dim (core/topk_plan.h)
//   flash_attention_kernels.cpp  fused attention forward and backward, tiled, online softmax
//                                (core/flash_attention_plan.h)
#pragma once

#include <ember/core/backend.h>

namespace ember::cpu {

void fill(const StridedPlan& plan, Scalar value);
void copy(const StridedPlan& plan);
void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params);
void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha);
void where(const StridedPlan& plan);
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes);

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
// One float32 (or bfloat16, as its bits) plane of MaxPool2d(2): 2x2 windows, stride 2, all
// inside; indices within the plane. AVX-512 only (compiled with its flags; call it after
// cpuid said so); needs 3 * in_w < 2^31.
void max_pool_2x2_plane_avx512(const float* in, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w,
                               float* out, std::int64_t* indices);
void max_pool_2x2_plane_avx512(const std::uint16_t* in, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w,
                               std::uint16_t* out, std::int64_t* indices);
// Its backward for one plane: writes all of grad_in (in_h x in_w) from grad_out and the
// forward's indices; false (grad_in partly written) if an index is not in its window. The
// bfloat16 one needs AVX-512 BW as well.
bool max_pool_2x2_backward_plane_avx512(const float* grad_out, const std::int64_t* indices, std::int64_t in_h,
                                        std::int64_t in_w, std::int64_t out_h, std::int64_t out_w, float* grad_in);
bool max_pool_2x2_backward_plane_avx512(const std::uint16_t* grad_out, const std::int64_t* indices, std::int64_t in_h,
                                        std::int64_t in_w, std::int64_t out_h, std::int64_t out_w,
                                        std::uint16_t* grad_in);
// The same two for float32 planes with AVX2 (core/cpu/max_pool_2x2_avx2.cpp, compiled with its
// flags; call them after cpuid said AVX2).
void max_pool_2x2_plane_avx2(const float* in, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w, float* out,
                             std::int64_t* indices);
bool max_pool_2x2_backward_plane_avx2(const float* grad_out, const std::int64_t* indices, std::int64_t in_h,
                                      std::int64_t in_w, std::int64_t out_h, std::int64_t out_w, float* grad_in);
void batch_norm(const BatchNormPlan& plan);
void batch_norm_backward(const BatchNormBackwardPlan& plan);
void embedding_backward(const EmbeddingBackwardPlan& plan);
void layer_norm(const LayerNormPlan& plan);
void layer_norm_backward(const LayerNormBackwardPlan& plan);
void topk(const TopkPlan& plan);
void flash_attention(const FlashAttentionPlan& plan);
void flash_attention_backward(const FlashAttentionBackwardPlan& plan);

}  // namespace ember::cpu
