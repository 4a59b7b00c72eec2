// apps/cli/main.cpp — `ember`, the command-line trainer: parses arguments, runs a command.
//
//   ember train   [--data fashion-mnist|toy|idx:DIR|csv:FILE] [--model mlp|cnn|gpt] [--hidden 256,128] ...
//   ember eval    --checkpoint PATH [--data ...]
//   ember predict --checkpoint PATH --input FILE [--json]
//   ember sample  --checkpoint GPT.st [--prompt TEXT] [--tokens N] [--temperature X] [--top-k K]
//   ember info    [--checkpoint PATH [--print-config]]
//   ember plot    LOG.jsonl [LOG ...] -o curves.svg|png   (plot_command.h)
//   ember train --config FILE.json [flags that override it] [--print-config]   (config_file.h)
// With flag_checks.cpp, train_flags.cpp and config_file.cpp, the only files that include CLI11
// (a slow header). It turns the command line
// into the plain structs of options.h and maps outcomes to exit codes:
//   0  success
//   1  the command failed: missing or corrupt data, a checkpoint that does not fit, no GPU
//      (an ember::Error, printed as one line "ember: error: ...")
//   2  the command line itself is wrong: CLI11's message followed by the usage, or a
//      UsageError found when the command starts ("ember: error: ...", usage_error.h)
//   130 interrupted by Ctrl-C, 143 stopped by SIGTERM (the shell convention 128 + signal)
// The tutorial's training loop (§7) lives in train_command.cpp; see docs/cli.md.
#include <algorithm>
#include <new>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include <ember/core/error.h>
#include <ember/core/kernel_mode.h>

#include "config_file.h"
#include "gpt_flags.h"
#include "gpt_training.h"
#include "flag_checks.h"
#include "model.h"
#include "model_spec.h"
#include "monitor.h"
#include "options.h"
#include "output_paths.h"
#include "plot_command.h"
#include "step_profiler.h"
#include "train_flags.h"
#include "usage_error.h"

namespace {

using namespace ember::cli;

// The command chosen on the command line, set by its sub-command's callback during parsing
// and run afterwards (so a failure inside it is not mistaken for a parse error).
using Command = std::function<int()>;

// CSV header: by default decided from the first line (a non-number cell: a header);
// --header / --no-header say it outright.
void add_header_flags(CLI::App& command, DataOptions& data) {
  CLI::Option* header = command.add_flag_callback(
      "--header", [&data] { data.csv_header = CsvHeader::Yes; },
      "CSV: the first line is a header (default: when it has a cell that is not a number)");
  CLI::Option* no_header = command.add_flag_callback(
      "--no-header", [&data] { data.csv_header = CsvHeader::No; }, "CSV: the first line is data, not a header");
  header->excludes(no_header);
}

void add_data_options(CLI::App& command, DataOptions& data, const std::string& what) {
  command.add_option("--data", data.spec, what)->check(CLI::Validator(check_data_spec, "DATA"));
  command.add_option("--label-column", data.csv_label_column, "CSV: index of the column holding the class")
      ->check(whole_number_at_least(0));
  add_header_flags(command, data);
}

void add_device_option(CLI::App& command, std::string& device) {
  command.add_option("--device", device, "auto (CUDA when available), cpu, cuda or cuda:N")
      ->check(CLI::Validator(check_device, "DEVICE"));
}


// `ember frobnicate`: CLI11 only says that a subcommand is required; name the unknown one.
bool unknown_command(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const std::string name = argv[1];
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->check_name(name)) return false;
  }
  std::cerr << "ember: error: unknown command '" << name << "' (expected train, eval, predict, sample, info or plot)\n"
            << app.help() << std::flush;
  return true;
}

