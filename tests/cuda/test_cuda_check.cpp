// tests/cuda/test_cuda_check.cpp — every failed CUDA call and launch becomes an ember
// exception naming the call (or kernel and launching function), the file and the line.
//
// Runs on the CPU: check_cuda / check_launch (cuda/cuda_check.h) are fed real CUDA error
// codes, EMBER_CUDA_CHECK wraps a call that fails without a GPU as well as with one, and a
// real kernel launch through EMBER_LAUNCH (tests/cuda/launch_check_probe.cu, nvcc) fails for
// want of a driver here and for a 2048-thread block on a GPU. CUDA builds only.
#include <string>

#include "cuda_test_support.h"

#if defined(EMBER_HAVE_CUDA_BACKEND)
#include <ember/cuda/cuda_check.h>

namespace ember::testing {
int probe_launch_line();
void launch_probe_kernel(unsigned threads_per_block);
}  // namespace ember::testing
#endif

namespace {
#if defined(EMBER_HAVE_CUDA_BACKEND)
// The message of the CudaError that body throws ("" when it throws nothing or something else).
template <class Body>
std::string cuda_error_text(Body body) {
  try {
    body();
  } catch (const ember::cuda::CudaError& error) {
    return error.what();
  }
  return "";
}
#endif
}  // namespace

TEST_CASE("check_cuda: a failed call's message names the error, the call, the file and the line", "[cuda][check]") {
#if !defined(EMBER_HAVE_CUDA_BACKEND)
  ember::testing::mark_skipped("ember was built without its CUDA backend");
#else
  using ember::cuda::check_cuda;
  REQUIRE_NOTHROW(check_cuda(cudaSuccess, "cudaMemcpy(dst, src, n, kind)", "cuda/copy.cpp", 42));
  REQUIRE_THROWS_AS(check_cuda(cudaErrorInvalidValue, "cudaMemcpy(dst, src, n, kind)", "cuda/copy.cpp", 42),
                    ember::DeviceError);  // CudaError is a DeviceError: callers can catch either
  REQUIRE(cuda_error_text([] { check_cuda(cudaErrorInvalidValue, "cudaMemcpy(dst, src, n, kind)", "cuda/copy.cpp", 42); }) ==
          "CUDA error: invalid argument (cudaMemcpy(dst, src, n, kind) at cuda/copy.cpp:42)");
  const std::string oom =
      cuda_error_text([] { check_cuda(cudaErrorMemoryAllocation, "cudaMalloc(&p, bytes)", "cuda/alloc.cpp", 7); });
  REQUIRE_THAT(oom, Catch::StartsWith("CUDA error: out of memory (cudaMalloc(&p, bytes) at cuda/alloc.cpp:7)"));
#endif
}

TEST_CASE("check_cuda: EMBER_CUDA_CHECK quotes the wrapped call with this file and line", "[cuda][check]") {
#if !defined(EMBER_HAVE_CUDA_BACKEND)
  ember::testing::mark_skipped("ember was built without its CUDA backend");
#else
  // Device -1 never exists: invalid device ordinal on a GPU, a driver error without one.
  const int line = __LINE__ + 1;
  const std::string text = cuda_error_text([] { EMBER_CUDA_CHECK(cudaSetDevice(-1)); });
  REQUIRE_THAT(text, Catch::StartsWith("CUDA error: "));
  REQUIRE_THAT(text, Catch::Contains("(cudaSetDevice(-1) at "));
  REQUIRE_THAT(text, Catch::Contains("test_cuda_check.cpp:" + std::to_string(line) + ")"));
#endif
}

TEST_CASE("check_launch: a failed launch names the kernel, the launching function, the file and the line",
          "[cuda][check]") {
#if !defined(EMBER_HAVE_CUDA_BACKEND)
  ember::testing::mark_skipped("ember was built without its CUDA backend");
#else
  using ember::cuda::check_launch;
  REQUIRE_NOTHROW(check_launch(cudaSuccess, "kernel", "launch_gemm_typed", "cuda/kernels/gemm.cuh", 9));
  REQUIRE(cuda_error_text([] {
            check_launch(cudaErrorInvalidConfiguration, "kernel", "launch_gemm_typed", "cuda/kernels/gemm.cuh", 9);
          }) == "CUDA error: invalid configuration argument (kernel launch kernel in launch_gemm_typed() at "
                "cuda/kernels/gemm.cuh:9)");
#endif
}

