// apps/cli/train_command.cpp — `ember train`: the tutorial's §7 training loop, as a tool.
//
// The loop is, step for step, tests/reference/cli_reference.py:
//   manual_seed(seed); model = MLP(...); loader = DataLoader(train, shuffle=True, ...)
//   for each epoch, for each batch (x, y):
//       loss = cross_entropy(model(x), y); optimizer.zero_grad(); loss.backward(); optimizer.step()
// so for the same flags ember's per-batch losses are PyTorch's. Around that loop sit the
// tool's parts: the device (--device), a validation split, progress output, the metrics
// log, a checkpoint at every epoch end, exact --resume and a clean stop on Ctrl-C or SIGTERM.
//
// Exact resume: everything the remaining epochs depend on is in the checkpoint — the
// parameters, the optimizer's state (momentum buffers, Adam moments and step counts) and
// the default generator's state, from which each epoch's shuffle (and dropout masks) are
// drawn. Restoring the three and running the same loop gives bit-identical parameters —
// provided the loop is the same, which is why the checkpoint's options are checked against
// the current ones first (resume_check.h).
//
// Issue 20: --save-every also checkpoints inside an epoch, with the loader's position, and
// --resume continues there exactly (loader_position.h); --early-stop and --save-best apply
// Keras's early-stopping rule to --monitor after each epoch (early_stopping_run.h).
//
// What the tool says about checkpoints must be true: on Ctrl-C and in the summary it names
// only files this run wrote, or the --resume file it started from, with their epochs.
//
// Distributed (tutorial §9.3): started by `ember-run --nproc-per-node N -- ember train ...`,
// every rank runs this loop on its DistributedSampler share with the model wrapped in
// DistributedDataParallel; only rank 0 prints, logs and saves (distributed_mode.h).
//
// run_train below is the loop itself, a screen long (issue 18, item 5); the set-up and
// --resume are set_up_training (training_setup.cpp, training_run.h), and the parts around
// each step — the batch's bookkeeping, a stop on Ctrl-C, the epoch's evaluation, log and
// checkpoint, the final summary — are the named functions above it.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <utility>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/error.h>
#include <ember/core/random.h>
#include <ember/nn/functional.h>

#include "checkpoint.h"
#include "early_stopping_run.h"
#include "evaluation.h"
#include "interrupt.h"
#include "options.h"
#include "output_paths.h"
#include "precision.h"
#include "step_profiler.h"
#include "tensorboard_writer.h"
#include "training_run.h"

