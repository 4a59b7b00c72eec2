// nn/gpt.cpp — nn::GPT (see gpt.h for the architecture and the initialisation order).
#include <ember/nn/gpt.h>

#include <cmath>
#include <string>
#include <vector>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/nn/functional.h>
#include <ember/nn/init.h>

namespace ember::nn {

void check_gpt_config(const GPTConfig& config) {
  std::vector<std::string> problems;
  auto require = [&](bool ok, const std::string& problem) {
    if (!ok) problems.push_back(problem);
  };
  require(config.vocab_size >= 1, "vocab_size must be at least 1, got " + std::to_string(config.vocab_size));
  require(config.block_size >= 1, "block_size must be at least 1, got " + std::to_string(config.block_size));
  require(config.n_layer >= 1, "n_layer must be at least 1, got " + std::to_string(config.n_layer));
  require(config.n_head >= 1, "n_head must be at least 1, got " + std::to_string(config.n_head));
  require(config.n_embd >= 1, "n_embd must be at least 1, got " + std::to_string(config.n_embd));
  require(config.n_head < 1 || config.n_embd % config.n_head == 0,
          "n_embd (" + std::to_string(config.n_embd) + ") must be a multiple of n_head (" +
              std::to_string(config.n_head) + ")");
  require(config.dropout >= 0.0 && config.dropout <= 1.0,
          "dropout probability has to be between 0 and 1, but got " + std::to_string(config.dropout));
  if (problems.empty()) return;
  std::string message = "invalid GPT config:";
  for (const auto& problem : problems) message += "\n  " + problem;
  throw ValueError(message);
}

// ------------------------------------------------------------------ attention

CausalSelfAttention::CausalSelfAttention(const GPTConfig& config)
    : n_head_(config.n_head), n_embd_(config.n_embd), dropout_(config.dropout) {
  c_attn = register_module("c_attn", std::make_shared<Linear>(config.n_embd, 3 * config.n_embd, config.bias));
  c_proj = register_module("c_proj", std::make_shared<Linear>(config.n_embd, config.n_embd, config.bias));
  attn_dropout = register_module("attn_dropout", std::make_shared<Dropout>(config.dropout));
  resid_dropout = register_module("resid_dropout", std::make_shared<Dropout>(config.dropout));
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  Tensor no_keys, no_values;
  return forward(x, no_keys, no_values);
}

Tensor CausalSelfAttention::forward(const Tensor& x, Tensor& keys, Tensor& values) {
  const std::int64_t batch = x.size(0), time = x.size(1), channels = x.size(2);
  const std::int64_t head_size = channels / n_head_;
  Tensor qkv = c_attn->forward(x);  // [B, T, 3C]
  // Each of q, k, v is a view of qkv, split into heads and moved to [B, Hd, T, head_size]:
  // no copy until the attention's matmuls read them.
  auto heads = [&](std::int64_t which) {
    return qkv.narrow(2, which * n_embd_, n_embd_).view({batch, time, n_head_, head_size}).transpose(1, 2);
  };
  Tensor q = heads(0), k = heads(1), v = heads(2);
  const std::int64_t cached = keys.defined() ? keys.size(2) : 0;
  if (cached > 0) {
    k = ember::cat({keys, k}, 2);
    v = ember::cat({values, v}, 2);
  }
  keys = k;  // the cache now holds every position so far
  values = v;
  const double dropout = is_training() ? dropout_ : 0.0;
  Tensor y;
  if (cached == 0) {
    y = functional::scaled_dot_product_attention(q, k, v, Tensor(), dropout, /*is_causal=*/true);
  } else if (time == 1) {  // the one new position sees every cached one: no mask
    y = functional::scaled_dot_product_attention(q, k, v, Tensor(), dropout, /*is_causal=*/false);
  } else {
    // New position i (absolute cached + i) sees keys 0 .. cached + i: is_causal's mask is
    // aligned top-left (query i sees keys 0..i), so the bottom-right one is spelled out.
    Tensor visible = ember::tril(ember::ones({time, cached + time}, TensorOptions().dtype(kBool).device(x.device())),
                                 cached);
    y = functional::scaled_dot_product_attention(q, k, v, visible, dropout, /*is_causal=*/false);
  }
  // [B, Hd, T, head_size] -> [B, T, Hd, head_size] -> [B, T, C]: the heads side by side again.
  y = y.transpose(1, 2).contiguous().view({batch, time, channels});
  return resid_dropout->forward(c_proj->forward(y));
}

// ------------------------------------------------------------------ MLP and block

MLP::MLP(const GPTConfig& config) {
  c_fc = register_module("c_fc", std::make_shared<Linear>(config.n_embd, 4 * config.n_embd, config.bias));
  gelu = register_module("gelu", std::make_shared<GELU>());
  c_proj = register_module("c_proj", std::make_shared<Linear>(4 * config.n_embd, config.n_embd, config.bias));
  dropout = register_module("dropout", std::make_shared<Dropout>(config.dropout));
}

Tensor MLP::forward(const Tensor& x) {
  return dropout->forward(c_proj->forward(gelu->forward(c_fc->forward(x))));
}

namespace {
std::shared_ptr<LayerNorm> layer_norm(const GPTConfig& config) {
  return std::make_shared<LayerNorm>(LayerNormOptions(config.n_embd).bias(config.bias));
}
}  // namespace

Block::Block(const GPTConfig& config) {
  ln_1 = register_module("ln_1", layer_norm(config));
  attn = register_module("attn", std::make_shared<CausalSelfAttention>(config));
  ln_2 = register_module("ln_2", layer_norm(config));
  mlp = register_module("mlp", std::make_shared<MLP>(config));
}

Tensor Block::forward(const Tensor& x) {
  Tensor residual = x + attn->forward(ln_1->forward(x));
  return residual + mlp->forward(ln_2->forward(residual));
}

Tensor Block::forward(const Tensor& x, Tensor& keys, Tensor& values) {
  Tensor residual = x + attn->forward(ln_1->forward(x), keys, values);
  return residual + mlp->forward(ln_2->forward(residual));
}

GPTTransformer::GPTTransformer(const GPTConfig& config) {
  wte = register_module("wte", std::make_shared<Embedding>(config.vocab_size, config.n_embd));
  wpe = register_module("wpe", std::make_shared<Embedding>(config.block_size, config.n_embd));
  drop = register_module("drop", std::make_shared<Dropout>(config.dropout));
  h = register_module("h", std::make_shared<ModuleList>());
  for (std::int64_t layer = 0; layer < config.n_layer; ++layer) h->push_back(std::make_shared<Block>(config));
  ln_f = register_module("ln_f", layer_norm(config));
}

// ------------------------------------------------------------------ the model

namespace {
// nanoGPT's _init_weights, applied post-order (Module::apply).
void init_weights(Module& module) {
  if (auto* linear = dynamic_cast<Linear*>(&module)) {
    init::normal_(linear->weight, 0.0, 0.02);
    if (linear->bias.defined()) init::zeros_(linear->bias);
  } else if (auto* embedding = dynamic_cast<Embedding*>(&module)) {
    init::normal_(embedding->weight, 0.0, 0.02);
  }
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

GPT::GPT(const GPTConfig& config) : config_(config) {
  check_gpt_config(config);
  transformer = register_module("transformer", std::make_shared<GPTTransformer>(config));
  lm_head = register_module("lm_head", std::make_shared<Linear>(config.n_embd, config.vocab_size, /*bias=*/false));
  // Weight tying: the output projection and the token embedding are one matrix [V, C].
  // Re-registering "weight" on wte replaces its parameter in place (nanoGPT assigns
  // transformer.wte.weight = lm_head.weight), so wte's draw above is discarded.
  transformer->wte->weight = transformer->wte->register_parameter("weight", lm_head->weight);

  apply(init_weights);
  const double projection_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config.n_layer));
  for (auto& [name, parameter] : named_parameters())
    if (ends_with(name, "c_proj.weight")) init::normal_(parameter, 0.0, projection_std);
}

Tensor GPT::forward(const Tensor& idx) {
  KVCache none;
  return forward(idx, none, /*use_cache=*/false);
}

Tensor GPT::forward(const Tensor& idx, KVCache& cache) { return forward(idx, cache, /*use_cache=*/true); }

Tensor GPT::forward(const Tensor& idx, KVCache& cache, bool use_cache) {
  EMBER_CHECK(idx.dim() == 2, ValueError, "GPT expects token ids of shape [batch, time], got ", idx.dim(),
              " dimensions");
  const std::int64_t time = idx.size(1), start = cache.length;
  EMBER_CHECK(start + time <= config_.block_size, ValueError, "Cannot forward sequence of length ", start + time,
              ", block size is only ", config_.block_size);
  const std::size_t layers = transformer->h->size();
  EMBER_CHECK(!use_cache || start == 0 || cache.keys.size() == layers, ValueError, "the KV cache holds ",
              cache.keys.size(), " layers; this GPT has ", layers);
  Tensor positions = arange(start, start + time, 1, TensorOptions().dtype(kLong).device(idx.device()));
  // [B, T, C] + [T, C]: every sequence in the batch gets the same position embeddings.
  Tensor x = transformer->drop->forward(transformer->wte->forward(idx) + transformer->wpe->forward(positions));
  if (use_cache) {
    cache.keys.resize(layers);
    cache.values.resize(layers);
  }
  for (std::size_t layer = 0; layer < layers; ++layer) {
    std::shared_ptr<Module> block = (*transformer->h)[static_cast<std::int64_t>(layer)];
    x = use_cache ? std::static_pointer_cast<Block>(block)->forward(x, cache.keys[layer], cache.values[layer])
                  : block->forward(x);
  }
  if (use_cache) cache.length = start + time;
  return lm_head->forward(transformer->ln_f->forward(x));
}

Tensor GPT::loss(const Tensor& logits, const Tensor& targets) {
  const std::int64_t vocab = logits.size(-1);
  return functional::cross_entropy(logits.reshape({-1, vocab}), targets.reshape({-1}), Reduction::Mean,
                                   /*ignore_index=*/-1);
}

std::int64_t GPT::num_parameters(bool non_embedding) const {
  std::int64_t count = 0;
  for (const auto& parameter : parameters()) count += parameter.numel();
  if (non_embedding) count -= transformer->wpe->weight.numel();
  return count;
}

}  // namespace ember::nn
