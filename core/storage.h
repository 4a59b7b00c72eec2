// core/storage.h — a reference-counted block of memory that tensors view.
//
// Many tensors (a tensor and all its views: transpose, slice, reshape without copy) share
// one Storage. The storage also carries the *version counter*: every in-place write to any
// of those tensors bumps it, which is how autograd notices that a tensor it saved for
// backward was modified (autograd/saved_tensor.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include <ember/core/device.h>

namespace ember {

class StorageImpl {
 public:
  // Allocates nbytes on device with that device's allocator.
  StorageImpl(std::size_t nbytes, Device device);
  // Wraps memory owned elsewhere (from_blob); `deleter` runs when the storage dies.
  StorageImpl(void* data, std::size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~StorageImpl();
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  std::uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void* data_ = nullptr;
  std::size_t nbytes_ = 0;
  Device device_;
  std::function<void(void*)> deleter_;  // empty: give back to the device allocator
  std::uint64_t version_ = 0;
};

using Storage = std::shared_ptr<StorageImpl>;

Storage make_storage(std::size_t nbytes, Device device);

}  // namespace ember
