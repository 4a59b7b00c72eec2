// apps/cli/checkpoint.cpp — packs a training state into safetensors and back (see checkpoint.h).
#include "checkpoint.h"

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>
#include <ember/nn/serialize.h>

#include "json_field.h"
#include "metadata_text.h"
#include "monitor.h"

namespace ember::cli {

namespace {

constexpr const char* kFormat = "ember-cli-checkpoint/1";

nlohmann::json config_json(const Checkpoint& c) {
  const TrainOptions& t = c.train;
  nlohmann::json config = {{"in_features", c.model.in_features},
          {"model", c.model.kind},
          {"hidden", c.model.hidden},
          {"num_classes", c.model.num_classes},
          {"dropout", c.model.dropout},
          {"data", c.data_spec},
          {"class_names", c.class_names},
          {"input_scale", c.input_scale},
          {"train",
           {{"epochs", t.epochs},
            {"batch_size", t.batch_size},
            {"lr", t.hyperparameters.lr},
            {"momentum", t.hyperparameters.momentum},
            {"weight_decay", t.hyperparameters.weight_decay},
            {"nesterov", t.hyperparameters.nesterov},
            {"optimizer", t.optimizer},
            {"seed", t.seed},
            {"drop_last", t.drop_last},
            {"val_split", t.val_split},
            {"workers", t.workers},
            {"csv_label_column", t.data.csv_label_column},
            // What the file turned out to have (train_command.cpp resolves Auto before saving).
            {"csv_header", t.data.csv_header == CsvHeader::Yes},
            {"world_size", t.world_size},
            // --lr-schedule and the gradient flags (absent in older files: their defaults).
            {"lr_schedule", t.lr_schedule},
            {"lr_step_size", t.lr_step_size},
            {"lr_gamma", t.lr_gamma},
            {"lr_milestones", t.lr_milestones},
            {"lr_min", t.lr_min},
            {"lr_patience", t.lr_patience},
            {"warmup_steps", t.warmup_steps},
            {"monitor", monitor_name(t.monitor)},
            {"clip_grad_norm", t.clip_grad_norm},
            {"clip_grad_value", t.clip_grad_value},
            {"grad_accum", t.grad_accum},
            {"precision", t.precision}}}};
  if (c.model.kind == "cnn") {  // absent for an MLP, as in checkpoints written before --model
    config["channels"] = c.model.channels;
    config["input_shape"] = c.model.input_shape;
  }
  if (c.model.kind == "spec") {  // --model spec:FILE: the resolved layers, so no file is needed to rebuild
    config["spec"] = nlohmann::json::parse(c.model.spec);
    config["spec_model"] = t.model;
    if (!c.model.input_shape.empty()) config["input_shape"] = c.model.input_shape;
  }
  return config;
}

// "epoch" / "step": a non-negative whole number in plain digits ("-5", "2abc", "" refused).
std::int64_t whole_number_field(const std::string& text, const char* name, const std::string& path) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  EMBER_CHECK(digits_only && error == std::errc() && end == text.data() + text.size(), IOError, path,
              ": the checkpoint's \"", name, "\" metadata is \"", text, "\", not a non-negative whole number");
  return value;
}

// The --lr-schedule and gradient flags; a checkpoint written before they existed ran with
// their defaults.
void read_schedule_options(const nlohmann::json& train, TrainOptions& options) {
  const TrainOptions defaults;
  options.lr_schedule = json_value(train, "lr_schedule", defaults.lr_schedule);
  options.lr_step_size = json_value(train, "lr_step_size", defaults.lr_step_size);
  options.lr_gamma = json_value(train, "lr_gamma", defaults.lr_gamma);
  options.lr_milestones = json_value(train, "lr_milestones", defaults.lr_milestones);
  options.lr_min = json_value(train, "lr_min", defaults.lr_min);
  options.lr_patience = json_value(train, "lr_patience", defaults.lr_patience);
  options.warmup_steps = json_value(train, "warmup_steps", defaults.warmup_steps);
  options.monitor = parse_monitor(json_value(train, "monitor", std::string(monitor_name(defaults.monitor))))
                        .value_or(defaults.monitor);
  options.clip_grad_norm = json_value(train, "clip_grad_norm", defaults.clip_grad_norm);
  options.clip_grad_value = json_value(train, "clip_grad_value", defaults.clip_grad_value);
  options.grad_accum = json_value(train, "grad_accum", defaults.grad_accum);
  options.precision = json_value(train, "precision", defaults.precision);  // fp32 before --precision
}

}  // namespace

