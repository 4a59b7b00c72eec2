// benchmarks/ember_bench/pytorch_peer.h — running benchmarks/peers/pytorch_peer.py.
//
// ember-bench looks for a Python that can `import torch` (the --python choice, or
// `python3` then `/usr/bin/python3`), writes the (workload, device) pairs it measured to a
// JSON spec, runs the script once for all of them and reads back one Record per pair.
// No usable PyTorch is a status ("absent: ..."), never an error.
#pragma once

#include <string>
#include <vector>

#include "bench_types.h"

namespace ember_bench {

struct PytorchJob {
  Workload workload;
  std::string device;
};

struct PytorchOutcome {
  std::string status = "not run";  // "ok", "absent: ...", "failed: ...", "disabled (--python none)"
  std::string python;              // the interpreter used
  std::string torch_version;
  std::string python_version;
  int torch_threads = 0;
  std::vector<Record> records;
};

// The interpreter to use for `choice` ("auto", "none" or a path); "" when none imports torch.
std::string find_python_with_torch(const std::string& choice);

PytorchOutcome run_pytorch_peer(const std::vector<PytorchJob>& jobs, const Policy& policy, int threads,
                                const std::string& python, const std::string& script);

}  // namespace ember_bench