void add_train_command(CLI::App& app, TrainOptions& train, Command& run) {
  CLI::App* command = app.add_subcommand("train", "Train an MLP or CNN classifier (the tutorial's training loop)");
  add_data_options(*command, train.data, "Training data: fashion-mnist, toy, idx:DIR or csv:FILE");
  command->add_option("--val-split", train.val_split, "Fraction of the training set held out for validation")
      ->check(number_in_range(0.0, 1.0, /*high_included=*/false));
  command
      ->add_option_function<std::string>(
          "--monitor", [&train](const std::string& name) { train.monitor = *parse_monitor(name); },
          "Epoch metric watched by --lr-schedule plateau and early stopping: val_loss, val_acc or train_loss "
          "(default: val_loss with --val-split, else train_loss)")
      ->check(CLI::Validator(
          [](const std::string& name) -> std::string {
            if (parse_monitor(name)) return "";
            return "expected val_loss, val_acc or train_loss, got '" + name + "'";
          },
          "METRIC"));
  command->add_option("--model", train.model,
                      "mlp (default), cnn (two Conv2d/ReLU/MaxPool2d stages, then Linear) or spec:FILE.json (a list "
                      "of PyTorch layers, docs/cli.md)")
      ->check(CLI::Validator(check_model_choice, "MODEL"));
  command->add_option("--hidden", train.hidden,
                      "Hidden Linear widths, e.g. 256,128 (default 256,128 for mlp, 128 for cnn)")
      ->delimiter(',')
      ->check(whole_number_in(1, kMaxLayerWidth));
  command->add_option("--dropout", train.dropout, "Dropout probability after each hidden ReLU (mlp)")
      ->check(number_in_range(0.0, 1.0, /*high_included=*/true));
  command->add_option("--channels", train.channels, "cnn: output channels of each Conv2d stage (default 32,64)")
      ->delimiter(',')
      ->check(whole_number_in(1, kMaxLayerWidth));
  command->add_option("--input-shape", train.input_shape,
                      "cnn: C,H,W of each example (IDX images: 1,rows,cols; CSV data needs it)")
      ->delimiter(',')
      ->expected(3)
      ->check(whole_number_in(1, kMaxLayerWidth));
  command->add_option("--epochs", train.epochs, "Number of passes over the training set (in total, also with --resume)")
      ->check(whole_number_at_least(1));
  command->add_option("--batch-size", train.batch_size, "Examples per optimiser step")
      ->check(whole_number_in(1, kMaxBatchSize));
  command->add_option("--lr", train.hyperparameters.lr, "Learning rate")->check(real_number(false));
  command->add_option("--momentum", train.hyperparameters.momentum, "SGD momentum")->check(real_number(true));
  command->add_option("--weight-decay", train.hyperparameters.weight_decay, "L2 penalty (decoupled for adamw)")
      ->check(real_number(true));
  command->add_flag("--nesterov", train.hyperparameters.nesterov, "Nesterov momentum (SGD)");
  command->add_option("--optimizer", train.optimizer, "sgd, adam or adamw")
      ->check(CLI::IsMember({"sgd", "adam", "adamw"}));
  command->add_option("--seed", train.seed, "Seed of the random generator (model init, shuffling, dropout)")
      ->check(seed_number());
  command->add_flag("--drop-last", train.drop_last, "Skip the last batch of an epoch when it is incomplete");
  command->add_option("--workers", train.workers, "DataLoader worker threads")
      ->check(whole_number_in(0, kMaxWorkers));
  add_model_data_options(*command, train);
  add_gpt_options(*command, train);
  add_checkpoint_options(*command, train);
  add_schedule_options(*command, train);
  add_device_option(*command, train.device);
  command->add_option("--precision", train.precision,
                      "fp32 (default), bf16 or fp16: each forward pass and loss under autocast, matrix products "
                      "and convolutions in 16 bits, float32 parameters and loss; fp16 with dynamic loss scaling "
                      "(docs/mixed-precision.md)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  command->add_option("--timeout", train.timeout_s,
                      "Distributed: seconds the rendezvous and each collective wait for a peer (default: "
                      "EMBER_TIMEOUT, else 600)")
      ->check(number_in_range(0.001, 31536000.0, /*high_included=*/true));
  command->add_option("--save", train.save_path, "Checkpoint (safetensors) written at each epoch end");
  command->add_option("--resume", train.resume_path, "Continue exactly from this checkpoint (same options)")
      ->check(CLI::ExistingFile);
  command->add_flag("--allow-config-change", train.allow_config_change,
                    "With --resume: continue although options differ from the checkpoint's");
  command->add_option("--log", train.log_path, "Metrics log: one JSON object per line");
  command->add_option("--log-every", train.log_every, "Also log the loss every N optimiser steps")
      ->check(whole_number_at_least(0));
  command->add_option("--tensorboard", train.tensorboard_dir,
                      "Also write the log's metrics as TensorBoard scalars to an event file in this directory");
  command->add_flag("-q,--quiet", train.quiet, "No progress output, only the summary");
  command->add_option("--profile-steps", train.profile_steps,
                      "Profile optimizer steps A-B (or step A): a table of where their time goes, by op, printed "
                      "at the end")
      ->type_name("A-B")
      ->configurable(false);
  command->add_option("--profile-out", train.profile_out,
                      "With --profile-steps: also write the profile as a Chrome trace (chrome://tracing, "
                      "ui.perfetto.dev)")
      ->type_name("FILE.json")
      ->configurable(false);
  command->callback([&train, &run, command] {
    if (!train.profile_steps.empty()) {
      try {
        parse_profile_steps(train.profile_steps);
      } catch (const UsageError& error) {
        throw CLI::ValidationError(error.what());  // a bad range: exit 2
      }
    }
    if (!train.profile_out.empty() && train.profile_steps.empty()) {
      throw CLI::ValidationError("--profile-out", "needs --profile-steps (which steps to profile)");
    }
    // --model gpt has its own flags and loop (gpt_flags.h, gpt_training.h).
    check_gpt_options(*command, train);
    if (train.model == "gpt") {
      check_schedule_options(*command, train);
      run = [&train] { return run_train_gpt(train); };
      return;
    }
    // Combinations PyTorch's constructors refuse are usage errors too (exit code 2).
    bool sgd = train.optimizer == "sgd";
    if (!sgd && command->count("--momentum") > 0) {
      throw CLI::ValidationError("--momentum", "only --optimizer sgd takes a momentum (" + train.optimizer +
                                                   " keeps its own moment estimates)");
    }
    if (!sgd && train.hyperparameters.nesterov) throw CLI::ValidationError("--nesterov", "only --optimizer sgd has Nesterov momentum");
    if (train.hyperparameters.nesterov && train.hyperparameters.momentum <= 0) {
      throw CLI::ValidationError("--nesterov", "Nesterov momentum requires a momentum (--momentum > 0)");
    }
    // The CNN's own flags, and its default head (PyTorch's MNIST example: one Linear of 128).
    const bool cnn = train.model == "cnn";
    for (const char* flag : {"--hidden", "--dropout", "--channels"}) {  // a spec file has its own layers
      if (is_spec_model(train.model) && command->count(flag) > 0) {
        throw CLI::ValidationError(flag, "--model spec:FILE takes its layers from the file");
      }
    }
    for (const char* flag : {"--channels", "--input-shape"}) {
      if (!cnn && !is_spec_model(train.model) && command->count(flag) > 0) {
        throw CLI::ValidationError(flag, "only --model cnn takes it");
      }
    }
    if (cnn && train.dropout > 0) throw CLI::ValidationError("--dropout", "--model cnn has no dropout layers");
    if (train.hidden.empty() && !is_spec_model(train.model)) {
      train.hidden = cnn ? std::vector<std::int64_t>{128} : std::vector<std::int64_t>{256, 128};
    }
    // --monitor (monitor.h): a validation metric needs a validation split.
    if (command->count("--monitor") == 0) {
      train.monitor = train.val_split > 0 ? Monitor::ValLoss : Monitor::TrainLoss;
    } else if (train.monitor != Monitor::TrainLoss && train.val_split <= 0) {
      throw CLI::ValidationError("--monitor", std::string(monitor_name(train.monitor)) +
                                                  " needs a validation split (--val-split > 0)");
    }
    check_schedule_options(*command, train);
    if (train.allow_config_change && train.resume_path.empty()) {
      throw CLI::ValidationError("--allow-config-change", "only means something with --resume");
    }
    check_checkpoint_options(train, *command);
    run = [&train] { return run_train(train); };
  });
}

