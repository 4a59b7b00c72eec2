// core/device.h — where a tensor's memory lives (PyTorch: torch.device).
//
// Tutorial §9.1: "cpu", "cuda", "cuda:0", "cuda:1". A Device is a type plus an index;
// index -1 on CUDA means "the current device" until it is resolved.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace ember {

enum class DeviceType : std::uint8_t { CPU, CUDA };
constexpr int kNumDeviceTypes = 2;

class Device {
 public:
  Device() = default;
  Device(DeviceType type, int index = -1);  // NOLINT: implicit, like torch.device
  // Parses "cpu", "cuda", "cuda:1" (PyTorch's error text on anything else).
  Device(const std::string& spec);          // NOLINT
  Device(const char* spec) : Device(std::string(spec)) {}  // NOLINT

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;  // "cpu", "cuda:0"

  bool operator==(const Device& other) const { return type_ == other.type_ && index_ == other.index_; }
  bool operator!=(const Device& other) const { return !(*this == other); }

 private:
  DeviceType type_ = DeviceType::CPU;
  int index_ = -1;
};

inline const Device kCPU{DeviceType::CPU};
inline const Device kCUDA{DeviceType::CUDA};

std::ostream& operator<<(std::ostream& out, const Device& device);

}  // namespace ember
