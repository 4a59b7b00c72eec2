// core/backend.cpp — the registry that maps a device type to its Backend, and the
// defaults of Backend's optional methods.
#include <ember/core/backend.h>

#include <array>

#include <ember/core/error.h>
#include <ember/core/kernel_mode.h>

namespace ember {

Backend& cpu_backend();        // core/cpu/cpu_backend.cpp
Backend& reference_backend();  // core/reference/reference_backend.cpp

namespace {
std::array<Backend*, kNumDeviceTypes>& backend_table() {
  static std::array<Backend*, kNumDeviceTypes> table{&cpu_backend(), nullptr};
  return table;
}
}  // namespace

Backend& backend_for(DeviceType type) {
  // EMBER_KERNELS=reference (core/kernel_mode.h): the CPU's plain reference loops. One
  // relaxed atomic load per op; CUDA keeps its kernels in either mode.
  if (type == DeviceType::CPU && kernel_mode() == KernelMode::Reference) return reference_backend();
  Backend* backend = backend_table()[static_cast<int>(type)];
  EMBER_CHECK(backend != nullptr, DeviceError,
              "Torch not compiled with CUDA enabled (ember was built without its CUDA backend)");
  return *backend;
}

void Backend::random_fill(const StridedPlan&, const PhiloxFill&) {
  // Only reached through a bug: core/random.cpp sends CPU tensors to the mt19937 path.
  throw DeviceError("random_fill: this backend has no device-side Philox generator");
}

void register_backend(DeviceType type, Backend* backend) { backend_table()[static_cast<int>(type)] = backend; }

}  // namespace ember
