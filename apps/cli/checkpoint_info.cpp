// apps/cli/checkpoint_info.cpp — `ember info --checkpoint C [--print-config]`: what a
// checkpoint holds, without data or a device.
//
// Plain: the model (as PyTorch's print(model) shows it), where the run stood and the data it
// was trained on. --print-config: only the run's options as a --config file (config_file.h),
// the JSON `ember train` kept in the checkpoint, so
//   ember info --checkpoint C --print-config > run.json && ember train --config run.json
// trains with the options C was trained with.
#include <iostream>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>

#include "checkpoint.h"
#include "datasets.h"
#include "model.h"
#include "options.h"

namespace ember::cli {

int run_checkpoint_info(const InfoOptions& options) {
  const std::string& path = options.checkpoint_path;
  Checkpoint checkpoint = load_checkpoint(path);  // config checked against its tensors
  if (options.print_config) {
    EMBER_CHECK(!checkpoint.train.config_json.empty(), IOError, path,
                ": the checkpoint has no \"train_config\" (it was written before ember train recorded its options)");
    nlohmann::ordered_json config;
    try {
      config = nlohmann::ordered_json::parse(checkpoint.train.config_json);
    } catch (const nlohmann::json::exception& error) {
      throw IOError(path + ": the checkpoint's train_config metadata is damaged (" + error.what() + ")");
    }
    EMBER_CHECK(config.is_object(), IOError, path, ": the checkpoint's train_config metadata is not a JSON object");
    std::cout << config.dump(2) << "\n";
    return 0;
  }
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
