// cuda/cuda_random.cpp — philox_uniform_ / philox_normal_ (cuda/cuda_random.h).
//
// Since core/random.cpp sends every random fill of a GPU tensor to the device's Philox
// kernel (random_fill_kernel, core/backend.h), these are uniform_ / normal_ with a stricter contract: the
// tensor must be a floating CUDA tensor (they never fall back to the CPU stream).
#include <ember/cuda/cuda_random.h>

#include <ember/core/random.h>

namespace ember::cuda {

namespace {

void check_philox_target(const Tensor& self, const char* name) {
  EMBER_CHECK(self.is_cuda(), DeviceError, name, " expects a CUDA tensor, got one on ", self.device());
  EMBER_CHECK(self.is_floating_point(), DTypeError, "\"", name, "\" not implemented for '",
              scalar_type_name(self.dtype()), "'");
}

}  // namespace

void philox_uniform_(const Tensor& self, double low, double high) {
  check_philox_target(self, "philox_uniform_");
  uniform_(self, low, high);
}
void philox_normal_(const Tensor& self, double mean, double std) {
  check_philox_target(self, "philox_normal_");
  normal_(self, mean, std);
}

}  // namespace ember::cuda