void add_eval_command(CLI::App& app, EvalOptions& eval, Command& run) {
  CLI::App* command = app.add_subcommand("eval", "Accuracy, per-class accuracy and confusion matrix of a checkpoint");
  command->add_option("--checkpoint", eval.checkpoint_path, "Checkpoint written by ember train --save")
      ->required()
      ->check(CLI::ExistingFile);
  add_data_options(*command, eval.data, "Data to evaluate on (default: the checkpoint's; its test split)");
  add_device_option(*command, eval.device);
  command->add_option("--batch-size", eval.batch_size, "Examples per forward pass")
      ->check(whole_number_in(1, kMaxBatchSize));
  command->callback([&eval, &run, command] {
    eval.data_given = command->count("--data") > 0;
    run = [&eval] { return run_eval(eval); };
  });
}

void add_predict_command(CLI::App& app, PredictOptions& predict, Command& run) {
  CLI::App* command = app.add_subcommand("predict", "Predicted class and probabilities for each input example");
  command->add_option("--checkpoint", predict.checkpoint_path, "Checkpoint written by ember train --save")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--input", predict.input_path, "IDX images (.gz or not) or CSV rows (.csv)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--label-column", predict.csv.csv_label_column,
                      "CSV: index of the column holding the label")
      ->check(whole_number_at_least(0));
  add_header_flags(*command, predict.csv);
  command->add_flag("--no-label", predict.no_label,
                    "CSV: every column is a feature (default: told by the column count)");
  command->add_flag("--json", predict.json, "Print JSON instead of a table");
  add_device_option(*command, predict.device);
  command->callback([&predict, &run] { run = [&predict] { return run_predict(predict); }; });
}

