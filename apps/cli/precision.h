// apps/cli/precision.h — `--precision`: the autocast region around a forward pass and its loss.
//
// docs/mixed-precision.md. With --precision bf16, each training step runs
//     with torch.autocast(device_type, dtype=torch.bfloat16):
//         loss = cross_entropy(model(x), y)
//     loss.backward(); optimizer.step()
// as a PyTorch user writes it: the matrix products and convolutions in bfloat16, the loss in
// float32, and the backward pass and the optimizer step outside the region, on the float32
// parameters. Evaluation runs its forward passes in the same precision.
#pragma once

#include <optional>
#include <string>

#include <ember/autograd/autocast.h>
#include <ember/core/device.h>

namespace ember::cli {

// kBFloat16 for "bf16", kFloat16 for "fp16"; nothing for "fp32".
inline std::optional<DType> autocast_dtype(const std::string& precision) {
  if (precision == "bf16") return DType::BFloat16;
  if (precision == "fp16") return DType::Float16;
  return std::nullopt;
}

// An AutocastGuard on `device`'s type while alive, when `precision` asks for one.
class PrecisionScope {
 public:
  PrecisionScope(const std::string& precision, Device device) {
    if (std::optional<DType> dtype = autocast_dtype(precision)) guard_.emplace(device.type(), *dtype);
  }

 private:
  std::optional<AutocastGuard> guard_;
};

}  // namespace ember::cli
