// nn/embedding.h — nn::Embedding: a lookup table of num_embeddings vectors of embedding_dim.
//
// Issue 21 (PyTorch's torch.nn.Embedding; options as libtorch's EmbeddingOptions). The
// input is a tensor of int64 (or int32) indices of any shape; the output replaces each index
// by its row of `weight` [num_embeddings, embedding_dim], shape input.shape + [embedding_dim].
// The weight gradient adds each position's gradient into the row it read, in input order,
// deterministically on every backend (core/embedding_plan.h). padding_idx names a row whose
// gradient is always zero (and which starts at zero): the "no token" vector of padded
// sequences. weight starts as N(0, 1) from the default generator, drawn exactly as PyTorch's
// init.normal_ does, so manual_seed(s); Embedding(65, 32) gives PyTorch's weights bit for bit.
#pragma once

#include <cstdint>
#include <optional>

#include <ember/nn/module.h>

namespace ember::nn {

// libtorch's EmbeddingOptions: EmbeddingOptions(65, 32).padding_idx(0). Only the options
// ember implements (no max_norm, scale_grad_by_freq or sparse).
class EmbeddingOptions {
 public:
  EmbeddingOptions(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}

  EmbeddingOptions& num_embeddings(std::int64_t value) { num_embeddings_ = value; return *this; }
  EmbeddingOptions& embedding_dim(std::int64_t value) { embedding_dim_ = value; return *this; }
  // A row in [-num_embeddings, num_embeddings); negative counts from the end.
  EmbeddingOptions& padding_idx(std::optional<std::int64_t> value) { padding_idx_ = value; return *this; }
  std::int64_t num_embeddings() const { return num_embeddings_; }
  std::int64_t embedding_dim() const { return embedding_dim_; }
  const std::optional<std::int64_t>& padding_idx() const { return padding_idx_; }

 private:
  std::int64_t num_embeddings_;
  std::int64_t embedding_dim_;
  std::optional<std::int64_t> padding_idx_;
};

class Embedding : public Module {
 public:
  // ValueError "Padding_idx must be within num_embeddings" for a padding_idx out of range.
  explicit Embedding(const EmbeddingOptions& options);
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : Embedding(EmbeddingOptions(num_embeddings, embedding_dim)) {}

  // input: int64/int32 indices of any shape -> [*input.shape, embedding_dim];
  // grad_fn EmbeddingBackward0.
  Tensor forward(const Tensor& input) override;
  // "65, 32" or "65, 32, padding_idx=0", as PyTorch prints Embedding(65, 32, padding_idx=0).
  std::string extra_repr() const override;
  // weight ~ N(0, 1) (init::normal_), then the padding row zeroed (PyTorch's reset_parameters).
  void reset_parameters();

  EmbeddingOptions options;  // padding_idx stored in [0, num_embeddings) (PyTorch normalises it)
  Parameter weight;          // [num_embeddings, embedding_dim]
};

}  // namespace ember::nn
