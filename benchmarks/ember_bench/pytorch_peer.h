// benchmarks/ember_bench/pytorch_peer.h — running benchmarks/peers/pytorch_peer.py.
//
// ember-bench looks for a Python that can `import torch` (the --python choice, or
// `python3` then `/usr/bin/python3`), writes the (workload, device) pairs it measured to a
// JSON spec, runs the script once for all of them and reads back one Record per pair.
// No usable PyTorch is a status ("absent: ..."), never an error.
//
// A peer is measured at its best: the script runs once per setting that could help PyTorch
// here (its defaults, OMP_WAIT_POLICY=PASSIVE, one thread instead of --threads), and each
// figure keeps its fastest setting's samples, naming the setting (Record::peer_setting) and
// every setting's median (Record::setting_medians). The script itself also tries the
// optimizer's foreach and for-loop implementations for the `sgd` figures, and both memory
// formats (contiguous NCHW and channels_last) for the convolutional figures (conv2d,
// max_pool2d, batch_norm, the CNN's training), reporting every format's median too.
#pragma once

#include <string>
#include <vector>

#include "bench_types.h"

namespace ember_bench {

struct PytorchJob {
  Workload workload;
  std::string device;
};

// One way of starting the peer: extra environment and the thread count it is given.
struct PeerSetting {
  std::string name;         // as recorded: "defaults", "OMP_WAIT_POLICY=PASSIVE", "1 thread"
  std::string environment;  // prefixed to the command, e.g. "OMP_WAIT_POLICY=PASSIVE "
  int threads = 0;
};

// The settings to try for `threads` (0: PyTorch's own default). When the user has set
// OMP_WAIT_POLICY, that choice is kept and only the thread count varies. They are CPU
// settings: with no CPU figure among the jobs (--device cuda) only PyTorch's defaults run.
std::vector<PeerSetting> pytorch_settings(int threads, bool cpu_figures = true);

struct PytorchOutcome {
  std::string status = "not run";  // "ok", "absent: ...", "failed: ...", "disabled (--python none)"
  std::string python;              // the interpreter used
  std::string torch_version;
  std::string python_version;
  int torch_threads = 0;
  std::vector<std::string> settings;  // every setting tried, with its outcome when it failed
  std::vector<Record> records;        // one per (figure, device): the fastest setting's
};

// The interpreter to use for `choice` ("auto", "none" or a path); "" when none imports torch.
std::string find_python_with_torch(const std::string& choice);

// Runs every setting and keeps each figure's fastest.
PytorchOutcome run_pytorch_peer(const std::vector<PytorchJob>& jobs, const Policy& policy,
                                const std::vector<PeerSetting>& settings, const std::string& python,
                                const std::string& script);

}  // namespace ember_bench
