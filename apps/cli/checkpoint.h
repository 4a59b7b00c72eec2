// apps/cli/checkpoint.h — what `ember train --save` writes and `--resume` / eval / predict read.
//
// One safetensors file (nn/serialize.h) holding everything needed to continue exactly:
//   tensors   "model.<name>"      the model's state_dict ("model.0.weight", ...)
//             "optimizer.<name>"  the optimizer's state_dict (momentum buffers, Adam moments)
//   __metadata__ (string -> string)
//             "format"            "ember-cli-checkpoint/1"
//             "epoch"             epochs completed
//             "step"              optimiser steps completed
//             "generator"         the default generator's state, hex-encoded: the shuffles
//                                 and dropout masks of later epochs depend on it
//             "config"            JSON: the model shape, data, class names, training flags
//                                 {"in_features", "hidden", "num_classes", "dropout", "data",
//                                  "class_names", "train": {"epochs", "batch_size", "lr",
//                                  "momentum", "weight_decay", "nesterov", "optimizer", "seed",
//                                  "drop_last", "val_split", "workers", "csv_label_column",
//                                  "csv_header"}}
// ember::save writes through a temporary file and a rename, so an interrupted write never
// leaves a half-written checkpoint in place of the last good one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ember/nn/module.h>

#include "model.h"
#include "options.h"

namespace ember::cli {

struct Checkpoint {
  ModelConfig model;
  std::string data_spec;
  std::vector<std::string> class_names;
  // The flags of the run that wrote it; --resume refuses to continue with different ones
  // (resume_check.h) unless --allow-config-change. data.csv_header is Yes or No, never Auto.
  TrainOptions train;
  std::int64_t epoch = 0;
  std::int64_t step = 0;
  std::vector<std::uint8_t> generator_state;
  nn::StateDict model_state;
  nn::StateDict optimizer_state;
};

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path);
// IOError naming the file when it is not an ember CLI checkpoint or is damaged.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace ember::cli
