// benchmarks/ember_bench/compare.cpp — pairs two reports' records and judges each change
// against the runs' own noise (compare.h; docs/benchmarks.md, "Comparing two runs").
#include "compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <tuple>

#include "bench_types.h"
#include "json_io.h"
#include "report.h"

namespace ember_bench {
namespace {

using RecordKey = std::tuple<std::string, std::string, std::string>;  // id, device, implementation

RecordKey key_of(const SavedRecord& record) { return {record.id, record.device, record.implementation}; }

std::string key_text(const RecordKey& key) {
  return std::get<0>(key) + " " + std::get<1>(key) + " " + std::get<2>(key);
}

// Linear interpolation between the order statistics around position p·(n−1) of sorted values.
double quantile_of_sorted(const std::vector<double>& sorted, double p) {
  const double position = p * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

struct Change {
  RecordKey key;
  const SavedRecord* base = nullptr;
  const SavedRecord* next = nullptr;  // the NEW run's record ("new" is taken)
  Spread base_spread, new_spread;
  double ratio = 1;  // NEW time / BASE time: above 1 is slower
  bool significant = false;
};

bool outside(double value, const Spread& spread) { return value < spread.low || value > spread.high; }

// "±1.5%": half the spread as a percentage of the median, the table's noise column.
std::string spread_text(const Spread& spread, double median) {
  char text[32];
  std::snprintf(text, sizeof text, "±%.1f%%", median > 0 ? 50 * (spread.high - spread.low) / median : 0.0);
  return text;
}

// "1.50x slower", "2.00x faster"; "unchanged" when the factor rounds to 1.00.
std::string change_text(double ratio) {
  const double factor = ratio >= 1 ? ratio : 1 / ratio;
  if (factor < 1.005) return "unchanged";
  char text[48];
  std::snprintf(text, sizeof text, "%.2fx %s", factor, ratio >= 1 ? "slower" : "faster");
  return text;
}

const char* verdict_text(const Change& change) {
  if (!change.significant) return "within noise";
  return change.ratio > 1 ? "SLOWER" : "faster";
}

// "16 cores, Intel(R) Xeon(R) Processor, NVIDIA H200" for the header lines.
std::string machine_text(const SavedRun& run) {
  std::string text = (run.cpu_cores.empty() ? "?" : run.cpu_cores) + " cores, " +
                     (run.cpu_model.empty() ? "unknown CPU" : run.cpu_model);
  if (run.gpu_names.empty()) return text + ", no GPU";
  for (const auto& name : run.gpu_names) text += ", " + name;
  return text;
}

std::string gpu_list(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

// What differs between the two machines (CPU model, core count, GPU names); "" when nothing.
std::string machine_difference(const SavedRun& base, const SavedRun& next) {
  std::string difference;
  auto add = [&](const std::string& part) { difference += (difference.empty() ? "" : "; ") + part; };
  if (base.cpu_model != next.cpu_model) add("cpu_model '" + base.cpu_model + "' vs '" + next.cpu_model + "'");
  if (base.cpu_cores != next.cpu_cores) add("cpu_cores " + base.cpu_cores + " vs " + next.cpu_cores);
  if (base.gpu_names != next.gpu_names) add("gpus " + gpu_list(base.gpu_names) + " vs " + gpu_list(next.gpu_names));
  return difference;
}

// "3 (a cpu ember, b cpu ember, c cpu ember)": a count, and the ids when there are few.
std::string key_list(const std::vector<RecordKey>& keys) {
  constexpr std::size_t kMostListed = 8;
  std::string text = std::to_string(keys.size());
  if (keys.empty() || keys.size() > kMostListed) return text;
  text += " (";
  for (std::size_t i = 0; i < keys.size(); ++i) text += (i ? ", " : "") + key_text(keys[i]);
  return text + ")";
}

// The records by key; a report with the same key twice is malformed (which one to compare?).
std::map<RecordKey, const SavedRecord*> index_records(const SavedRun& run) {
  std::map<RecordKey, const SavedRecord*> index;
  for (const auto& record : run.records)
    if (!index.emplace(key_of(record), &record).second)
      throw std::runtime_error("'" + run.path + "' has two records for " + key_text(key_of(record)));
  return index;
}

}  // namespace

Spread sample_spread(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  if (samples.size() < kMinSamplesForQuartiles) return {samples.front(), samples.back()};
  return {quantile_of_sorted(samples, 0.25), quantile_of_sorted(samples, 0.75)};
}

std::optional<double> parse_regression_percent(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

int compare_reports(const std::string& base_path, const std::string& new_path, std::optional<double> fail_percent,
                    std::ostream& out, std::ostream& err) {
  SavedRun base, next;
  std::map<RecordKey, const SavedRecord*> base_index, new_index;
  try {
    base = read_saved_run(base_path);
    next = read_saved_run(new_path);
    base_index = index_records(base);
    new_index = index_records(next);
  } catch (const std::exception& error) {
    err << "ember-bench --compare: " << error.what() << "\n";
    return kCompareUsageError;
  }

  std::vector<Change> changes;
  std::vector<RecordKey> only_base, only_new, skipped;
  for (const auto& record : base.records) {
    const RecordKey key = key_of(record);
    const auto found = new_index.find(key);
    if (found == new_index.end()) {
      only_base.push_back(key);
      continue;
    }
    const SavedRecord& later = *found->second;
    if (!record.skipped.empty() || !later.skipped.empty()) {
      skipped.push_back(key);
      continue;
    }
    Change change;
    change.key = key;
    change.base = &record;
    change.next = &later;
    change.base_spread = sample_spread(record.samples);
    change.new_spread = sample_spread(later.samples);
    change.ratio = later.median / std::max(record.median, 1e-300);
    // Significant only when each run's median falls outside the other's spread: one noisy run
    // then cannot make a change of the other look real.
    change.significant = outside(later.median, change.base_spread) && outside(record.median, change.new_spread);
    changes.push_back(change);
  }
  for (const auto& record : next.records)
    if (!base_index.count(key_of(record))) only_new.push_back(key_of(record));
  // Largest slowdown first; equal ratios in a fixed order so the output is reproducible.
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.ratio != b.ratio ? a.ratio > b.ratio : a.key < b.key;
  });

  out << "ember-bench --compare\n";
  out << "  base: " << base.path << "  (" << (base.date.empty() ? "no date" : base.date) << "; " << machine_text(base)
      << ")\n";
  out << "  new:  " << next.path << "  (" << (next.date.empty() ? "no date" : next.date) << "; " << machine_text(next)
      << ")\n";
  if (const std::string difference = machine_difference(base, next); !difference.empty())
    out << "warning: the two runs come from different machines (" << difference
        << "): a change may be the machine's, not the code's\n";
  out << "  ratio: NEW time / BASE time per call; spread: ± half the interquartile range (min-max under "
      << kMinSamplesForQuartiles << " samples) as % of the median\n"
      << "  significant (SLOWER / faster): each run's median lies outside the other run's spread\n\n";

  char line[512];
  std::snprintf(line, sizeof line, "%-34s %-8s %-11s %11s %7s %3s %11s %7s %3s %8s  %-13s %s\n", "figure", "device",
                "impl", "base", "spread", "n", "new", "spread", "n", "ratio", "change", "verdict");
  out << line;
  int slower = 0, faster = 0, noise = 0;
  for (const auto& change : changes) {
    if (!change.significant) ++noise;
    else if (change.ratio > 1) ++slower;
    else ++faster;
    // snprintf counts bytes: the two-byte "±" needs one more column of width to line up.
    std::snprintf(line, sizeof line, "%-34s %-8s %-11s %11s %8s %3d %11s %8s %3d %8.3f  %-13s %s\n",
                  std::get<0>(change.key).c_str(), std::get<1>(change.key).c_str(), std::get<2>(change.key).c_str(),
                  format_seconds(change.base->median).c_str(),
                  spread_text(change.base_spread, change.base->median).c_str(), change.base->repeats,
                  format_seconds(change.next->median).c_str(),
                  spread_text(change.new_spread, change.next->median).c_str(), change.next->repeats, change.ratio,
                  change_text(change.ratio).c_str(), verdict_text(change));
    out << line;
  }
  if (changes.empty()) out << "(no figure measured in both runs)\n";
  out << "\ncompared " << changes.size() << ": " << slower << " slower, " << faster << " faster, " << noise
      << " within noise; only in base: " << key_list(only_base) << "; only in new: " << key_list(only_new)
      << "; skipped in a run: " << key_list(skipped) << "\n";

  if (!fail_percent) return kCompareOk;
  const double limit = 1 + *fail_percent / 100;
  std::vector<const Change*> regressions;
  for (const auto& change : changes)
    if (change.significant && change.ratio > limit) regressions.push_back(&change);
  char percent[32];
  std::snprintf(percent, sizeof percent, "%g%%", *fail_percent);
  if (regressions.empty()) {
    out << "fail-on-regression " << percent << ": passed (no significant slowdown over " << percent << ")\n";
    return kCompareOk;
  }
  out << "fail-on-regression " << percent << ": FAILED, " << regressions.size() << " significant slowdown(s) over "
      << percent << ": ";
  for (std::size_t i = 0; i < regressions.size(); ++i)
    out << (i ? ", " : "") << key_text(regressions[i]->key) << " (" << change_text(regressions[i]->ratio) << ")";
  out << "\n";
  return kCompareRegression;
}

}  // namespace ember_bench
