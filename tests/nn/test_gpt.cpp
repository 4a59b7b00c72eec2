// tests/nn/test_gpt.cpp — nn::GPT (issue 21) against the same model in PyTorch
// (tests/reference/gpt_model.py, values from gen_gpt.py): the initial weights bit for bit after
// manual_seed (the default init, apply(init_weights), the c_proj redraw, the tied matrix), the
// parameter and state_dict names, logits, loss and every gradient in float32 and float64, and a
// few AdamW training steps on batches drawn with randint from the default generator; plus the
// tied weight staying tied through to() and the config checks.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <ember/ember.h>
#include <ember/nn/gpt.h>

#include "nn_test_helpers.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::require_equal;
using ember::testing::tensor_from_json;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json ref = load_reference("gpt.json");
  return ref;
}

nn::GPTConfig config_of(const nlohmann::json& c) {
  nn::GPTConfig config;
  config.vocab_size = c["vocab_size"];
  config.block_size = c["block_size"];
  config.n_layer = c["n_layer"];
  config.n_head = c["n_head"];
  config.n_embd = c["n_embd"];
  config.dropout = c["dropout"];
  config.bias = c["bias"];
  return config;
}

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> names;
  for (const auto& item : named) names.push_back(item.first);
  return names;
}

// nanoGPT's get_batch: B random windows of `data`, inputs and the targets one token later.
std::pair<Tensor, Tensor> get_batch(const Tensor& data, std::int64_t time, std::int64_t batch) {
  Tensor starts = randint(0, data.size(0) - time, {batch});
  std::vector<Tensor> inputs, targets;
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t start = starts[b].item<std::int64_t>();
    inputs.push_back(data.narrow(0, start, time));
    targets.push_back(data.narrow(0, start + 1, time));
  }
  return {stack(inputs), stack(targets)};
}

}  // namespace

TEST_CASE("GPT's initial weights equal PyTorch's after manual_seed, names and tying included", "[nn][gpt]") {
  for (const auto& c : reference()["configs"]) {
    SECTION(c["name"].get<std::string>()) {
      manual_seed(c["seed"].get<std::uint64_t>());
      nn::GPT model(config_of(c));
      const auto named = model.named_parameters();
      REQUIRE(names_of(named) == c["parameter_names"].get<std::vector<std::string>>());
      std::vector<std::string> state_keys;
      for (const auto& [key, value] : model.state_dict()) state_keys.push_back(key);
      REQUIRE(state_keys == c["state_dict_keys"].get<std::vector<std::string>>());
      for (const auto& [name, parameter] : named) {
        INFO(name);
        require_equal(parameter, c["parameters"][name]);
      }
      REQUIRE(model.lm_head->weight.is_same(model.transformer->wte->weight));
    }
  }
}

TEST_CASE("GPT's logits, loss and gradients match PyTorch in float32 and float64", "[nn][gpt]") {
  for (const auto& c : reference()["configs"]) {
    SECTION(c["name"].get<std::string>()) {
      manual_seed(c["seed"].get<std::uint64_t>());
      nn::GPT model(config_of(c));
      model.eval();
      const Tensor idx = tensor_from_json(c["idx"]), targets = tensor_from_json(c["targets"]);
      Tensor logits = model.forward(idx);
      Tensor loss = nn::GPT::loss(logits, targets);
      loss.backward();
      require_close(logits, c["logits"], 1e-4, 1e-5);
      REQUIRE(loss.item<double>() == Approx(c["loss"].get<double>()).epsilon(1e-6));
      for (const auto& [name, parameter] : model.named_parameters()) {
        INFO(name);
        require_close(parameter.grad(), c["grads"][name], 1e-3, 1e-6);
      }

      model.zero_grad();
      model.to(kFloat64);
      REQUIRE(model.lm_head->weight.is_same(model.transformer->wte->weight));
      Tensor loss64 = nn::GPT::loss(model.forward(idx), targets);
      loss64.backward();
      REQUIRE(loss64.item<double>() == Approx(c["loss64"].get<double>()).epsilon(1e-12));
      for (const auto& [name, parameter] : model.named_parameters()) {
        INFO(name);
        require_close(parameter.grad(), c["grads64"][name], 1e-9, 1e-12);
      }
    }
  }
}

