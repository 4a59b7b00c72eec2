// apps/cli/metrics_log.cpp — writes the JSON-lines metrics log (see metrics_log.h).
#include "metrics_log.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>

namespace ember::cli {

namespace {
nlohmann::json optional_number(bool present, double value) {
  return present ? nlohmann::json(value) : nlohmann::json(nullptr);
}

// Whether a log line belongs to the history up to a checkpoint of `epoch` epochs and `step`
// steps. A line that is not a JSON object of ours does not (it ends the kept part).
bool before_checkpoint(const std::string& line, std::int64_t epoch, std::int64_t step) {
  nlohmann::json entry = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!entry.is_object()) return false;
  const auto event = entry.find("event");
  if (event == entry.end() || !event->is_string()) return false;
  auto number_at_most = [&](const char* key, std::int64_t limit) {
    const auto value = entry.find(key);
    return value != entry.end() && value->is_number_integer() && value->get<std::int64_t>() <= limit;
  };
  if (*event == "step" || *event == "eval") return number_at_most("step", step);  // eval: --model gpt
  if (*event == "epoch") return number_at_most("epoch", epoch);
  return false;  // "summary": the end of a finished run, not of the checkpoint
}

// Cuts the regular file `path` back to its lines up to the checkpoint; returns how many
// lines were removed.
std::int64_t cut_back_to_checkpoint(const std::string& path, std::int64_t epoch, std::int64_t step) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return 0;
  std::string line;
  std::uintmax_t kept_bytes = 0;
  std::int64_t removed = 0;
  bool cutting = false;
  while (std::getline(file, line)) {
    if (!cutting && before_checkpoint(line, epoch, step) && !file.eof()) {
      kept_bytes += line.size() + 1;  // +1: the '\n' getline consumed
      continue;
    }
    cutting = true;
    if (!line.empty()) ++removed;
  }
  file.close();
  if (removed > 0 || std::filesystem::file_size(path) != kept_bytes) {
    std::error_code error;
    std::filesystem::resize_file(path, kept_bytes, error);
    EMBER_CHECK(!error, IOError, path, ": cannot cut the metrics log back to the checkpoint (", error.message(), ")");
  }
  return removed;
}
}  // namespace

MetricsLog::MetricsLog(const std::string& path, std::int64_t resumed_epoch, std::int64_t resumed_step,
                       std::int64_t resumed_batch)
    : path_(path) {
  std::error_code error;
  const bool regular = std::filesystem::is_regular_file(path, error);
  // A mid-epoch checkpoint of the first epoch (--save-every) has epoch 0 and steps.
  const bool resumed = resumed_epoch > 0 || resumed_step > 0;
  if (resumed && regular) {
    std::int64_t removed = cut_back_to_checkpoint(path, resumed_epoch, resumed_step);
    if (removed > 0) {
      std::cerr << "ember: note: --log " << path << ": removed " << removed << " line" << (removed == 1 ? "" : "s")
                << " written after step " << resumed_step;
      if (resumed_batch > 0) {
        std::cerr << " (batch " << resumed_batch << " of epoch " << resumed_epoch + 1;
      } else if (resumed_epoch == 0) {  // --model gpt: steps without epochs
        std::cerr << " (";
      } else {
        std::cerr << " (the end of epoch " << resumed_epoch;
      }
      std::cerr << (resumed_batch > 0 || resumed_epoch > 0 ? ", " : "") << "where the --resume checkpoint stands)\n"
                << std::flush;
    }
  }
  // A resumed run appends; a fresh one starts the file anew (a FIFO or device is only written to).
  file_.open(path, resumed || !regular ? std::ios::app : std::ios::trunc);
  EMBER_CHECK(file_.is_open(), IOError, path, ": cannot open the metrics log for writing (", std::strerror(errno),
              ")");
}

