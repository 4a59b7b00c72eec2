// benchmarks/ember_bench/machine_info.h — what the machine is, for the report header.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace ember_bench {

std::map<std::string, std::string> describe_cpu();  // cpu_model, cpu_cores, memory_bytes
std::size_t available_host_memory();                 // MemAvailable in bytes (0 if unknown)
std::vector<std::map<std::string, std::string>> describe_gpus();  // ember::cuda::get_device_properties
std::string utc_now();                                // ISO 8601
std::string compiler_version();

}  // namespace ember_bench
