// apps/cli/gpt_training.cpp — `ember train --model gpt` (see gpt_training.h for the loop).
#include "gpt_training.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <ember/data/text_corpus.h>
#include <ember/distributed/ddp.h>
#include <ember/nn/adam.h>
#include <ember/nn/clip_grad.h>
#include <ember/nn/gpt.h>
#include <ember/nn/grad_scaler.h>
#include <ember/nn/serialize.h>

#include "checkpoint.h"
#include "device_choice.h"
#include "distributed_mode.h"
#include "gpt_checkpoint.h"
#include "interrupt.h"
#include "lr_schedule.h"
#include "metrics_log.h"
#include "model_flops.h"
#include "output_paths.h"
#include "precision.h"
#include "progress.h"
#include "step_profiler.h"
#include "tensorboard_writer.h"

namespace ember::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string corpus_path(const std::string& spec) { return spec == "text" ? kDefaultTextCorpus : spec.substr(5); }

// nanoGPT's get_batch: B windows starting at ids drawn by randint(len(data) - T, (B,)) from the
// default generator; the targets are the same windows one character later. The windows are
// gathered with one index_select over a [B, T] grid of positions (start + 0 .. T-1).
std::pair<Tensor, Tensor> get_batch(const Tensor& data, std::int64_t block_size, std::int64_t batch_size,
                                    Device device) {
  Tensor starts = randint(0, data.size(0) - block_size, {batch_size});
  Tensor positions = starts.unsqueeze(1) + arange(block_size, TensorOptions().dtype(kLong)).unsqueeze(0);
  Tensor x = data.index_select(0, positions.reshape({-1})).view({batch_size, block_size});
  Tensor y = data.index_select(0, (positions + 1).reshape({-1})).view({batch_size, block_size});
  return {x.to(device), y.to(device)};
}

// Parameters, gradients and AdamW's two moments: 16 bytes per float32 parameter. A model
// that cannot fit is refused before any tensor is allocated (sizes near the flags' limits
// would otherwise overflow or exhaust memory halfway through the init).
void check_gpt_fits_memory(const nn::GPTConfig& config) {
  const long double c = static_cast<long double>(config.n_embd);
  const long double parameters = static_cast<long double>(config.vocab_size + config.block_size) * c +
                                 static_cast<long double>(config.n_layer) * (12 * c * c + 13 * c) + 2 * c;
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  const long double memory = pages > 0 && page_size > 0 ? static_cast<long double>(pages) * page_size : 0;
  if (memory == 0 || parameters * 16 <= memory) return;
  char text[64];
  std::snprintf(text, sizeof text, "%.3Lg parameters need about %.1Lf GiB", parameters,
                parameters * 16 / (1024.0L * 1024 * 1024));
  throw ValueError(make_message("the GPT (", config.n_layer, " layers, width ", config.n_embd, ") has ", text,
                                " for weights, gradients and AdamW's moments: more than this machine's ",
                                static_cast<long long>(memory / (1024.0L * 1024 * 1024)),
                                " GiB (use a smaller --n-embd or --n-layer)"));
}

// nanoGPT's configure_optimizers: weights that multiply (every parameter with >= 2 dims:
// Linear weights, the embeddings) decay; biases and LayerNorm parameters do not.
std::unique_ptr<optim::Optimizer> make_optimizer(const nn::GPT& model, const TrainOptions& options) {
  std::vector<Tensor> decay, no_decay;
  for (const auto& [name, parameter] : model.named_parameters())
    (parameter.dim() >= 2 ? decay : no_decay).push_back(parameter);
  optim::AdamOptions defaults{.lr = options.hyperparameters.lr, .beta1 = 0.9, .beta2 = 0.95};
  std::vector<optim::ParamGroup> groups = {{.params = decay, .weight_decay = options.hyperparameters.weight_decay},
                                           {.params = no_decay, .weight_decay = 0.0}};
  if (options.optimizer == "adam") return std::make_unique<optim::Adam>(groups, defaults);
  return std::make_unique<optim::AdamW>(groups, defaults);
}

