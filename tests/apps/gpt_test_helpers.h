// tests/apps/gpt_test_helpers.h — what the tests of `ember train --model gpt` share: the
// committed word list, a log's events of one kind, and the comparison of a log with a
// PyTorch reference run (tests/reference/gen_cli_gpt*.py).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_cli_helpers.h"

namespace ember::testing::cli {

inline std::string sample_text() { return std::string(EMBER_SOURCE_DIR) + "/tests/apps/fixtures/words-sample.txt"; }

// The lines of a --log file whose "event" is `kind` ("step", "eval", "summary").
inline std::vector<nlohmann::json> events_of(const std::string& log, const std::string& kind) {
  std::vector<nlohmann::json> found;
  for (const auto& entry : log_entries(log))
    if (entry["event"] == kind) found.push_back(entry);
  return found;
}

// The log's step and eval events against a reference run's "steps" and "evals": the same
// steps, losses and evaluations within a relative 1e-4 (float rounding of a different order
// of operations), learning rates within 1e-12.
inline void require_log_matches(const std::string& log, const nlohmann::json& expected_run) {
  const auto steps = events_of(log, "step"), evals = events_of(log, "eval");
  REQUIRE(steps.size() == expected_run["steps"].size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("step " << i + 1);
    const auto& expected = expected_run["steps"][i];
    REQUIRE(steps[i]["step"] == expected["step"]);
    REQUIRE(steps[i]["loss"].get<double>() == Approx(expected["loss"].get<double>()).epsilon(1e-4));
    REQUIRE(steps[i]["lr"].get<double>() == Approx(expected["lr"].get<double>()).epsilon(1e-12));
    REQUIRE(steps[i]["tokens_per_s"].get<double>() > 0);
  }
  REQUIRE(evals.size() == expected_run["evals"].size());
  for (std::size_t i = 0; i < evals.size(); ++i) {
    INFO("evaluation at step " << evals[i]["step"]);
    const auto& expected = expected_run["evals"][i];
    REQUIRE(evals[i]["step"] == expected["step"]);
    REQUIRE(evals[i]["train_loss"].get<double>() == Approx(expected["train_loss"].get<double>()).epsilon(1e-4));
    REQUIRE(evals[i]["val_loss"].get<double>() == Approx(expected["val_loss"].get<double>()).epsilon(1e-4));
  }
}

// A stopped-and-resumed run's log against the uninterrupted run's: the same steps and
// evaluations, bit for bit (the resumed run draws the same batches from the same state).
inline void require_resumed_log_equals(const std::string& resumed_log, const std::string& whole_log,
                                       std::size_t steps, std::size_t evaluations) {
  const auto expected_steps = events_of(whole_log, "step"), actual_steps = events_of(resumed_log, "step");
  REQUIRE(expected_steps.size() == steps);
  REQUIRE(actual_steps.size() == steps);
  for (std::size_t i = 0; i < steps; ++i) {
    INFO("step " << i + 1);
    REQUIRE(actual_steps[i]["step"] == expected_steps[i]["step"]);
    REQUIRE(actual_steps[i]["loss"].get<double>() == expected_steps[i]["loss"].get<double>());
  }
  const auto expected_evals = events_of(whole_log, "eval"), actual_evals = events_of(resumed_log, "eval");
  REQUIRE(expected_evals.size() == evaluations);
  REQUIRE(actual_evals.size() == evaluations);
  for (std::size_t i = 0; i < evaluations; ++i) {
    INFO("evaluation " << i + 1);
    REQUIRE(actual_evals[i]["step"] == expected_evals[i]["step"]);
    REQUIRE(actual_evals[i]["train_loss"].get<double>() == expected_evals[i]["train_loss"].get<double>());
    REQUIRE(actual_evals[i]["val_loss"].get<double>() == expected_evals[i]["val_loss"].get<double>());
  }
}

}  // namespace ember::testing::cli
