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
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/error.h>
#include <ember/core/random.h>
#include <ember/data/dataloader.h>
#include <ember/distributed/ddp.h>
#include <ember/distributed/distributed_sampler.h>
#include <ember/nn/adam.h>
#include <ember/nn/functional.h>
#include <ember/nn/sgd.h>

#include "checkpoint.h"
#include "datasets.h"
#include "device_choice.h"
#include "distributed_mode.h"
#include "evaluation.h"
#include "interrupt.h"
#include "metrics_log.h"
#include "model.h"
#include "options.h"
#include "output_paths.h"
#include "progress.h"
#include "resume_check.h"

namespace ember::cli {

namespace {

namespace F = ember::nn::functional;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainOptions& options, std::vector<Tensor> parameters) {
  if (options.optimizer == "adam" || options.optimizer == "adamw") {
    optim::AdamOptions adam;
    adam.lr = options.lr;
    adam.weight_decay = options.weight_decay;
    if (options.optimizer == "adam") return std::make_unique<optim::Adam>(std::move(parameters), adam);
    return std::make_unique<optim::AdamW>(std::move(parameters), adam);
  }
  optim::SGDOptions sgd;
  sgd.lr = options.lr;
  sgd.momentum = options.momentum;
  sgd.weight_decay = options.weight_decay;
  sgd.nesterov = options.nesterov;
  return std::make_unique<optim::SGD>(std::move(parameters), sgd);
}

// Tensors moved to the CPU (a checkpoint is written from host memory).
nn::StateDict to_cpu(const nn::StateDict& state) {
  nn::StateDict result;
  for (const auto& [name, tensor] : state) result.insert(name, tensor.cpu());
  return result;
}

// The optimizer state without "param_groups.*" (optim::Optimizer::load_state_dict then
// keeps the constructor's hyper-parameters, i.e. the command line's).
nn::StateDict without_param_groups(const nn::StateDict& state) {
  nn::StateDict result;
  for (const auto& [name, tensor] : state) {
    if (name.rfind("param_groups.", 0) != 0) result.insert(name, tensor);
  }
  return result;
}

nn::StateDict to_device(const nn::StateDict& state, Device device) {
  nn::StateDict result;
  for (const auto& [name, tensor] : state) result.insert(name, tensor.to(device));
  return result;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100.0 * fraction);
  return text;
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

}  // namespace

