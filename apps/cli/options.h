// apps/cli/options.h — the settings of each `ember` sub-command, as plain structs.
//
// main.cpp fills these from the command line (CLI11); the commands (train_command.cpp,
// eval_command.cpp, predict_command.cpp, info_command.cpp) only ever see the structs, so
// they can be read (and tested) without knowing anything about argument parsing.
// The training defaults are chosen so that `ember train` with no arguments (`make run`)
// trains a 784-256-128-10 MLP on Fashion-MNIST to >= 88% test accuracy, while the neutral
// ones (no momentum, no weight decay, no dropout, no validation split) keep the program
// identical to the tutorial's §7 loop (tests/reference/cli_reference.py).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ember/core/sgd_options.h>

namespace ember::cli {

// Whether a CSV file's first line is a header. Auto (the default) decides from the line
// itself: a first line with any cell that is not a number is a header, a line of numbers
// is data — so neither a header is read as an example nor an example lost as a header.
enum class CsvHeader { Auto, Yes, No };

// Where examples come from: "fashion-mnist", "toy", "idx:DIR" or "csv:FILE".
struct DataOptions {
  std::string spec = "fashion-mnist";
  std::int64_t csv_label_column = 0;      // which CSV column holds the class index
  CsvHeader csv_header = CsvHeader::Auto;  // --header / --no-header / neither
  // --num-classes: labels must lie in [0, N). 0: taken as the largest label + 1, refused
  // when that leaves more than half of the classes without an example (datasets.h).
  std::int64_t num_classes = 0;
  // --input-scale: features are multiplied by it (datasets.h). 0: the data's default,
  // 1/255 for IDX images (fashion-mnist, idx:DIR), 1 for csv:FILE and toy.
  double input_scale = 0;
};

// --monitor: the epoch metric early stopping and --lr-schedule plateau watch (monitor.h).
enum class Monitor { TrainLoss, ValLoss, ValAcc };

struct TrainOptions {
  DataOptions data;
  double val_split = 0.0;  // fraction of the training set held out for validation
  // main.cpp: ValLoss when --val-split > 0 and --monitor is not given.
  Monitor monitor = Monitor::TrainLoss;

  // Model (model.h): "mlp", Linear/ReLU(/Dropout) layers with these hidden widths, or "cnn",
  // two Conv2d/ReLU/MaxPool2d stages of `channels` then Linear(hidden[0]) and the output layer.
  std::string model = "mlp";
  // main.cpp: {256, 128} for mlp, {128} for cnn unless given (empty until then, so that an
  // explicit 256,128 in a --config file is not mistaken for the default: config_file.h)
  std::vector<std::int64_t> hidden;
  double dropout = 0.0;
  std::vector<std::int64_t> channels = {32, 64};
  // --input-shape C,H,W: how a CSV row's features form an image (a CNN on CSV data needs it;
  // IDX images bring their own, 1 x rows x cols).
  std::vector<std::int64_t> input_shape;
  // --model gpt (gpt_training.h): a character-level GPT on --data text:FILE, trained for
  // --max-steps optimizer steps on random windows (no epochs).
  struct Gpt {
    std::int64_t block_size = 64;  // --block-size: context length T
    std::int64_t n_layer = 2;      // --n-layer
    std::int64_t n_head = 4;       // --n-head
    std::int64_t n_embd = 128;     // --n-embd
    std::int64_t max_steps = 2000;
    std::int64_t eval_every = 200;  // 0: evaluate after the last step only
    std::int64_t eval_batches = 20;
  } gpt;

  // Optimisation.
  std::int64_t epochs = 20;
  std::int64_t batch_size = 32;
  // --lr, --momentum, --weight-decay, --nesterov, written by the command line straight into
  // the optimizer's own options object: optim::SGD keeps it (validated once, its
  // param_group), checkpoints record it, and the fused kernel's plan embeds it
  // (core/sgd_options.h, docs/architecture.md "One hyperparameter object"). Adam and AdamW
  // take its lr and weight_decay.
  optim::SGDOptions hyperparameters{.lr = 0.1};
  std::string optimizer = "sgd";  // sgd | adam | adamw
  // Learning-rate schedule (lr_schedule.h): constant | step | multistep | exponential |
  // cosine | onecycle | plateau, and its flags (main.cpp checks which go together).
  std::string lr_schedule = "constant";
  std::int64_t lr_step_size = 0;             // step: epochs between decays
  double lr_gamma = 0.1;                     // step, multistep, exponential; plateau's factor
  std::vector<std::int64_t> lr_milestones;   // multistep: epochs, increasing
  double lr_min = 0.0;                       // cosine's eta_min, plateau's min_lr
  std::int64_t lr_patience = 10;             // plateau
  std::int64_t warmup_steps = 0;             // LinearLR warm-up over the first N optimizer steps
  // Gradients (optimizer_step.h): clipping (0: off) and accumulation over N micro-batches.
  double clip_grad_norm = 0;
  double clip_grad_value = 0;
  std::int64_t grad_accum = 1;
  std::uint64_t seed = 0;
  bool drop_last = false;
  std::int64_t workers = 0;

