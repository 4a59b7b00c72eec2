// tests/fuzz/checkpoint_fuzzer.cpp — libFuzzer harness for the `ember` CLI's checkpoint
// reader (apps/cli/checkpoint.cpp, compiled into this harness because it lives only in the
// CLI executable): the metadata that `ember eval`, `predict` and `train --resume` parse.
// The safetensors framing around it has its own harness (safetensors_fuzzer.cpp), so here the
// input is the metadata values, separated by NUL bytes:
//   CONFIG-JSON [\0 EPOCH [\0 STEP [\0 GENERATOR-HEX [\0 FORMAT]]]]
// missing fields take a valid value. The harness frames them around a small model's
// tensors (ember::save_to_bytes) and loads the file with load_checkpoint.
//
// Contract: load_checkpoint loads or throws ember::IOError; what loads is self-consistent:
// saving it (save_checkpoint) and loading it back gives the same fields. When the loaded
// model is small (every width in [-64, 64]: the size checks for huge widths are tested in
// core), building it (build_model) and checking the file's tensors against it
// (check_state_fits), as `ember eval` does, load or throw an ember::Error.
#include <cstdint>
#include <string>
#include <vector>

#include <ember/core/factories.h>
#include <ember/nn/serialize.h>

#include "checkpoint.h"
#include "fuzz_support.h"
#include "model.h"

using ember::fuzz::finding;

namespace {

std::vector<std::string> split_fields(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> fields(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && fields.size() < 5) {
      fields.emplace_back();
    } else {
      fields.back().push_back(static_cast<char>(data[i]));
    }
  }
  return fields;
}

bool same(const ember::cli::Checkpoint& a, const ember::cli::Checkpoint& b) {
  const auto& x = a.train;
  const auto& y = b.train;
  return a.model.in_features == b.model.in_features && a.model.hidden == b.model.hidden &&
         a.model.num_classes == b.model.num_classes && a.model.dropout == b.model.dropout &&
         a.data_spec == b.data_spec && a.class_names == b.class_names && a.epoch == b.epoch && a.step == b.step &&
         a.generator_state == b.generator_state && x.epochs == y.epochs && x.batch_size == y.batch_size &&
         x.hyperparameters.lr == y.hyperparameters.lr && x.hyperparameters.momentum == y.hyperparameters.momentum &&
         x.hyperparameters.weight_decay == y.hyperparameters.weight_decay &&
         x.hyperparameters.nesterov == y.hyperparameters.nesterov &&
         x.optimizer == y.optimizer && x.seed == y.seed && x.drop_last == y.drop_last && x.val_split == y.val_split &&
         x.workers == y.workers && x.data.csv_label_column == y.data.csv_label_column &&
         x.data.csv_header == y.data.csv_header && a.model_state.size() == b.model_state.size() &&
         a.optimizer_state.size() == b.optimizer_state.size();
}

bool small_model(const ember::cli::ModelConfig& model) {
  auto small = [](std::int64_t width) { return width >= -64 && width <= 64; };
  if (model.hidden.size() > 4 || !small(model.in_features) || !small(model.num_classes)) return false;
  for (std::int64_t width : model.hidden)
    if (!small(width)) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ember::fuzz::ScratchFile file("checkpoint.safetensors"), again_file("checkpoint-again.safetensors");
  static const ember::nn::StateDict tensors = [] {
    ember::nn::StateDict state;
    state.insert("model.0.weight", ember::zeros({3, 2}));
    state.insert("model.0.bias", ember::zeros({3}));
    state.insert("model.2.weight", ember::zeros({2, 3}));
    state.insert("model.2.bias", ember::zeros({2}));
    state.insert("optimizer.state.0.momentum_buffer", ember::zeros({3, 2}));
    return state;
  }();

  std::vector<std::string> fields = split_fields(data, size);
  const char* defaults[] = {"", "1", "10", "00ff", "ember-cli-checkpoint/1"};
  for (std::size_t i = fields.size(); i < 5; ++i) fields.emplace_back(defaults[i]);
  ember::Metadata metadata = {
      {"config", fields[0]}, {"epoch", fields[1]}, {"step", fields[2]}, {"generator", fields[3]}, {"format", fields[4]}};
  try {
    file.write(ember::save_to_bytes(tensors, metadata));  // what ember::save writes, without its fsync
  } catch (const ember::ValueError&) {
    return 0;  // metadata no file can hold (not UTF-8): ember::save refuses it
  } catch (...) {
    ember::fuzz::unexpected_exception();
  }

  ember::cli::Checkpoint loaded;
  try {
    loaded = ember::cli::load_checkpoint(file.path());
  } catch (const ember::IOError&) {
    return 0;
  } catch (...) {
    ember::fuzz::unexpected_exception();
  }

  try {
    ember::cli::save_checkpoint(loaded, again_file.path());
    if (!same(loaded, ember::cli::load_checkpoint(again_file.path())))
      finding("a loaded checkpoint saved and loaded back has other fields");
  } catch (const ember::Error& error) {
    finding(std::string("a loaded checkpoint does not save and load back: ") + error.what());
  } catch (...) {
    ember::fuzz::unexpected_exception();
  }

  if (!small_model(loaded.model)) return 0;
  try {
    auto model = ember::cli::build_model(loaded.model);
    ember::cli::check_state_fits(loaded.model_state, *model);
  } catch (const ember::Error&) {
  } catch (...) {
    ember::fuzz::unexpected_exception();
  }
  return 0;
}
