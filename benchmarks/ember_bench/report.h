// benchmarks/ember_bench/report.h — from samples to figures: rates, ceilings, speedups, ratios;
// the stdout table and the --csv file (the --json file is json_io.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "bench_types.h"

namespace ember_bench {

// Fills each Record's derived fields (bench_types.h) from its samples and the other records:
//   rate                 the work per call over the median time, in workload.unit;
//   fraction_of_ceiling  GEMM: rate over the vendor library's (OpenBLAS / cuBLAS) on that
//                        device; bandwidth-bound figures: GB/s over the best copy bandwidth
//                        measured on that device (memcpy / cudaMemcpy device-to-device;
//                        pinned cudaMemcpy for host<->device);
//   speedup_over_cpu     a GPU record's rate over the CPU's for the same figure (ember over
//                        ember, PyTorch over PyTorch, cuBLAS over OpenBLAS);
//   ratio_to_peer        an ember record's rate over each peer's on the same figure and device.
void derive(std::vector<Record>& records);

// "1.234 s", "12.345 ms" or "123.45 us": the table's time column (and --compare's).
std::string format_seconds(double seconds);

void print_table(std::ostream& out, const RunInfo& info, const std::vector<Record>& records);
void write_csv(const std::string& path, const RunInfo& info, const std::vector<Record>& records);

}  // namespace ember_bench
