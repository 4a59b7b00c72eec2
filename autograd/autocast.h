// autograd/autocast.h — automatic mixed precision: run matrix products in 16 bits and the
// losses in float32, with float32 parameters (PyTorch: torch.autocast).
//
// docs/mixed-precision.md. Inside an AutocastGuard region, the ops of two lists cast their
// floating arguments before they run (PyTorch's autocast op lists for the CPU):
//   lower precision  mm, bmm, addmm, matmul (so nn::Linear), conv2d and
//                    scaled_dot_product_attention: float32 arguments become the region's
//                    dtype (bfloat16 by default on the CPU, float16 on CUDA), where the
//                    multiply-accumulate units are fast;
//   float32          cross_entropy, nll_loss, mse_loss, binary_cross_entropy(_with_logits)
//                    and prod: 16-bit arguments become float32, where a sum of many terms
//                    keeps its digits.
// Every other op runs in whatever dtype its inputs have (a 16-bit matmul output flows into
// relu in 16 bits, and into an add with a float32 tensor in float32, by promotion). The
// casts are ordinary recorded ops (ToCopyBackward0), so gradients flow back through them:
// a float32 parameter used in 16 bits receives a float32 gradient ("master weights"). A
// leaf that requires grad (a parameter) is cast once per region and the copy reused, as
// PyTorch's autocast cache does. float64 tensors are never cast.
//
// libtorch has no RAII autocast in its C++ frontend (its functions at::autocast::
// set_autocast_enabled/set_autocast_dtype); AutocastGuard is the shape of Python's
// `with torch.autocast(device_type, dtype):`.
#pragma once

#include <optional>

#include <ember/core/device.h>
#include <ember/core/dtype.h>
#include <ember/core/tensor.h>

namespace ember {

// Turns autocast on (or, with enabled = false, off) for tensors of one device type, in this
// thread, for the guard's lifetime. Nests: the previous state comes back at the end.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device_type, std::optional<DType> dtype = std::nullopt, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_type_;
  bool previous_enabled_;
  DType previous_dtype_;
};

bool is_autocast_enabled(DeviceType device_type);  // torch.is_autocast_enabled(device_type)
DType get_autocast_dtype(DeviceType device_type);   // torch.get_autocast_dtype(device_type)

namespace autocast {

// Whether an op of the lists should cast now: autocast is on for some device type and the
// thread is not already inside an op that cast its arguments.
bool active();

// What the lower-precision ops do to each argument: a floating tensor (not float64) on a
// device type with autocast on becomes the region's dtype; anything else is returned as is.
Tensor to_lower_precision(const Tensor& tensor);
// What the float32 ops do: a 16-bit floating tensor on such a device becomes float32.
Tensor to_float32(const Tensor& tensor);

// Held by an op while it runs on arguments it has cast, so that the ops it is built from
// (matmul's mm, cross_entropy's log_softmax) do not cast again.
class SuspendGuard {
 public:
  SuspendGuard();
  ~SuspendGuard();
  SuspendGuard(const SuspendGuard&) = delete;
  SuspendGuard& operator=(const SuspendGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace autocast

}  // namespace ember
