// tests/cuda/test_cuda_transfers.cpp — moving tensors between devices, printing them, and
// running ops on the device their tensors live on (tutorial appendix: .to("cuda"), .cpu()).
//
// All need a GPU and report themselves skipped without one (EMBER_REQUIRE_GPU); the
// multi-GPU cases need two and skip on a single-GPU machine such as the H200 box.
// scripts/gpu-check.sh runs them.
#include <ember/ember.h>

#include "cuda_test_support.h"

namespace {

using namespace ember;

double max_difference(const Tensor& a, const Tensor& b) {
  return a.cpu().to(kFloat64).sub(b.cpu().to(kFloat64)).abs().max().item<double>();
}

// Skips (and returns false) unless two GPUs are visible.
bool require_two_gpus() {
  if (cuda::device_count() >= 2) return true;
  testing::mark_skipped("needs two CUDA GPUs (" + std::to_string(cuda::device_count()) + " visible)");
  return false;
}

}  // namespace

TEST_CASE("cuda transfers: printing a CUDA tensor shows device='cuda:0'", "[cuda][gpu][print]") {
  EMBER_REQUIRE_GPU();
  cuda::set_device(0);
  Tensor x = ember::tensor({1.5, -2.0}).cuda();
  REQUIRE(to_string(x) == "tensor([ 1.5000, -2.0000], device='cuda:0')");
  Tensor i = ember::tensor({3, 4}, TensorOptions().dtype(kInt64)).to("cuda:0");
  REQUIRE(to_string(i) == "tensor([3, 4], device='cuda:0')");
  // A tensor created on plain "cuda" records the device that was current.
  Tensor z = ember::zeros({2}, TensorOptions().device(kCUDA));
  REQUIRE(z.device() == Device(DeviceType::CUDA, 0));
  REQUIRE(to_string(z) == "tensor([0., 0.], device='cuda:0')");
}

TEST_CASE("cuda transfers: strided sources go host->device and device->host unchanged", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  Tensor base = ember::randn({9, 14});
  const std::vector<Tensor> views{base.t(), base.slice(1, 1, 13, 3), base.narrow(0, 2, 5).t(), base.select(1, 4),
                                  base[3].unsqueeze(0).expand({4, 14})};
  for (const Tensor& view : views) {
    REQUIRE(!view.is_contiguous());
    Tensor on_gpu = view.to("cuda");
    REQUIRE(on_gpu.sizes() == view.sizes());
    REQUIRE(on_gpu.cpu().equal(view));
    // Device-side strided views back to the host, and a cast on the way.
    Tensor gpu_view = base.cuda().t();
    REQUIRE(gpu_view.cpu().equal(base.t()));
    REQUIRE(max_difference(on_gpu.to(kFloat64), view.to(kFloat64)) == 0.0);
  }
  // copy_ into a strided CUDA destination from a strided CPU source.
  Tensor dst = ember::zeros({14, 9}, TensorOptions().device(kCUDA)).t();
  dst.copy_(base.t().t());
  REQUIRE(dst.cpu().equal(base));
}

TEST_CASE("cuda transfers: .cuda() means the current device", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  const int last = cuda::device_count() - 1;
  cuda::set_device(last);
  Tensor x = ember::ones({3}).cuda();
  REQUIRE(x.device() == Device(DeviceType::CUDA, last));
  REQUIRE(x.cuda().is_same(x));       // already on the current device: no copy
  REQUIRE(x.to("cuda").is_same(x));
  cuda::set_device(0);
  REQUIRE(x.cuda().device() == Device(DeviceType::CUDA, 0));  // PyTorch: "cuda" = the current GPU
  REQUIRE(x.to("cuda").cpu().equal(x.cpu()));
}

TEST_CASE("cuda transfers: addmm reads the bias in the GEMM epilogue, both GEMM backends", "[cuda][gpu][gemm]") {
  EMBER_REQUIRE_GPU();
  Tensor a = ember::randn({65, 33}), b = ember::randn({33, 70}), bias = ember::randn({70});
  Tensor want = ember::addmm(bias, a, b, 0.5, 2.0);
  for (auto backend : {cuda::MatmulBackend::Ember, cuda::MatmulBackend::Cublas}) {
    cuda::set_matmul_backend(backend);
    REQUIRE(max_difference(ember::addmm(bias.cuda(), a.cuda(), b.cuda(), 0.5, 2.0), want) < 1e-4);
    // A 0-d CPU bias may join a CUDA addmm (it is copied, not read in place).
    Tensor scalar_bias = ember::tensor(1.25);
    REQUIRE(max_difference(ember::addmm(scalar_bias, a.cuda(), b.cuda()), ember::addmm(scalar_bias, a, b)) < 1e-4);
  }
  cuda::set_matmul_backend(cuda::MatmulBackend::Ember);
}

TEST_CASE("cuda transfers: a GEMM with more than 65535 row tiles runs (tiles on grid.x)", "[cuda][gpu][gemm][large]") {
  EMBER_REQUIRE_GPU();
  const std::int64_t m = 65535 * 64 + 7;  // 4.2 M rows: beyond what grid.y could index
  Tensor a = ember::randn({m, 3}, TensorOptions().device(kCUDA)), b = ember::randn({3, 2}, TensorOptions().device(kCUDA));
  Tensor c = a.matmul(b);
  // Spot-check rows at both ends and in the middle against the CPU.
  for (std::int64_t row : {std::int64_t{0}, m / 2, m - 1}) {
    Tensor want = a[row].cpu().unsqueeze(0).matmul(b.cpu());
    REQUIRE(max_difference(c[row].unsqueeze(0), want) < 1e-5);
  }
}

TEST_CASE("cuda transfers: ops on cuda:1 tensors run on cuda:1 whatever device is current", "[cuda][gpu][multi]") {
  EMBER_REQUIRE_GPU();
  if (!require_two_gpus()) return;
  cuda::set_device(0);
  Tensor x = ember::randn({33, 31});
  Tensor on_1 = x.to("cuda:1");
  REQUIRE(on_1.device() == Device(DeviceType::CUDA, 1));
  Tensor result = (on_1.exp() + on_1).sum({1});  // launched while cuda:0 is current
  REQUIRE(result.device() == Device(DeviceType::CUDA, 1));
  REQUIRE(cuda::current_device() == 0);  // the guard restored it
  REQUIRE(max_difference(result, (x.exp() + x).sum({1})) < 1e-4);
  REQUIRE(max_difference(on_1.matmul(on_1.t()), x.matmul(x.t())) < 1e-3);
}

TEST_CASE("cuda transfers: GPU to GPU copies go device to device, strided and cast included", "[cuda][gpu][multi]") {
  EMBER_REQUIRE_GPU();
  if (!require_two_gpus()) return;
  Tensor x = ember::randn({17, 40});
  Tensor on_0 = x.to("cuda:0");
  REQUIRE(on_0.to("cuda:1").cpu().equal(x));
  REQUIRE(on_0.t().to("cuda:1").cpu().equal(x.t()));  // strided source
  Tensor dst = ember::zeros({40, 17}, TensorOptions().device(Device(DeviceType::CUDA, 1)).dtype(kFloat64)).t();
  dst.copy_(on_0);  // strided destination on another GPU, with a cast
  REQUIRE(max_difference(dst, x) == 0.0);
}
