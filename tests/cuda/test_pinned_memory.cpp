// tests/cuda/test_pinned_memory.cpp — Tensor::pin_memory() / is_pinned() and
// to(device, non_blocking=true) (core/pinned_memory.cpp, core/copy.cpp, cuda/cuda_allocator.cpp).
//
// The first group runs everywhere: without a GPU (or without the CUDA backend) pinning is
// PyTorch's clear error, never an abort. The second needs a GPU and reports itself skipped
// without one (EMBER_REQUIRE_GPU, test_gpu_skip.cpp).
#include <ember/ember.h>

#include "cuda_test_support.h"

using namespace ember;

// ------------------------------------------------------------------ no GPU needed

TEST_CASE("pinned memory: ordinary CPU tensors are not pinned", "[cuda][pinned]") {
  REQUIRE_FALSE(ember::ones({3, 4}).is_pinned());
  REQUIRE_FALSE(ember::zeros({0}).is_pinned());
  REQUIRE_FALSE(ember::arange(10, TensorOptions().dtype(kInt64)).is_pinned());
}

TEST_CASE("pinned memory: without a GPU pin_memory() is PyTorch's DeviceError", "[cuda][pinned]") {
  if (cuda::is_available()) {  // the GPU tests below cover this machine
    testing::mark_skipped("checks the no-GPU behaviour, but a GPU is visible");
    return;
  }
  REQUIRE_THROWS_AS(ember::ones({2}).pin_memory(), DeviceError);
  REQUIRE_THROWS_WITH(ember::ones({2}).pin_memory(), "Cannot access accelerator device when none is available.");
  REQUIRE_THROWS_WITH(cuda::allocate_pinned_memory(16), "Cannot access accelerator device when none is available.");
  REQUIRE_FALSE(cuda::is_pinned_memory(ember::ones({2}).data_ptr()));
  REQUIRE_NOTHROW(cuda::free_pinned_memory(nullptr));
}

TEST_CASE("pinned memory: to(cuda, non_blocking=true) without a GPU is a DeviceError", "[cuda][pinned]") {
  if (cuda::is_available()) {  // the GPU tests below cover this machine
    testing::mark_skipped("checks the no-GPU behaviour, but a GPU is visible");
    return;
  }
  REQUIRE_THROWS_AS(ember::ones({2}).to(Device("cuda"), true), DeviceError);
  REQUIRE_THROWS_AS(ember::ones({2}).cuda(/*non_blocking=*/true), DeviceError);
  // non_blocking is harmless for CPU -> CPU: the tensor itself comes back.
  Tensor x = ember::ones({2});
  REQUIRE(x.to(kCPU, true).is_same(x));
}

// ------------------------------------------------------------------ real GPU

TEST_CASE("pinned memory: pin_memory() copies into pinned memory and is idempotent", "[cuda][pinned][gpu]") {
  EMBER_REQUIRE_GPU();
  for (std::int64_t n : {1, 7, 31, 1000, 4097}) {
    Tensor x = ember::randn({n});
    Tensor pinned = x.pin_memory();
    REQUIRE(pinned.is_pinned());
    REQUIRE(pinned.device().is_cpu());
    REQUIRE_FALSE(pinned.is_same(x));
    REQUIRE(pinned.equal(x));
    REQUIRE(pinned.pin_memory().is_same(pinned));  // already pinned: self
  }
  Tensor strided = ember::randn({5, 8}).t();  // a non-contiguous source gives a dense pinned copy
  Tensor pinned = strided.pin_memory();
  REQUIRE(pinned.is_contiguous());
  REQUIRE(pinned.equal(strided));
}

TEST_CASE("pinned memory: a CUDA tensor cannot be pinned", "[cuda][pinned][gpu]") {
  EMBER_REQUIRE_GPU();
  Tensor g = ember::ones({2}).cuda();
  REQUIRE_FALSE(g.is_pinned());
  REQUIRE_THROWS_WITH(g.pin_memory(), Catch::Contains("only dense CPU tensors can be pinned"));
}

TEST_CASE("pinned memory: non_blocking copies from pinned memory arrive intact", "[cuda][pinned][gpu]") {
  EMBER_REQUIRE_GPU();
  for (std::int64_t n : {1, 7, 31, 1000, 4097}) {
    Tensor x = ember::randn({n, 3});
    Tensor pinned = x.pin_memory();
    Tensor device = pinned.to(Device("cuda"), /*non_blocking=*/true);
    REQUIRE(device.is_cuda());
    // A kernel queued after the copy on the same stream sees the data, then so does the host.
    REQUIRE((device * 2.0).cpu().equal(x * 2.0));
  }
  // Casts and pageable sources take the ordinary (blocking) path and are still right.
  Tensor x = ember::randn({33});
  REQUIRE(x.pin_memory().to(Device("cuda"), kFloat64, true).cpu().equal(x.to(kFloat64)));
  REQUIRE(x.cuda(true).cpu().equal(x));
}

TEST_CASE("pinned memory: pin_memory() keeps the tensor in the autograd graph", "[cuda][pinned][gpu]") {
  EMBER_REQUIRE_GPU();
  Tensor x = ember::randn({4}, TensorOptions().dtype(kFloat64)).requires_grad_();
  Tensor y = x.pin_memory();
  REQUIRE(y.requires_grad());
  (y * 3.0).sum().backward();
  REQUIRE(x.grad().allclose(ember::full({4}, 3.0, TensorOptions().dtype(kFloat64))));
}
