// benchmarks/ember_bench/compare.h — `ember-bench --compare BASE.json NEW.json` (issue 23).
//
// Reads two --json reports back (json_io.h: read_saved_run), pairs their records by (figure
// id, implementation, device), and tells, for each pair measured in both runs, whether NEW's
// time differs from BASE's by more than the two runs' own spread. It prints a table, largest
// slowdown first, and a summary; with --fail-on-regression it is a CI gate. It measures
// nothing. The rule and the output are documented in docs/benchmarks.md, "Comparing two runs",
// and tested on the synthetic reports of tests/benchmarks/compare_*.json.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ember_bench {

// Exit statuses of --compare.
constexpr int kCompareOk = 0;
constexpr int kCompareRegression = 1;  // a significant slowdown over --fail-on-regression's PCT
constexpr int kCompareUsageError = 2;  // a file missing, unreadable, not JSON or not a report

// A run's spread around its median: the interquartile range [q1, q3] with at least
// kMinSamplesForQuartiles samples, [min, max] below that (quartiles of three numbers mean
// little: --quick takes three), a point with one sample.
constexpr std::size_t kMinSamplesForQuartiles = 5;
struct Spread {
  double low = 0, high = 0;
};
Spread sample_spread(std::vector<double> samples);

// Parses --fail-on-regression's value: a finite number >= 0 (a percentage), or nullopt.
std::optional<double> parse_regression_percent(const std::string& text);

// Compares the two reports and prints the table to `out`; problems with the files go to `err`.
// Returns kCompareOk, kCompareRegression (only when fail_percent is given) or
// kCompareUsageError.
int compare_reports(const std::string& base_path, const std::string& new_path, std::optional<double> fail_percent,
                    std::ostream& out, std::ostream& err);

}  // namespace ember_bench
