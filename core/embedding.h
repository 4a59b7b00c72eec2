// core/embedding.h — the native (kernel-level, no autograd) embedding ops.
//
// Issue 21; PyTorch's aten::embedding and embedding_dense_backward. The differentiable op is
// ember::embedding (autograd/embedding_ops.cpp), the user-facing ones F::embedding and
// nn::Embedding (nn/embedding.h). The forward is a gather of weight rows (index_select); the
// backward sums gradient rows per weight row in input order, deterministically on every
// backend (core/embedding_plan.h).
#pragma once

#include <cstdint>

#include <ember/core/tensor.h>

namespace ember::native {

// PyTorch's checkScalarTypes for an index argument: int64 or int32, else DTypeError
// "Expected tensor for argument #1 'indices' to have one of the following scalar types:
// Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)".
void check_embedding_indices(const Tensor& indices, int argument, const char* function);

// weight [num_embeddings, embedding_dim] (any dtype); indices int64 or int32 of any shape
// (0-d and empty included), each in [0, num_embeddings) (IndexError "index out of range in
// self"). Returns weight's rows, shape indices.shape + [embedding_dim]: index_select(weight,
// 0, indices.reshape(-1)) viewed, no copy beyond the gather.
Tensor embedding(const Tensor& weight, const Tensor& indices);

// The weight gradient of embedding: grad [indices.shape..., dim] (float32/float64) summed
// into [num_weights, dim], each row's contributions in input order; row padding_idx (when
// in [0, num_weights)) stays zero. PyTorch's embedding_dense_backward without
// scale_grad_by_freq.
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_weights,
                          std::int64_t padding_idx);

}  // namespace ember::native
