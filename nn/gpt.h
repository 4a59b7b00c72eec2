// nn/gpt.h — nn::GPT: a decoder-only transformer (GPT-2's architecture), the model of issue 21.
//
// Its structure, parameter names and initialisation are nanoGPT's model.py (the facts, not its
// code), so a PyTorch program of the same structure (tests/reference/gpt_model.py) seeded the
// same way holds the same weights, bit for bit, and computes the same losses:
//
//   idx [B, T] (token ids)
//     x = drop(wte(idx) + wpe(arange(T)))                 token + position embeddings [B, T, C]
//     L times (Block):
//       x = x + attn(ln_1(x))                             causal self-attention (below)
//       x = x + mlp(ln_2(x))                              c_fc [C -> 4C], GELU, c_proj [4C -> C]
//     logits = lm_head(ln_f(x))                           [B, T, V]; lm_head.weight IS wte.weight
//
//   attn(x): q, k, v = split(c_attn(x), C)                each [B, T, C] -> heads [B, Hd, T, C/Hd]
//            y = scaled_dot_product_attention(q, k, v, is_causal = true)   (softmax(q·kᵀ/√d)·v,
//                position t sees positions ≤ t only)
//            c_proj(y merged back to [B, T, C])
//
// Initialisation, in nanoGPT's order (each step consumes the default generator):
//   1. every module's PyTorch default init in construction order (wte, wpe, then per block
//      c_attn, c_proj, c_fc, c_proj, then lm_head); lm_head's weight then replaces wte's (tied);
//   2. apply(init_weights), post-order: Linear weight ~ N(0, 0.02), bias = 0; Embedding
//      weight ~ N(0, 0.02) (the tied matrix is drawn twice: as wte and as lm_head);
//   3. every *c_proj.weight redrawn ~ N(0, 0.02/√(2L)) in named_parameters order (GPT-2's
//      scaling of the residual projections).
// named_parameters() lists the tied matrix once, as transformer.wte.weight; state_dict() has
// both transformer.wte.weight and lm_head.weight, as PyTorch's does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ember/nn/dropout.h>
#include <ember/nn/embedding.h>
#include <ember/nn/layer_norm.h>
#include <ember/nn/linear.h>
#include <ember/core/random.h>
#include <ember/nn/activation.h>
#include <ember/nn/module.h>
#include <ember/nn/module_list.h>

namespace ember::nn {

// What every layer's attention computed for the positions seen so far: the keys and values
// of those positions (nanoGPT recomputes them for every new token; a KV cache keeps them),
// so generation runs the model on one new position per step. GPT::forward(idx, cache) fills
// and extends it; `length` positions are held, at most block_size.
struct KVCache {
  std::vector<Tensor> keys, values;  // one per layer: [B, n_head, length, head_size]
  std::int64_t length = 0;
  void clear() {
    keys.clear();
    values.clear();
    length = 0;
  }
};

struct GPTConfig {
  std::int64_t vocab_size = 0;   // V: the number of distinct tokens
  std::int64_t block_size = 64;  // T: the longest context the model sees (wpe's rows)
  std::int64_t n_layer = 2;      // L: transformer blocks
  std::int64_t n_head = 4;       // Hd: attention heads; n_embd must be a multiple of it
  std::int64_t n_embd = 128;     // C: the width of the residual stream
  double dropout = 0.0;          // on embeddings, attention weights and residual branches
  bool bias = true;              // biases in the Linear and LayerNorm layers
};

// Causal multi-head self-attention: one Linear makes q, k and v for every head at once.
class CausalSelfAttention : public Module {
 public:
  explicit CausalSelfAttention(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;  // x [B, T, C] -> [B, T, C]
  // x holds the positions after the `keys.size(2)` cached ones (keys/values undefined: none);
  // their keys and values are appended to `keys`/`values`, and each new position attends to
  // every cached one and to the new ones up to itself.
  Tensor forward(const Tensor& x, Tensor& keys, Tensor& values);

  std::shared_ptr<Linear> c_attn;  // C -> 3C: q, k, v side by side
  std::shared_ptr<Linear> c_proj;  // C -> C: the heads' outputs mixed
  std::shared_ptr<Dropout> attn_dropout, resid_dropout;

 private:
  std::int64_t n_head_, n_embd_;
  double dropout_;
};

// The feed-forward half of a block: Linear(C, 4C), GELU (exact), Linear(4C, C), Dropout.
class MLP : public Module {
 public:
  explicit MLP(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<Linear> c_fc, c_proj;
  std::shared_ptr<GELU> gelu;
  std::shared_ptr<Dropout> dropout;
};

// One transformer block, pre-norm: x + attn(ln_1(x)), then + mlp(ln_2(x)).
class Block : public Module {
 public:
  explicit Block(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;
  Tensor forward(const Tensor& x, Tensor& keys, Tensor& values);  // with a KV cache (above)

  std::shared_ptr<LayerNorm> ln_1, ln_2;
  std::shared_ptr<CausalSelfAttention> attn;
  std::shared_ptr<MLP> mlp;
};

// The embeddings, blocks and final norm, named as nanoGPT's `transformer` ModuleDict.
class GPTTransformer : public Module {
 public:
  explicit GPTTransformer(const GPTConfig& config);
  std::string name() const override { return "ModuleDict"; }

