// core/cuda_hooks.cpp — forwards ember::cuda::* to the registered CudaHooks, if any.
//
// See core/cuda_hooks.h. Without a registered CUDA layer, queries answer "no GPU" and
// actions throw DeviceError with PyTorch's wording, so CPU-only programs never abort.
#include <ember/core/cuda_hooks.h>

#include <ember/core/error.h>

namespace ember::cuda {

namespace {
CudaHooks*& hooks_slot() {
  static CudaHooks* hooks = nullptr;
  return hooks;
}

// The hooks, or a DeviceError explaining why there are none / no GPU is visible.
CudaHooks& require_gpu() {
  CudaHooks* hooks = hooks_slot();
  EMBER_CHECK(hooks != nullptr, DeviceError,
              "Torch not compiled with CUDA enabled (ember was built without its CUDA backend)");
  EMBER_CHECK(hooks->device_count() > 0, DeviceError,
              "No CUDA GPUs are available");
  return *hooks;
}
}  // namespace

void register_cuda_hooks(CudaHooks* hooks) { hooks_slot() = hooks; }
bool is_built() { return hooks_slot() != nullptr; }

int device_count() {
  CudaHooks* hooks = hooks_slot();
  return hooks == nullptr ? 0 : hooks->device_count();
}
bool is_available() { return device_count() > 0; }

int current_device() { return require_gpu().current_device(); }

void set_device(int device) {
  CudaHooks& hooks = require_gpu();
  EMBER_CHECK(device >= 0 && device < hooks.device_count(), DeviceError,
              "CUDA error: invalid device ordinal (device ", device, ", ", hooks.device_count(),
              " device(s) visible)");
  hooks.set_device(device);
}

void synchronize() { require_gpu().synchronize(); }

DeviceProperties get_device_properties(int device) {
  CudaHooks& hooks = require_gpu();
  EMBER_CHECK(device >= 0 && device < hooks.device_count(), DeviceError,
              "CUDA error: invalid device ordinal (device ", device, ", ", hooks.device_count(),
              " device(s) visible)");
  return hooks.get_device_properties(device);
}

namespace {
// Resolves device -1 to the current one; nullptr when there is no GPU at all.
CudaHooks* stats_hooks(int& device) {
  if (!is_available()) return nullptr;
  CudaHooks* hooks = hooks_slot();
  if (device < 0) device = hooks->current_device();
  EMBER_CHECK(device < hooks->device_count(), DeviceError,
              "CUDA error: invalid device ordinal (device ", device, ", ", hooks->device_count(),
              " device(s) visible)");
  return hooks;
}
}  // namespace

std::size_t memory_allocated(int device) {
  CudaHooks* hooks = stats_hooks(device);
  return hooks == nullptr ? 0 : hooks->memory_allocated(device);
}
std::size_t max_memory_allocated(int device) {
  CudaHooks* hooks = stats_hooks(device);
  return hooks == nullptr ? 0 : hooks->max_memory_allocated(device);
}
std::size_t memory_reserved(int device) {
  CudaHooks* hooks = stats_hooks(device);
  return hooks == nullptr ? 0 : hooks->memory_reserved(device);
}
void reset_peak_memory_stats(int device) {
  CudaHooks* hooks = stats_hooks(device);
  if (hooks != nullptr) hooks->reset_peak_memory_stats(device);
}
void empty_cache() {
  if (is_available()) hooks_slot()->empty_cache();
}

void* allocate_pinned_memory(std::size_t nbytes) {
  // PyTorch 2.x's wording for pin_memory() on a machine (or build) without an accelerator.
  EMBER_CHECK(is_available(), DeviceError, "Cannot access accelerator device when none is available.");
  return hooks_slot()->allocate_pinned(nbytes);
}
void free_pinned_memory(void* pointer) {
  if (pointer != nullptr && hooks_slot() != nullptr) hooks_slot()->free_pinned(pointer);
}
bool is_pinned_memory(const void* pointer) {
  return pointer != nullptr && is_available() && hooks_slot()->is_pinned(pointer);
}

void* record_timing_event(int device) {
  return is_available() && device >= 0 && device < device_count() ? hooks_slot()->record_timing_event(device) : nullptr;
}
std::optional<double> elapsed_milliseconds(void* start, void* end) {
  if (start == nullptr || end == nullptr || hooks_slot() == nullptr) return std::nullopt;
  return hooks_slot()->elapsed_milliseconds(start, end);
}
void destroy_timing_event(void* event) {
  if (event != nullptr && hooks_slot() != nullptr) hooks_slot()->destroy_timing_event(event);
}

void set_matmul_backend(MatmulBackend backend) {
  CudaHooks* hooks = hooks_slot();
  EMBER_CHECK(hooks != nullptr, DeviceError,
              "Torch not compiled with CUDA enabled (ember was built without its CUDA backend)");
  hooks->set_matmul_backend(backend);
}
MatmulBackend matmul_backend() {
  CudaHooks* hooks = hooks_slot();
  return hooks == nullptr ? MatmulBackend::Ember : hooks->matmul_backend();
}

}  // namespace ember::cuda
