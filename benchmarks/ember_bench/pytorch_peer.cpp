// benchmarks/ember_bench/pytorch_peer.cpp — finds a Python with torch and runs the peer script.
#include "pytorch_peer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "json_io.h"

namespace ember_bench {
namespace {

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

bool imports_torch(const std::string& python) {
  const std::string command = shell_quote(python) + " -c 'import torch' > /dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string find_python_with_torch(const std::string& choice) {
  if (choice == "none") return "";
  if (choice != "auto") return imports_torch(choice) ? choice : "";
  for (const char* candidate : {"python3", "/usr/bin/python3"})
    if (imports_torch(candidate)) return candidate;
  return "";
}

std::vector<PeerSetting> pytorch_settings(int threads, bool cpu_figures) {
  std::vector<PeerSetting> settings;
  // OpenMP's wait policy and the thread count only change PyTorch's CPU kernels: GPU
  // figures alone are measured once, at PyTorch's defaults (a GPU check has little time).
  if (!cpu_figures) return {{"defaults", "", threads}};
  if (const char* policy = std::getenv("OMP_WAIT_POLICY")) {
    settings.push_back({std::string("OMP_WAIT_POLICY=") + policy + " (set by the user)", "", threads});
  } else {
    // GNU OpenMP's threads spin after each parallel region by default; on cores that other
    // processes share, letting them sleep (PASSIVE) can win, and on idle cores it loses
    // (both seen on this 2-core VM), so both are tried.
    settings.push_back({"defaults", "", threads});
    settings.push_back({"OMP_WAIT_POLICY=PASSIVE", "OMP_WAIT_POLICY=PASSIVE ", threads});
  }
  // Small steps can run faster on one thread than pay for waking a second. (One thread has
  // no OpenMP team to wait for, so the wait policy is not varied there.)
  if (threads != 1) {
    const PeerSetting& first = settings.front();
    settings.push_back({first.name == "defaults" ? "1 thread" : first.name + ", 1 thread", first.environment, 1});
  }
  return settings;
}

namespace {

PytorchOutcome run_one_setting(const std::vector<PytorchJob>& jobs, const Policy& policy, const PeerSetting& setting,
                               const std::string& python, const std::string& script) {
  PytorchOutcome outcome;
  outcome.python = python;
  const auto stem = std::filesystem::temp_directory_path() / ("ember-bench-" + std::to_string(::getpid()));
  const std::string spec = stem.string() + "-spec.json", out = stem.string() + "-out.json",
                    err = stem.string() + "-err.txt";
  write_pytorch_spec(spec, jobs, policy, setting.threads);
  const std::string command = setting.environment + shell_quote(python) + " " + shell_quote(script) + " --spec " +
                              shell_quote(spec) + " > " + shell_quote(out) + " 2> " + shell_quote(err);
  const int rc = std::system(command.c_str());
  try {
    if (rc != 0) throw std::runtime_error("exit status " + std::to_string(rc) + ": " + read_text(err).substr(0, 400));
    read_pytorch_output(read_text(out), jobs, outcome);
    outcome.status = "ok";
  } catch (const std::exception& error) {
    outcome.status = std::string("failed: ") + error.what();
    outcome.records.clear();
  }
  for (const auto& path : {spec, out, err}) std::filesystem::remove(path);
  return outcome;
}

double median_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

}  // namespace

PytorchOutcome run_pytorch_peer(const std::vector<PytorchJob>& jobs, const Policy& policy,
                                const std::vector<PeerSetting>& settings, const std::string& python,
                                const std::string& script) {
  PytorchOutcome best;
  best.python = python;
  best.status = "failed: no setting ran";
  std::map<std::pair<std::string, std::string>, std::size_t> slot;  // (id, device) -> index in best.records
  for (const auto& setting : settings) {
    std::fprintf(stderr, "ember-bench: PyTorch peer, setting '%s'\n", setting.name.c_str());
    PytorchOutcome outcome = run_one_setting(jobs, policy, setting, python, script);
    best.settings.push_back(outcome.status == "ok" ? setting.name : setting.name + " (" + outcome.status + ")");
    if (outcome.status != "ok") continue;
    if (best.status != "ok") {
      best.status = "ok";
      best.torch_version = outcome.torch_version;
      best.python_version = outcome.python_version;
      best.torch_threads = outcome.torch_threads;
    }
    for (auto& record : outcome.records) {
      const bool measured = record.skipped.empty();
      const double median = measured ? median_of(record.samples) : 0;
      const std::string name = record.peer_setting.empty() ? setting.name : setting.name + ", " + record.peer_setting;
      record.peer_setting = name;
      // The script's own alternatives (memory formats), each under this setting's name.
      std::map<std::string, double> tried;
      for (const auto& [alternative, seconds] : record.setting_medians) tried[setting.name + ", " + alternative] = seconds;
      if (measured) tried[name] = median;
      record.setting_medians.clear();
      const auto key = std::make_pair(record.workload.id, record.device);
      auto found = slot.find(key);
      if (found == slot.end()) {
        slot[key] = best.records.size();
        record.setting_medians = std::move(tried);
        best.records.push_back(std::move(record));
        continue;
      }
      Record& kept = best.records[found->second];
      if (!measured) continue;
      auto medians = std::move(kept.setting_medians);
      medians.insert(tried.begin(), tried.end());
      if (!kept.skipped.empty() || median < median_of(kept.samples)) kept = std::move(record);
      kept.setting_medians = std::move(medians);
    }
  }
  for (auto& record : best.records)
    if (!record.skipped.empty()) record.peer_setting.clear();
  return best;
}

}  // namespace ember_bench
