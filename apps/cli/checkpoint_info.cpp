// apps/cli/checkpoint_info.cpp — `ember info --checkpoint C [--print-config]`: what a
// checkpoint holds, without data or a device.
//
// Plain: the model (as PyTorch's print(model) shows it), where the run stood and the data it
// was trained on. --print-config: only the run's options as a --config file (config_file.h),
// the JSON `ember train` kept in the checkpoint, so
//   ember info --checkpoint C --print-config > run.json && ember train --config run.json
// trains with the options C was trained with. A GPT's checkpoint (--model gpt) is described
// the same way: its shape, steps, text and repr.
#include <iostream>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>

#include "checkpoint.h"
#include "datasets.h"
#include "gpt_checkpoint.h"
#include "model.h"
#include "options.h"

namespace ember::cli {

namespace {

// --print-config: the options the run was trained with, as a --config file.
int print_train_config(const std::string& path, const std::string& config_json) {
  EMBER_CHECK(!config_json.empty(), IOError, path,
              ": the checkpoint has no \"train_config\" (it was written before ember train recorded its options)");
  nlohmann::ordered_json config;
  try {
    config = nlohmann::ordered_json::parse(config_json);
  } catch (const nlohmann::json::exception& error) {
    throw IOError(path + ": the checkpoint's train_config metadata is damaged (" + error.what() + ")");
  }
  EMBER_CHECK(config.is_object(), IOError, path, ": the checkpoint's train_config metadata is not a JSON object");
  std::cout << config.dump(2) << "\n";
  return 0;
}

// A checkpoint of `ember train --model gpt` (gpt_checkpoint.h).
int gpt_checkpoint_info(const InfoOptions& options) {
  const std::string& path = options.checkpoint_path;
  GptCheckpoint checkpoint = load_gpt_checkpoint(path);
  if (options.print_config) return print_train_config(path, checkpoint.train_config);
  std::shared_ptr<nn::GPT> model = build_gpt(checkpoint);
  const nn::GPTConfig& c = checkpoint.config;
  std::cout << "checkpoint: " << path << "\n"
            << "model:      GPT, " << model->num_parameters(false) << " parameters (" << c.n_layer << (c.n_layer == 1 ? " layer, " : " layers, ")
            << c.n_head << (c.n_head == 1 ? " head, width " : " heads, width ") << c.n_embd << ", context " << c.block_size << ", vocabulary "
            << c.vocab_size << " characters)\n"
            << "trained:    " << checkpoint.step << " steps, on " << checkpoint.data_spec << "\n"
            << model->repr() << "\n";
  return 0;
}

}  // namespace

int run_checkpoint_info(const InfoOptions& options) {
  const std::string& path = options.checkpoint_path;
  if (is_gpt_checkpoint(path)) return gpt_checkpoint_info(options);
  Checkpoint checkpoint = load_checkpoint(path);  // config checked against its tensors
  if (options.print_config) return print_train_config(path, checkpoint.train.config_json);
  std::shared_ptr<nn::Sequential> model = build_model(checkpoint.model);
  std::cout << "checkpoint: " << path << "\n"
            << "model:      " << describe_model(checkpoint.model) << ", " << nn::count_parameters(*model)
            << " parameters\n"
            << "trained:    " << checkpoint.epoch << " of " << checkpoint.train.epochs << " epochs, "
            << checkpoint.step << " steps, on " << checkpoint.data_spec << " (input scale "
            << describe_input_scale(checkpoint.input_scale) << ", " << checkpoint.model.num_classes << " classes)\n"
            << model->repr() << "\n";
  return 0;
}

}  // namespace ember::cli
