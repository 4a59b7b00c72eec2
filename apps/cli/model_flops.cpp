// apps/cli/model_flops.cpp — see model_flops.h.
#include "model_flops.h"

#include <cstdio>

#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cli {

namespace {

// 570 FLOP, 4.77 MFLOP, 1.23 GFLOP.
std::string flops_text(double flops) {
  char text[48];
  if (flops >= 1e9) std::snprintf(text, sizeof text, "%.3g GFLOP", flops / 1e9);
  else if (flops >= 1e6) std::snprintf(text, sizeof text, "%.3g MFLOP", flops / 1e6);
  else if (flops >= 1e3) std::snprintf(text, sizeof text, "%.3g KFLOP", flops / 1e3);
  else std::snprintf(text, sizeof text, "%.0f FLOP", flops);
  return text;
}

}  // namespace

void ModelFlops::begin_step(std::int64_t samples) {
  if (per_sample_ || guard_ || profiler::is_enabled() || samples <= 0) return;
  samples_ = samples;
  guard_ = std::make_unique<profiler::ProfileGuard>();
}

void ModelFlops::end_step() {
  if (!guard_) return;
  const profiler::Profile profile = guard_->stop();
  guard_.reset();
  double flops = 0;
  for (const profiler::Event& event : profile.events) flops += event.flops;
  if (flops > 0) per_sample_ = flops / static_cast<double>(samples_);
}

std::string ModelFlops::mfu_text(double samples_per_second, Device device, const std::string& precision) const {
  const std::optional<double> per_sample = per_sample_;
  if (!per_sample || samples_per_second <= 0 || !device.is_cpu()) return "";
  const int threads = get_num_threads();
  profiler::remeasure_cpu_clock_hz();  // the clock now, after the run: the highest seen makes the peak
  std::optional<double> peak = precision == "bf16" ? profiler::cpu_bf16_peak_flops(threads) : std::nullopt;
  const char* peak_name = "bf16";
  if (!peak) {
    peak = profiler::cpu_fp32_peak_flops(threads);
    peak_name = "fp32";
  }
  if (!peak) return "";
  char text[200];
  std::snprintf(text, sizeof text, "%.1f%% of the CPU's computed %s peak (%.1f GFLOP/s, %d thread%s); %s per %s",
                100.0 * *per_sample * samples_per_second / *peak, peak_name, *peak / 1e9, threads, threads == 1 ? "" : "s",
                flops_text(*per_sample).c_str(), unit_.c_str());
  return text;
}

}  // namespace ember::cli
