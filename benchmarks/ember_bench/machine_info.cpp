// benchmarks/ember_bench/machine_info.cpp — /proc/cpuinfo, /proc/meminfo, ember::cuda queries.
#include "machine_info.h"

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include <ember/core/cuda_hooks.h>

namespace ember_bench {
namespace {

// The value after "key:" in a /proc file, or "".
std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::size_t kilobytes_field(const char* key) {
  const std::string text = proc_field("/proc/meminfo", key);
  return text.empty() ? 0 : std::stoull(text) * 1024;
}

}  // namespace

std::map<std::string, std::string> describe_cpu() {
  return {{"cpu_model", proc_field("/proc/cpuinfo", "model name")},
          {"cpu_cores", std::to_string(std::thread::hardware_concurrency())},
          {"memory_bytes", std::to_string(kilobytes_field("MemTotal"))}};
}

std::size_t available_host_memory() { return kilobytes_field("MemAvailable"); }

std::vector<std::map<std::string, std::string>> describe_gpus() {
  std::vector<std::map<std::string, std::string>> gpus;
  for (int index = 0; index < ember::cuda::device_count(); ++index) {
    const auto properties = ember::cuda::get_device_properties(index);
    gpus.push_back({{"index", std::to_string(index)},
                    {"name", properties.name},
                    {"memory_bytes", std::to_string(properties.total_memory)},
                    {"compute_capability", std::to_string(properties.major) + "." + std::to_string(properties.minor)},
                    {"multiprocessors", std::to_string(properties.multiprocessors)}});
  }
  return gpus;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string compiler_version() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;
#else
  return "unknown";
#endif
}

}  // namespace ember_bench
