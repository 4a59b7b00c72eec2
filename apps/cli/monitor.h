// apps/cli/monitor.h — `ember train --monitor val_loss|val_acc|train_loss`: the one epoch
// metric that early stopping and `--lr-schedule plateau` watch.
//
// Both ask the same two questions of it — what was its value this epoch, and is a larger
// value better — so both ask here, and a new metric is added in one place. Keras and
// Lightning call this "monitor" (with "mode" min/max); PyTorch's ReduceLROnPlateau takes
// the value and mode="min"/"max" from the caller, which is monitored_value and
// higher_is_better. The default (main.cpp) is val_loss with --val-split, else train_loss;
// a val_* metric without --val-split is a usage error.
#pragma once

#include <optional>
#include <string>

#include "metrics_log.h"
#include "options.h"

namespace ember::cli {

// The metric's value in an epoch's metrics (val_* require metrics.has_val: ValueError).
double monitored_value(const EpochMetrics& metrics, Monitor monitor);
// val_acc: true (mode "max"); the losses: false (mode "min").
bool higher_is_better(Monitor monitor);
// The flag's spelling ("val_loss", ...) and back (nullopt for any other text).
const char* monitor_name(Monitor monitor);
std::optional<Monitor> parse_monitor(const std::string& name);

}  // namespace ember::cli
