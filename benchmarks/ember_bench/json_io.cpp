// benchmarks/ember_bench/json_io.cpp — the PyTorch spec/output and the --json report.
#include "json_io.h"

#include <fstream>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ember_bench {
namespace {

using nlohmann::json;

json workload_json(const Workload& w) {
  return {{"id", w.id},       {"group", w.group},       {"op", w.op},       {"shape", w.shape},
          {"dims", w.dims},   {"layers", w.layers},     {"model", w.model}, {"batch", w.batch},
          {"examples", w.examples}, {"workers", w.workers}, {"size", w.size}};
}

json optional_number(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json record_json(const Record& r) {
  const bool measured = r.skipped.empty();
  json record = workload_json(r.workload);
  record["device"] = r.device;
  record["implementation"] = r.implementation;
  record["unit"] = r.workload.unit;
  record["work_per_call"] = {{"flops", r.workload.flops}, {"bytes", r.workload.bytes}, {"items", r.workload.items}};
  record["samples_s"] = r.samples;
  record["calls_per_sample"] = r.calls_per_sample;
  record["cold_single_sample"] = r.cold_single_sample;
  record["median_s"] = measured ? json(r.median) : json(nullptr);
  record["rate"] = measured ? json(r.rate) : json(nullptr);
  record["gflops"] = measured && r.workload.flops > 0 ? json(r.gflops) : json(nullptr);
  record["fraction_of_ceiling"] = optional_number(r.fraction_of_ceiling);
  record["ceiling"] = r.ceiling.empty() ? json(nullptr) : json(r.ceiling);
  record["speedup_over_cpu"] = optional_number(r.speedup_over_cpu);
  record["ratio_to_peer"] = r.ratio_to_peer;
  record["skipped"] = measured ? json(nullptr) : json(r.skipped);
  record["peer_setting"] = r.peer_setting.empty() ? json(nullptr) : json(r.peer_setting);
  record["setting_medians_s"] = r.setting_medians.empty() ? json(nullptr) : json(r.setting_medians);
  return record;
}

}  // namespace

void write_pytorch_spec(const std::string& path, const std::vector<PytorchJob>& jobs, const Policy& policy,
                        int threads) {
  json spec = {{"threads", threads},
               {"policy",
                {{"warmup", policy.warmup},
                 {"reps", policy.reps},
                 {"min_sample_seconds", policy.min_sample_seconds},
                 {"min_warmup_seconds", policy.min_warmup_seconds},
                 {"max_seconds", policy.max_seconds}}},
               {"jobs", json::array()}};
  for (const auto& job : jobs) spec["jobs"].push_back({{"workload", workload_json(job.workload)}, {"device", job.device}});
  std::ofstream(path) << spec.dump() << "\n";
}

void read_pytorch_output(const std::string& text, const std::vector<PytorchJob>& jobs, PytorchOutcome& outcome) {
  const json output = json::parse(text);
  outcome.torch_version = output.at("torch_version").get<std::string>();
  outcome.python_version = output.at("python_version").get<std::string>();
  outcome.torch_threads = output.value("torch_threads", 0);
  std::map<std::pair<std::string, std::string>, const Workload*> by_key;
  for (const auto& job : jobs) by_key[{job.workload.id, job.device}] = &job.workload;
  for (const auto& entry : output.at("results")) {
    const auto key = std::make_pair(entry.at("id").get<std::string>(), entry.at("device").get<std::string>());
    auto found = by_key.find(key);
    if (found == by_key.end()) throw std::runtime_error("PyTorch peer returned an unknown figure " + key.first);
    Record record;
    record.workload = *found->second;
    record.device = key.second;
    record.implementation = "pytorch";
    if (entry.contains("skipped")) {
      record.skipped = entry.at("skipped").get<std::string>();
    } else {
      record.samples = entry.at("samples").get<std::vector<double>>();
      record.calls_per_sample = entry.at("calls_per_sample").get<int>();
      record.cold_single_sample = entry.at("cold_single_sample").get<bool>();
      record.peer_setting = entry.value("setting", "");
      // The medians of every alternative the script tried (memory formats), by name.
      if (entry.contains("setting_medians"))
        record.setting_medians = entry.at("setting_medians").get<std::map<std::string, double>>();
      if (record.samples.empty()) record.skipped = "PyTorch returned no samples";
    }
    outcome.records.push_back(std::move(record));
  }
}

void write_json_report(const std::string& path, const RunInfo& info, const std::vector<Record>& records) {
  json machine(info.machine);
  machine["gpus"] = info.gpus;
  json report = {{"schema", "ember-bench/1"}, {"date", info.date},       {"command", info.command},
                 {"machine", machine},        {"versions", info.versions}, {"peers", info.peers},
                 {"options", info.options},   {"results", json::array()}};
  for (const auto& record : records) report["results"].push_back(record_json(record));
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << report.dump(1) << "\n";
}

}  // namespace ember_bench