struct GptRun {
  const TrainOptions& options;
  const DistributedMode& distributed;
  Device device;
  data::TextCorpus corpus;
  std::shared_ptr<nn::GPT> model;
  std::shared_ptr<nn::Module> trained;  // the model, or under ember-run its DDP wrapper
  std::unique_ptr<optim::Optimizer> optimizer;
  LrSchedule schedule;
  MetricsLog log;
  std::int64_t step = 0;
  double train_seconds = 0;  // time inside training steps (for tokens_per_s)
  Clock::time_point start;
  double last_train_loss = NAN, last_val_loss = NAN;
  ModelFlops flops{"token"};  // the summary's MFU (model_flops.h), per token
  amp::GradScaler grad_scaler{{.enabled = options.precision == "fp16"}};  // --precision fp16

  double tokens_per_s() const {  // the whole job's: every rank trains on B · T tokens a step
    const double tokens =
        static_cast<double>(step * options.batch_size * options.gpt.block_size * distributed.world_size());
    return train_seconds > 0 ? tokens / train_seconds : 0.0;
  }
};

// nanoGPT's estimate_loss: the mean loss over --eval-batches random batches of each split.
double estimate_loss(GptRun& run, const Tensor& split) {
  NoGradGuard no_grad;
  const PrecisionScope precision(run.options.precision, run.device);  // evaluated as trained
  double sum = 0;
  for (std::int64_t i = 0; i < run.options.gpt.eval_batches; ++i) {
    auto [x, y] = get_batch(split, run.options.gpt.block_size, run.options.batch_size, run.device);
    sum += nn::GPT::loss(run.model->forward(x), y).item<double>();
  }
  return sum / static_cast<double>(run.options.gpt.eval_batches);
}

// Under ember-run every rank calls this (the generators are gathered: a collective) and
// rank 0 writes the file.
void save_run(const GptRun& run) {
  if (run.options.save_path.empty()) return;
  std::vector<std::vector<std::uint8_t>> generators = run.distributed.all_gather_bytes(default_generator().get_state());
  if (!run.distributed.is_main()) return;
  GptCheckpoint checkpoint;
  checkpoint.config = run.model->config();
  checkpoint.vocabulary = run.corpus.vocabulary;
  checkpoint.data_spec = run.options.data.spec;
  checkpoint.step = run.step;
  checkpoint.generator_states = std::move(generators);
  for (const auto& [name, tensor] : run.model->state_dict()) checkpoint.model_state.insert(name, tensor.to(kCPU));
  for (const auto& [name, tensor] : run.optimizer->state_dict()) checkpoint.optimizer_state.insert(name, tensor.to(kCPU));
  checkpoint.scheduler_state = run.schedule.state_dict();
  checkpoint.grad_scaler_state = run.grad_scaler.state_dict();
  checkpoint.train_config = run.options.config_json;
  save_gpt_checkpoint(checkpoint, run.options.save_path);
}

// Rank 0 evaluates (with its own generator, as nanoGPT's master process does: every rank's
// model is the same), then every rank takes part in the save.
void evaluate_and_save(GptRun& run) {
  if (!run.distributed.is_main()) return save_run(run);
  run.model->eval();
  run.last_train_loss = estimate_loss(run, run.corpus.train);
  run.last_val_loss = estimate_loss(run, run.corpus.val);
  run.model->train();
  const double elapsed = seconds_since(run.start);
  run.log.gpt_eval(run.step, run.last_train_loss, run.last_val_loss, run.tokens_per_s(), elapsed);
  if (!run.options.quiet) {
    std::printf("step %lld/%lld: train loss %.4f, val loss %.4f, %.0f tokens/s, %s\n",
                static_cast<long long>(run.step), static_cast<long long>(run.options.gpt.max_steps),
                run.last_train_loss, run.last_val_loss, run.tokens_per_s(), format_duration(elapsed).c_str());
    std::fflush(stdout);
  }
  save_run(run);
}

