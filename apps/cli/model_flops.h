// apps/cli/model_flops.h — MFU for ember train's summary: the model's FLOPs per second over
// the device's peak, as llm.c prints it.
//
// The FLOPs of a training step are counted, not estimated by a formula per layer: the op
// profiler (core/profiler.h) records the first step trained while no profile runs (forward,
// loss and backward), and its kernels report what they multiply and add from their shapes
// (matmuls, convolutions, attention). So the count follows the model and the data's shape,
// and counts what the step does: no input gradient for the first layer (llm.c's and PaLM's
// 6N formula would count one), the key-query products flash attention's backward recomputes.
// The peak is the CPU's computed fp32 peak for the threads in use; ember does not know a
// GPU's peak yet, and MFU is then not printed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <ember/core/device.h>
#include <ember/core/profiler.h>

namespace ember::cli {

class ModelFlops {
 public:
  // `unit`: what the throughput counts ("sample", "token").
  explicit ModelFlops(std::string unit = "sample") : unit_(std::move(unit)) {}
  // Around one training step of `samples` samples (or tokens): the first time no profile is
  // running, its FLOPs are counted.
  void begin_step(std::int64_t samples);
  void end_step();

  std::optional<double> flops_per_sample() const { return per_sample_; }
  // "59.9% of the CPU's computed fp32 peak (234.8 GFLOP/s, 2 threads); 1.01 MFLOP per
  // sample", or "" when the FLOPs or the device's peak are unknown.
  // With --precision bf16 the ceiling is the CPU's bfloat16 peak (where it has one): the
  // products run there. fp16 has no faster CPU path: the fp32 peak.
  std::string mfu_text(double samples_per_second, Device device, const std::string& precision = "fp32") const;

 private:
  std::unique_ptr<profiler::ProfileGuard> guard_;
  std::string unit_;
  std::int64_t samples_ = 0;
  std::optional<double> per_sample_;
};

}  // namespace ember::cli
