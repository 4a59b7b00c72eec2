// apps/cli/gpt_flags.cpp — the --model gpt flags and their checks (see gpt_flags.h).
#include "gpt_flags.h"

#include <string>

#include "flag_checks.h"

namespace ember::cli {

namespace {

// Every GPT dimension is bounded so that the model's parameter count cannot overflow before
// the memory check (gpt_training.cpp) refuses a model that does not fit.
constexpr long long kMaxGptDimension = 1 << 20;

// The flags a character-level GPT run has no use for.
constexpr const char* kClassifierOnlyFlags[] = {
    "--hidden", "--channels", "--input-shape", "--val-split", "--epochs", "--momentum", "--nesterov",
    "--label-column", "--header", "--no-header", "--num-classes", "--input-scale", "--workers", "--drop-last",
    "--save-every", "--save-best", "--early-stop", "--min-delta", "--monitor",
    "--grad-accum", "--clip-grad-value", "--lr-step-size", "--lr-milestones", "--lr-patience",
    "--lr-gamma"};

constexpr const char* kGptOnlyFlags[] = {"--block-size", "--n-layer",    "--n-head",      "--n-embd",
                                         "--max-steps",  "--eval-every", "--eval-batches"};

bool is_text_data(const std::string& spec) { return spec == "text" || spec.rfind("text:", 0) == 0; }

}  // namespace

void add_gpt_options(CLI::App& command, TrainOptions& train) {
  command.add_option("--block-size", train.gpt.block_size, "gpt: context length in characters (default 64)")
      ->check(whole_number_in(1, kMaxGptDimension));
  command.add_option("--n-layer", train.gpt.n_layer, "gpt: transformer blocks (default 2)")
      ->check(whole_number_in(1, 1024));
  command.add_option("--n-head", train.gpt.n_head, "gpt: attention heads; --n-embd must be a multiple (default 4)")
      ->check(whole_number_in(1, kMaxGptDimension));
  command.add_option("--n-embd", train.gpt.n_embd, "gpt: embedding width (default 128)")
      ->check(whole_number_in(1, kMaxGptDimension));
  command.add_option("--max-steps", train.gpt.max_steps, "gpt: optimizer steps to train (default 2000)")
      ->check(whole_number_in(1, 1LL << 40));
  command.add_option("--eval-every", train.gpt.eval_every,
                     "gpt: estimate train and validation loss every N steps (0: after the last only; default 200)")
      ->check(whole_number_at_least(0));
  command.add_option("--eval-batches", train.gpt.eval_batches, "gpt: batches per loss estimate (default 20)")
      ->check(whole_number_in(1, 1LL << 30));
}

void check_gpt_options(const CLI::App& command, TrainOptions& train) {
  if (train.model != "gpt") {
    for (const char* flag : kGptOnlyFlags)
      if (command.count(flag) > 0) throw CLI::ValidationError(flag, "only --model gpt takes it");
    if (is_text_data(train.data.spec))
      throw CLI::ValidationError("--data", "text data trains a language model: use it with --model gpt");
    return;
  }
  for (const char* flag : kClassifierOnlyFlags)
    if (command.count(flag) > 0)
      throw CLI::ValidationError(flag, "--model gpt does not take it (it trains for --max-steps on random windows)");
  if (command.count("--data") == 0) train.data.spec = "text";
  if (!is_text_data(train.data.spec))
    throw CLI::ValidationError("--data", "--model gpt trains on text: --data text or text:FILE, got '" +
                                             train.data.spec + "'");
  if (command.count("--optimizer") == 0) train.optimizer = "adamw";
  if (train.optimizer != "adamw" && train.optimizer != "adam")
    throw CLI::ValidationError("--optimizer", "--model gpt trains with adamw or adam (nanoGPT's two groups)");
  if (command.count("--lr") == 0) train.hyperparameters.lr = 1e-3;
  if (command.count("--weight-decay") == 0) train.hyperparameters.weight_decay = 0.1;
  if (train.dropout >= 1.0) throw CLI::ValidationError("--dropout", "a GPT with dropout 1 learns nothing; use [0, 1)");
  if (train.gpt.n_embd % train.gpt.n_head != 0)
    throw CLI::ValidationError("--n-embd", "--n-embd " + std::to_string(train.gpt.n_embd) +
                                               " must be a multiple of --n-head " + std::to_string(train.gpt.n_head));
  if (train.lr_schedule != "constant" && train.lr_schedule != "cosine")
    throw CLI::ValidationError("--lr-schedule", "--model gpt steps its schedule per optimizer step: constant or cosine");
  if (train.warmup_steps >= train.gpt.max_steps && train.lr_schedule == "cosine")
    throw CLI::ValidationError("--warmup-steps", "the warm-up must be shorter than --max-steps");
}

}  // namespace ember::cli