void MetricsLog::write_line(const std::string& line) {
  for (const Sink& sink : sinks_) sink(line);
  if (!file_.is_open()) return;  // sinks only (--tensorboard without --log)
  errno = 0;
  file_ << line << "\n" << std::flush;
  if (!file_) {
    const int reason = errno;
    // Closed: the destructor must not try to flush into the same error again.
    file_.close();
    throw IOError(make_message("--log ", path_, ": cannot write the metrics log (",
                               reason != 0 ? std::strerror(reason) : "write failed", ")"));
  }
}

void MetricsLog::step(std::int64_t epoch, std::int64_t step, float loss, double lr,
                      std::optional<double> grad_norm) {
  if (!enabled()) return;
  // float -> double is exact; nlohmann writes a double with the digits needed to read it
  // back identically, so no precision is lost (the lr is compared with PyTorch's exactly).
  nlohmann::json line = {{"event", "step"},
                         {"epoch", epoch},
                         {"step", step},
                         {"loss", static_cast<double>(loss)},
                         {"lr", lr},
                         {"grad_norm", optional_number(grad_norm.has_value(), grad_norm.value_or(0.0))}};
  write_line(line.dump());
}

void MetricsLog::epoch(const EpochMetrics& m) {
  if (!enabled()) return;
  nlohmann::json line = {{"event", "epoch"},
                         {"epoch", m.epoch},
                         {"train_loss", m.train_loss},
                         {"train_acc", m.train_acc},
                         {"val_loss", optional_number(m.has_val, m.val_loss)},
                         {"val_acc", optional_number(m.has_val, m.val_acc)},
                         {"lr", m.lr},
                         {"samples_per_s", m.samples_per_s},
                         {"elapsed_s", m.elapsed_s},
                         {"step", m.step}};
  write_line(line.dump());
}

void MetricsLog::early_stop(std::int64_t epoch, const std::string& monitor, double best, std::int64_t best_epoch,
                            std::int64_t patience, double min_delta) {
  if (!enabled()) return;
  nlohmann::json line = {{"event", "early_stop"},
                         {"epoch", epoch},
                         {"monitor", monitor},
                         {"best", optional_number(best_epoch > 0, best)},
                         {"best_epoch", best_epoch},
                         {"patience", patience},
                         {"min_delta", min_delta}};
  write_line(line.dump());
}

void MetricsLog::summary(const SummaryMetrics& m) {
  if (!enabled()) return;
  nlohmann::json line = {{"event", "summary"},
                         {"train_acc", m.train_acc},
                         {"val_acc", optional_number(m.has_val, m.val_acc)},
                         {"test_acc", optional_number(m.has_test, m.test_acc)},
                         {"elapsed_s", m.elapsed_s},
                         {"device", m.device}};
  write_line(line.dump());
}

void MetricsLog::gpt_step(std::int64_t step, float loss, double lr, double tokens_per_s) {
  if (!enabled()) return;
  nlohmann::json line = {{"event", "step"},
                         {"step", step},
                         {"loss", static_cast<double>(loss)},
                         {"lr", lr},
                         {"tokens_per_s", tokens_per_s}};
  write_line(line.dump());
}

void MetricsLog::gpt_eval(std::int64_t step, double train_loss, double val_loss, double tokens_per_s,
                          double elapsed_s) {
  if (!enabled()) return;
  nlohmann::json line = {{"event", "eval"},          {"step", step},
                         {"train_loss", train_loss}, {"val_loss", val_loss},
                         {"tokens_per_s", tokens_per_s}, {"elapsed_s", elapsed_s}};
  write_line(line.dump());
}

void MetricsLog::gpt_summary(double train_loss, double val_loss, double tokens_per_s, double elapsed_s,
                             std::int64_t steps, const std::string& device) {
  if (!enabled()) return;
  nlohmann::json line = {{"event", "summary"},          {"train_loss", train_loss}, {"val_loss", val_loss},
                         {"tokens_per_s", tokens_per_s}, {"elapsed_s", elapsed_s},  {"steps", steps},
                         {"device", device}};
  write_line(line.dump());
}

}  // namespace ember::cli
