// apps/cli/resume_check.cpp — the checkpoint's options against the current ones (see resume_check.h).
#include "resume_check.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <ember/core/error.h>

#include "monitor.h"

namespace ember::cli {

namespace {

// The shortest text that reads back as the same double ("0.1", not "0.10000000000000001").
std::string number_text(double value) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

std::string widths_text(const std::vector<std::int64_t>& widths) {
  std::string text;
  for (std::size_t i = 0; i < widths.size(); ++i) text.append(i ? "," : "").append(std::to_string(widths[i]));
  return text;
}

std::string on_off(bool value) { return value ? "on" : "off"; }

// idx:DIR / csv:FILE with the path made absolute and normal, so "idx:data" and
// "idx:./data/" name the same data set; other specs as they are.
std::string resolved_data_spec(const std::string& spec) {
  if (spec.rfind("idx:", 0) != 0 && spec.rfind("csv:", 0) != 0) return spec;
  std::error_code error;
  std::filesystem::path path = std::filesystem::weakly_canonical(spec.substr(4), error);
  if (error) return spec;
  std::string text = path.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return spec.substr(0, 4) + text;
}

// --lr-schedule, its flags (those the schedule uses) and the gradient flags.
template <class Differ>
void schedule_differences(const TrainOptions& saved, const TrainOptions& now, Differ differ) {
  if (saved.lr_schedule != now.lr_schedule) differ("--lr-schedule", saved.lr_schedule, now.lr_schedule);
  const std::string& kind = now.lr_schedule;
  if (kind == "step" && saved.lr_step_size != now.lr_step_size) {
    differ("--lr-step-size", std::to_string(saved.lr_step_size), std::to_string(now.lr_step_size));
  }
  const bool uses_gamma = kind == "step" || kind == "multistep" || kind == "exponential" || kind == "plateau";
  if (uses_gamma && saved.lr_gamma != now.lr_gamma) {
    differ("--lr-gamma", number_text(saved.lr_gamma), number_text(now.lr_gamma));
  }
  if (kind == "multistep" && saved.lr_milestones != now.lr_milestones) {
    differ("--lr-milestones", widths_text(saved.lr_milestones), widths_text(now.lr_milestones));
  }
  if ((kind == "cosine" || kind == "plateau") && saved.lr_min != now.lr_min) {
    differ("--lr-min", number_text(saved.lr_min), number_text(now.lr_min));
  }
  if (kind == "plateau" && saved.lr_patience != now.lr_patience) {
    differ("--lr-patience", std::to_string(saved.lr_patience), std::to_string(now.lr_patience));
  }
  if (kind == "plateau" && saved.monitor != now.monitor) differ("--monitor", monitor_name(saved.monitor), monitor_name(now.monitor));
  if (saved.warmup_steps != now.warmup_steps) {
    differ("--warmup-steps", std::to_string(saved.warmup_steps), std::to_string(now.warmup_steps));
  }
  // The number of optimizer steps (cosine's T_max, onecycle's total) follows from --epochs.
  if ((kind == "cosine" || kind == "onecycle") && saved.epochs != now.epochs) {
    differ("--epochs (the schedule's length)", std::to_string(saved.epochs), std::to_string(now.epochs));
  }
  if (saved.precision != now.precision) differ("--precision", saved.precision, now.precision);
  if (saved.clip_grad_norm != now.clip_grad_norm) {
    differ("--clip-grad-norm", number_text(saved.clip_grad_norm), number_text(now.clip_grad_norm));
  }
  if (saved.clip_grad_value != now.clip_grad_value) {
    differ("--clip-grad-value", number_text(saved.clip_grad_value), number_text(now.clip_grad_value));
  }
  if (saved.grad_accum != now.grad_accum) {
    differ("--grad-accum", std::to_string(saved.grad_accum), std::to_string(now.grad_accum));
  }
}

}  // namespace

std::vector<std::string> config_differences(const TrainOptions& saved, const TrainOptions& now) {
  std::vector<std::string> differences;
  auto differ = [&](const char* flag, const std::string& then, const std::string& current) {
    differences.push_back(std::string(flag) + ": checkpoint " + then + ", now " + current);
  };
  if (resolved_data_spec(saved.data.spec) != resolved_data_spec(now.data.spec)) {
    differ("--data", saved.data.spec, now.data.spec);
  } else if (now.data.spec.rfind("csv:", 0) == 0) {
    if (saved.data.csv_label_column != now.data.csv_label_column) {
      differ("--label-column", std::to_string(saved.data.csv_label_column), std::to_string(now.data.csv_label_column));
    }
    if (saved.data.csv_header != now.data.csv_header) {
      auto header = [](CsvHeader h) { return std::string(h == CsvHeader::Yes ? "a header line" : "no header line"); };
      differ("--header/--no-header", header(saved.data.csv_header), header(now.data.csv_header));
    }
  }
  // The same data with another preprocessing or class count (other data: follows from them).
  if (resolved_data_spec(saved.data.spec) == resolved_data_spec(now.data.spec)) {
    if (saved.data.input_scale != now.data.input_scale) {
      differ("--input-scale", number_text(saved.data.input_scale), number_text(now.data.input_scale));
    }
    if (saved.data.num_classes != now.data.num_classes) {
      differ("--num-classes", std::to_string(saved.data.num_classes), std::to_string(now.data.num_classes));
    }
  }
  if (saved.val_split != now.val_split) differ("--val-split", number_text(saved.val_split), number_text(now.val_split));
  if (saved.model != now.model) {
    differ("--model", saved.model, now.model);
  } else if (now.model == "cnn") {
    if (saved.channels != now.channels) differ("--channels", widths_text(saved.channels), widths_text(now.channels));
    if (saved.input_shape != now.input_shape) {
      differ("--input-shape", widths_text(saved.input_shape), widths_text(now.input_shape));
    }
  }
  if (saved.hidden != now.hidden) differ("--hidden", widths_text(saved.hidden), widths_text(now.hidden));
  if (saved.dropout != now.dropout) differ("--dropout", number_text(saved.dropout), number_text(now.dropout));
  if (saved.batch_size != now.batch_size) {
    differ("--batch-size", std::to_string(saved.batch_size), std::to_string(now.batch_size));
  }
  if (saved.drop_last != now.drop_last) differ("--drop-last", on_off(saved.drop_last), on_off(now.drop_last));
  if (saved.optimizer != now.optimizer) differ("--optimizer", saved.optimizer, now.optimizer);
  const optim::SGDOptions& was = saved.hyperparameters;
  const optim::SGDOptions& is = now.hyperparameters;
  if (was.lr != is.lr) differ("--lr", number_text(was.lr), number_text(is.lr));
  if (was.momentum != is.momentum) differ("--momentum", number_text(was.momentum), number_text(is.momentum));
  if (was.nesterov != is.nesterov) differ("--nesterov", on_off(was.nesterov), on_off(is.nesterov));
  if (was.weight_decay != is.weight_decay) {
    differ("--weight-decay", number_text(was.weight_decay), number_text(is.weight_decay));
  }
  if (saved.seed != now.seed) differ("--seed", std::to_string(saved.seed), std::to_string(now.seed));
  schedule_differences(saved, now, differ);
  // The effective batch is batch size x ranks: another world size is another run.
  if (saved.world_size != now.world_size) {
    differ("world size (ranks)", std::to_string(saved.world_size), std::to_string(now.world_size));
  }
  return differences;
}

bool same_schedule(const TrainOptions& saved, const TrainOptions& now) {
  bool same = true;
  schedule_differences(saved, now, [&same](const char* flag, const std::string&, const std::string&) {
    if (std::string(flag).rfind("--clip", 0) != 0) same = false;  // clipping leaves the schedule as it was
  });
  return same;
}

DataOptions with_checkpoint_defaults(DataOptions given, const TrainOptions& saved) {
  // Other data (a difference check_resume reports) keep their own defaults.
  if (resolved_data_spec(given.spec) != resolved_data_spec(saved.data.spec)) return given;
  if (given.input_scale == 0) given.input_scale = saved.data.input_scale;
  if (given.num_classes == 0) given.num_classes = saved.data.num_classes;
  return given;
}

std::vector<std::string> check_resume(const TrainOptions& saved, std::int64_t saved_epoch, const TrainOptions& current,
                                      const std::string& checkpoint_path) {
  EMBER_CHECK(current.epochs >= saved_epoch, ValueError, "--epochs ", current.epochs, " is below the epoch of ",
              checkpoint_path, " (", saved_epoch, "): --epochs counts every epoch, those before --resume included");
  std::vector<std::string> differences = config_differences(saved, current);
  if (differences.empty() || current.allow_config_change) return differences;
  std::string message = "--resume " + checkpoint_path + ": the checkpoint was trained with other options:";
  for (const std::string& difference : differences) message += "\n  " + difference;
  message +=
      "\nresume with the checkpoint's values to continue exactly, or add --allow-config-change to continue with the "
      "new ones";
  throw ValueError(message);
}

}  // namespace ember::cli
