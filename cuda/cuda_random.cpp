// cuda/cuda_random.cpp — philox_uniform_ / philox_normal_ (cuda/cuda_random.h).
#include <ember/cuda/cuda_random.h>

#include <mutex>

#include <ember/core/random.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/cuda_ops.h>

namespace ember::cuda {

namespace {

void philox_fill_(const Tensor& self, bool normal, double a, double b, const char* name) {
  EMBER_CHECK(self.is_cuda(), DeviceError, name, " expects a CUDA tensor, got one on ", self.device());
  EMBER_CHECK(self.is_floating_point(), DTypeError, "\"", name, "\" not implemented for '",
              scalar_type_name(self.dtype()), "'");
  EMBER_CHECK(self.is_contiguous(), ValueError, name, " expects a contiguous tensor");
  Generator& generator = default_generator();
  std::uint64_t seed = 0, offset = 0;
  {
    std::lock_guard<std::mutex> lock(generator.mutex());
    seed = generator.initial_seed();
    offset = generator.random64();  // this call's slice of the Philox counter space
  }
  DeviceGuard guard(resolve_device_index(self.device()));
  ops::philox_fill(self.data_ptr(), self.dtype(), self.numel(), seed, offset, normal, a, b, current_stream());
  self.bump_version();
}

}  // namespace

void philox_uniform_(const Tensor& self, double low, double high) {
  philox_fill_(self, false, low, high, "philox_uniform_");
}
void philox_normal_(const Tensor& self, double mean, double std) {
  philox_fill_(self, true, mean, std, "philox_normal_");
}

}  // namespace ember::cuda
