// apps/cli/gpt_checkpoint.cpp — reading and writing `ember train --model gpt`'s checkpoint
// (see gpt_checkpoint.h for the layout and the checks).
#include "gpt_checkpoint.h"

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>
#include <ember/nn/serialize.h>

#include "checkpoint.h"
#include "metadata_text.h"

namespace ember::cli {

namespace {

nn::StateDict prefixed(const nn::StateDict& part, const std::string& prefix, nn::StateDict into = {}) {
  for (const auto& [name, tensor] : part) into.insert(prefix + name, tensor);
  return into;
}

// More ranks than any job ember-run starts: a larger "world_size" is a damaged file.
constexpr std::int64_t kMaxWorldSize = 1 << 16;

std::int64_t whole_number(const std::string& text, const std::string& path, const char* what) {
  std::int64_t value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  EMBER_CHECK(error == std::errc() && end == text.data() + text.size() && value >= 0, IOError, path,
              ": the checkpoint's ", what, " \"", text, "\" is not a non-negative whole number");
  return value;
}

}  // namespace

void save_gpt_checkpoint(const GptCheckpoint& checkpoint, const std::string& path) {
  nn::StateDict tensors = prefixed(checkpoint.model_state, "model.");
  tensors = prefixed(checkpoint.optimizer_state, "optimizer.", std::move(tensors));
  tensors = prefixed(checkpoint.scheduler_state, "scheduler.", std::move(tensors));
  tensors = prefixed(checkpoint.grad_scaler_state, "grad_scaler.", std::move(tensors));
  const nn::GPTConfig& c = checkpoint.config;
  nlohmann::json config = {{"model", "gpt"},
                           {"vocabulary", data::encode_utf8(checkpoint.vocabulary.characters())},
                           {"vocab_size", c.vocab_size},
                           {"block_size", c.block_size},
                           {"n_layer", c.n_layer},
                           {"n_head", c.n_head},
                           {"n_embd", c.n_embd},
                           {"dropout", c.dropout},
                           {"bias", c.bias},
                           {"data", checkpoint.data_spec}};
  EMBER_CHECK(!checkpoint.generator_states.empty(), ValueError, "a GPT checkpoint needs a generator state");
  Metadata metadata{{"format", kGptCheckpointFormat},
                    {"step", std::to_string(checkpoint.step)},
                    {"generator", to_hex(checkpoint.generator_states[0])},
                    {"config", config.dump()},
                    {"train_config", checkpoint.train_config}};
  if (checkpoint.generator_states.size() > 1) {
    metadata["world_size"] = std::to_string(checkpoint.generator_states.size());
    for (std::size_t rank = 1; rank < checkpoint.generator_states.size(); ++rank)
      metadata["generator.rank" + std::to_string(rank)] = to_hex(checkpoint.generator_states[rank]);
  }
  save(tensors, path, metadata);
}

bool is_gpt_checkpoint(const std::string& path) {
  Metadata metadata;
  load(path, &metadata);
  auto format = metadata.find("format");
  return format != metadata.end() && format->second == kGptCheckpointFormat;
}

GptCheckpoint load_gpt_checkpoint(const std::string& path) {
  Metadata metadata;
  nn::StateDict tensors = load(path, &metadata);
  auto field = [&](const std::string& key) -> const std::string& {
    auto found = metadata.find(key);
    EMBER_CHECK(found != metadata.end(), IOError, path, ": not a GPT checkpoint of ember train (no \"", key,
                "\" in its metadata)");
    return found->second;
  };
  EMBER_CHECK(field("format") == kGptCheckpointFormat, IOError, path, ": its format is \"", field("format"),
              "\", not a GPT checkpoint (", kGptCheckpointFormat, ") of ember train --model gpt");
  GptCheckpoint checkpoint;
  checkpoint.step = whole_number(field("step"), path, "step");
  checkpoint.generator_states.push_back(from_hex(field("generator"), path, "generator state"));
  if (metadata.count("world_size") != 0) {
    const std::int64_t world_size = whole_number(field("world_size"), path, "world_size");
    EMBER_CHECK(world_size >= 1 && world_size <= kMaxWorldSize, IOError, path, ": its world_size ", world_size,
                " is not between 1 and ", kMaxWorldSize);
    for (std::int64_t rank = 1; rank < world_size; ++rank) {
      const std::string key = "generator.rank" + std::to_string(rank);
      checkpoint.generator_states.push_back(from_hex(field(key), path, "rank " + std::to_string(rank) + "'s generator state"));
    }
  }
  if (auto found = metadata.find("train_config"); found != metadata.end()) checkpoint.train_config = found->second;

  const nlohmann::json config = nlohmann::json::parse(field("config"), nullptr, /*allow_exceptions=*/false);
  EMBER_CHECK(config.is_object(), IOError, path, ": its \"config\" metadata is not a JSON object");
  auto integer = [&](const char* key) {
    auto value = config.find(key);
    EMBER_CHECK(value != config.end() && value->is_number_integer(), IOError, path, ": its config has no whole number \"",
                key, "\"");
    return value->get<std::int64_t>();
  };
  nn::GPTConfig& c = checkpoint.config;
  c.vocab_size = integer("vocab_size");
  c.block_size = integer("block_size");
  c.n_layer = integer("n_layer");
  c.n_head = integer("n_head");
  c.n_embd = integer("n_embd");
  auto dropout = config.find("dropout");
  auto bias = config.find("bias");
  auto vocabulary = config.find("vocabulary");
  auto data = config.find("data");
  EMBER_CHECK(dropout != config.end() && dropout->is_number() && bias != config.end() && bias->is_boolean() &&
                  vocabulary != config.end() && vocabulary->is_string() && data != config.end() && data->is_string(),
              IOError, path, ": its config lacks dropout, bias, vocabulary or data");
  c.dropout = dropout->get<double>();
  c.bias = bias->get<bool>();
  checkpoint.data_spec = data->get<std::string>();
  try {
    nn::check_gpt_config(c);
    checkpoint.vocabulary = data::CharVocabulary::from_characters(
        data::decode_utf8(vocabulary->get<std::string>(), path + " (its vocabulary)"));
  } catch (const Error& error) {
    throw IOError(make_message(path, ": ", error.what()));
  }
  EMBER_CHECK(checkpoint.vocabulary.size() == c.vocab_size, IOError, path, ": its vocabulary has ",
              checkpoint.vocabulary.size(), " characters for vocab_size ", c.vocab_size);
  checkpoint.model_state = with_prefix_removed(tensors, "model.");
  checkpoint.optimizer_state = with_prefix_removed(tensors, "optimizer.");
  checkpoint.scheduler_state = with_prefix_removed(tensors, "scheduler.");
  checkpoint.grad_scaler_state = with_prefix_removed(tensors, "grad_scaler.");
  return checkpoint;
}

std::shared_ptr<nn::GPT> build_gpt(const GptCheckpoint& checkpoint) {
  // The parameters the config implies, counted before anything is allocated: a crafted
  // config with huge dimensions is refused here, not by running out of memory.
  const nn::GPTConfig& c = checkpoint.config;
  const long double width = static_cast<long double>(c.n_embd);
  const long double parameters = static_cast<long double>(c.vocab_size + c.block_size) * width +
                                 static_cast<long double>(c.n_layer) * 12 * width * width;
  long double stored = 0;
  for (const auto& [name, tensor] : checkpoint.model_state) stored += static_cast<long double>(tensor.numel());
  EMBER_CHECK(parameters <= stored + 1, IOError, "the checkpoint's config (", c.n_layer, " layers, width ", c.n_embd,
              ", vocabulary ", c.vocab_size, ", context ", c.block_size, ") does not match its ",
              static_cast<long long>(stored), " stored weights");
  auto model = std::make_shared<nn::GPT>(c);
  try {
    model->load_state_dict(checkpoint.model_state);
  } catch (const Error& error) {
    throw IOError(make_message("the checkpoint's weights do not fit its GPT config: ", error.what()));
  }
  return model;
}

}  // namespace ember::cli