namespace ember::cli {

namespace {

namespace F = ember::nn::functional;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Tensors moved to the CPU (a checkpoint is written from host memory).
nn::StateDict to_cpu(const nn::StateDict& state) {
  nn::StateDict result;
  for (const auto& [name, tensor] : state) result.insert(name, tensor.cpu());
  return result;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100.0 * fraction);
  return text;
}

// A result that could not be written should fail now, not after the first epoch; an output
// path that is an input (or the other output) would destroy it (output_paths.h).
void check_output_paths(const TrainOptions& options) {
  if (!options.save_path.empty()) check_save_path(options.save_path);
  if (!options.save_best_path.empty()) check_save_path(options.save_best_path, "--save-best");
  if (!options.log_path.empty()) check_log_path(options.log_path);
  if (!options.tensorboard_dir.empty()) check_tensorboard_dir(options.tensorboard_dir);
  if (!options.profile_out.empty()) check_save_path(options.profile_out, "--profile-out");
  check_distinct_paths(options);
}

// "of epoch 3", or for a mid-epoch checkpoint (--save-every) "of epoch 4 at batch 5 of 12":
// `epochs` completed, `batch` batches into the next.
std::string checkpoint_place(const TrainingRun& run, std::int64_t epochs, std::int64_t batch) {
  if (batch == 0) return make_message("of epoch ", epochs);
  return make_message("of epoch ", epochs + 1, " at batch ", batch, " of ", run.loader->size());
}

// Where the checkpoints stand when a run stops early: the last one this run wrote to --save
// (run.saved_epoch / saved_batch; none: both 0), else the --resume checkpoint's.
std::string kept_checkpoint_note(const TrainingRun& run) {
  const TrainOptions& options = run.options;
  const std::string& save = options.save_path;
  const std::string resumed = checkpoint_place(run, run.first_epoch, run.resumed_batch);
  if (save.empty()) return "nothing was saved (no --save)";
  if (run.saved_epoch > 0 || run.saved_batch > 0) {
    return make_message("the checkpoint ", checkpoint_place(run, run.saved_epoch, run.saved_batch), " in ", save,
                        " is intact");
  }
  if (options.resume_path.empty()) return "no epoch was completed, so no checkpoint was written";
  if (same_file(save, options.resume_path)) {
    return make_message("the checkpoint ", resumed, " in ", save, " is intact (no epoch was completed in this run)");
  }
  // "holds epoch 3" / "holds epoch 4 at batch 5 of 12" (the text after "of ").
  return make_message("no epoch was completed in this run, so ", save, " was not written (", options.resume_path,
                      " still holds ", resumed.substr(3), ")");
}

// The summary's "checkpoint:" line.
std::string checkpoint_summary(const TrainingRun& run) {
  const TrainOptions& options = run.options;
  const std::int64_t resumed_epoch = run.first_epoch, saved_epoch = run.saved_epoch;
  const std::string& save = options.save_path;
  if (save.empty()) return "not saved (use --save PATH)";
  if (saved_epoch > 0) return make_message(save, " (epoch ", saved_epoch, ")");
  // Nothing trained: a --resume of a checkpoint that already has --epochs epochs.
  if (same_file(save, options.resume_path)) {
    return make_message(save, " (epoch ", resumed_epoch, ", unchanged: no epoch was left to train)");
  }
  return make_message("not written: no epoch was left to train (", options.resume_path, " holds epoch ",
                      resumed_epoch, ")");
}

// ----------------------------------------------------------------- interrupts

// A first Ctrl-C or SIGTERM asked the run to stop (interrupt.h): say so, and what is saved.
int stop_interrupted(const TrainingRun& run, const std::string& when) {
  std::cout.flush();
  std::cerr << "\nember: " << interrupted_word() << " " << when << "; "
            << kept_checkpoint_note(run) << "\n";
  return interrupted_exit_code();  // 130 (SIGINT) or 143 (SIGTERM)
}

// ----------------------------------------------------------------- one epoch

// The running totals of one epoch (this rank's, until sum_epoch_totals).
struct EpochTotals {
  Clock::time_point start = Clock::now();
  double loss_sum = 0;
  std::int64_t correct = 0, seen = 0, batches = 0;
  bool interrupted = false;  // distributed: a Ctrl-C agreed on at the last step
  // --grad-accum: the losses of the micro-batches since the last optimizer step.
  double group_loss_sum = 0;
  std::int64_t group_batches = 0;
  double last_lr = 0;  // the lr of the epoch's last optimizer step
};

EpochTotals start_epoch(TrainingRun& run, std::int64_t epoch) {
  EpochTotals totals;
  if (run.resume_position) {  // a mid-epoch --resume: this rank's totals so far (loader_position.h)
    const auto rank = static_cast<std::size_t>(run.distributed.rank());
    totals.loss_sum = run.resume_position->loss_sums[rank];
    totals.correct = run.resume_position->correct[rank];
    totals.seen = run.resume_position->seen[rank];
    totals.batches = run.resume_position->batches_done;
  }
  if (run.sampler) run.sampler->set_epoch(epoch);
  run.trained->train();
  run.progress->start_epoch(epoch);
  return totals;
}

// Whether the next optimiser step is one the --log records (then its grad norm is read).
bool next_step_logged(const TrainingRun& run) {
  return run.log.enabled() && run.options.log_every > 0 && (run.step + 1) % run.options.log_every == 0;
}

// After each batch (a micro-batch with --grad-accum; `stepped` when the optimiser stepped
// after it): the loss (agreed over ranks), the stop on a non-finite loss, accuracy,
// progress and the step log. Returns false when the epoch must stop now (a Ctrl-C agreed
// on by the ranks).
bool record_step(TrainingRun& run, EpochTotals& totals, std::int64_t epoch, const Tensor& logits,
                 const Tensor& labels, const Tensor& loss, const std::optional<OptimizerStepper::Stepped>& stepped) {
  const TrainOptions& options = run.options;
  if (stepped) ++run.step;
  auto loss_value = loss.item<float>();
  std::int64_t batch_examples = labels.size(0);
  totals.loss_sum += static_cast<double>(loss_value) * static_cast<double>(batch_examples);
  // Distributed: progress and log show the mean over ranks (the loss of the whole step),
  // and a Ctrl-C seen by any rank stops all of them after the same step.
  interrupt_at_test_step(run.step);  // tests only (interrupt.h)
  DistributedMode::StepAgreement agreed = run.distributed.agree_on_step(loss_value, interrupt_requested());
  loss_value = static_cast<float>(agreed.loss);
  // A nan/inf loss (the agreed mean, so every rank stops together) has already made
  // the parameters non-finite: stop before any checkpoint is written from them.
  if (options.stop_on_nan && !std::isfinite(agreed.loss)) {
    throw ValueError(make_message("the training loss is ", agreed.loss, " at epoch ", epoch + 1, ", step ", run.step,
                                  " (batch ", totals.batches + 1, " of ", run.loader->size(), "); stopping: ",
                                  kept_checkpoint_note(run),
                                  ". Try a smaller --lr, check the data, or add --no-stop-on-nan"));
  }
  {
    NoGradGuard no_grad;
    totals.correct += logits.argmax(1).eq(labels).sum().item<std::int64_t>();
  }
  totals.seen += batch_examples;
  run.progress->batch_done(totals.batches, loss_value, batch_examples);
  totals.group_loss_sum += static_cast<double>(loss_value);
  ++totals.group_batches;
  if (stepped) {
    const double step_loss = totals.group_loss_sum / static_cast<double>(totals.group_batches);
    totals.group_loss_sum = 0;
    totals.group_batches = 0;
    totals.last_lr = stepped->lr;
    if (options.log_every > 0 && run.step % options.log_every == 0) {
      run.log.step(epoch + 1, run.step, static_cast<float>(step_loss), stepped->lr, stepped->grad_norm);
    }
  }
  ++totals.batches;
  totals.interrupted = agreed.interrupted;
  return !agreed.interrupted;
}

// Whether the epoch ended on a Ctrl-C, and then the exit code. Alone, a Ctrl-C after the
// last step also counts; distributed, only the agreed one does.
std::optional<int> interrupted_during_epoch(const TrainingRun& run, const EpochTotals& totals, std::int64_t epoch) {
  const bool interrupted = run.distributed.active() ? totals.interrupted : interrupt_requested();
  if (!interrupted) return std::nullopt;
  if (!run.distributed.is_main()) return interrupted_exit_code();  // rank 0 speaks for the job
  return stop_interrupted(run, make_message("during epoch ", epoch + 1, " (after batch ", totals.batches, " of ",
                                            run.loader->size(), ")"));
}

// Everything a checkpoint holds of the run now, `epochs` epochs completed.
Checkpoint checkpoint_now(const TrainingRun& run, std::int64_t epochs) {
  Checkpoint checkpoint;
  checkpoint.model = run.config;
  checkpoint.data_spec = run.data.spec;
  checkpoint.input_scale = run.data.input_scale;
  checkpoint.class_names = run.data.class_names;
  checkpoint.train = run.effective;  // its hyperparameters: the optimizer's own options object
  checkpoint.epoch = epochs;
  checkpoint.step = run.step;
  checkpoint.generator_state = default_generator().get_state();
  checkpoint.model_state = to_cpu(run.model->state_dict());
  checkpoint.optimizer_state = to_cpu(run.optimizer->state_dict());
  checkpoint.scheduler_state = run.schedule.state_dict();
  checkpoint.grad_scaler_state = run.stepper->grad_scaler().state_dict();
  if (run.early_stopping) checkpoint.early_stopping = run.early_stopping->state();
  return checkpoint;
}

void save_epoch_checkpoint(TrainingRun& run, std::int64_t epoch) {
  save_checkpoint(checkpoint_now(run, epoch + 1), run.options.save_path);
  run.saved_epoch = epoch + 1;
  run.saved_batch = 0;
}

// --save-every: every N optimiser steps a checkpoint inside the epoch, with the loader's
// position and every rank's running totals (loader_position.h) — not after the epoch's
// last batch, whose checkpoint follows with the epoch's end.
void save_mid_epoch_checkpoint_if_due(TrainingRun& run, const EpochTotals& totals, std::int64_t epoch) {
  const std::int64_t every = run.options.save_every;
  if (every == 0 || run.step % every != 0 || totals.batches >= run.loader->size()) return;
  LoaderPosition position;
  position.batches_done = totals.batches;
  position.batches_in_epoch = run.loader->size();
  position.epoch_start_generator = run.epoch_start_generator;
  // A collective: every rank reaches it at the same step.
  run.distributed.gather_epoch_totals(totals.loss_sum, totals.correct, totals.seen, position.loss_sums,
                                      position.correct, position.seen);
  if (!run.distributed.is_main()) return;
  Checkpoint checkpoint = checkpoint_now(run, epoch);
  checkpoint.position = std::move(position);
  save_checkpoint(checkpoint, run.options.save_path);
  run.saved_epoch = epoch;
  run.saved_batch = totals.batches;
}

// The epoch's end: the whole job's totals, the validation accuracy, the log line, the
// progress summary and the checkpoint. Every rank holds the same model: rank 0 alone
// evaluates, logs and saves.
void finish_epoch(TrainingRun& run, EpochTotals& totals, std::int64_t epoch) {
  run.distributed.sum_epoch_totals(totals.loss_sum, totals.correct, totals.seen);  // the whole job's epoch
  double epoch_seconds = seconds_since(totals.start);
  run.training_seconds += epoch_seconds;
  run.examples_trained += totals.seen;

  const double seen = static_cast<double>(totals.seen);
  EpochMetrics metrics;
  metrics.epoch = epoch + 1;
  metrics.train_loss = totals.seen > 0 ? totals.loss_sum / seen : 0.0;
  metrics.train_acc = totals.seen > 0 ? static_cast<double>(totals.correct) / seen : 0.0;
  metrics.has_val = run.split.validation.has_value();
  metrics.lr = totals.last_lr;
  // --lr-schedule plateau steps on every rank: each needs the monitored value.
  if (metrics.has_val && (run.distributed.is_main() || run.options.lr_schedule == "plateau")) {
    const PrecisionScope precision(run.options.precision, run.device);  // evaluated as trained
    Evaluation validation = evaluate(*run.model, *run.split.validation, run.device);
    metrics.val_acc = validation.accuracy();
    metrics.val_loss = validation.mean_loss();
  }
  metrics.samples_per_s = epoch_seconds > 0 ? seen / epoch_seconds : 0.0;
  metrics.elapsed_s = seconds_since(run.start);
  metrics.step = run.step;
  run.log.epoch(metrics);
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  run.progress->end_epoch(metrics.train_loss, metrics.train_acc, metrics.has_val ? metrics.val_loss : kNone,
                          metrics.has_val ? metrics.val_acc : kNone, metrics.samples_per_s);
  run.schedule.after_epoch(metrics);  // per-epoch schedules (lr_schedule.h), before the checkpoint
  // --early-stop / --save-best (early_stopping_run.h): the best model so far, before the
  // epoch's checkpoint, which then records the rule's state after this epoch.
  if (early_stopping_after_epoch(run, metrics) && !run.options.save_best_path.empty()) {
    save_checkpoint(checkpoint_now(run, epoch + 1), run.options.save_best_path);
    run.best_saved_epoch = epoch + 1;
  }
  if (!run.options.save_path.empty() && run.distributed.is_main()) save_epoch_checkpoint(run, epoch);
}

// ----------------------------------------------------------------- the summary

void print_summary(const TrainingRun& run, const SummaryMetrics& summary) {
  const DataSplit& train = run.split.train;
  double throughput = run.training_seconds > 0 ? static_cast<double>(run.examples_trained) / run.training_seconds : 0.0;
  std::printf("Summary\n");
  std::printf("  model:           %s, %lld parameters\n", describe_model(run.config).c_str(),
              static_cast<long long>(nn::count_parameters(*run.model)));
  std::printf("  train accuracy:  %s (%lld examples)\n", percent(summary.train_acc).c_str(),
              static_cast<long long>(train.size()));
  if (summary.has_val) {
    std::printf("  val accuracy:    %s (%lld examples)\n", percent(summary.val_acc).c_str(),
                static_cast<long long>(run.split.validation->size()));
  } else {
    std::printf("  val accuracy:    - (no --val-split)\n");
  }
  if (summary.has_test) {
    std::printf("  test accuracy:   %s (%lld examples)\n", percent(summary.test_acc).c_str(),
                static_cast<long long>(run.data.test->size()));
  } else {
    std::printf("  test accuracy:   - (%s has no test split)\n", run.data.spec.c_str());
  }
  if (run.examples_trained > 0) {
    std::printf("  time:            %.1f s (%s), %.0f samples/s while training\n", summary.elapsed_s,
                format_duration(summary.elapsed_s).c_str(), throughput);
  } else {
    std::printf("  time:            %.1f s (%s), no epoch trained\n", summary.elapsed_s,
                format_duration(summary.elapsed_s).c_str());
  }
  // Model FLOPs per second over the device's peak (model_flops.h); the CPU's only, for now.
  if (const std::string mfu = run.flops.mfu_text(throughput, run.device, run.options.precision); !mfu.empty()) {
    std::printf("  MFU:             %s\n", mfu.c_str());
  }
  std::printf("  device:          %s\n", summary.device.c_str());
  std::printf("  checkpoint:      %s\n",
              checkpoint_summary(run).c_str());
  const std::string best = best_checkpoint_summary(run), stopping = early_stopping_summary(run);
  if (!best.empty()) std::printf("  best checkpoint: %s\n", best.c_str());
  if (!stopping.empty()) std::printf("  early stopping:  %s\n", stopping.c_str());
}

// Training is over: the accuracy of the final model on every split, logged and printed by
// rank 0. Returns the exit code.
int finish_training(TrainingRun& run) {
  run.distributed.barrier();  // training is over on every rank
  if (!run.distributed.is_main()) return 0;
  SummaryMetrics summary;
  summary.has_val = run.split.validation.has_value();
  summary.has_test = run.data.test.has_value();
  try {
    // Seconds on Fashion-MNIST: a Ctrl-C here stops after the current batch too.
    constexpr std::int64_t kBatch = 1000;
    const PrecisionScope precision(run.options.precision, run.device);  // evaluated as trained
    summary.train_acc = evaluate(*run.model, run.split.train, run.device, kBatch, /*interruptible=*/true).accuracy();
    if (summary.has_val) {
      summary.val_acc = evaluate(*run.model, *run.split.validation, run.device, kBatch, true).accuracy();
    }
    if (summary.has_test) summary.test_acc = evaluate(*run.model, *run.data.test, run.device, kBatch, true).accuracy();
    if (interrupt_requested()) throw Interrupted();
  } catch (const Interrupted&) {
    return stop_interrupted(run, "during the final evaluation");
  }
  summary.elapsed_s = seconds_since(run.start);
  summary.device = run.device.str();
  run.log.summary(summary);
  print_summary(run, summary);
  return 0;
}

}  // namespace