  std::string device = "auto";  // auto | cpu | cuda | cuda:N
  // Distributed (under ember-run): seconds the rendezvous and each collective wait for a
  // peer; 0: EMBER_TIMEOUT, else 600 (distributed_mode.h).
  double timeout_s = 0;

  // Output.
  std::string save_path;    // checkpoint written at each epoch end
  std::string resume_path;  // checkpoint to continue from
  // --resume refuses options that differ from the checkpoint's unless this is set
  // (--allow-config-change); then it continues with the new ones.
  bool allow_config_change = false;
  std::string log_path;     // JSON lines metrics log
  std::int64_t log_every = 0;  // also log every N optimiser steps (0: epochs only)
  std::string tensorboard_dir;  // --tensorboard: the log's events as TensorBoard scalars
  // --profile-steps A-B: the op profiler over those optimizer steps, its table printed at the
  // end; --profile-out FILE: its Chrome trace (step_profiler.h). Not part of a --config.
  std::string profile_steps;
  std::string profile_out;
  bool quiet = false;
  // Early stopping and checkpoints (issue 20): --save-every N also writes --save every N
  // optimiser steps inside an epoch (loader_position.h; 0: at epoch ends only);
  // --early-stop PATIENCE (0: off) and --min-delta (early_stopping.h); --save-best PATH
  // keeps the model of the best epoch so far.
  std::int64_t save_every = 0;
  std::int64_t early_stop_patience = 0;
  double min_delta = 0;
  std::string save_best_path;

  // Hardening (issue 16): a non-finite training loss stops the run unless --no-stop-on-nan;
  // world_size is the number of ranks (recorded in checkpoints, compared on --resume).
  bool stop_on_nan = true;
  // --precision: fp32, or bf16 / fp16 autocast around each forward pass and loss (matrix
  // products and convolutions in 16 bits, float32 parameters and loss: docs/mixed-precision.md).
  std::string precision = "fp32";
  std::int64_t world_size = 1;

  // The effective options as a --config file (JSON, config_file.h), made by main.cpp from
  // the parsed command line; checkpoints keep it for `ember info --checkpoint C --print-config`.
  std::string config_json;
};

struct EvalOptions {
  std::string checkpoint_path;
  DataOptions data;
  bool data_given = false;  // false: use the data the checkpoint was trained on
  std::string device = "auto";
  std::int64_t batch_size = 1000;
};

struct PredictOptions {
  std::string checkpoint_path;
  std::string input_path;  // IDX images (gzipped or not) or CSV rows
  DataOptions csv;         // label column / header for a CSV input
  bool no_label = false;   // --no-label: the CSV rows are features only (else told by the column count)
  bool json = false;
  std::string device = "auto";
};

// `ember sample --checkpoint C ...` (sample_command.cpp): text from a GPT's checkpoint.
// The defaults are nanoGPT's sample.py's, but one sample.
struct SampleOptions {
  std::string checkpoint_path;
  std::optional<std::string> prompt;  // unset: "\n"
  std::int64_t tokens = 500;          // new characters per sample
  double temperature = 0.8;
  std::int64_t top_k = 200;           // 0: every character may be drawn
  std::uint64_t seed = 1337;
  std::int64_t num_samples = 1;
  bool no_cache = false;              // recompute the whole context every step
  std::string device = "auto";
};

// `ember info --checkpoint PATH [--print-config]` (checkpoint_info.cpp).
struct InfoOptions {
  std::string checkpoint_path;  // empty: plain `ember info`
  bool print_config = false;
};

// Each returns the process exit code (0 success; errors are thrown as ember::Error and
// turned into exit code 1 by main.cpp).
int run_train(const TrainOptions& options);
int run_eval(const EvalOptions& options);
int run_predict(const PredictOptions& options);
int run_sample(const SampleOptions& options);
int run_info();
int run_checkpoint_info(const InfoOptions& options);

}  // namespace ember::cli
