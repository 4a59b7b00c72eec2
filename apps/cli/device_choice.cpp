// apps/cli/device_choice.cpp — see device_choice.h.
#include "device_choice.h"

#include <charconv>

#include <ember/core/cuda_hooks.h>
#include <ember/core/error.h>

namespace ember::cli {

Device choose_device(const std::string& requested) {
  if (requested == "cpu") return kCPU;
  if (requested == "auto") return cuda::is_available() ? Device(DeviceType::CUDA, 0) : Device(kCPU);
  // "cuda" or "cuda:N" (main.cpp has already checked the spelling and the size of N).
  int index = 0;
  if (requested != "cuda") {
    bool parsed = requested.rfind("cuda:", 0) == 0 && requested.size() > 5;
    if (parsed) {
      const char* end = requested.c_str() + requested.size();
      auto [stop, error] = std::from_chars(requested.c_str() + 5, end, index);
      parsed = error == std::errc() && stop == end;
    }
    if (!parsed) throw DeviceError("--device " + requested + ": expected cuda:N with N a device index that fits an int");
  }
  if (!cuda::is_built()) {
    throw DeviceError("--device " + requested + ": this ember was built without CUDA (use --device cpu or auto)");
  }
  int count = cuda::device_count();
  if (count == 0) {
    throw DeviceError("--device " + requested + ": no CUDA device is available (use --device cpu or auto)");
  }
  if (index >= count) {
    throw DeviceError(make_message("--device ", requested, ": CUDA device index ", index, " is out of range (",
                                   count, " device", count == 1 ? "" : "s", " found)"));
  }
  return Device(DeviceType::CUDA, index);
}

}  // namespace ember::cli
