// apps/cli/step_profiler.cpp — see step_profiler.h.
#include "step_profiler.h"

#include <cstdio>
#include <iostream>

#include <ember/core/error.h>
#include <ember/core/parallel.h>
#include <ember/nn/atomic_file.h>

#include "usage_error.h"

namespace ember::cli {

namespace {

std::int64_t parse_step(const std::string& text, const std::string& whole) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || value < 1 || text[0] == '+' || text[0] == '-') {
    throw UsageError(make_message("--profile-steps ", whole,
                                  ": expected A-B or A, optimizer steps counted from 1 (e.g. 10-20)"));
  }
  return value;
}

}  // namespace

StepRange parse_profile_steps(const std::string& text) {
  const std::size_t dash = text.find('-');
  StepRange range;
  range.first = parse_step(dash == std::string::npos ? text : text.substr(0, dash), text);
  range.last = dash == std::string::npos ? range.first : parse_step(text.substr(dash + 1), text);
  if (range.last < range.first) {
    throw UsageError(make_message("--profile-steps ", text, ": the last step comes before the first"));
  }
  return range;
}

StepProfiler::StepProfiler(const TrainOptions& options, bool active, Device device)
    : range_(options.profile_steps.empty() ? StepRange{} : parse_profile_steps(options.profile_steps)),
      out_path_(options.profile_out),
      precision_(options.precision),
      active_(active && range_.enabled()),
      device_(device) {}

void StepProfiler::start() {
  guard_ = std::make_unique<profiler::ProfileGuard>();
}

void StepProfiler::stop() {
  if (!guard_) return;
  profile_ = guard_->stop();
  guard_.reset();
}

void StepProfiler::before_batch(std::int64_t steps_done) {
  step_block_.reset();  // a batch that broke out of the loop early
  // A run resumed inside the range, or a range starting at step 1, starts here.
  if (active_ && !guard_ && !profile_ && steps_done + 1 >= range_.first && steps_done < range_.last) start();
  if (!profiler::is_enabled()) return;  // also EMBER_PROFILE's whole-run profile gets the blocks
  label_ = "ProfilerStep#" + std::to_string(steps_done + 1);
  step_block_.emplace(profiler::EventKind::Annotation, label_.c_str());
}

void StepProfiler::after_batch(std::int64_t steps_done) {
  step_block_.reset();
  if (!active_ || profile_) return;
  if (guard_ && steps_done >= range_.last) stop();
  else if (!guard_ && steps_done + 1 == range_.first) start();  // the next batch's fetch is in the profile
}

void StepProfiler::finish() {
  step_block_.reset();
  if (!active_) return;
  stop();
  if (!profile_) {
    std::printf("profile: training ended before step %lld; nothing was profiled\n", static_cast<long long>(range_.first));
    return;
  }
  profiler::TableOptions table;
  std::string peak = "";
  if (device_.is_cpu()) {
    // A bfloat16 run's products run at the bfloat16 peak (twice the fp32 one where the CPU has
    // AVX512-BF16), so that is its ceiling, as for the summary's MFU (model_flops.h).
    const char* peak_name = "bf16";
    if (precision_ == "bf16") table.peak_flops_per_second = profiler::cpu_bf16_peak_flops(get_num_threads());
    if (!table.peak_flops_per_second) {
      table.peak_flops_per_second = profiler::cpu_fp32_peak_flops(get_num_threads());
      peak_name = "fp32";
    }
    if (table.peak_flops_per_second) {
      peak = make_message("; % peak: of the CPU's computed ", peak_name, " peak for ", get_num_threads(), " threads");
    }
  } else {
    // CUDA kernels run asynchronously: an op's CPU time is its launch; its GPU time is in
    // the CUDA columns (CUDA events around it, core/profiler.h).
    peak = "; on a GPU the CPU times are the ops' launches, the CUDA columns their GPU time";
  }
  std::printf("\nprofile of steps %lld-%lld (self time by op, all threads%s):\n%s",
              static_cast<long long>(range_.first), static_cast<long long>(range_.last), peak.c_str(),
              profile_->table(table).c_str());
  if (!out_path_.empty()) {
    write_file_atomically(out_path_, profile_->chrome_trace());
    std::printf("trace: %s (chrome://tracing or ui.perfetto.dev)\n", out_path_.c_str());
  }
  std::fflush(stdout);
}

}  // namespace ember::cli
