// apps/cli/early_stopping.cpp — the early-stopping rule and its checkpoint text (see early_stopping.h).
#include "early_stopping.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>

#include "json_field.h"
#include "metadata_text.h"

namespace ember::cli {

EarlyStopping::EarlyStopping(std::string monitor, MonitorMode mode, std::int64_t patience, double min_delta)
    : mode_(mode), patience_(patience), min_delta_(min_delta) {
  EMBER_CHECK(patience >= 0, ValueError, "early stopping: patience must be non-negative, got ", patience);
  EMBER_CHECK(min_delta >= 0, ValueError, "early stopping: min_delta must be non-negative, got ", min_delta);
  state_.monitor = std::move(monitor);
  const double infinity = std::numeric_limits<double>::infinity();
  state_.best = mode == MonitorMode::Min ? infinity : -infinity;
}

bool EarlyStopping::update(std::int64_t epoch, double value) {
  // Keras: monitor_op(current - min_delta, best), min_delta negated for mode min.
  const bool improved = mode_ == MonitorMode::Min ? value + min_delta_ < state_.best : value - min_delta_ > state_.best;
  if (improved) {
    state_.best = value;
    state_.best_epoch = epoch;
    state_.wait = 0;
  } else {
    ++state_.wait;
  }
  return improved;
}

bool EarlyStopping::restore(const EarlyStoppingState& saved) {
  if (saved.monitor != state_.monitor) return false;
  state_ = saved;
  return true;
}

std::string early_stopping_to_text(const EarlyStoppingState& state) {
  nlohmann::json json = {{"monitor", state.monitor},
                         {"best", exact_text(state.best)},
                         {"best_epoch", state.best_epoch},
                         {"wait", state.wait}};
  return json.dump();
}

EarlyStoppingState early_stopping_from_text(const std::string& text, const std::string& path) {
  EarlyStoppingState state;
  try {
    nlohmann::json json = nlohmann::json::parse(text);
    state.monitor = json_get<std::string>(json.at("monitor"));
    const std::string best = json_get<std::string>(json.at("best"));
    state.best = number_from_text(best, path, "early_stopping best value");
    state.best_epoch = json_get<std::int64_t>(json.at("best_epoch"));
    state.wait = json_get<std::int64_t>(json.at("wait"));
  } catch (const nlohmann::json::exception& error) {
    throw IOError(path + ": the checkpoint's early_stopping metadata is damaged (" + error.what() + ")");
  }
  EMBER_CHECK(state.best_epoch >= 0 && state.wait >= 0, IOError, path,
              ": the checkpoint's early_stopping metadata has a negative epoch or wait");
  return state;
}

}  // namespace ember::cli