// --resume: the options of the checkpoint's run (its --config JSON) against this run's.
// Everything that changes the numbers must be the same for the result to equal an
// uninterrupted run; where the output goes (--log, --save, --tensorboard), --device and
// --quiet may differ, and --max-steps may grow unless it sets a cosine schedule's length.
std::vector<std::string> config_differences(const std::string& saved_json, const std::string& current_json,
                                            const TrainOptions& options) {
  const nlohmann::json saved = nlohmann::json::parse(saved_json, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json current = nlohmann::json::parse(current_json, nullptr, /*allow_exceptions=*/false);
  if (!saved.is_object() || !current.is_object()) return {"the checkpoint does not record its run's options"};
  static const std::set<std::string> free = {"log", "log-every", "save", "resume", "allow-config-change", "device",
                                             "quiet", "tensorboard", "config", "print-config", "max-steps"};
  std::vector<std::string> differences;
  auto text = [](const nlohmann::json& object, const std::string& key) {
    auto found = object.find(key);
    return found == object.end() ? std::string("(not set)") : found->dump();
  };
  std::set<std::string> keys;
  for (const auto& [key, value] : saved.items()) keys.insert(key);
  for (const auto& [key, value] : current.items()) keys.insert(key);
  for (const std::string& key : keys) {
    const bool schedule_length = key == "max-steps" && options.lr_schedule == "cosine";
    if ((free.count(key) != 0 && !schedule_length) || text(saved, key) == text(current, key)) continue;
    differences.push_back("--" + key + (schedule_length ? " (the cosine schedule's length)" : "") + ": checkpoint " +
                          text(saved, key) + ", now " + text(current, key));
  }
  return differences;
}

// Stops the run after a Ctrl-C or SIGTERM (on any rank, under ember-run): saves, says so.
int stop_interrupted(const GptRun& run) {
  save_run(run);
  if (run.distributed.is_main()) {
    std::cerr << "\nember: " << interrupted_word() << " after step " << run.step
              << (run.options.save_path.empty() ? std::string("; nothing saved (no --save)")
                                                : "; the model at that step is in " + run.options.save_path)
              << "\n";
  }
  return interrupted_exit_code();
}

void check_split(const Tensor& split, const char* name, const std::string& path, std::int64_t block_size) {
  EMBER_CHECK(split.size(0) > block_size, ValueError, "text file ", path, ": its ", name, " split has ",
              split.size(0), " characters; --block-size ", block_size, " needs at least ", block_size + 1,
              " (a longer text or a smaller --block-size)");
}

}  // namespace

