// apps/cli/train_flags.h — groups of `ember train` flags, each added to the command with
// its help and checks, and the combinations of them that mean nothing (a usage error, exit 2):
// the model and data limits (issue 16), checkpoints and early stopping, learning-rate
// schedules and gradients (issue 20: lr_schedule.h, optimizer_step.h). main.cpp assembles
// the command from these.
#pragma once

#include <CLI/CLI.hpp>

#include "options.h"

namespace ember::cli {

// --num-classes, --input-scale, --no-stop-on-nan.
void add_model_data_options(CLI::App& command, TrainOptions& train);
// --save-every, --save-best, --early-stop, --min-delta.
void add_checkpoint_options(CLI::App& command, TrainOptions& train);
void check_checkpoint_options(const TrainOptions& train, const CLI::App& command);
// --lr-schedule and its parameters, --warmup-steps, --clip-grad-norm/-value, --grad-accum.
void add_schedule_options(CLI::App& command, TrainOptions& train);
void check_schedule_options(const CLI::App& command, const TrainOptions& train);

}  // namespace ember::cli
