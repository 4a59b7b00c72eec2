// autograd/anomaly.h — anomaly detection (torch.autograd.detect_anomaly).
//
// Tutorial §4 (debugging). With anomaly mode on, every node remembers which forward op
// created it (with its input shapes), and the engine checks each gradient a backward
// formula returns: a NaN or an infinity throws an AutogradError that names the node *and*
// the forward op, e.g.
//   Function 'DivBackward0' returned nan values in its 1th output.
//   The node was created in the forward pass by: div(Tensor[3] float32, Tensor[3] float32)
// Off by default, because checking every gradient costs a pass over its elements.
#pragma once

#include <string>

#include <ember/core/tensor.h>

namespace ember::autograd {

bool is_anomaly_enabled();
void set_detect_anomaly(bool enabled);

// RAII: anomaly mode on for the guard's lifetime (`with torch.autograd.detect_anomaly():`).
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : previous_(is_anomaly_enabled()) { set_detect_anomaly(true); }
  ~DetectAnomalyGuard() { set_detect_anomaly(previous_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

// "nan", "inf" or "" (all finite) — the first kind of non-finite value found in `tensor`.
std::string find_non_finite(const Tensor& tensor);

}  // namespace ember::autograd