// `ember sample`: text from a GPT's checkpoint (sample_command.cpp).
void add_sample_command(CLI::App& app, SampleOptions& sample, Command& run) {
  CLI::App* command = app.add_subcommand("sample", "Text from a GPT checkpoint of ember train --model gpt");
  command->add_option("--checkpoint", sample.checkpoint_path, "Checkpoint written by ember train --model gpt --save")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--prompt", sample.prompt, "Text the samples continue (default: a newline)");
  command->add_option("--tokens", sample.tokens, "New characters per sample (default 500)")
      ->check(whole_number_in(1, 1LL << 30));
  command->add_option("--temperature", sample.temperature,
                      "Divides the logits: below 1 more likely characters, above 1 more varied (default 0.8)")
      ->check(real_number(false));
  command->add_option("--top-k", sample.top_k, "Draw only among the K likeliest characters; 0: all (default 200)")
      ->check(whole_number_at_least(0));
  command->add_option("--seed", sample.seed, "Seed of the random generator (default 1337)")->check(seed_number());
  command->add_option("--num-samples", sample.num_samples, "Samples to draw (default 1)")
      ->check(whole_number_in(1, 1 << 20));
  command->add_flag("--no-cache", sample.no_cache, "Recompute the whole context every step instead of a KV cache");
  add_device_option(*command, sample.device);
  command->callback([&sample, &run] { run = [&sample] { return run_sample(sample); }; });
}

void add_plot_command(CLI::App& app, PlotOptions& plot, Command& run) {
  CLI::App* command = app.add_subcommand("plot", "Draw the curves of one or more --log files (SVG or PNG)");
  command->add_option("logs", plot.log_paths, "Metrics logs written by ember train --log (one run each)")->required();
  command->add_option("-o,--output", plot.output_path, "The image to write: a .svg or .png file")->required();
  command->add_flag("--log-loss", plot.log_loss, "Draw the loss on a logarithmic axis");
  command->add_option("--width", plot.width, "Width of the figure in pixels")->check(whole_number_in(400, 8000));
  command->callback([&plot, &run] { run = [&plot] { return run_plot(plot); }; });
}

// `ember info`, and with --checkpoint what a checkpoint holds (its model, its options).
void add_info_command(CLI::App& app, InfoOptions& info, Command& run) {
  CLI::App* command = app.add_subcommand("info", "Version, build options, devices and CPU features; or a checkpoint's "
                                                 "model and options (--checkpoint)");
  command->add_option("--checkpoint", info.checkpoint_path, "Describe this checkpoint: its model and options")
      ->check(CLI::ExistingFile);
  command->add_flag("--print-config", info.print_config,
                    "With --checkpoint: print the options it was trained with, as a --config file");
  command->callback([&info, &run, command] {
    if (info.print_config && info.checkpoint_path.empty()) {
      throw CLI::ValidationError("--print-config", "needs --checkpoint (ember train --print-config prints a run's)");
    }
    run = [&info] { return info.checkpoint_path.empty() ? run_info() : run_checkpoint_info(info); };
  });
}

int print_text(const std::string& text) {
  std::cout << text << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ember — train, evaluate and use MLP and CNN classifiers and character-level GPTs with the ember tensor engine", "ember"};
  app.require_subcommand(1);
  // On a usage error print CLI11's message and then the usage, as the issue asks.
  app.failure_message(CLI::FailureMessage::help);

  TrainOptions train;
  EvalOptions eval;
  PredictOptions predict;
  PlotOptions plot;
  SampleOptions sample;
  InfoOptions info;
  Command run;
  add_train_command(app, train, run);
  add_eval_command(app, eval, run);
  add_predict_command(app, predict, run);
  add_sample_command(app, sample, run);
  add_plot_command(app, plot, run);
  add_info_command(app, info, run);
  CLI::App& train_command = *app.get_subcommand("train");
  add_config_file_options(app, train_command);  // --config, --print-config (config_file.h)

  if (unknown_command(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    app.exit(error);  // prints the message and the usage to stderr
    return 2;
  }
  if (train_command.parsed()) {  // the effective options, for --print-config and the checkpoints
    train.config_json = effective_config_json(train_command);
    if (print_config_requested(train_command)) run = [&train] { return print_text(train.config_json); };
  }
  try {
    // EMBER_KERNELS (core/kernel_mode.h) is read at the first op; a bad value is the user's
    // to fix, so it is reported now, before anything runs, as a usage error.
    try {
      (void)ember::kernel_mode();
    } catch (const ember::ValueError& error) {
      throw UsageError(error.what());
    }
    return check_stdout_written(run());  // output_paths.h: a lost summary is a failure
  } catch (const UsageError& error) {  // found when the command started (usage_error.h)
    std::cout.flush();
    std::cerr << "ember: error: " << error.what() << "\n";
    return 2;
  } catch (const ember::Error& error) {
    std::cout.flush();
    std::cerr << "ember: error: " << error.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "ember: error: out of memory (a smaller model, --batch-size or data set may fit)\n";
    return 1;
  } catch (const std::exception& error) {
    std::cout.flush();
    std::cerr << "ember: internal error: " << error.what() << "\n";
    return 1;
  }
}