int run_train(const TrainOptions& options) {
  const Clock::time_point start = Clock::now();
  check_output_paths(options);
  DistributedMode distributed(options.device, options.timeout_s);
  // From here on a first Ctrl-C or SIGTERM only asks the run to stop (interrupt.h): one during
  // the data loading or model building below is seen before the first epoch (or, distributed,
  // agreed at the first step) and exits 130/143 with nothing written. Only a rank still
  // waiting for the others in the rendezvous above dies by the signal, at once.
  install_interrupt_handler();
  TrainingRun run(options, distributed, start);
  set_up_training(run);  // data, model, optimizer, loader; --resume's state (training_setup.cpp)
  StepProfiler profiling(options, distributed.is_main(), run.device);

  for (std::int64_t epoch = run.first_epoch; epoch < options.epochs; ++epoch) {
    if (run.stopped_early) break;  // --early-stop, after the last epoch (or in the resumed run)
    // A Ctrl-C during the last epoch's validation or checkpoint stops here, that epoch
    // saved. (Distributed, stops are agreed on at a step: record_step.)
    if (!distributed.active() && interrupt_requested()) {
      return stop_interrupted(run, make_message("before epoch ", epoch + 1, " started"));
    }
    EpochTotals totals = start_epoch(run, epoch);
    // The epoch's batches; after a mid-epoch --resume, the rest of its first epoch.
    const LoaderPosition* resume = run.resume_position ? &*run.resume_position : nullptr;
    for (data::Example& example : EpochBatches(*run.loader, run.epoch_start_generator, resume)) {
      profiling.before_batch(run.step);  // --profile-steps: the batch's "ProfilerStep#N" block (step_profiler.h)
      // --- Tutorial §7: forward, loss, zero_grad, backward, step ---------------------------
      Tensor features = example.data.to(run.device);
      Tensor labels = example.target.to(run.device);
      run.flops.begin_step(features.size(0));  // the summary's MFU counts one step's FLOPs
      Tensor logits, loss;
      {
        const PrecisionScope precision(run.options.precision, run.device);  // --precision bf16: autocast
        logits = (*run.trained)(features);
        loss = F::cross_entropy(logits, labels);
      }
      // zero_grad, backward, step (with --grad-accum, --clip-grad-*, the lr schedule: optimizer_step.h)
      const bool last_batch = totals.batches + 1 == static_cast<std::int64_t>(run.loader->size());
      auto stepped = run.stepper->backward(loss, last_batch, next_step_logged(run));
      run.flops.end_step();
      if (!record_step(run, totals, epoch, logits, labels, loss, stepped)) break;  // a Ctrl-C, agreed
      // --save-every, after an optimizer step (with --grad-accum, never between micro-batches).
      if (stepped) save_mid_epoch_checkpoint_if_due(run, totals, epoch);
      profiling.after_batch(run.step);
    }
    run.resume_position.reset();  // later epochs start at their first batch
    if (std::optional<int> code = interrupted_during_epoch(run, totals, epoch)) return *code;
    finish_epoch(run, totals, epoch);  // evaluation, log line, progress, checkpoint
  }
  const int code = finish_training(run);  // final accuracies and the summary
  profiling.finish();                     // --profile-steps: the table, the trace
  return code;
}

}  // namespace ember::cli