TEST_CASE("GPT rejects bad configs and inputs with clear errors", "[nn][gpt]") {
  nn::GPTConfig config;
  config.vocab_size = 0;
  config.n_embd = 10;
  config.n_head = 4;
  REQUIRE_THROWS_WITH(nn::GPT(config), Catch::Contains("vocab_size must be at least 1") &&
                                           Catch::Contains("n_embd (10) must be a multiple of n_head (4)"));
  config.vocab_size = 5;
  config.n_embd = 8;
  config.block_size = 4;
  config.n_layer = 1;
  nn::GPT model(config);
  REQUIRE_THROWS_WITH(model.forward(zeros({1, 5}, TensorOptions().dtype(kLong))),
                      "Cannot forward sequence of length 5, block size is only 4");
  REQUIRE_THROWS_AS(model.forward(zeros({5}, TensorOptions().dtype(kLong))), ValueError);
}

TEST_CASE("GPT counts the tied matrix once and nanoGPT's non-embedding parameters", "[nn][gpt]") {
  nn::GPTConfig config;
  config.vocab_size = 11;
  config.block_size = 8;
  config.n_layer = 2;
  config.n_head = 2;
  config.n_embd = 16;
  nn::GPT model(config);
  // Per block: 2 LayerNorms (2·16 each), c_attn 16·48 + 48, c_proj 16·16 + 16, c_fc 16·64 + 64,
  // c_proj 64·16 + 16; then ln_f 32, wte 11·16 (= lm_head), wpe 8·16.
  const std::int64_t block = 2 * 32 + (16 * 48 + 48) + (16 * 16 + 16) + (16 * 64 + 64) + (64 * 16 + 16);
  const std::int64_t total = 2 * block + 32 + 11 * 16 + 8 * 16;
  REQUIRE(model.num_parameters(false) == total);
  REQUIRE(model.num_parameters() == total - 8 * 16);
}

TEST_CASE("GPT trains as PyTorch does: randint batches, two AdamW groups, clipping", "[nn][gpt]") {
  for (const auto& c : reference()["configs"]) {
    SECTION(c["name"].get<std::string>()) {
      manual_seed(c["seed"].get<std::uint64_t>());
      nn::GPT model(config_of(c));
      model.train();
      std::vector<Tensor> decay, no_decay;
      for (const auto& [name, parameter] : model.named_parameters())
        (parameter.dim() >= 2 ? decay : no_decay).push_back(parameter);
      optim::AdamW optimizer({{.params = decay, .weight_decay = 0.1}, {.params = no_decay, .weight_decay = 0.0}},
                             {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.95});
      const Tensor data = tensor_from_json(c["data"]);
      const auto expected = c["step_losses"].get<std::vector<double>>();
      for (double expected_loss : expected) {
        auto [x, y] = get_batch(data, c["time"], c["batch"]);
        Tensor loss = nn::GPT::loss(model.forward(x), y);
        loss.backward();
        nn::utils::clip_grad_norm_(model.parameters(), 1.0);
        optimizer.step();
        optimizer.zero_grad();
        REQUIRE(loss.item<double>() == Approx(expected_loss).epsilon(1e-5));
      }
      for (const auto& [name, parameter] : model.named_parameters()) {
        INFO(name);
        // atol: both run a fused attention kernel (other tiles, other summation orders), and
        // AdamW's first steps move every weight by about lr whatever the gradient's size, so a
        // bias that stays near 0 can differ by ~1e-6 after a few steps (float32).
        require_close(parameter, c["trained_parameters"][name], 1e-4, 3e-6);
      }
    }
  }
}

