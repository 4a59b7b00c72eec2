// benchmarks/ember_bench/json_io.cpp — the PyTorch spec/output, the --json report, and the
// report read back for --compare.
#include "json_io.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace ember_bench {
namespace {

using nlohmann::json;

json workload_json(const Workload& w) {
  return {{"id", w.id},       {"group", w.group},       {"op", w.op},       {"shape", w.shape},
          {"dims", w.dims},   {"layers", w.layers},     {"model", w.model}, {"batch", w.batch},
          {"examples", w.examples}, {"workers", w.workers}, {"size", w.size}, {"precision", w.precision}};
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
  record["repeats"] = r.samples.size();  // timed samples behind median_s (0 when skipped)
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
  record["peak_memory_bytes"] = r.peak_memory_bytes ? json(*r.peak_memory_bytes) : json(nullptr);
  return record;
}

// A string member for --compare, tolerating numbers (cpu_cores was always a string, but a
// hand-edited file may hold 16).
std::string text_member(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || object.at(key).is_null()) return "";
  const json& value = object.at(key);
  return value.is_string() ? value.get<std::string>() : value.dump();
}

SavedRecord saved_record(const json& entry, const std::string& where) {
  if (!entry.is_object()) throw std::runtime_error(where + " is not an object");
  SavedRecord record;
  for (auto [key, field] : {std::pair{"id", &record.id}, std::pair{"implementation", &record.implementation},
                            std::pair{"device", &record.device}}) {
    if (!entry.contains(key) || !entry.at(key).is_string())
      throw std::runtime_error(where + " has no \"" + key + "\" string");
    *field = entry.at(key).get<std::string>();
  }
  record.unit = text_member(entry, "unit");
  record.skipped = text_member(entry, "skipped");
  if (entry.contains("samples_s") && entry.at("samples_s").is_array())
    for (const auto& sample : entry.at("samples_s"))
      if (sample.is_number()) record.samples.push_back(sample.get<double>());
  if (entry.contains("median_s") && entry.at("median_s").is_number()) record.median = entry.at("median_s").get<double>();
  else if (!record.samples.empty()) record.median = median(record.samples);
  // A record with neither samples nor a median measured nothing, whatever "skipped" says.
  if (record.skipped.empty() && record.samples.empty() && !(record.median > 0)) record.skipped = "no samples";
  if (record.samples.empty() && record.median > 0) record.samples = {record.median};
  record.repeats = entry.contains("repeats") && entry.at("repeats").is_number_integer()
                       ? entry.at("repeats").get<int>()
                       : static_cast<int>(record.samples.size());
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

SavedRun read_saved_run(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) throw std::runtime_error("'" + path + "': no such file");
  if (std::filesystem::is_directory(path, error)) throw std::runtime_error("'" + path + "' is a directory");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("'" + path + "' cannot be read");
  json report;
  try {
    report = json::parse(in);
  } catch (const json::parse_error& parse_error) {
    throw std::runtime_error("'" + path + "' is not valid JSON (" + parse_error.what() + ")");
  }
  if (!report.is_object() || !report.contains("results") || !report.at("results").is_array())
    throw std::runtime_error("'" + path + "' has no \"results\" list (not an ember-bench --json report?)");
  SavedRun run;
  run.path = path;
  run.date = text_member(report, "date");
  const json machine = report.value("machine", json::object());
  run.cpu_model = text_member(machine, "cpu_model");
  run.cpu_cores = text_member(machine, "cpu_cores");
  if (machine.is_object() && machine.contains("gpus") && machine.at("gpus").is_array())
    for (const auto& gpu : machine.at("gpus")) run.gpu_names.push_back(text_member(gpu, "name"));
  const json& results = report.at("results");
  for (std::size_t i = 0; i < results.size(); ++i)
    run.records.push_back(saved_record(results[i], "'" + path + "': results[" + std::to_string(i) + "]"));
  return run;
}

}  // namespace ember_bench
