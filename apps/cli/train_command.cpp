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

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/error.h>
#include <ember/core/random.h>
#include <ember/nn/functional.h>

#include "checkpoint.h"
#include "evaluation.h"
#include "interrupt.h"
#include "options.h"
#include "output_paths.h"
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
  if (!options.log_path.empty()) check_log_path(options.log_path);
  if (!options.tensorboard_dir.empty()) check_tensorboard_dir(options.tensorboard_dir);
  check_distinct_paths(options);
}

// Where the checkpoints stand when a run stops early. saved_epoch: the last epoch this run
// wrote to --save (0: none); resumed_epoch: the epoch of the --resume checkpoint.
std::string kept_checkpoint_note(const TrainOptions& options, std::int64_t resumed_epoch, std::int64_t saved_epoch) {
  const std::string& save = options.save_path;
  if (save.empty()) return "nothing was saved (no --save)";
  if (saved_epoch > 0) return make_message("the checkpoint of epoch ", saved_epoch, " in ", save, " is intact");
  if (options.resume_path.empty()) return "no epoch was completed, so no checkpoint was written";
  if (same_file(save, options.resume_path)) {
    return make_message("the checkpoint of epoch ", resumed_epoch, " in ", save,
                        " is intact (no epoch was completed in this run)");
  }
  return make_message("no epoch was completed in this run, so ", save, " was not written (", options.resume_path,
                      " still holds epoch ", resumed_epoch, ")");
}

// The summary's "checkpoint:" line.
std::string checkpoint_summary(const TrainOptions& options, std::int64_t resumed_epoch, std::int64_t saved_epoch) {
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
            << kept_checkpoint_note(run.options, run.first_epoch, run.saved_epoch) << "\n";
  return interrupted_exit_code();  // 130 (SIGINT) or 143 (SIGTERM)
}

// ----------------------------------------------------------------- one epoch

// The running totals of one epoch (this rank's, until sum_epoch_totals).
struct EpochTotals {
  Clock::time_point start = Clock::now();
  double loss_sum = 0;
  std::int64_t correct = 0, seen = 0, batches = 0;
  bool interrupted = false;  // distributed: a Ctrl-C agreed on at the last step
};

EpochTotals start_epoch(TrainingRun& run, std::int64_t epoch) {
  EpochTotals totals;
  if (run.sampler) run.sampler->set_epoch(epoch);
  run.trained->train();
  run.progress->start_epoch(epoch);
  return totals;
}

// After each optimiser step: the loss (agreed over ranks), the stop on a non-finite loss,
// accuracy, progress and the step log. Returns false when the epoch must stop now (a
// Ctrl-C agreed on by the ranks).
bool record_step(TrainingRun& run, EpochTotals& totals, std::int64_t epoch, const Tensor& logits,
                 const Tensor& labels, const Tensor& loss) {
  const TrainOptions& options = run.options;
  ++run.step;
  auto loss_value = loss.item<float>();
  std::int64_t batch_examples = labels.size(0);
  totals.loss_sum += static_cast<double>(loss_value) * static_cast<double>(batch_examples);
  // Distributed: progress and log show the mean over ranks (the loss of the whole step),
  // and a Ctrl-C seen by any rank stops all of them after the same step.
  DistributedMode::StepAgreement agreed = run.distributed.agree_on_step(loss_value, interrupt_requested());
  loss_value = static_cast<float>(agreed.loss);
  // A nan/inf loss (the agreed mean, so every rank stops together) has already made
  // the parameters non-finite: stop before any checkpoint is written from them.
  if (options.stop_on_nan && !std::isfinite(agreed.loss)) {
    throw ValueError(make_message("the training loss is ", agreed.loss, " at epoch ", epoch + 1, ", step ", run.step,
                                  " (batch ", totals.batches + 1, " of ", run.loader->size(), "); stopping: ",
                                  kept_checkpoint_note(options, run.first_epoch, run.saved_epoch),
                                  ". Try a smaller --lr, check the data, or add --no-stop-on-nan"));
  }
  {
    NoGradGuard no_grad;
    totals.correct += logits.argmax(1).eq(labels).sum().item<std::int64_t>();
  }
  totals.seen += batch_examples;
  run.progress->batch_done(totals.batches, loss_value, batch_examples);
  if (options.log_every > 0 && run.step % options.log_every == 0) run.log.step(epoch + 1, run.step, loss_value);
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

void save_epoch_checkpoint(TrainingRun& run, std::int64_t epoch) {
  Checkpoint checkpoint;
  checkpoint.model = run.config;
  checkpoint.data_spec = run.data.spec;
  checkpoint.input_scale = run.data.input_scale;
  checkpoint.class_names = run.data.class_names;
  checkpoint.train = run.effective;  // its hyperparameters: the optimizer's own options object
  checkpoint.epoch = epoch + 1;
  checkpoint.step = run.step;
  checkpoint.generator_state = default_generator().get_state();
  checkpoint.model_state = to_cpu(run.model->state_dict());
  checkpoint.optimizer_state = to_cpu(run.optimizer->state_dict());
  save_checkpoint(checkpoint, run.options.save_path);
  run.saved_epoch = epoch + 1;
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
  if (metrics.has_val && run.distributed.is_main()) {
    metrics.val_acc = evaluate(*run.model, *run.split.validation, run.device).accuracy();
  }
  metrics.samples_per_s = epoch_seconds > 0 ? seen / epoch_seconds : 0.0;
  metrics.elapsed_s = seconds_since(run.start);
  metrics.step = run.step;
  run.log.epoch(metrics);
  run.progress->end_epoch(metrics.train_loss, metrics.train_acc,
                          metrics.has_val ? metrics.val_acc : std::numeric_limits<double>::quiet_NaN(),
                          metrics.samples_per_s);
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
  std::printf("  device:          %s\n", summary.device.c_str());
  std::printf("  checkpoint:      %s\n",
              checkpoint_summary(run.options, run.first_epoch, run.saved_epoch).c_str());
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

  for (std::int64_t epoch = run.first_epoch; epoch < options.epochs; ++epoch) {
    // A Ctrl-C during the last epoch's validation or checkpoint stops here, that epoch
    // saved. (Distributed, stops are agreed on at a step: record_step.)
    if (!distributed.active() && interrupt_requested()) {
      return stop_interrupted(run, make_message("before epoch ", epoch + 1, " started"));
    }
    EpochTotals totals = start_epoch(run, epoch);
    for (data::Example& example : *run.loader) {
      // --- Tutorial §7: forward, loss, zero_grad, backward, step ---------------------------
      Tensor features = example.data.to(run.device);
      Tensor labels = example.target.to(run.device);
      Tensor logits = (*run.trained)(features);
      Tensor loss = F::cross_entropy(logits, labels);
      run.optimizer->zero_grad();
      loss.backward();
      run.optimizer->step();
      if (!record_step(run, totals, epoch, logits, labels, loss)) break;  // a Ctrl-C, agreed
    }
    if (std::optional<int> code = interrupted_during_epoch(run, totals, epoch)) return *code;
    finish_epoch(run, totals, epoch);  // evaluation, log line, progress, checkpoint
  }
  return finish_training(run);  // final accuracies and the summary
}

}  // namespace ember::cli