// Splits "prefix.rest" entries of a state dict into their own dict without the prefix.
nn::StateDict with_prefix_removed(const nn::StateDict& all, const std::string& prefix) {
  nn::StateDict part;
  for (const auto& [name, tensor] : all) {
    if (name.rfind(prefix, 0) == 0) part.insert(name.substr(prefix.size()), tensor);
  }
  return part;
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

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path) {
  nn::StateDict tensors;
  for (const auto& [name, tensor] : checkpoint.model_state) tensors.insert("model." + name, tensor);
  for (const auto& [name, tensor] : checkpoint.optimizer_state) tensors.insert("optimizer." + name, tensor);
  for (const auto& [name, tensor] : checkpoint.scheduler_state) tensors.insert("scheduler." + name, tensor);
  for (const auto& [name, tensor] : checkpoint.grad_scaler_state) tensors.insert("grad_scaler." + name, tensor);
  Metadata metadata = {{"format", kFormat},
                       {"epoch", std::to_string(checkpoint.epoch)},
                       {"step", std::to_string(checkpoint.step)},
                       {"generator", to_hex(checkpoint.generator_state)},
                       {"config", config_json(checkpoint).dump()}};
  if (checkpoint.position.mid_epoch()) metadata["position"] = position_to_text(checkpoint.position);
  if (checkpoint.early_stopping) metadata["early_stopping"] = early_stopping_to_text(*checkpoint.early_stopping);
  // The run's options as a --config file (config_file.h): `ember info --checkpoint --print-config`.
  if (!checkpoint.train.config_json.empty()) metadata["train_config"] = checkpoint.train.config_json;
  save(tensors, path, metadata);
}

