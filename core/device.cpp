// core/device.cpp — parsing and printing devices.
#include <ember/core/device.h>

#include <cctype>

#include <ember/core/error.h>

namespace ember {

Device::Device(DeviceType type, int index) : type_(type), index_(type == DeviceType::CPU ? -1 : index) {
  EMBER_CHECK(index >= -1, ValueError, "Device index must be -1 or non-negative, got ", index);
}

Device::Device(const std::string& spec) {
  std::string kind = spec;
  int index = -1;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    kind = spec.substr(0, colon);
    std::string digits = spec.substr(colon + 1);
    bool ok = !digits.empty() && digits.size() < 9;
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    EMBER_CHECK(ok, ValueError, "Invalid device string: '", spec, "'");
    index = std::stoi(digits);
  }
  if (kind == "cpu") {
    EMBER_CHECK(index <= 0, ValueError, "CPU device index must be -1 or zero, got ", index);
    type_ = DeviceType::CPU;
    index_ = -1;
  } else if (kind == "cuda") {
    type_ = DeviceType::CUDA;
    index_ = index;
  } else {
    throw ValueError(make_message(
        "Expected one of cpu, cuda device type at start of device string: ", spec));
  }
}

std::string Device::str() const {
  if (type_ == DeviceType::CPU) return "cpu";
  return index_ >= 0 ? "cuda:" + std::to_string(index_) : "cuda";
}

std::ostream& operator<<(std::ostream& out, const Device& device) { return out << device.str(); }

}  // namespace ember
