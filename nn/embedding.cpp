// nn/embedding.cpp — nn::Embedding (see embedding.h) and F::embedding (nn/functional.h),
// which adds torch.nn.functional.embedding's Python-level padding_idx handling to
// ember::embedding (autograd/embedding_ops.cpp).
#include <ember/nn/embedding.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/nn/functional.h>
#include <ember/nn/init.h>

namespace ember::nn {

namespace {

// PyTorch's padding_idx rule (F.embedding and Embedding.__init__): a row in
// [-num_embeddings, num_embeddings), negative counting from the end; none is -1 for the op.
std::int64_t normalised_padding_idx(std::optional<std::int64_t> padding_idx, std::int64_t num_embeddings) {
  if (!padding_idx) return -1;
  EMBER_CHECK(*padding_idx < num_embeddings && *padding_idx >= -num_embeddings, ValueError,
              "Padding_idx must be within num_embeddings");
  return *padding_idx < 0 ? *padding_idx + num_embeddings : *padding_idx;
}

}  // namespace

namespace functional {

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx) {
  // A weight without rows fails in ember::embedding with PyTorch's "'weight' must be 2-D".
  const std::int64_t padding = weight.dim() >= 1 ? normalised_padding_idx(padding_idx, weight.size(0)) : -1;
  return ember::embedding(weight, input, padding);
}

}  // namespace functional

Embedding::Embedding(const EmbeddingOptions& embedding_options) : options(embedding_options) {
  const std::int64_t rows = options.num_embeddings(), dim = options.embedding_dim();
  if (options.padding_idx()) options.padding_idx(normalised_padding_idx(options.padding_idx(), rows));
  EMBER_CHECK(rows >= 0 && dim >= 0, ValueError, "Trying to create tensor with negative dimension ",
              rows < 0 ? rows : dim, ": [", rows, ", ", dim, "]");
  weight = register_parameter("weight", ember::empty({rows, dim}));
  reset_parameters();
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    ember::select(weight, 0, *options.padding_idx()).fill_(0);
  }
}

Tensor Embedding::forward(const Tensor& input) {
  return ember::embedding(weight, input, options.padding_idx().value_or(-1));
}

std::string Embedding::extra_repr() const {
  std::string text = make_message(options.num_embeddings(), ", ", options.embedding_dim());
  if (options.padding_idx()) text += make_message(", padding_idx=", *options.padding_idx());
  return text;
}

}  // namespace ember::nn
