// apps/cli/tensorboard_writer.cpp — TensorBoard event files (see tensorboard_writer.h).
#include "tensorboard_writer.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>

#include "tensorboard_record.h"
#include "usage_error.h"

#if EMBER_HAVE_TENSORBOARD
#include "tensorboard_event.pb.h"
#endif

namespace ember::cli {

namespace fs = std::filesystem;

namespace {

double unix_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// The tag of `key` in a metrics event of kind `event` ("step", "epoch", "summary").
std::string tag_for(const std::string& event, const std::string& key) {
  static const std::map<std::pair<std::string, std::string>, std::string> named = {
      {{"step", "loss"}, "loss/train_step"},
      {{"step", "lr"}, "lr"},
      {{"step", "grad_norm"}, "grad_norm"},
      {{"epoch", "train_loss"}, "loss/train"},
      {{"epoch", "val_loss"}, "loss/val"},
      {{"epoch", "train_acc"}, "accuracy/train"},
      {{"epoch", "val_acc"}, "accuracy/val"},
      {{"epoch", "samples_per_s"}, "samples_per_s"},
      {{"epoch", "epoch"}, "epoch"},
      {{"summary", "train_acc"}, "final/train_acc"},
      {{"summary", "val_acc"}, "final/val_acc"},
      {{"summary", "test_acc"}, "final/test_acc"},
      // --model gpt (gpt_training.h): evaluations at a step, tokens per second.
      {{"eval", "train_loss"}, "loss/train"},
      {{"eval", "val_loss"}, "loss/val"},
      {{"eval", "tokens_per_s"}, "tokens_per_s"},
      {{"step", "tokens_per_s"}, "tokens_per_s"},
      {{"summary", "train_loss"}, "final/train_loss"},
      {{"summary", "val_loss"}, "final/val_loss"},
  };
  const auto found = named.find({event, key});
  return found != named.end() ? found->second : event + "/" + key;
}

// Keys that place an event rather than measure anything.
bool is_position(const std::string& event, const std::string& key) {
  return key == "event" || key == "step" || (event == "step" && key == "epoch");
}

}  // namespace

std::string tensorboard_file_name(std::int64_t unix_seconds, const std::string& hostname) {
  return "events.out.tfevents." + std::to_string(unix_seconds) + "." + hostname;
}

void check_tensorboard_dir(const std::string& dir) {
  if (!tensorboard_available()) throw NotImplementedError(tensorboard_unavailable());
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_directory(dir, error)) {
    throw UsageError(make_message("--tensorboard ", dir, ": exists and is not a directory (expected a directory for "
                                  "the event files)"));
  }
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
  check_tensorboard_dir(dir);
  std::error_code error;
  fs::create_directories(dir, error);
  EMBER_CHECK(!error, IOError, "--tensorboard ", dir, ": cannot create the directory (", error.message(), ")");
  const double now = unix_time_now();
  const std::string base = (fs::path(dir) / tensorboard_file_name(static_cast<std::int64_t>(now), host_name())).string();
  path_ = base;
  for (int suffix = 2; fs::exists(path_, error); ++suffix) path_ = base + "." + std::to_string(suffix);
  file_.open(path_, std::ios::binary | std::ios::trunc);
  EMBER_CHECK(file_.is_open(), IOError, "--tensorboard ", dir, ": cannot create ", path_, " (", std::strerror(errno),
              ")");
#if EMBER_HAVE_TENSORBOARD
  ember::tensorboard::Event first;
  first.set_wall_time(now);
  first.set_file_version("brain.Event:2");
  write_record(first.SerializeAsString());
#endif
}

void TensorBoardWriter::write_record(const std::string& serialized_event) {
  errno = 0;
  file_ << tfrecord_frame(serialized_event) << std::flush;
  if (!file_) {
    const int reason = errno;
    file_.close();
    throw IOError(make_message("--tensorboard: cannot write ", path_, " (",
                               reason != 0 ? std::strerror(reason) : "write failed", ")"));
  }
}

void TensorBoardWriter::write_scalars(std::int64_t step, const std::vector<std::pair<std::string, double>>& scalars) {
  if (scalars.empty()) return;
#if EMBER_HAVE_TENSORBOARD
  ember::tensorboard::Event event;
  event.set_wall_time(unix_time_now());
  event.set_step(step);
  for (const auto& [tag, value] : scalars) {
    ember::tensorboard::SummaryValue* entry = event.mutable_summary()->add_value();
    entry->set_tag(tag);
    entry->set_simple_value(static_cast<float>(value));  // TensorBoard's scalars are float32
  }
  write_record(event.SerializeAsString());
#else
  (void)step;
  throw NotImplementedError(tensorboard_unavailable());
#endif
}

void TensorBoardWriter::write_metrics_event(const std::string& json_line) {
  const nlohmann::json entry = nlohmann::json::parse(json_line, nullptr, /*allow_exceptions=*/false);
  if (!entry.is_object() || !entry.contains("event") || !entry["event"].is_string()) return;
  const std::string event = entry["event"];
  std::int64_t step = last_step_;
  if (const auto found = entry.find("step"); found != entry.end() && found->is_number_integer()) {
    step = found->get<std::int64_t>();
  }
  last_step_ = std::max(last_step_, step);
  std::vector<std::pair<std::string, double>> scalars;
  for (const auto& [key, value] : entry.items()) {
    // null is a metric that does not exist (no validation set) or was not finite.
    if (is_position(event, key) || !value.is_number()) continue;
    scalars.emplace_back(tag_for(event, key), value.get<double>());
  }
  write_scalars(step, scalars);
}

}  // namespace ember::cli
