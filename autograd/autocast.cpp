// autograd/autocast.cpp — the autocast state and its casts (autograd/autocast.h).
#include <ember/autograd/autocast.h>

#include <map>
#include <utility>

#include <ember/autograd/ops.h>
#include <ember/core/error.h>

namespace ember {

namespace {

struct AutocastState {
  bool enabled[kNumDeviceTypes] = {false, false};
  // PyTorch's defaults: bfloat16 on the CPU (its fast 16-bit format there), float16 on CUDA.
  DType dtype[kNumDeviceTypes] = {DType::BFloat16, DType::Float16};
  int depth = 0;           // guards alive: the cache lives while any is
  bool suspended = false;  // inside an op that has cast its arguments already
  // Parameters cast in this region: the float32 leaf (kept alive, so its address is not
  // reused) and its 16-bit copy.
  std::map<const TensorImpl*, std::pair<Tensor, Tensor>> cast_cache;
};

AutocastState& state() {
  thread_local AutocastState instance;
  return instance;
}

int index_of(DeviceType device_type) { return static_cast<int>(device_type); }

bool enabled_for(const Tensor& tensor) {
  return tensor.defined() && state().enabled[index_of(tensor.device().type())];
}

}  // namespace

AutocastGuard::AutocastGuard(DeviceType device_type, std::optional<DType> dtype, bool enabled)
    : device_type_(device_type),
      previous_enabled_(state().enabled[index_of(device_type)]),
      previous_dtype_(state().dtype[index_of(device_type)]) {
  AutocastState& s = state();
  const DType chosen = dtype.value_or(s.dtype[index_of(device_type)]);
  EMBER_CHECK(is_reduced_floating_point(chosen), DTypeError,
              "In autocast, but the target dtype is not supported. Disabling autocast.\n"
              "ember supports bfloat16 and float16 as autocast dtypes, got ",
              dtype_name(chosen));
  s.enabled[index_of(device_type)] = enabled;
  s.dtype[index_of(device_type)] = chosen;
  ++s.depth;
}

AutocastGuard::~AutocastGuard() {
  AutocastState& s = state();
  s.enabled[index_of(device_type_)] = previous_enabled_;
  s.dtype[index_of(device_type_)] = previous_dtype_;
  if (--s.depth == 0) s.cast_cache.clear();  // leaving the outermost region, as PyTorch
}

bool is_autocast_enabled(DeviceType device_type) { return state().enabled[index_of(device_type)]; }
DType get_autocast_dtype(DeviceType device_type) { return state().dtype[index_of(device_type)]; }

namespace autocast {

bool active() {
  const AutocastState& s = state();
  return !s.suspended && (s.enabled[0] || s.enabled[1]);
}

Tensor to_lower_precision(const Tensor& tensor) {
  if (!enabled_for(tensor)) return tensor;
  const DType target = state().dtype[index_of(tensor.device().type())];
  const DType dtype = tensor.dtype();
  if (!is_floating_point(dtype) || dtype == DType::Float64 || dtype == target) return tensor;
  // A parameter (a float32 leaf that requires grad) is cast once per region: every use
  // then shares one copy, and one ToCopyBackward0 node sums its gradients.
  const bool cacheable = dtype == DType::Float32 && tensor.requires_grad() && tensor.is_leaf();
  if (!cacheable) return ember::to(tensor, target);
  auto& cache = state().cast_cache;
  auto found = cache.find(&tensor.impl());
  if (found != cache.end() && found->second.second.dtype() == target) return found->second.second;
  Tensor cast = ember::to(tensor, target);
  cache[&tensor.impl()] = {tensor, cast};
  return cast;
}

Tensor to_float32(const Tensor& tensor) {
  if (!enabled_for(tensor) || !is_reduced_floating_point(tensor.dtype())) return tensor;
  return ember::to(tensor, DType::Float32);
}

SuspendGuard::SuspendGuard() : previous_(state().suspended) { state().suspended = true; }
SuspendGuard::~SuspendGuard() { state().suspended = previous_; }

}  // namespace autocast

}  // namespace ember
