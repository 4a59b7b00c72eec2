// tests/cuda/launch_check_probe.cu — a real EMBER_LAUNCH for tests/cuda/test_cuda_check.cpp.
//
// Compiled by nvcc into ember_cuda_tests in CUDA builds only (tests/CMakeLists.txt). The
// launch below goes through the production macro (cuda/kernels/device_support.cuh), so the
// test sees exactly the error a failing kernel launch produces: without a GPU every launch
// fails (no driver), on a GPU a block of more than 1024 threads does.
#include <ember/cuda/kernels/device_support.cuh>

namespace ember::testing {

namespace {
__global__ void probe_kernel(int* out) {
  if (out != nullptr) *out = 1;
}
}  // namespace

// The line of the EMBER_LAUNCH below: keep the two in step.
int probe_launch_line() { return 22; }

void launch_probe_kernel(unsigned threads_per_block) {
  int* nowhere = nullptr;
  EMBER_LAUNCH(probe_kernel, dim3(1), dim3(threads_per_block), cudaStreamLegacy, nowhere);  // line 22
  EMBER_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace ember::testing
