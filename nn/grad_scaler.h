// nn/grad_scaler.h — dynamic loss scaling for float16 training (PyTorch: torch.amp.GradScaler).
//
// docs/mixed-precision.md. float16 stops at 2^-24: the gradients of a float16 forward pass
// are often smaller, and would flush to zero. GradScaler multiplies the loss by a large
// factor S before backward, so every gradient is S times larger while it is in 16 bits, then
// divides the float32 parameter gradients by S before the optimizer uses them. If S was too
// large, some gradient overflowed to inf or NaN: that step is skipped and S halved; after
// growth_interval steps in a row without one, S doubles. bfloat16 has float32's range and
// needs none of this.
//
//     ember::amp::GradScaler scaler;
//     for (...) {
//       { ember::AutocastGuard autocast(DeviceType::CPU, kFloat16); loss = loss_fn(model(x), y); }
//       optimizer.zero_grad();
//       scaler.scale(loss).backward();
//       scaler.unscale_(optimizer);            // optional: before clipping the true gradients
//       scaler.step(optimizer);                // skipped when a gradient is not finite
//       scaler.update();
//     }
//
// The scale is a float32 number, updated as PyTorch's _amp_update_scale_ does it, so a run
// gives PyTorch's sequence of scales and skipped steps.
#pragma once

#include <cstdint>
#include <map>

#include <ember/core/tensor.h>
#include <ember/nn/optimizer.h>

namespace ember::amp {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
  bool enabled = true;  // false: scale() returns its input, step() just steps
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  // outputs * the scale (a float32 0-d tensor on outputs' device).
  Tensor scale(const Tensor& outputs) const;
  // Divides the optimizer's gradients by the scale, in place, and notes whether any was not
  // finite. At most once per optimizer between update()s.
  void unscale_(optim::Optimizer& optimizer);
  // unscale_ if not done yet, then optimizer.step() unless a gradient was not finite.
  // Returns whether it stepped.
  bool step(optim::Optimizer& optimizer);
  // The next scale: backoff after a skipped step, growth after growth_interval good ones.
  void update();

  double get_scale() const { return options_.enabled ? static_cast<double>(scale_) : 1.0; }
  std::int64_t growth_tracker() const { return growth_tracker_; }
  bool is_enabled() const { return options_.enabled; }

  // {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}, as
  // PyTorch's state_dict (0-d float64 / int64 tensors here), and back.
  optim::StateDict state_dict() const;
  void load_state_dict(const optim::StateDict& state);

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct OptimizerState {
    Stage stage = Stage::Ready;
    bool found_inf = false;
  };
  GradScalerOptions options_;
  float scale_;
  std::int64_t growth_tracker_ = 0;
  std::map<const optim::Optimizer*, OptimizerState> per_optimizer_;
};

}  // namespace ember::amp