int run_train_gpt(const TrainOptions& options) {
  const Clock::time_point start = Clock::now();
  const std::string path = corpus_path(options.data.spec);
  // Outputs that could not be written fail now; one that is an input would destroy it.
  if (!options.save_path.empty()) check_save_path(options.save_path);
  if (!options.log_path.empty()) check_log_path(options.log_path);
  if (!options.tensorboard_dir.empty()) check_tensorboard_dir(options.tensorboard_dir);
  if (!options.profile_out.empty()) check_save_path(options.profile_out, "--profile-out");
  check_distinct_paths(options);
  std::optional<GptCheckpoint> resumed;
  if (!options.resume_path.empty()) resumed = load_gpt_checkpoint(options.resume_path);
  install_interrupt_handler();
  // Under ember-run (WORLD_SIZE): rank r seeds --seed + r, so each rank draws its own batches
  // (nanoGPT's seed_offset); DDP then starts every rank from rank 0's weights, which are
  // those of a single process with the same --seed.
  DistributedMode distributed(options.device, options.timeout_s);
  const Device device = choose_device(distributed.device_request());
  manual_seed(options.seed + static_cast<std::uint64_t>(distributed.rank()));
  data::TextCorpus corpus = data::read_text_corpus(path);
  check_split(corpus.train, "training", path, options.gpt.block_size);
  check_split(corpus.val, "validation", path, options.gpt.block_size);

  nn::GPTConfig config;
  config.vocab_size = corpus.vocabulary.size();
  config.block_size = options.gpt.block_size;
  config.n_layer = options.gpt.n_layer;
  config.n_head = options.gpt.n_head;
  config.n_embd = options.gpt.n_embd;
  config.dropout = options.dropout;
  nn::check_gpt_config(config);
  check_gpt_fits_memory(config);
  if (resumed) {
    const std::string& from = options.resume_path;
    EMBER_CHECK(resumed->vocabulary.characters() == corpus.vocabulary.characters(), ValueError, "--resume ", from,
                ": the checkpoint's vocabulary (", resumed->vocabulary.size(), " characters) is not that of ", path,
                " (", corpus.vocabulary.size(), "): it was trained on other text");
    EMBER_CHECK(resumed->step <= options.gpt.max_steps, ValueError, "--max-steps ", options.gpt.max_steps,
                " is below the step of ", from, " (", resumed->step, "): --max-steps counts every step");
    std::vector<std::string> differences = config_differences(resumed->train_config, options.config_json, options);
    if (resumed->generator_states.size() != static_cast<std::size_t>(distributed.world_size()))
      differences.push_back("ranks (ember-run): checkpoint " + std::to_string(resumed->generator_states.size()) +
                            ", now " + std::to_string(distributed.world_size()));
    if (!differences.empty()) {
      std::string list;
      for (const std::string& difference : differences) list += "\n  " + difference;
      EMBER_CHECK(options.allow_config_change, ValueError, "--resume ", from,
                  ": the run would not continue the checkpoint's, its options differ:", list,
                  "\n(--allow-config-change continues with the new ones)");
      if (distributed.is_main())
        std::cerr << "ember: warning: --allow-config-change: continuing " << from << " with other options:" << list
                  << "\n" << std::flush;
    }
    const nn::GPTConfig& saved = resumed->config;
    EMBER_CHECK(saved.block_size == config.block_size && saved.n_layer == config.n_layer &&
                    saved.n_head == config.n_head && saved.n_embd == config.n_embd,
                ValueError, "--resume ", from, ": the checkpoint's GPT (context ", saved.block_size, ", ", saved.n_layer,
                " layers, ", saved.n_head, " heads, width ", saved.n_embd, ") is not the one these flags describe");
  }
  auto model = std::make_shared<nn::GPT>(config);
  if (resumed) {
    try {
      model->load_state_dict(resumed->model_state);
    } catch (const Error& error) {
      throw IOError(make_message(options.resume_path, ": its weights do not fit its GPT: ", error.what()));
    }
  }
  model->to(device);
  std::shared_ptr<nn::Module> trained = model;  // DDP broadcasts rank 0's weights, averages gradients
  if (distributed.active()) trained = std::make_shared<distributed::DistributedDataParallel>(model);
  auto optimizer = make_optimizer(*model, options);
  TrainOptions schedule_options = options;
  schedule_options.epochs = 1;  // the schedule's steps are the run's --max-steps
  GptRun run{options, distributed, device, std::move(corpus), model, trained, std::move(optimizer), {}, {}, 0, 0,
             start};
  run.schedule = LrSchedule(schedule_options, *run.optimizer, options.gpt.max_steps);
  if (resumed) {
    // The moments and step counts, with this run's hyper-parameters (the same ones unless
    // --allow-config-change); the schedule's state when it is the same schedule; the
    // generator, so the next batches are those the uninterrupted run drew.
    run.optimizer->load_state_dict(to_device(without_param_groups(resumed->optimizer_state), device));
    if (run.grad_scaler.is_enabled() && !resumed->grad_scaler_state.empty()) {
      try {
        run.grad_scaler.load_state_dict(resumed->grad_scaler_state);
      } catch (const ValueError& error) {  // a damaged checkpoint: name it
        throw IOError(make_message(options.resume_path, ": ", error.what()));
      }
    }
    const bool same_schedule = config_differences(resumed->train_config, options.config_json, options).empty();
    if (same_schedule && !resumed->scheduler_state.empty()) {
      run.schedule.load_state_dict(resumed->scheduler_state);
    } else if (options.lr_schedule != "constant" && distributed.is_main()) {
      std::cerr << "ember: warning: --allow-config-change: the learning-rate schedule starts afresh\n" << std::flush;
    }
    // Each rank its own generator. A checkpoint of fewer ranks (--allow-config-change) leaves
    // the new ranks theirs from --seed + rank.
    const auto rank = static_cast<std::size_t>(distributed.rank());
    if (rank < resumed->generator_states.size()) default_generator().set_state(resumed->generator_states[rank]);
    run.step = resumed->step;
  }
  const bool speaks = distributed.is_main();  // rank 0 prints, logs and saves for the job
  if (!options.log_path.empty() && speaks) run.log = MetricsLog(options.log_path, 0, run.step);
  if (!options.tensorboard_dir.empty() && speaks) {  // every log line, as scalars (tensorboard_writer.h)
    auto writer = std::make_shared<TensorBoardWriter>(options.tensorboard_dir);
    run.log.add_sink([writer](const std::string& line) { writer->write_metrics_event(line); });
  }

  if (!options.quiet && speaks) {
    std::printf("GPT: %lld parameters (%lld without position embeddings), vocabulary %lld characters, "
                "context %lld, %lld layers, %lld heads, width %lld\n",
                static_cast<long long>(model->num_parameters(false)), static_cast<long long>(model->num_parameters()),
                static_cast<long long>(config.vocab_size), static_cast<long long>(config.block_size),
                static_cast<long long>(config.n_layer), static_cast<long long>(config.n_head),
                static_cast<long long>(config.n_embd));
    std::printf("data: %s, %lld training and %lld validation characters; device %s\n", path.c_str(),
                static_cast<long long>(run.corpus.train.size(0)), static_cast<long long>(run.corpus.val.size(0)),
                device.str().c_str());
    if (distributed.active())
      std::printf("distributed: %d ranks (%s), batch %lld per rank, %lld per step\n", distributed.world_size(),
                  distributed.backend().c_str(), static_cast<long long>(options.batch_size),
                  static_cast<long long>(options.batch_size * distributed.world_size()));
    std::fflush(stdout);
  }

  model->train();
  const auto& gpt = options.gpt;
  StepProfiler profiling(options, speaks, device);
  while (run.step < gpt.max_steps) {
    if (!distributed.active() && interrupt_requested()) return stop_interrupted(run);  // ranks: after the step
    profiling.before_batch(run.step);  // --profile-steps: the step's "ProfilerStep#N" block (step_profiler.h)
    const Clock::time_point step_start = Clock::now();
    auto [x, y] = get_batch(run.corpus.train, gpt.block_size, options.batch_size, device);
    run.flops.begin_step(x.numel());  // the summary's MFU counts one step's FLOPs, per token
    Tensor loss;
    {
      const PrecisionScope precision(options.precision, device);  // --precision bf16: autocast (precision.h)
      loss = nn::GPT::loss(run.trained->forward(x), y);
    }
    run.grad_scaler.scale(loss).backward();  // --precision fp16: scaled (a no-op otherwise)
    run.flops.end_step();
    run.grad_scaler.unscale_(*run.optimizer);
    if (options.clip_grad_norm > 0) nn::utils::clip_grad_norm_(model->parameters(), options.clip_grad_norm);
    const double lr = run.optimizer->learning_rate();
    run.grad_scaler.step(*run.optimizer);  // skipped when a float16 gradient overflowed
    run.grad_scaler.update();
    run.schedule.after_optimizer_step();
    run.optimizer->zero_grad(/*set_to_none=*/true);
    // The job's loss, the mean over ranks (one all-reduce, which also tells every rank whether
    // any was interrupted); alone, this process's.
    const DistributedMode::StepAgreement agreed = distributed.agree_on_step(loss.item<float>(), interrupt_requested());
    const auto loss_value = static_cast<float>(agreed.loss);
    run.train_seconds += seconds_since(step_start);
    ++run.step;
    EMBER_CHECK(std::isfinite(loss_value) || !options.stop_on_nan, ValueError, "the training loss became ",
                loss_value, " at step ", run.step, " (a smaller --lr or --clip-grad-norm may help; --no-stop-on-nan",
                " trains on)");
    if (options.log_every > 0 && run.step % options.log_every == 0)
      run.log.gpt_step(run.step, loss_value, lr, run.tokens_per_s());
    profiling.after_batch(run.step);  // the evaluation and checkpoint below are not part of the step
    if ((gpt.eval_every > 0 && run.step % gpt.eval_every == 0) || run.step == gpt.max_steps) evaluate_and_save(run);
    if (distributed.active() && agreed.interrupted && run.step < gpt.max_steps) return stop_interrupted(run);
  }

  distributed.barrier();  // training is over on every rank
  if (!speaks) return 0;
  const double elapsed = seconds_since(start);
  run.log.gpt_summary(run.last_train_loss, run.last_val_loss, run.tokens_per_s(), elapsed, run.step, device.str());
  std::printf("trained %lld steps in %s: train loss %.4f, val loss %.4f, %.0f tokens/s%s\n",
              static_cast<long long>(run.step), format_duration(elapsed).c_str(), run.last_train_loss,
              run.last_val_loss, run.tokens_per_s(),
              options.save_path.empty() ? "" : (", saved to " + options.save_path).c_str());
  // Model FLOPs per second of one rank over its device's peak (model_flops.h), as llm.c prints.
  const std::string mfu = run.flops.mfu_text(run.tokens_per_s() / distributed.world_size(), device, options.precision);
  if (!mfu.empty()) std::printf("MFU: %s\n", mfu.c_str());
  profiling.finish();  // --profile-steps: the table, the trace
  return 0;
}

}  // namespace ember::cli
