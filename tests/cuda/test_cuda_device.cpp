// tests/cuda/test_cuda_device.cpp — ember::cuda::* (core/cuda_hooks.h) and the real CUDA
// backend end to end: tensors on "cuda", every op family vs the CPU, GPU training steps,
// allocator statistics, the cuBLAS switch.
//
// The first group runs everywhere (what a program sees without a GPU: no crash, clear
// errors). The second group needs a GPU and reports itself skipped without one
// (EMBER_REQUIRE_GPU, see test_gpu_skip.cpp); scripts/gpu-check.sh runs it on an H200.
#include <ember/ember.h>

#include "cuda_test_support.h"

namespace {

using namespace ember;

// max |a - b| after moving both to the CPU.
double max_difference(const Tensor& a, const Tensor& b) {
  return a.cpu().to(kFloat64).sub(b.cpu().to(kFloat64)).abs().max().item<double>();
}

}  // namespace

// ------------------------------------------------------------------ no GPU needed

TEST_CASE("cuda hooks: without a GPU the queries answer no and the actions throw DeviceError", "[cuda][hooks]") {
  if (cuda::is_available()) {
    REQUIRE(cuda::device_count() > 0);
    return;
  }
  REQUIRE(cuda::device_count() == 0);
  REQUIRE(cuda::memory_allocated() == 0);
  REQUIRE(cuda::max_memory_allocated() == 0);
  REQUIRE(cuda::memory_reserved() == 0);
  REQUIRE_NOTHROW(cuda::empty_cache());
  REQUIRE_NOTHROW(cuda::reset_peak_memory_stats());
  REQUIRE_THROWS_AS(cuda::current_device(), DeviceError);
  REQUIRE_THROWS_AS(cuda::synchronize(), DeviceError);
  REQUIRE_THROWS_AS(cuda::set_device(0), DeviceError);
  REQUIRE_THROWS_AS(cuda::get_device_properties(0), DeviceError);
  if (cuda::is_built()) REQUIRE_THROWS_WITH(cuda::current_device(), "No CUDA GPUs are available");
  else REQUIRE_THROWS_WITH(cuda::current_device(), Catch::StartsWith("Torch not compiled with CUDA enabled"));
}

TEST_CASE("cuda hooks: the matmul backend switch is remembered in CUDA builds", "[cuda][hooks]") {
  if (!cuda::is_built()) {
    REQUIRE(cuda::matmul_backend() == cuda::MatmulBackend::Ember);
    REQUIRE_THROWS_AS(cuda::set_matmul_backend(cuda::MatmulBackend::Cublas), DeviceError);
    return;
  }
  cuda::set_matmul_backend(cuda::MatmulBackend::Cublas);
  REQUIRE(cuda::matmul_backend() == cuda::MatmulBackend::Cublas);
  cuda::set_matmul_backend(cuda::MatmulBackend::Ember);
  REQUIRE(cuda::matmul_backend() == cuda::MatmulBackend::Ember);
}

TEST_CASE("cuda hooks: a CUDA tensor without a GPU is a DeviceError, not an abort", "[cuda][hooks]") {
  if (cuda::is_available()) return;  // covered by the GPU tests below
  REQUIRE_THROWS_AS(ember::zeros({2, 3}, TensorOptions().device(kCUDA)), DeviceError);
  REQUIRE_THROWS_AS(ember::ones({2}).to("cuda"), DeviceError);
}

// ------------------------------------------------------------------ real GPU

TEST_CASE("cuda device: properties and set_device", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  const cuda::DeviceProperties properties = cuda::get_device_properties(0);
  REQUIRE(!properties.name.empty());
  REQUIRE(properties.total_memory > 0);
  REQUIRE(properties.major >= 7);
  REQUIRE(properties.multiprocessors > 0);
  cuda::set_device(0);
  REQUIRE(cuda::current_device() == 0);
  REQUIRE_THROWS_AS(cuda::set_device(cuda::device_count()), DeviceError);
}

TEST_CASE("cuda device: tensors round-trip host -> device -> host unchanged", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  for (std::int64_t n : testing::odd_sizes()) {
    Tensor x = ember::randn({n});
    Tensor back = x.to("cuda").cpu();
    REQUIRE(back.device().is_cpu());
    REQUIRE((x).equal(back));
    Tensor i = ember::arange(n, TensorOptions().dtype(kInt64));
    REQUIRE((i).equal(i.cuda().cpu()));
  }
  Tensor empty = ember::zeros({0, 3}).cuda();
  REQUIRE(empty.numel() == 0);
  Tensor scalar = ember::tensor(3.5).cuda();
  REQUIRE(scalar.cpu().item<double>() == 3.5);
}

TEST_CASE("cuda device: elementwise ops, broadcasting and non-contiguous inputs match the CPU", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  Tensor a = ember::randn({33, 31}), b = ember::randn({31});
  Tensor ga = a.cuda(), gb = b.cuda();
  REQUIRE(max_difference(ga + gb, a + b) < 1e-6);
  REQUIRE(max_difference(ga * gb - ga.exp(), a * b - a.exp()) < 1e-5);
  REQUIRE(max_difference(ga.t().sigmoid(), a.t().sigmoid()) < 1e-6);          // transposed view
  REQUIRE(max_difference(ga.tanh().relu(), a.tanh().relu()) < 1e-6);
  REQUIRE(((ga > gb).cpu()).equal(a > b));
  REQUIRE(max_difference(ga.to(kFloat64), a.to(kFloat64)) == 0.0);
  REQUIRE(max_difference(ember::where(ga > 0, ga, gb), ember::where(a > 0, a, b)) == 0.0);
}

