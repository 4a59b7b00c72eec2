// apps/cli/device_choice.h — turns --device auto|cpu|cuda|cuda:N into an ember::Device.
//
// "auto" is the tutorial appendix's idiom
//   device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
// An explicit CUDA request that cannot be met is a clear DeviceError (exit code 1), never
// a silent fallback to the CPU.
#pragma once

#include <string>

#include <ember/core/device.h>

namespace ember::cli {

Device choose_device(const std::string& requested);

}  // namespace ember::cli
