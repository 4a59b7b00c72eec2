// benchmarks/ember_bench/json_io.h — every JSON ember-bench reads or writes (nlohmann-json):
// the PyTorch peer's spec and output, the --json report, and reading a report back for --compare.
//
// Kept in one file because nlohmann-json is slow to compile. The report's structure is
// documented in docs/benchmarks.md and checked by tests/benchmarks/check_bench_json.cmake.
#pragma once

#include <string>
#include <vector>

#include "bench_types.h"
#include "pytorch_peer.h"

namespace ember_bench {

void write_pytorch_spec(const std::string& path, const std::vector<PytorchJob>& jobs, const Policy& policy,
                        int threads);
// Fills outcome's versions and records from the script's stdout; throws on malformed output.
void read_pytorch_output(const std::string& text, const std::vector<PytorchJob>& jobs, PytorchOutcome& outcome);
void write_json_report(const std::string& path, const RunInfo& info, const std::vector<Record>& records);
// Reads a --json report back (this version's or an older one) for --compare. Throws
// std::runtime_error with a message that names the file and the problem: missing or
// unreadable, not JSON, no "results" list, a record without its id, implementation or device.
SavedRun read_saved_run(const std::string& path);

}  // namespace ember_bench
