// nn/grad_scaler.cpp — amp::GradScaler (see grad_scaler.h).
#include <ember/nn/grad_scaler.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>

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
  // A gradient that overflowed holds inf or NaN: its largest magnitude (the inf-norm, NaN
  // when it holds one) is not finite. foreach_norm takes the magnitudes of a whole group of
  // gradients (one dtype, one device) in one call, so the check reads each gradient once and
  // waits for one number per group, not one per parameter.
  std::map<std::pair<DType, std::string>, std::vector<Tensor>> groups;
  for (const Tensor& parameter : optimizer.parameters()) {
    const Tensor grad = parameter.grad();
    if (grad.defined() && grad.numel() > 0) groups[{grad.dtype(), grad.device().str()}].push_back(grad);
  }
  bool found_inf = false;
  for (const auto& [key, grads] : groups)
    if (!std::isfinite(ember::amax(native::foreach_norm(grads, INFINITY)).item<double>())) found_inf = true;
  for (const Tensor& parameter : optimizer.parameters()) {
    Tensor grad = parameter.grad();
    if (grad.defined()) grad.mul_(inverse);  // every gradient, found_inf or not, as PyTorch's unscale kernel
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
  // Each entry one number; a state that would make every step a no-op (a NaN or zero scale)
  // or never recover is refused rather than trained with.
  auto number = [&state](const char* key) {
    const Tensor* entry = state.find(key);
    EMBER_CHECK(entry != nullptr, ValueError, "GradScaler state_dict: missing \"", key, "\"");
    EMBER_CHECK(entry->numel() == 1, ValueError, "GradScaler state_dict: \"", key, "\" holds ", entry->numel(),
                " values, not one");
    return entry->item<double>();
  };
  const double scale = number("scale"), growth_factor = number("growth_factor");
  const double backoff_factor = number("backoff_factor"), growth_interval = number("growth_interval");
  const double growth_tracker = number("_growth_tracker");
  EMBER_CHECK(std::isfinite(scale) && scale > 0 && scale <= std::numeric_limits<float>::max(), ValueError,
              "GradScaler state_dict: \"scale\" must be a positive finite float32 number, got ", scale);
  EMBER_CHECK(growth_factor > 1.0 && std::isfinite(growth_factor), ValueError,
              "GradScaler state_dict: \"growth_factor\" must be > 1.0, got ", growth_factor);
  EMBER_CHECK(backoff_factor > 0.0 && backoff_factor < 1.0, ValueError,
              "GradScaler state_dict: \"backoff_factor\" must be in (0, 1), got ", backoff_factor);
  EMBER_CHECK(growth_interval >= 1 && growth_interval <= 9.0e18 && growth_interval == std::floor(growth_interval),
              ValueError, "GradScaler state_dict: \"growth_interval\" must be a positive whole number, got ",
              growth_interval);
  EMBER_CHECK(growth_tracker >= 0 && growth_tracker < growth_interval && growth_tracker == std::floor(growth_tracker),
              ValueError, "GradScaler state_dict: \"_growth_tracker\" must be a whole number in [0, growth_interval), got ",
              growth_tracker);
  scale_ = static_cast<float>(scale);
  options_.growth_factor = growth_factor;
  options_.backoff_factor = backoff_factor;
  options_.growth_interval = static_cast<std::int64_t>(growth_interval);
  growth_tracker_ = static_cast<std::int64_t>(growth_tracker);
}

}  // namespace ember::amp
