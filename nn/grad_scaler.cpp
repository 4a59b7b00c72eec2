// nn/grad_scaler.cpp — amp::GradScaler (see grad_scaler.h).
#include <ember/nn/grad_scaler.h>

#include <cmath>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/error.h>
#include <ember/core/factories.h>

namespace ember::amp {

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(static_cast<float>(options.init_scale)) {
  EMBER_CHECK(options.growth_factor > 1.0, ValueError, "The growth factor must be > 1.0.");
  EMBER_CHECK(options.backoff_factor < 1.0, ValueError, "The backoff factor must be < 1.0.");
  EMBER_CHECK(options.growth_interval > 0, ValueError, "growth_interval must be a positive integer, got ",
              options.growth_interval);
}

Tensor GradScaler::scale(const Tensor& outputs) const {
  if (!options_.enabled) return outputs;
  return outputs * ember::full({}, static_cast<double>(scale_), TensorOptions().dtype(kFloat32).device(outputs.device()));
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!options_.enabled) return;
  OptimizerState& state = per_optimizer_[&optimizer];
  EMBER_CHECK(state.stage == Stage::Ready, Error,  // PyTorch's RuntimeError
              state.stage == Stage::Unscaled ? "unscale_() has already been called on this optimizer since the last update()."
                                             : "unscale_() is being called after step().");
  // The reciprocal in double, rounded to float32, as PyTorch's `_scale.double().reciprocal().float()`.
  const double inverse = static_cast<float>(1.0 / static_cast<double>(scale_));
  NoGradGuard no_grad;
  bool found_inf = false;
  for (const Tensor& parameter : optimizer.parameters()) {
    Tensor grad = parameter.grad();
    if (!grad.defined()) continue;
    // A gradient that overflowed holds inf or NaN: its largest magnitude is not finite.
    if (!std::isfinite(ember::amax(ember::abs(grad)).item<double>())) found_inf = true;
    grad.mul_(inverse);  // every gradient, found_inf or not, as PyTorch's unscale kernel
  }
  state.found_inf = found_inf;
  state.stage = Stage::Unscaled;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  OptimizerState& state = per_optimizer_[&optimizer];
  EMBER_CHECK(state.stage != Stage::Stepped, Error, "step() has already been called since the last update().");
  if (state.stage == Stage::Ready) unscale_(optimizer);
  state.stage = Stage::Stepped;
  if (state.found_inf) return false;  // skipped: update() will back the scale off
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  EMBER_CHECK(!per_optimizer_.empty(), Error, "No inf checks were recorded prior to update.");
  bool found_inf = false;
  for (const auto& [optimizer, state] : per_optimizer_) found_inf = found_inf || state.found_inf;
  // PyTorch's _amp_update_scale_: the products in double, stored as float32; a growth that
  // would overflow float32 is not taken.
  if (found_inf) {
    scale_ = static_cast<float>(static_cast<double>(scale_) * options_.backoff_factor);
    growth_tracker_ = 0;
  } else if (growth_tracker_ + 1 == options_.growth_interval) {
    const auto grown = static_cast<float>(static_cast<double>(scale_) * options_.growth_factor);
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  } else {
    ++growth_tracker_;
  }
  per_optimizer_.clear();
}

optim::StateDict GradScaler::state_dict() const {
  optim::StateDict state;
  if (!options_.enabled) return state;
  state.insert("scale", ember::full({}, static_cast<double>(scale_), kFloat64));
  state.insert("growth_factor", ember::full({}, options_.growth_factor, kFloat64));
  state.insert("backoff_factor", ember::full({}, options_.backoff_factor, kFloat64));
  state.insert("growth_interval", ember::full({}, options_.growth_interval, kInt64));
  state.insert("_growth_tracker", ember::full({}, growth_tracker_, kInt64));
  return state;
}

void GradScaler::load_state_dict(const optim::StateDict& state) {
  EMBER_CHECK(options_.enabled, ValueError, "Attempting to load_state_dict on a disabled instance of GradScaler.");
  EMBER_CHECK(!state.empty(), ValueError, "The source state dict is empty, possibly because it was saved from a "
                                          "disabled instance of GradScaler.");
  for (const char* key : {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"})
    EMBER_CHECK(state.find(key) != nullptr, ValueError, "GradScaler state_dict: missing \"", key, "\"");
  scale_ = static_cast<float>(state.find("scale")->item<double>());
  options_.growth_factor = state.find("growth_factor")->item<double>();
  options_.backoff_factor = state.find("backoff_factor")->item<double>();
  options_.growth_interval = state.find("growth_interval")->item<std::int64_t>();
  growth_tracker_ = state.find("_growth_tracker")->item<std::int64_t>();
}

}  // namespace ember::amp
