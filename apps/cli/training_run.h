// apps/cli/training_run.h — what one `ember train` run holds, and how it is set up.
//
// train_command.cpp's run_train is the tutorial's §7 loop and little else; everything the
// loop reads — the device, the data split, the model (DDP-wrapped when distributed), the
// optimizer, the loader, the counters a checkpoint records — lives in one TrainingRun, built
// and (with --resume) restored by set_up_training (training_setup.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <ember/core/device.h>
#include <ember/data/dataloader.h>
#include <ember/distributed/distributed_sampler.h>
#include <ember/nn/optimizer.h>
#include <ember/nn/sequential.h>

#include "datasets.h"
#include "distributed_mode.h"
#include "early_stopping.h"
#include "loader_position.h"
#include "metrics_log.h"
#include "model_flops.h"
#include "lr_schedule.h"
#include "model.h"
#include "optimizer_step.h"
#include "options.h"
#include "progress.h"

namespace ember::cli {

using Clock = std::chrono::steady_clock;

struct TrainingRun {
  TrainingRun(const TrainOptions& given, DistributedMode& group, Clock::time_point started)
      : options(given), effective(given), distributed(group), start(started) {}

  const TrainOptions& options;  // as given on the command line
  // The options as this run uses them — the CSV header, input scale, class count and world
  // size decided — as its checkpoints record them.
  TrainOptions effective;
  DistributedMode& distributed;
  Clock::time_point start;

  Device device;
  LoadedData data;
  TrainValidation split;
  ModelConfig config;
  std::shared_ptr<nn::Sequential> model;
  std::shared_ptr<nn::Module> trained;  // the model, or DistributedDataParallel around it
  std::unique_ptr<optim::Optimizer> optimizer;
  std::shared_ptr<distributed::DistributedSampler> sampler;  // distributed only
  std::unique_ptr<data::DataLoader> loader;
  LrSchedule schedule;                       // --lr-schedule (lr_schedule.h)
  std::optional<OptimizerStepper> stepper;  // accumulation, clipping, step (optimizer_step.h)

  // Where the run stands: the epoch it started after (the --resume checkpoint's, else 0),
  // optimiser steps so far (resumed ones included), the last epoch written to --save (0: none).
  std::int64_t first_epoch = 0;
  std::int64_t step = 0;
  std::int64_t saved_epoch = 0;
  // Mid-epoch checkpoints (--save-every, loader_position.h): the batch of epoch saved_epoch + 1
  // the last --save checkpoint stands after (0: an epoch's end); a mid-epoch --resume's
  // position (its first epoch starts there; resumed_batch keeps where, for the messages);
  // the default generator's state at the current epoch's start.
  std::int64_t saved_batch = 0;
  std::optional<LoaderPosition> resume_position;
  std::int64_t resumed_batch = 0;
  std::vector<std::uint8_t> epoch_start_generator;
  // --early-stop / --save-best (early_stopping.h): the rule, whether it stopped the run,
  // and the epoch last written to --save-best (0: none).
  std::optional<EarlyStopping> early_stopping;
  bool stopped_early = false;
  std::int64_t stopped_after_epoch = 0;
  std::int64_t best_saved_epoch = 0;
  std::int64_t examples_trained = 0;  // in this run, for the summary's throughput
  double training_seconds = 0;
  ModelFlops flops;  // the summary's MFU (model_flops.h)

  MetricsLog log;                             // disabled unless --log (rank 0)
  std::optional<ProgressReporter> progress;  // set by set_up_training
};

// Everything before the first epoch, in this order: the device; the --resume checkpoint
// (read and checked against the options first, warning about --allow-config-change
// differences); the data and its validation split; manual_seed, model, optimizer, loader
// (tutorial §7); then the checkpoint's parameters, optimizer state and generator state;
// the metrics log and progress output. The caller has checked the output paths, joined
// the process group and installed the interrupt handler.
void set_up_training(TrainingRun& run);

}  // namespace ember::cli