Checkpoint load_checkpoint(const std::string& path) {
  Metadata metadata;
  nn::StateDict tensors = load(path, &metadata);
  auto field = [&](const std::string& key) -> const std::string& {
    auto found = metadata.find(key);
    EMBER_CHECK(found != metadata.end(), IOError, path, ": not an ember train checkpoint (no \"", key,
                "\" in its metadata)");
    return found->second;
  };
  EMBER_CHECK(field("format") != "ember-gpt-checkpoint/1", IOError, path,
              ": a GPT's checkpoint (ember train --model gpt): ember sample and ember info read it");
  EMBER_CHECK(field("format") == kFormat, IOError, path, ": unsupported checkpoint format \"", field("format"),
              "\" (expected ", kFormat, ")");
  Checkpoint checkpoint;
  try {
    checkpoint.epoch = whole_number_field(field("epoch"), "epoch", path);
    checkpoint.step = whole_number_field(field("step"), "step", path);
    nlohmann::json config = nlohmann::json::parse(field("config"));
    checkpoint.model.in_features = json_get<std::int64_t>(config.at("in_features"));
    checkpoint.model.kind = json_value(config, "model", std::string("mlp"));  // absent before --model
    if (checkpoint.model.kind == "cnn") {
      checkpoint.model.channels = json_get<std::vector<std::int64_t>>(config.at("channels"));
      checkpoint.model.input_shape = json_get<std::vector<std::int64_t>>(config.at("input_shape"));
    }
    if (checkpoint.model.kind == "spec") {
      checkpoint.model.spec = config.at("spec").dump();
      checkpoint.model.input_shape = json_value(config, "input_shape", std::vector<std::int64_t>{});
    }
    checkpoint.model.hidden = json_get<std::vector<std::int64_t>>(config.at("hidden"));
    checkpoint.model.num_classes = json_get<std::int64_t>(config.at("num_classes"));
    checkpoint.model.dropout = json_get<double>(config.at("dropout"));
    checkpoint.data_spec = json_get<std::string>(config.at("data"));
    checkpoint.class_names = json_get<std::vector<std::string>>(config.at("class_names"));
    const nlohmann::json& train = config.at("train");
    checkpoint.train.data.spec = checkpoint.data_spec;
    checkpoint.train.data.csv_label_column = json_get<std::int64_t>(train.at("csv_label_column"));
    checkpoint.train.data.csv_header = json_get<bool>(train.at("csv_header")) ? CsvHeader::Yes : CsvHeader::No;
    checkpoint.train.model = checkpoint.model.kind == "spec" ? json_get<std::string>(config.at("spec_model"))
                                                             : checkpoint.model.kind;
    checkpoint.train.channels = checkpoint.model.channels;
    checkpoint.train.input_shape = checkpoint.model.input_shape;
    checkpoint.train.hidden = checkpoint.model.hidden;
    checkpoint.train.dropout = checkpoint.model.dropout;
    checkpoint.train.epochs = json_get<std::int64_t>(train.at("epochs"));
    checkpoint.train.batch_size = json_get<std::int64_t>(train.at("batch_size"));
    checkpoint.train.hyperparameters.lr = json_get<double>(train.at("lr"));
    checkpoint.train.hyperparameters.momentum = json_get<double>(train.at("momentum"));
    checkpoint.train.hyperparameters.weight_decay = json_get<double>(train.at("weight_decay"));
    checkpoint.train.hyperparameters.nesterov = json_get<bool>(train.at("nesterov"));
    checkpoint.train.optimizer = json_get<std::string>(train.at("optimizer"));
    checkpoint.train.seed = json_get<std::uint64_t>(train.at("seed"));
    checkpoint.train.drop_last = json_get<bool>(train.at("drop_last"));
    checkpoint.train.val_split = json_get<double>(train.at("val_split"));
    checkpoint.train.workers = json_value(train, "workers", std::int64_t{0});  // informative; absent in older files
    checkpoint.train.world_size = json_value(train, "world_size", std::int64_t{1});  // absent before issue 16
    read_schedule_options(train, checkpoint.train);
    // Absent before issue 16: the rule those versions applied (toy data as given, else / 255).
    checkpoint.input_scale = config.contains("input_scale") ? json_get<double>(config.at("input_scale"))
                             : checkpoint.data_spec == "toy" ? 1.0
                                                             : 1.0 / 255.0;
    checkpoint.train.data.input_scale = checkpoint.input_scale;
    checkpoint.train.data.num_classes = checkpoint.model.num_classes;
  } catch (const nlohmann::json::exception& error) {
    throw IOError(path + ": the checkpoint's config metadata is damaged (" + error.what() + ")");
  }
  EMBER_CHECK(checkpoint.epoch <= checkpoint.train.epochs, IOError, path, ": the checkpoint's epoch ", checkpoint.epoch,
              " is beyond its run's ", checkpoint.train.epochs, " epochs");
  EMBER_CHECK(std::isfinite(checkpoint.input_scale) && checkpoint.input_scale > 0, IOError, path,
              ": the checkpoint's input_scale ", checkpoint.input_scale, " is not a positive finite number");
  EMBER_CHECK(checkpoint.train.world_size >= 1, IOError, path, ": the checkpoint's world_size ",
              checkpoint.train.world_size, " is not a positive number");
  check_config_fits_state(checkpoint.model, with_prefix_removed(tensors, "model."), path);
  EMBER_CHECK(static_cast<std::int64_t>(checkpoint.class_names.size()) == checkpoint.model.num_classes, IOError, path,
              ": the checkpoint has ", checkpoint.class_names.size(), " class names for ", checkpoint.model.num_classes,
              " classes");
  checkpoint.generator_state = from_hex(field("generator"), path, "generator state");
  if (metadata.count("position") != 0) {
    checkpoint.position = position_from_text(metadata.at("position"), path);
    EMBER_CHECK(checkpoint.epoch < checkpoint.train.epochs, IOError, path, ": the checkpoint stands inside epoch ",
                checkpoint.epoch + 1, ", beyond its run's ", checkpoint.train.epochs, " epochs");
  }
  if (metadata.count("early_stopping") != 0) {
    checkpoint.early_stopping = early_stopping_from_text(metadata.at("early_stopping"), path);
  }
  if (auto found = metadata.find("train_config"); found != metadata.end()) checkpoint.train.config_json = found->second;
  checkpoint.model_state = with_prefix_removed(tensors, "model.");
  checkpoint.optimizer_state = with_prefix_removed(tensors, "optimizer.");
  checkpoint.scheduler_state = with_prefix_removed(tensors, "scheduler.");
  checkpoint.grad_scaler_state = with_prefix_removed(tensors, "grad_scaler.");
  return checkpoint;
}

}  // namespace ember::cli
