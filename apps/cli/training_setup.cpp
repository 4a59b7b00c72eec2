// apps/cli/training_setup.cpp — set_up_training (training_run.h): everything `ember train`
// does before its first epoch — data, model, optimizer and loader as the tutorial's §7
// builds them, and exact --resume (parameters, optimizer state, generator state).
#include <iostream>
#include <memory>
#include <utility>

#include <ember/core/error.h>
#include <ember/core/random.h>
#include <ember/distributed/ddp.h>
#include <ember/nn/adam.h>
#include <ember/nn/sgd.h>

#include "checkpoint.h"
#include "device_choice.h"
#include "early_stopping_run.h"
#include "model_spec.h"
#include "resume_check.h"
#include "tensorboard_writer.h"
#include "training_run.h"
#include "usage_error.h"

namespace ember::cli {

namespace {

// The command line's hyper-parameter object goes to SGD as it is (core/sgd_options.h);
// Adam and AdamW take its lr and weight_decay.
std::unique_ptr<optim::Optimizer> make_optimizer(const TrainOptions& options, std::vector<Tensor> parameters) {
  const optim::SGDOptions& hyperparameters = options.hyperparameters;
  if (options.optimizer == "adam" || options.optimizer == "adamw") {
    optim::AdamOptions adam;
    adam.lr = hyperparameters.lr;
    adam.weight_decay = hyperparameters.weight_decay;
    if (options.optimizer == "adam") return std::make_unique<optim::Adam>(std::move(parameters), adam);
    return std::make_unique<optim::AdamW>(std::move(parameters), adam);
  }
  return std::make_unique<optim::SGD>(std::move(parameters), hyperparameters);
}

// The run's data, with what it turned out to be (CSV header, input scale, class count)
// and the world size written into run.effective. A --resume checkpoint's input scale and
// class count are the defaults of this run's data.
void load_run_data(TrainingRun& run, const std::optional<Checkpoint>& resumed) {
  const TrainOptions& options = run.options;
  run.data = load_data(resumed ? with_checkpoint_defaults(options.data, resumed->train) : options.data);
  TrainOptions& effective = run.effective;
  if (run.data.spec.rfind("csv:", 0) == 0) {
    effective.data.csv_header = run.data.csv_has_header ? CsvHeader::Yes : CsvHeader::No;
  }
  effective.data.input_scale = run.data.input_scale;
  effective.data.num_classes = run.data.num_classes;
  effective.world_size = run.distributed.world_size();
  // A CNN on IDX images takes their shape: the checkpoint records it either way.
  if (options.model == "cnn" && options.input_shape.empty()) effective.input_shape = run.data.image_shape;
}

// Refuses a checkpoint of another configuration before anything is built; with
// --allow-config-change, warns about each difference. Returns whether the optimizer's
// state can be restored (only --allow-config-change gets here with another optimizer).
bool check_resumed_config(const TrainingRun& run, const Checkpoint& resumed) {
  const TrainOptions& options = run.options;
  // A mid-epoch checkpoint (--save-every) first: what decides its epoch's batches may not change at all.
  if (resumed.position.mid_epoch()) {
    check_mid_epoch_resume(resumed.train, run.effective, resumed.position, resumed.epoch, options.resume_path);
  }
  std::vector<std::string> changed = check_resume(resumed.train, resumed.epoch, run.effective, options.resume_path);
  const bool optimizer_restored = resumed.train.optimizer == options.optimizer;
  if (!changed.empty() && run.distributed.is_main()) {
    std::cerr << "ember: warning: --allow-config-change: resuming " << options.resume_path
              << " with other options than it was trained with, so the run will not equal an uninterrupted one:\n";
    for (const std::string& change : changed) std::cerr << "  " << change << "\n";
    if (!optimizer_restored) std::cerr << "  (the optimizer changed: its state starts afresh)\n";
    std::cerr << std::flush;
  }
  return optimizer_restored;
}

// The model the flags ask for, on this data. A CNN views each example as C x H x W: IDX
// images bring {1, rows, cols}, CSV rows need --input-shape (a usage error without it or
// when it does not hold the row's features).
ModelConfig model_config_for(const TrainOptions& options, const LoadedData& data) {
  if (is_spec_model(options.model)) return spec_model_config(options.model, options.input_shape, data);
  ModelConfig config;
  config.in_features = data.num_features;
  config.hidden = options.hidden;
  config.num_classes = data.num_classes;
  config.dropout = options.dropout;
  config.kind = options.model;
  if (config.kind != "cnn") return config;
  config.channels = options.channels;
  config.input_shape = !options.input_shape.empty() ? options.input_shape : data.image_shape;
  if (config.input_shape.empty()) {
    throw UsageError(make_message("--model cnn on ", data.spec, " needs --input-shape C,H,W (how each example's ",
                                  data.num_features, " features form an image)"));
  }
  try {
    check_model_config(config);
  } catch (const ValueError& error) {
    throw UsageError(make_message("--model cnn on ", data.spec, ": ", error.what()));
  }
  return config;
}

// Tutorial §7: manual_seed, model, optimizer, DataLoader(train, shuffle=True).
void build_model_and_loader(TrainingRun& run) {
  const TrainOptions& options = run.options;
  DistributedMode& distributed = run.distributed;
  manual_seed(options.seed);
  run.model = build_model(run.config);
  run.model->to(run.device);
  run.optimizer = make_optimizer(options, run.model->parameters());
  // Distributed: DDP broadcasts rank 0's parameters and averages every gradient; the
  // optimizer keeps updating the inner model's parameters, which DDP shares.
  run.trained = run.model;
  if (distributed.active()) run.trained = std::make_shared<distributed::DistributedDataParallel>(run.model);
  auto train_set = std::make_shared<data::TensorDataset>(run.split.train.features, run.split.train.labels);
  data::DataLoaderOptions loader_options;
  loader_options.batch_size = options.batch_size;
  loader_options.shuffle = true;
  if (distributed.active()) {
    // Each rank its own share, reshuffled every epoch from --seed + epoch (set_epoch).
    run.sampler = std::make_shared<distributed::DistributedSampler>(
        train_set->size(), distributed.world_size(), distributed.rank(), /*shuffle=*/true, options.seed);
    loader_options.shuffle = false;
    loader_options.sampler = run.sampler;
  }
  loader_options.drop_last = options.drop_last;
  loader_options.num_workers = options.workers;
  run.loader = std::make_unique<data::DataLoader>(train_set, loader_options);
  EMBER_CHECK(run.loader->size() > 0, ValueError, "--batch-size ", options.batch_size,
              " with --drop-last leaves no batch of the ", run.split.train.size(), " training examples");
  run.schedule = LrSchedule(options, *run.optimizer,
                            optimizer_steps_per_epoch(static_cast<std::int64_t>(run.loader->size()), options.grad_accum));
  run.stepper.emplace(options, *run.optimizer, *run.trained, run.schedule);
}

// --resume: parameters, optimizer state and generator state, and where the run stands.
void restore_from_checkpoint(TrainingRun& run, const Checkpoint& resumed, bool optimizer_restored) {
  check_state_fits(resumed.model_state, *run.model);
  run.model->load_state_dict(resumed.model_state);
  // The optimizer's state (momentum buffers, moments), but not its param_groups: the
  // hyper-parameters are this run's options (with --allow-config-change they may differ
  // from the checkpoint's, and the new checkpoint records what was used).
  if (optimizer_restored) {
    run.optimizer->load_state_dict(to_device(without_param_groups(resumed.optimizer_state), run.device));
  }
  // The schedule's state (and the lr it set) when the checkpoint ran the same schedule.
  if (same_schedule(resumed.train, run.options) && !resumed.scheduler_state.empty()) {
    run.schedule.load_state_dict(resumed.scheduler_state);
  } else if (run.schedule.active() && run.distributed.is_main()) {
    std::cerr << "ember: warning: --allow-config-change: the learning-rate schedule starts afresh\n" << std::flush;
  }
  // --precision fp16: the loss scale and its growth count, as they were.
  if (run.stepper->grad_scaler().is_enabled() && !resumed.grad_scaler_state.empty()) {
    try {
      run.stepper->grad_scaler().load_state_dict(resumed.grad_scaler_state);
    } catch (const ValueError& error) {  // a damaged checkpoint: name it
      throw IOError(make_message(run.options.resume_path, ": ", error.what()));
    }
  }
  default_generator().set_state(resumed.generator_state);
  run.first_epoch = resumed.epoch;
  run.step = resumed.step;
  // A mid-epoch checkpoint (--save-every): its epoch resumes at the next batch, if it still
  // has the same batches (loader_position.h; the options were checked before).
  if (resumed.position.mid_epoch()) {
    check_mid_epoch_batches(run.effective, resumed.position, resumed.epoch, run.loader->size(), run.options.resume_path);
    run.resume_position = resumed.position;
    run.resumed_batch = resumed.position.batches_done;
  }
}

void print_run_header(const TrainingRun& run) {
  const TrainOptions& options = run.options;
  std::cout << "Training a " << describe_model(run.config) << " on " << run.data.spec << " ("
            << run.split.train.size() << " training, " << (run.split.validation ? run.split.validation->size() : 0)
            << " validation, " << (run.data.test ? run.data.test->size() : 0) << " test examples) on "
            << run.device.str() << "\n";
  if (run.config.kind == "spec") std::cout << run.model->repr() << "\n";  // as print(model) shows it
  std::cout << "  " << options.optimizer << " lr " << options.hyperparameters.lr << ", batch size "
            << options.batch_size << ", " << options.epochs << " epochs, seed " << options.seed;
  if (run.resumed_batch > 0) {
    std::cout << ", resuming in epoch " << run.first_epoch + 1 << " after batch " << run.resumed_batch << " of "
              << run.loader->size();
  } else if (run.first_epoch > 0) {
    std::cout << ", resuming after epoch " << run.first_epoch;
  }
  std::cout << "\n";
  if (std::string extras = describe_schedule(options); !extras.empty()) std::cout << "  " << extras << "\n";
  if (run.distributed.active()) {
    std::cout << "  distributed: " << run.distributed.world_size() << " ranks (" << run.distributed.backend()
              << "), batch size " << options.batch_size << " per rank, "
              << options.batch_size * run.distributed.world_size() << " per step\n";
  }
  // The preprocessing and class count are part of the model (checkpoint.h): say them.
  std::cout << "  input scale " << describe_input_scale(run.data.input_scale) << ", " << run.data.num_classes
            << " classes\n";
  std::cout << std::flush;
}

}  // namespace

void set_up_training(TrainingRun& run) {
  const TrainOptions& options = run.options;
  run.device = choose_device(run.distributed.device_request());
  std::optional<Checkpoint> resumed;
  if (!options.resume_path.empty()) resumed = load_checkpoint(options.resume_path);
  load_run_data(run, resumed);
  const bool optimizer_restored = !resumed || check_resumed_config(run, *resumed);
  run.split = split_validation(run.data.train, options.val_split, options.seed);
  run.config = model_config_for(options, run.data);
  // A spec file edited since the checkpoint: the same --model text, another model.
  if (resumed && run.config.kind == "spec" && resumed->model.kind == "spec" && !options.allow_config_change &&
      !same_spec(run.config.spec, resumed->model.spec)) {
    throw ValueError(make_message("--resume ", options.resume_path, ": the layers of --model ", options.model,
                                  " differ from the checkpoint's (resume with the spec it was trained with, or add "
                                  "--allow-config-change)"));
  }
  check_model_fits_memory(run.config);  // before anything is allocated
  build_model_and_loader(run);
  if (resumed) restore_from_checkpoint(run, *resumed, optimizer_restored);
  set_up_early_stopping(run, resumed ? &*resumed : nullptr);

  ProgressReporter::Style style = ProgressReporter::detect_style(options.quiet || !run.distributed.is_main());
  if (style != ProgressReporter::Style::Quiet) print_run_header(run);
  if (!options.log_path.empty() && run.distributed.is_main()) {
    run.log = MetricsLog(options.log_path, run.first_epoch, run.step, run.resumed_batch);
  }
  if (!options.tensorboard_dir.empty() && run.distributed.is_main()) {  // every log line, as scalars
    auto writer = std::make_shared<TensorBoardWriter>(options.tensorboard_dir);
    run.log.add_sink([writer](const std::string& line) { writer->write_metrics_event(line); });
  }
  run.progress.emplace(style, options.epochs, run.loader->size());
}

}  // namespace ember::cli