TEST_CASE("GPT with a KV cache computes the logits of the whole context, in pieces", "[nn][gpt]") {
  for (const auto& c : reference()["configs"]) {
    SECTION(c["name"].get<std::string>()) {
      manual_seed(c["seed"].get<std::uint64_t>());
      nn::GPT model(config_of(c));
      model.eval();
      NoGradGuard no_grad;
      const Tensor idx = tensor_from_json(c["idx"]);
      const std::int64_t time = idx.size(1);
      REQUIRE(time >= 3);
      const Tensor whole = model.forward(idx);
      // A prefill of two positions, one single new position, then the rest at once (several
      // new positions after cached ones: the bottom-right causal mask).
      nn::KVCache cache;
      std::vector<Tensor> pieces;
      pieces.push_back(model.forward(idx.narrow(1, 0, 2), cache));
      REQUIRE(cache.length == 2);
      pieces.push_back(model.forward(idx.narrow(1, 2, 1), cache));
      pieces.push_back(model.forward(idx.narrow(1, 3, time - 3), cache));
      REQUIRE(cache.length == time);
      REQUIRE(cache.keys.size() == static_cast<std::size_t>(c["n_layer"].get<std::int64_t>()));
      REQUIRE(cache.keys[0].sizes() == std::vector<std::int64_t>{idx.size(0), c["n_head"].get<std::int64_t>(), time,
                                                                 c["n_embd"].get<std::int64_t>() / c["n_head"].get<std::int64_t>()});
      REQUIRE(cat(pieces, 1).allclose(whole, 1e-5, 1e-6));
      // The cache cannot hold more than block_size positions.
      const std::int64_t room = c["block_size"].get<std::int64_t>() - time;
      REQUIRE_THROWS_WITH(model.forward(zeros({idx.size(0), room + 1}, TensorOptions().dtype(kLong)), cache),
                          Catch::Contains("block size is only"));
    }
  }
}

TEST_CASE("nn::generate draws PyTorch's tokens: temperature, top-k, a sliding window, with and without the KV cache",
          "[nn][gpt]") {
  for (const auto& c : reference()["configs"]) {
    SECTION(c["name"].get<std::string>()) {
      nn::GPT model(config_of(c));
      {
        NoGradGuard no_grad;  // PyTorch's trained weights, so both sample from the same model
        for (auto [name, parameter] : model.named_parameters())
          parameter.copy_(tensor_from_json(c["trained_parameters"][name]));
      }
      model.eval();
      const std::int64_t block_size = c["block_size"];
      for (const auto& g : c["generated"]) {
        nn::GenerateOptions options;
        options.max_new_tokens = 2 * block_size + 3;  // past block_size: the window slides
        options.temperature = g["temperature"];
        if (!g["top_k"].is_null()) options.top_k = g["top_k"].get<std::int64_t>();
        const Tensor prompt = tensor_from_json(g["prompt"]);
        for (bool use_cache : {true, false}) {
          INFO("seed " << g["seed"] << (use_cache ? ", KV cache" : ", recomputed"));
          options.use_cache = use_cache;
          manual_seed(g["seed"].get<std::uint64_t>());
          const Tensor tokens = nn::generate(model, prompt, options);
          REQUIRE_FALSE(tokens.requires_grad());
          require_equal(tokens, g["tokens"]);
        }
      }
      nn::GenerateOptions bad;
      bad.temperature = 0;
      REQUIRE_THROWS_WITH(nn::generate(model, zeros({1, 1}, TensorOptions().dtype(kLong)), bad),
                          Catch::Contains("temperature must be positive"));
      REQUIRE_THROWS_WITH(nn::generate(model, zeros({1, 0}, TensorOptions().dtype(kLong))),
                          Catch::Contains("time >= 1"));
    }
  }
}
