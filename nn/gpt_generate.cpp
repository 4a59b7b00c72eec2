// nn/gpt_generate.cpp — nn::generate: text from a GPT, one token at a time (see gpt.h).
//
// nanoGPT's generate loop, step by step:
//   context = the last block_size tokens
//   logits  = model(context)[:, -1, :] / temperature      the next token's scores
//   top_k:    scores below the k-th largest become -inf      (only the k likeliest survive)
//   probs   = softmax(logits)
//   next    = multinomial(probs, 1)                         the default generator, as PyTorch
//   tokens  = cat(tokens, next)
// With a KV cache (the default) the model runs on the prompt once and then on one new
// position per step; its keys and values for the earlier positions are kept. Once the text
// is longer than block_size, the context window slides: every position's embedding changes
// (it is position 0..T-1 of the new window), so the cache is rebuilt from the window each
// step, which is exactly what recomputing does.
#include <ember/nn/gpt.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/error.h>
#include <ember/core/sampling.h>
#include <ember/core/shape.h>

namespace ember::nn {

Tensor generate(GPT& model, const Tensor& prompt, const GenerateOptions& options, Generator* generator) {
  EMBER_CHECK(prompt.dim() == 2 && prompt.size(1) >= 1, ValueError,
              "generate expects a prompt of token ids [batch, time] with time >= 1, got ", shape_to_string(prompt.sizes()));
  EMBER_CHECK(options.temperature > 0.0 && std::isfinite(options.temperature), ValueError,
              "temperature must be positive and finite, got ", options.temperature);
  EMBER_CHECK(!options.top_k || *options.top_k >= 1, ValueError, "top_k must be at least 1, got ",
              options.top_k.value_or(0));
  NoGradGuard no_grad;
  const std::int64_t block_size = model.config().block_size;
  Tensor tokens = prompt;
  KVCache cache;
  Tensor fed;  // the tokens the next forward runs on
  for (std::int64_t step = 0; step < options.max_new_tokens; ++step) {
    const std::int64_t length = tokens.size(1);
    Tensor logits;
    if (options.use_cache && cache.length > 0 && length <= block_size) {
      logits = model.forward(tokens.narrow(1, length - 1, 1), cache);  // only the newest token
    } else {
      const std::int64_t window = std::min(length, block_size);
      Tensor context = tokens.narrow(1, length - window, window);
      cache.clear();
      logits = options.use_cache ? model.forward(context, cache) : model.forward(context);
    }
    logits = logits.select(1, logits.size(1) - 1) / options.temperature;  // [B, V]
    if (options.top_k) {
      const std::int64_t k = std::min(*options.top_k, logits.size(-1));
      Tensor kth = std::get<0>(ember::topk(logits, k)).narrow(1, k - 1, 1);  // [B, 1]
      logits = ember::masked_fill(logits, logits < kth, -std::numeric_limits<double>::infinity());
    }
    Tensor probs = ember::softmax(logits, -1);
    Tensor next = multinomial(probs, 1, /*replacement=*/false, generator);
    tokens = ember::cat({tokens, next}, 1);
  }
  return tokens;
}

}  // namespace ember::nn
