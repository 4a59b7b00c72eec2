// tests/cuda/test_cuda_sampling.cpp — exponential_, multinomial and topk on CUDA tensors.
//
// None of the three has a device kernel (core/sampling.h, core/topk.cpp): a CUDA tensor is
// sampled or selected on the CPU and the result copied to the GPU, so there is nothing for
// the emulator to run. What is checked on a real GPU: the results live on the GPU, equal the
// CPU's bit for bit (the same mt19937 draws in the same memory order, ties in the CPU's
// order), the CPU stream advances exactly as for a CPU tensor, and topk's gradient arrives
// on the GPU (gradcheck of the topk rows of gradcheck_cases.h runs in test_cuda_gradcheck.cpp).
// Needs a GPU; skipped without one (EMBER_REQUIRE_GPU, test_gpu_skip.cpp).
#include <ember/core/native.h>
#include <ember/ember.h>

#include "cuda_test_support.h"

namespace {
using namespace ember;
}  // namespace

TEST_CASE("cuda sampling: exponential_ on a GPU tensor draws the CPU's values from the CPU stream",
          "[cuda][gpu][sampling]") {
  EMBER_REQUIRE_GPU();
  for (DType dtype : {kFloat32, kFloat64}) {
    for (bool transposed : {false, true}) {
      INFO(dtype_name(dtype) << (transposed ? " transposed" : ""));
      auto make = [&](Device device) {
        Tensor t = empty({37, 29}, TensorOptions().dtype(dtype).device(device));
        return transposed ? native::t(t) : t;
      };
      manual_seed(31);
      Tensor on_cpu = make(kCPU);
      exponential_(on_cpu, 1.7);
      Tensor cpu_next = rand({4}, kFloat64);
      manual_seed(31);
      Tensor on_gpu = make(Device("cuda:0"));
      const std::uint64_t philox_offset = default_generator().philox_offset();
      exponential_(on_gpu, 1.7);
      REQUIRE(default_generator().philox_offset() == philox_offset);  // the GPU's stream is not used
      Tensor gpu_next = rand({4}, kFloat64);
      REQUIRE(on_gpu.is_cuda());
      REQUIRE(on_gpu.strides() == on_cpu.strides());
      REQUIRE(native::equal(on_gpu.cpu(), on_cpu));
      REQUIRE(native::equal(gpu_next, cpu_next));
    }
  }
}

TEST_CASE("cuda sampling: multinomial of GPU probabilities gives the CPU's indices on the GPU",
          "[cuda][gpu][sampling]") {
  EMBER_REQUIRE_GPU();
  Tensor probs = rand({5, 300}, kFloat64);
  for (bool transposed : {false, true}) {
    const Tensor p = transposed ? native::t(native::contiguous(native::t(probs))) : probs;
    for (auto [samples, replacement] : {std::pair{1, false}, std::pair{7, false}, std::pair{7, true}}) {
      INFO(samples << (replacement ? " with" : " without") << " replacement" << (transposed ? ", transposed" : ""));
      manual_seed(5);
      Tensor on_cpu = multinomial(p, samples, replacement);
      manual_seed(5);
      Tensor on_gpu = multinomial(p.to(Device("cuda:0")), samples, replacement);
      REQUIRE(on_gpu.is_cuda());
      REQUIRE(on_gpu.dtype() == kInt64);
      REQUIRE(native::equal(on_gpu.cpu(), on_cpu));
    }
  }
}

TEST_CASE("cuda sampling: topk of a GPU tensor is the CPU's selection, and its gradient lands on the GPU",
          "[cuda][gpu][topk]") {
  EMBER_REQUIRE_GPU();
  // Many ties, so the order of equal values is compared too.
  Tensor x = native::to_dtype(randint(0, 5, {6, 200}), kFloat32);
  for (std::int64_t dim : {0, 1}) {
    for (bool largest : {true, false}) {
      INFO("dim " << dim << (largest ? " largest" : " smallest"));
      auto [cpu_values, cpu_indices] = ember::topk(x, 3, dim, largest);
      auto [gpu_values, gpu_indices] = ember::topk(x.to(Device("cuda:0")), 3, dim, largest);
      REQUIRE(gpu_values.is_cuda());
      REQUIRE(gpu_indices.is_cuda());
      REQUIRE(native::equal(gpu_values.cpu(), cpu_values));
      REQUIRE(native::equal(gpu_indices.cpu(), cpu_indices));
    }
  }
  Tensor w = randn({6, 200}, kFloat64);
  Tensor on_gpu = w.to(Device("cuda:0")).detach().requires_grad_(true);
  Tensor on_cpu = w.detach().requires_grad_(true);
  std::get<0>(ember::topk(on_gpu, 4)).sum().backward();
  std::get<0>(ember::topk(on_cpu, 4)).sum().backward();
  REQUIRE(on_gpu.grad().is_cuda());
  REQUIRE(native::equal(on_gpu.grad().cpu(), on_cpu.grad()));
}
