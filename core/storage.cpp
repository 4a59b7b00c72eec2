// core/storage.cpp — Storage, and the table of allocators per device type (the CPU's
// caching allocator is core/cpu_allocator.cpp; the CUDA layer registers its own).
#include <ember/core/storage.h>

#include <array>

#include <ember/core/allocator.h>
#include <ember/core/cuda_hooks.h>
#include <ember/core/error.h>
#include <ember/core/profiler.h>
#include <ember/core/small_object_pool.h>

namespace ember {

namespace {

std::array<Allocator*, kNumDeviceTypes>& allocator_table() {
  static std::array<Allocator*, kNumDeviceTypes> table{&cpu_allocator(), nullptr};
  return table;
}

}  // namespace

Allocator& allocator_for(DeviceType type) {
  Allocator* allocator = allocator_table()[static_cast<int>(type)];
  EMBER_CHECK(allocator != nullptr, DeviceError,
              "Torch not compiled with CUDA enabled (ember was built without its CUDA backend)");
  return *allocator;
}

void register_allocator(DeviceType type, Allocator* allocator) {
  allocator_table()[static_cast<int>(type)] = allocator;
}

namespace {
// "cuda" (no index) means the device current at allocation time; the storage records which
// one, so later ops run there (the CUDA backend's device guard) and the memory goes back to
// that device's cache, whatever is current then. Without a GPU the index stays unresolved
// and the allocator reports the error.
Device concrete_device(Device device) {
  if (device.is_cuda() && !device.has_index() && cuda::is_available()) {
    return Device(DeviceType::CUDA, cuda::current_device());
  }
  return device;
}
}  // namespace

StorageImpl::StorageImpl(std::size_t nbytes, Device device)
    : data_(allocator_for(device.type()).allocate(nbytes, concrete_device(device))),
      nbytes_(nbytes),
      device_(concrete_device(device)) {
  profiler::record_allocation(device_, static_cast<std::int64_t>(nbytes_));
}

StorageImpl::StorageImpl(void* data, std::size_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {
  if (!deleter_) deleter_ = [](void*) {};  // borrowed memory: never freed by us
}

StorageImpl::~StorageImpl() {
  if (deleter_) {
    deleter_(data_);
  } else if (data_ != nullptr) {
    profiler::record_allocation(device_, -static_cast<std::int64_t>(nbytes_));
    allocator_for(device_.type()).deallocate(data_, nbytes_, device_);
  }
}

Storage make_storage(std::size_t nbytes, Device device) { return detail::make_pooled<StorageImpl>(nbytes, device); }

}  // namespace ember
