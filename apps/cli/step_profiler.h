// apps/cli/step_profiler.h — `ember train --profile-steps A-B [--profile-out trace.json]`.
//
// Issue 23. Profiles optimizer steps A to B (1-based, as the progress and the log count them)
// with the op profiler (core/profiler.h), PyTorch's torch.profiler.schedule(active=...) in
// one flag: the profile starts after step A-1, so the DataLoader's fetch of step A's batch is
// in it, and stops after step B. Each batch is one "ProfilerStep#N" block. When training
// ends the op table is printed (with GFLOP/s against the CPU's computed fp32 peak) and the
// Chrome trace, if asked for, is written atomically. Distributed, rank 0 profiles.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <ember/core/profiler.h>

#include "options.h"

namespace ember::cli {

struct StepRange {
  std::int64_t first = 0, last = 0;  // inclusive; first == 0: no profiling
  bool enabled() const { return first > 0; }
};

// "A-B" or "A" (one step), 1 <= A <= B; UsageError otherwise.
StepRange parse_profile_steps(const std::string& text);

class StepProfiler {
 public:
  // `active`: this process profiles (rank 0); the range comes from --profile-steps.
  // The range and trace path from --profile-steps / --profile-out (already checked by the
  // command line); `active`: this process profiles (rank 0); `device`: the training device
  // (the table's % peak is the CPU's, for a CPU run only).
  StepProfiler(const TrainOptions& options, bool active, Device device);
  // Around each batch: `steps_done` optimizer steps have been taken before it (after it).
  // While a profile records, the batch is one "ProfilerStep#N" block, closed by after_batch
  // (or the next before_batch, or finish) before any stop, so the last step is in it.
  void before_batch(std::int64_t steps_done);
  void after_batch(std::int64_t steps_done);
  // Training is over: stops a profile still recording, prints the table to stdout, writes
  // the trace (IOError when it cannot be written).
  void finish();

 private:
  void start();
  void stop();

  StepRange range_;
  std::string out_path_;
  std::string precision_;  // --precision: bf16 tables divide by the bfloat16 peak
  bool active_ = false;
  Device device_;
  std::unique_ptr<profiler::ProfileGuard> guard_;
  std::optional<profiler::Profile> profile_;
  std::string label_;                                 // the open block's name
  std::optional<profiler::RecordScope> step_block_;  // the batch's block, while recording
};

}  // namespace ember::cli