TEST_CASE("check_launch: a real EMBER_LAUNCH that fails throws with the kernel, function, file and line",
          "[cuda][check]") {
#if !defined(EMBER_HAVE_CUDA_BACKEND)
  ember::testing::mark_skipped("ember was built without its CUDA backend");
#else
  // 2048 threads per block is over CUDA's limit of 1024; without a GPU any launch fails.
  const std::string text = cuda_error_text([] { ember::testing::launch_probe_kernel(2048); });
  REQUIRE_THAT(text, Catch::StartsWith("CUDA error: "));
  REQUIRE_THAT(text, Catch::Contains("(kernel launch probe_kernel in launch_probe_kernel() at "));
  REQUIRE_THAT(text, Catch::Contains("launch_check_probe.cu:" + std::to_string(ember::testing::probe_launch_line()) + ")"));
  if (ember::cuda::is_available()) {
    // The runtime's wording for an oversized block: "invalid configuration argument" in the
    // CUDA 12 documentation; CUDA 13 on an H200 said "invalid argument" (2026-12-04).
    REQUIRE_THAT(text, Catch::Contains("invalid configuration argument") || Catch::Contains("invalid argument"));
    REQUIRE_NOTHROW(ember::testing::launch_probe_kernel(32));  // a valid launch passes the same check
  }
#endif
}

#if defined(EMBER_HAVE_CUDA_BACKEND)
namespace {
// A stand-in for the runtime's last-error slot that a test can fill: without a driver the
// real slot is stuck at "insufficient driver", so the stale-error protocol is shown here.
struct FakeLastError {
  static inline cudaError_t slot = cudaSuccess;
  static cudaError_t take() {
    const cudaError_t error = slot;
    slot = cudaSuccess;  // cudaGetLastError clears a non-sticky error
    return error;
  }
};
}  // namespace
#endif

TEST_CASE("check_launch: an error an earlier call left behind is not blamed on the next launch", "[cuda][check]") {
#if !defined(EMBER_HAVE_CUDA_BACKEND)
  ember::testing::mark_skipped("ember was built without its CUDA backend");
#else
  using ember::cuda::launch_checked;
  // cudaEventQuery's "not ready" sits in the slot (process_group_nccl.cpp polls events):
  // a launch that itself succeeds passes, and leaves the slot clean.
  FakeLastError::slot = cudaErrorNotReady;
  int launched = 0;
  REQUIRE_NOTHROW(launch_checked<FakeLastError>([&] { ++launched; }, "kernel", "launch_sgd", "cuda/kernels/sgd.cuh", 5));
  REQUIRE(launched == 1);
  REQUIRE(FakeLastError::slot == cudaSuccess);
  // The launch's own error is still reported, under the launch's name.
  FakeLastError::slot = cudaErrorNotReady;
  const std::string text = cuda_error_text([] {
    launch_checked<FakeLastError>([] { FakeLastError::slot = cudaErrorInvalidConfiguration; }, "kernel", "launch_sgd",
                                  "cuda/kernels/sgd.cuh", 5);
  });
  REQUIRE(text == "CUDA error: invalid configuration argument (kernel launch kernel in launch_sgd() at "
                  "cuda/kernels/sgd.cuh:5)");
#endif
}

TEST_CASE("check_launch: on a GPU a real launch after a failed, unchecked call passes", "[cuda][check][gpu]") {
#if !defined(EMBER_HAVE_CUDA_BACKEND)
  ember::testing::mark_skipped("ember was built without its CUDA backend");
#else
  EMBER_REQUIRE_GPU();
  // Device -1 never exists: "invalid device ordinal", a non-sticky error left in the slot.
  REQUIRE(cudaSetDevice(-1) != cudaSuccess);
  REQUIRE(cudaPeekAtLastError() != cudaSuccess);
  REQUIRE_NOTHROW(ember::testing::launch_probe_kernel(32));
  REQUIRE(cudaPeekAtLastError() == cudaSuccess);
#endif
}