  std::shared_ptr<Embedding> wte, wpe;
  std::shared_ptr<Dropout> drop;
  std::shared_ptr<ModuleList> h;
  std::shared_ptr<LayerNorm> ln_f;
};

class GPT : public Module {
 public:
  // ValueError for a config that cannot be built (vocab_size < 1, n_embd % n_head != 0, ...).
  explicit GPT(const GPTConfig& config);

  // idx [B, T] int64 token ids, T <= block_size -> logits [B, T, V].
  Tensor forward(const Tensor& idx) override;
  // The same for positions cache.length .. cache.length + T - 1, extending the cache:
  // forward(idx) equals forward(idx[:, :s], cache) followed by forward(idx[:, s:], cache)
  // (up to rounding; tests/nn/test_gpt.cpp). cache.length + T <= block_size.
  Tensor forward(const Tensor& idx, KVCache& cache);
  // Mean cross-entropy of logits [B, T, V] against targets [B, T] (ids; -1 is ignored).
  static Tensor loss(const Tensor& logits, const Tensor& targets);

  // Parameters counted once (the tied matrix once); non_embedding leaves out wpe's, as
  // nanoGPT's get_num_params reports.
  std::int64_t num_parameters(bool non_embedding = true) const;

  const GPTConfig& config() const { return config_; }

  std::shared_ptr<GPTTransformer> transformer;
  std::shared_ptr<Linear> lm_head;  // C -> V, no bias; its weight is transformer->wte->weight

 private:
  Tensor forward(const Tensor& idx, KVCache& cache, bool use_cache);

  GPTConfig config_;
};

// Text from a model: nanoGPT's generate (nn/gpt_generate.cpp). Each of max_new_tokens steps
// takes the last block_size tokens as context, divides the last position's logits by the
// temperature, keeps the top_k likeliest (the rest -inf), and draws the next token with
// multinomial(softmax(logits), 1) from `generator` (the default one when null), as PyTorch
// does; with use_cache the model runs on one new position per step (a KVCache), which gives
// the same tokens as recomputing the context (up to rounding).
struct GenerateOptions {
  std::int64_t max_new_tokens = 100;
  double temperature = 1.0;              // > 0; below 1 sharper, above 1 flatter
  std::optional<std::int64_t> top_k;     // none: every token may be drawn
  bool use_cache = true;
};
// prompt [B, t] int64 ids, t >= 1 -> [B, t + max_new_tokens]. Runs without recording a graph.
Tensor generate(GPT& model, const Tensor& prompt, const GenerateOptions& options = {},
                Generator* generator = nullptr);

// The checks GPT's constructor makes, for callers that want them before building anything
// (the CLI's flags): ValueError naming every problem.
void check_gpt_config(const GPTConfig& config);

}  // namespace ember::nn
