// apps/cli/checkpoint.h — what `ember train --save` writes and `--resume` / eval / predict read.
//
// One safetensors file (nn/serialize.h) holding everything needed to continue exactly:
//   tensors   "model.<name>"      the model's state_dict ("model.0.weight", ...)
//             "optimizer.<name>"  the optimizer's state_dict (momentum buffers, Adam moments)
//             "scheduler.<name>"  the learning-rate scheduler's state_dict (--lr-schedule)
//             "grad_scaler.<name>" the loss scaler's state_dict (--precision fp16)
//   __metadata__ (string -> string)
//             "format"            "ember-cli-checkpoint/1"
//             "epoch"             epochs completed
//             "step"              optimiser steps completed
//             "generator"         the default generator's state, hex-encoded: the shuffles
//                                 and dropout masks of later epochs depend on it
//             "config"            JSON: the model shape, data, class names, training flags
//                                 {"in_features", "model", "hidden", "num_classes", "dropout",
//                                  ("channels", "input_shape": a CNN's), "data",
//                                  "class_names", "train": {"epochs", "batch_size", "lr",
//                                  "momentum", "weight_decay", "nesterov", "optimizer", "seed",
//                                  "drop_last", "val_split", "workers", "csv_label_column",
//                                  "csv_header", "world_size"},
//                                  "input_scale"}
//             "input_scale" is the preprocessing that is part of the model: features are
//             multiplied by it (1/255 for IDX images, 1 for CSV and toy unless --input-scale),
//             and eval/predict apply exactly it. Checkpoints written before it existed get
//             the rule they were trained with: 1 for toy data, 1/255 for everything else.
//             "world_size" (absent in older files: 1) is the number of ranks that trained it.
//             "position"          only in a mid-epoch checkpoint (--save-every): the batches
//                                 of epoch "epoch" + 1 trained, the generator state at that
//                                 epoch's start and its running totals (loader_position.h)
//             "early_stopping"    with --early-stop / --save-best: the monitor, its best
//                                 value and epoch, the epochs since (early_stopping.h)
//             --model spec:FILE: "model": "spec", "spec" (the resolved layer list, model_spec.h),
//             "spec_model" (the --model value) and, for a model of images, "input_shape".
//             "train_config"      (absent in older files) the run's options as a --config file
//                                 (TrainOptions::config_json, config_file.h), printed by
//                                 `ember info --checkpoint C --print-config`
// Loading validates everything before any model is built: epoch and step are non-negative
// whole numbers (epoch at most the run's epochs), the config's layer sizes are sane and
// match the model tensors' shapes and dtype (model.h check_config_fits_state), there is one
// class name per class.
// ember::save writes through a temporary file and a rename, so an interrupted write never
// leaves a half-written checkpoint in place of the last good one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ember/nn/module.h>

#include "early_stopping.h"
#include "loader_position.h"
#include "model.h"
#include "options.h"

namespace ember::cli {

struct Checkpoint {
  ModelConfig model;
  std::string data_spec;
  double input_scale = 1.0;  // the features' preprocessing: x * input_scale (datasets.h)
  std::vector<std::string> class_names;
  // The flags of the run that wrote it; --resume refuses to continue with different ones
  // (resume_check.h) unless --allow-config-change. data.csv_header is Yes or No, never Auto.
  TrainOptions train;
  std::int64_t epoch = 0;
  std::int64_t step = 0;
  std::vector<std::uint8_t> generator_state;
  nn::StateDict model_state;
  nn::StateDict optimizer_state;
  // A mid-epoch checkpoint's place in epoch `epoch` + 1 (batches_done 0: an epoch's end).
  LoaderPosition position;
  std::optional<EarlyStoppingState> early_stopping;
  // "scheduler.<key>" tensors: the --lr-schedule scheduler's state_dict (lr_schedule.h;
  // empty for a constant lr and in checkpoints written before schedules existed).
  nn::StateDict scheduler_state;
  nn::StateDict grad_scaler_state;  // --precision fp16: amp::GradScaler's ("grad_scaler.<name>")
};

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path);

// The entries "prefix.<rest>" of a checkpoint's tensors, as <rest> (model., optimizer., ...).
nn::StateDict with_prefix_removed(const nn::StateDict& all, const std::string& prefix);
// An optimizer state without "param_groups.*": optim::Optimizer::load_state_dict then keeps
// the constructor's hyper-parameters, i.e. the command line's (--resume).
nn::StateDict without_param_groups(const nn::StateDict& state);
// Every tensor of `state` moved to `device`.
nn::StateDict to_device(const nn::StateDict& state, Device device);
// IOError naming the file when it is not an ember CLI checkpoint or is damaged.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace ember::cli