int run_train(const TrainOptions& options) {
  Clock::time_point start = Clock::now();
  // A result that could not be written should fail now, not after the first epoch.
  // ... and an output path that is an input (or the other output) would destroy it (output_paths.h).
  if (!options.save_path.empty()) check_save_path(options.save_path);
  if (!options.log_path.empty()) check_log_path(options.log_path);
  check_distinct_paths(options);
  DistributedMode distributed(options.device, options.timeout_s);
  // From here on a first Ctrl-C or SIGTERM only asks the run to stop (interrupt.h): one during
  // the data loading or model building below is seen before the first epoch (or, distributed,
  // agreed at the first step) and exits 130/143 with nothing written. Only a rank still
  // waiting for the others in the rendezvous above dies by the signal, at once.
  install_interrupt_handler();
  Device device = choose_device(distributed.device_request());
  // --resume: read (and validate) the checkpoint first; its input scale and class count
  // are the defaults of this run's data.
  std::optional<Checkpoint> resumed;
  if (!options.resume_path.empty()) resumed = load_checkpoint(options.resume_path);
  LoadedData data = load_data(resumed ? with_checkpoint_defaults(options.data, resumed->train) : options.data);
  // The options as this run uses them — the CSV header, input scale, class count and world
  // size decided — as its checkpoints record them.
  TrainOptions effective = options;
  if (data.spec.rfind("csv:", 0) == 0) effective.data.csv_header = data.csv_has_header ? CsvHeader::Yes : CsvHeader::No;
  effective.data.input_scale = data.input_scale;
  effective.data.num_classes = data.num_classes;
  effective.world_size = distributed.world_size();

  // Refuse a checkpoint of another configuration before building anything.
  std::vector<std::string> changed_options;
  if (resumed) changed_options = check_resume(resumed->train, resumed->epoch, effective, options.resume_path);
  // Only --allow-config-change gets past check_resume with another optimizer: its state would not fit.
  bool optimizer_restored = !resumed || resumed->train.optimizer == options.optimizer;
  if (!changed_options.empty() && distributed.is_main()) {
    std::cerr << "ember: warning: --allow-config-change: resuming " << options.resume_path
              << " with other options than it was trained with, so the run will not equal an uninterrupted one:\n";
    for (const std::string& change : changed_options) std::cerr << "  " << change << "\n";
    if (!optimizer_restored) std::cerr << "  (the optimizer changed: its state starts afresh)\n";
    std::cerr << std::flush;
  }
  TrainValidation split = split_validation(data.train, options.val_split, options.seed);
  ModelConfig config{data.num_features, options.hidden, data.num_classes, options.dropout};
  check_model_fits_memory(config);  // before anything is allocated

  // --- Tutorial §7: seed, model, optimizer, loader --------------------------------------
  manual_seed(options.seed);
  std::shared_ptr<nn::Sequential> model = build_mlp(config);
  model->to(device);
  std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(options, model->parameters());
  // Distributed: DDP broadcasts rank 0's parameters and averages every gradient; the
  // optimizer keeps updating the inner model's parameters, which DDP shares.
  std::shared_ptr<nn::Module> trained = model;
  if (distributed.active()) trained = std::make_shared<distributed::DistributedDataParallel>(model);
  auto train_set = std::make_shared<data::TensorDataset>(split.train.features, split.train.labels);
  data::DataLoaderOptions loader_options;
  loader_options.batch_size = options.batch_size;
  loader_options.shuffle = true;
  std::shared_ptr<distributed::DistributedSampler> sampler;
  if (distributed.active()) {
    // Each rank its own share, reshuffled every epoch from --seed + epoch (set_epoch below).
    sampler = std::make_shared<distributed::DistributedSampler>(train_set->size(), distributed.world_size(),
                                                               distributed.rank(), /*shuffle=*/true, options.seed);
    loader_options.shuffle = false;
    loader_options.sampler = sampler;
  }
  loader_options.drop_last = options.drop_last;
  loader_options.num_workers = options.workers;
  data::DataLoader loader(train_set, loader_options);
  EMBER_CHECK(loader.size() > 0, ValueError, "--batch-size ", options.batch_size, " with --drop-last leaves no batch of the ",
              split.train.size(), " training examples");

  // --- --resume: parameters, optimizer state and generator state -----------------------
  std::int64_t first_epoch = 0, step = 0;
  if (resumed) {
    check_state_fits(resumed->model_state, *model);
    model->load_state_dict(resumed->model_state);
    // The optimizer's state (momentum buffers, moments), but not its param_groups: the
    // hyper-parameters are this run's options (with --allow-config-change they may differ
    // from the checkpoint's, and the new checkpoint records what was used).
    if (optimizer_restored) optimizer->load_state_dict(to_device(without_param_groups(resumed->optimizer_state), device));
    default_generator().set_state(resumed->generator_state);
    first_epoch = resumed->epoch;
    step = resumed->step;
  }

  ProgressReporter::Style style = ProgressReporter::detect_style(options.quiet || !distributed.is_main());
  if (style != ProgressReporter::Style::Quiet) {
    std::cout << "Training a " << describe_layers(config) << " MLP on " << data.spec << " (" << split.train.size()
              << " training, " << (split.validation ? split.validation->size() : 0) << " validation, "
              << (data.test ? data.test->size() : 0) << " test examples) on " << device.str() << "\n";
    std::cout << "  " << options.optimizer << " lr " << options.lr << ", batch size " << options.batch_size << ", "
              << options.epochs << " epochs, seed " << options.seed;
    if (first_epoch > 0) std::cout << ", resuming after epoch " << first_epoch;
    std::cout << "\n";
    if (distributed.active()) {
      std::cout << "  distributed: " << distributed.world_size() << " ranks (" << distributed.backend()
                << "), batch size " << options.batch_size << " per rank, "
                << options.batch_size * distributed.world_size() << " per step\n";
    }
    // The preprocessing and class count are part of the model (checkpoint.h): say them.
    std::cout << "  input scale " << describe_input_scale(data.input_scale) << ", " << data.num_classes << " classes\n";
    std::cout << std::flush;
  }

  MetricsLog log = (options.log_path.empty() || !distributed.is_main()) ? MetricsLog()
                                                                         : MetricsLog(options.log_path, first_epoch, step);
  ProgressReporter progress(style, options.epochs, loader.size());
  std::int64_t examples_trained = 0;
  double training_seconds = 0;
  std::int64_t saved_epoch = 0;  // the last epoch this run wrote to --save (0: none yet)
  auto stop_interrupted = [&](const std::string& when) {
    std::cout.flush();
    std::cerr << "\nember: " << interrupted_word() << " " << when << "; "
              << kept_checkpoint_note(options, first_epoch, saved_epoch) << "\n";
    return interrupted_exit_code();  // 130 (SIGINT) or 143 (SIGTERM)
  };

  for (std::int64_t epoch = first_epoch; epoch < options.epochs; ++epoch) {
    // A Ctrl-C during the last epoch's validation or checkpoint stops here, that epoch
    // saved. (Distributed, stops are agreed on at a step: agree_on_step below.)
    if (!distributed.active() && interrupt_requested()) {
      return stop_interrupted(make_message("before epoch ", epoch + 1, " started"));
    }
    Clock::time_point epoch_start = Clock::now();
    if (sampler) sampler->set_epoch(epoch);
    trained->train();
    progress.start_epoch(epoch);
    double loss_sum = 0;
    std::int64_t correct = 0, seen = 0, batch = 0;
    bool interrupted = false;
    for (data::Example& example : loader) {
      Tensor features = example.data.to(device);
      Tensor labels = example.target.to(device);
      Tensor logits = (*trained)(features);
      Tensor loss = F::cross_entropy(logits, labels);
      optimizer->zero_grad();
      loss.backward();
      optimizer->step();
      ++step;

      auto loss_value = loss.item<float>();
      std::int64_t batch_examples = labels.size(0);
      loss_sum += static_cast<double>(loss_value) * static_cast<double>(batch_examples);
      // Distributed: progress and log show the mean over ranks (the loss of the whole step),
      // and a Ctrl-C seen by any rank stops all of them after the same step.
      DistributedMode::StepAgreement agreed = distributed.agree_on_step(loss_value, interrupt_requested());
      loss_value = static_cast<float>(agreed.loss);
      // A nan/inf loss (the agreed mean, so every rank stops together) has already made
      // the parameters non-finite: stop before any checkpoint is written from them.
      if (options.stop_on_nan && !std::isfinite(agreed.loss)) {
        throw ValueError(make_message("the training loss is ", agreed.loss, " at epoch ", epoch + 1, ", step ", step,
                                      " (batch ", batch + 1, " of ", loader.size(), "); stopping: ",
                                      kept_checkpoint_note(options, first_epoch, saved_epoch),
                                      ". Try a smaller --lr, check the data, or add --no-stop-on-nan"));
      }
      {
        NoGradGuard no_grad;
        correct += logits.argmax(1).eq(labels).sum().item<std::int64_t>();
      }
      seen += batch_examples;
      progress.batch_done(batch, loss_value, batch_examples);
      if (options.log_every > 0 && step % options.log_every == 0) log.step(epoch + 1, step, loss_value);
      ++batch;
      if (agreed.interrupted) {
        interrupted = true;
        break;
      }
    }
    // Alone, a Ctrl-C after the last step also counts; distributed, only the agreed one does.
    if (!distributed.active()) interrupted = interrupt_requested();
    if (interrupted) {
      if (!distributed.is_main()) return interrupted_exit_code();  // rank 0 speaks for the job
      return stop_interrupted(
          make_message("during epoch ", epoch + 1, " (after batch ", batch, " of ", loader.size(), ")"));
    }
    distributed.sum_epoch_totals(loss_sum, correct, seen);  // the whole job's epoch
    double epoch_seconds = seconds_since(epoch_start);
    training_seconds += epoch_seconds;
    examples_trained += seen;

    EpochMetrics metrics;
    metrics.epoch = epoch + 1;
    metrics.train_loss = seen > 0 ? loss_sum / static_cast<double>(seen) : 0.0;
    metrics.train_acc = seen > 0 ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
    metrics.has_val = split.validation.has_value();
    // Every rank holds the same model: rank 0 alone evaluates, logs and saves.
    if (metrics.has_val && distributed.is_main()) metrics.val_acc = evaluate(*model, *split.validation, device).accuracy();
    metrics.samples_per_s = epoch_seconds > 0 ? static_cast<double>(seen) / epoch_seconds : 0.0;
    metrics.elapsed_s = seconds_since(start);
    log.epoch(metrics);
    progress.end_epoch(metrics.train_loss, metrics.train_acc,
                       metrics.has_val ? metrics.val_acc : std::numeric_limits<double>::quiet_NaN(),
                       metrics.samples_per_s);

    if (!options.save_path.empty() && distributed.is_main()) {
      Checkpoint checkpoint;
      checkpoint.model = config;
      checkpoint.data_spec = data.spec;
      checkpoint.input_scale = data.input_scale;
      checkpoint.class_names = data.class_names;
      checkpoint.train = effective;
      checkpoint.epoch = epoch + 1;
      checkpoint.step = step;
      checkpoint.generator_state = default_generator().get_state();
      checkpoint.model_state = to_cpu(model->state_dict());
      checkpoint.optimizer_state = to_cpu(optimizer->state_dict());
      save_checkpoint(checkpoint, options.save_path);
      saved_epoch = epoch + 1;
    }
  }

  // --- Summary: accuracy of the final model on every split -----------------------------
  distributed.barrier();  // training is over on every rank
  if (!distributed.is_main()) return 0;
  SummaryMetrics summary;
  summary.has_val = split.validation.has_value();
  summary.has_test = data.test.has_value();
  try {
    // Seconds on Fashion-MNIST: a Ctrl-C here stops after the current batch too.
    constexpr std::int64_t kBatch = 1000;
    summary.train_acc = evaluate(*model, split.train, device, kBatch, /*interruptible=*/true).accuracy();
    if (summary.has_val) summary.val_acc = evaluate(*model, *split.validation, device, kBatch, true).accuracy();
    if (summary.has_test) summary.test_acc = evaluate(*model, *data.test, device, kBatch, true).accuracy();
    if (interrupt_requested()) throw Interrupted();
  } catch (const Interrupted&) {
    return stop_interrupted("during the final evaluation");
  }
  summary.elapsed_s = seconds_since(start);
  summary.device = device.str();
  log.summary(summary);

  double throughput = training_seconds > 0 ? static_cast<double>(examples_trained) / training_seconds : 0.0;
  std::printf("Summary\n");
  std::printf("  model:           %s MLP, %lld parameters\n", describe_layers(config).c_str(),
              static_cast<long long>(nn::count_parameters(*model)));
  std::printf("  train accuracy:  %s (%lld examples)\n", percent(summary.train_acc).c_str(),
              static_cast<long long>(split.train.size()));
  if (summary.has_val) {
    std::printf("  val accuracy:    %s (%lld examples)\n", percent(summary.val_acc).c_str(),
                static_cast<long long>(split.validation->size()));
  } else {
    std::printf("  val accuracy:    - (no --val-split)\n");
  }
  if (summary.has_test) {
    std::printf("  test accuracy:   %s (%lld examples)\n", percent(summary.test_acc).c_str(),
                static_cast<long long>(data.test->size()));
  } else {
    std::printf("  test accuracy:   - (%s has no test split)\n", data.spec.c_str());
  }
  if (examples_trained > 0) {
    std::printf("  time:            %.1f s (%s), %.0f samples/s while training\n", summary.elapsed_s,
                format_duration(summary.elapsed_s).c_str(), throughput);
  } else {
    std::printf("  time:            %.1f s (%s), no epoch trained\n", summary.elapsed_s,
                format_duration(summary.elapsed_s).c_str());
  }
  std::printf("  device:          %s\n", summary.device.c_str());
  std::printf("  checkpoint:      %s\n", checkpoint_summary(options, first_epoch, saved_epoch).c_str());
  return 0;
}

}  // namespace ember::cli
