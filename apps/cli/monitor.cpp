// apps/cli/monitor.cpp — the monitored epoch metric (see monitor.h).
#include "monitor.h"

#include <ember/core/error.h>

namespace ember::cli {

double monitored_value(const EpochMetrics& metrics, Monitor monitor) {
  switch (monitor) {
    case Monitor::TrainLoss:
      return metrics.train_loss;
    case Monitor::ValLoss:
    case Monitor::ValAcc:
      EMBER_CHECK(metrics.has_val, ValueError, "--monitor ", monitor_name(monitor),
                  " needs a validation split (--val-split)");
      return monitor == Monitor::ValLoss ? metrics.val_loss : metrics.val_acc;
  }
  throw ValueError("unknown --monitor value");
}

bool higher_is_better(Monitor monitor) { return monitor == Monitor::ValAcc; }

const char* monitor_name(Monitor monitor) {
  switch (monitor) {
    case Monitor::TrainLoss:
      return "train_loss";
    case Monitor::ValLoss:
      return "val_loss";
    case Monitor::ValAcc:
      return "val_acc";
  }
  return "?";
}

std::optional<Monitor> parse_monitor(const std::string& name) {
  for (Monitor monitor : {Monitor::TrainLoss, Monitor::ValLoss, Monitor::ValAcc}) {
    if (name == monitor_name(monitor)) return monitor;
  }
  return std::nullopt;
}

}  // namespace ember::cli
