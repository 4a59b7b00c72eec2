// autograd/anomaly.cpp — the anomaly-mode flag and the non-finite check.
#include <ember/autograd/anomaly.h>

#include <atomic>
#include <limits>

#include <ember/core/native.h>

namespace ember::autograd {

namespace {
// Process-wide, like torch.autograd.set_detect_anomaly (the engine may run on any thread).
std::atomic<bool> anomaly_enabled{false};

bool any_true(const Tensor& mask) { return native::sum(mask, {}, false).item<std::int64_t>() > 0; }
}  // namespace

bool is_anomaly_enabled() { return anomaly_enabled.load(); }
void set_detect_anomaly(bool enabled) { anomaly_enabled.store(enabled); }

std::string find_non_finite(const Tensor& tensor) {
  if (!tensor.defined() || !tensor.is_floating_point() || tensor.numel() == 0) return "";
  if (any_true(native::ne(tensor, tensor))) return "nan";  // NaN is the only value != itself
  Tensor infinity = scalar_to_tensor(std::numeric_limits<double>::infinity(), tensor.device());
  if (any_true(native::eq(native::abs(tensor), infinity))) return "inf";
  return "";
}

}  // namespace ember::autograd