TEST_CASE("cuda device: reductions and softmax match the CPU", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  Tensor x = ember::randn({7, 1000});
  Tensor g = x.cuda();
  REQUIRE(max_difference(g.sum(), x.sum()) < 1e-2);
  REQUIRE(max_difference(g.sum({1}), x.sum({1})) < 1e-3);
  REQUIRE(max_difference(g.mean({0}), x.mean({0})) < 1e-5);
  REQUIRE(max_difference(g.amax({1}, false), x.amax({1}, false)) == 0.0);
  REQUIRE((g.argmax(1).cpu()).equal(x.argmax(1)));
  REQUIRE(max_difference(g.softmax(1), x.softmax(1)) < 1e-6);
  REQUIRE(max_difference(g.log_softmax(0), x.log_softmax(0)) < 1e-5);
}

TEST_CASE("cuda device: matmul with ember's kernel and with cuBLAS match the CPU", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  Tensor a = ember::randn({65, 33}), b = ember::randn({33, 100}), batch = ember::randn({3, 100, 7});
  for (auto backend : {cuda::MatmulBackend::Ember, cuda::MatmulBackend::Cublas}) {
    cuda::set_matmul_backend(backend);
    REQUIRE(max_difference(a.cuda().matmul(b.cuda()), a.matmul(b)) < 1e-4);
    REQUIRE(max_difference(b.cuda().t().matmul(a.cuda().t()), b.t().matmul(a.t())) < 1e-4);  // transposed operands
    REQUIRE(max_difference(a.cuda().matmul(b.cuda()).matmul(batch.cuda()), a.matmul(b).matmul(batch)) < 1e-3);
  }
  cuda::set_matmul_backend(cuda::MatmulBackend::Ember);
}

TEST_CASE("cuda device: index ops match the CPU", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  Tensor x = ember::randn({5, 7});
  Tensor index = ember::tensor({4, 0, 4, 2}, TensorOptions().dtype(kInt64));
  REQUIRE(max_difference(x.cuda().index_select(0, index.cuda()), x.index_select(0, index)) == 0.0);
  Tensor source = ember::randn({4, 7});
  REQUIRE(max_difference(ember::index_add(x.cuda(), 0, index.cuda(), source.cuda()), ember::index_add(x, 0, index, source)) < 1e-6);
}

TEST_CASE("cuda device: a training step on the GPU matches the same step on the CPU", "[cuda][gpu][training]") {
  EMBER_REQUIRE_GPU();
  ember::manual_seed(123);
  Tensor inputs = ember::randn({64, 20}), labels = ember::randint(0, 3, {64});
  Tensor w_cpu = (ember::randn({20, 3}) * 0.1).requires_grad_(), w_gpu = w_cpu.detach().cuda().requires_grad_();
  Tensor gpu_inputs = inputs.cuda(), gpu_labels = labels.cuda();
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 20; ++step) {
    Tensor loss_cpu = ember::cross_entropy(inputs.matmul(w_cpu), labels);
    Tensor loss_gpu = ember::cross_entropy(gpu_inputs.matmul(w_gpu), gpu_labels);
    loss_cpu.backward();
    loss_gpu.backward();
    REQUIRE(std::fabs(loss_cpu.item<double>() - loss_gpu.item<double>()) < 1e-4);
    REQUIRE(max_difference(w_cpu.grad(), w_gpu.grad()) < 1e-4);
    {
      ember::NoGradGuard no_grad;
      w_cpu.sub_(w_cpu.grad() * 0.5);
      w_gpu.sub_(w_gpu.grad() * 0.5);
      w_cpu.mutable_grad() = Tensor();
      w_gpu.mutable_grad() = Tensor();
    }
    if (step == 0) first_loss = loss_gpu.item<double>();
    last_loss = loss_gpu.item<double>();
  }
  REQUIRE(last_loss < first_loss);
}

TEST_CASE("cuda device: the caching allocator's statistics follow tensors", "[cuda][gpu][allocator]") {
  EMBER_REQUIRE_GPU();
  cuda::synchronize();
  const std::size_t before = cuda::memory_allocated();
  {
    Tensor x = ember::zeros({1024, 1024}, TensorOptions().device(kCUDA));  // 4 MiB
    REQUIRE(cuda::memory_allocated() >= before + 4 * 1024 * 1024);
    REQUIRE(cuda::max_memory_allocated() >= cuda::memory_allocated());
    REQUIRE(cuda::memory_reserved() >= cuda::memory_allocated());
  }
  REQUIRE(cuda::memory_allocated() == before);
  const std::size_t reserved = cuda::memory_reserved();
  cuda::empty_cache();
  REQUIRE(cuda::memory_reserved() <= reserved);
}

TEST_CASE("cuda device: a device mismatch is PyTorch's error", "[cuda][gpu]") {
  EMBER_REQUIRE_GPU();
  REQUIRE_THROWS_WITH(ember::ones({2}).cuda() + ember::ones({2}),
                      Catch::Contains("Expected all tensors to be on the same device"));
}
