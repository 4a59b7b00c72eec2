// apps/cli/metrics_log.cpp — writes the JSON-lines metrics log (see metrics_log.h).
#include "metrics_log.h"

#include <nlohmann/json.hpp>

#include <ember/core/error.h>

namespace ember::cli {

namespace {
nlohmann::json optional_number(bool present, double value) {
  return present ? nlohmann::json(value) : nlohmann::json(nullptr);
}
}  // namespace

MetricsLog::MetricsLog(const std::string& path, bool append)
    : file_(path, append ? std::ios::app : std::ios::trunc) {
  EMBER_CHECK(file_.is_open(), IOError, path, ": cannot open the metrics log for writing");
}

void MetricsLog::step(std::int64_t epoch, std::int64_t step, float loss) {
  if (!enabled()) return;
  // float -> double is exact; nlohmann writes a double with the digits needed to read it
  // back identically, so no precision is lost.
  nlohmann::json line = {{"event", "step"}, {"epoch", epoch}, {"step", step}, {"loss", static_cast<double>(loss)}};
  file_ << line.dump() << "\n" << std::flush;
}

void MetricsLog::epoch(const EpochMetrics& m) {
  if (!enabled()) return;
  nlohmann::json line = {{"event", "epoch"},
                         {"epoch", m.epoch},
                         {"train_loss", m.train_loss},
                         {"train_acc", m.train_acc},
                         {"val_acc", optional_number(m.has_val, m.val_acc)},
                         {"samples_per_s", m.samples_per_s},
                         {"elapsed_s", m.elapsed_s}};
  file_ << line.dump() << "\n" << std::flush;
}

void MetricsLog::summary(const SummaryMetrics& m) {
  if (!enabled()) return;
  nlohmann::json line = {{"event", "summary"},
                         {"train_acc", m.train_acc},
                         {"val_acc", optional_number(m.has_val, m.val_acc)},
                         {"test_acc", optional_number(m.has_test, m.test_acc)},
                         {"elapsed_s", m.elapsed_s},
                         {"device", m.device}};
  file_ << line.dump() << "\n" << std::flush;
}

}  // namespace ember::cli
