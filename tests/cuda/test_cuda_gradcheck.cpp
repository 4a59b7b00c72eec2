// tests/cuda/test_cuda_gradcheck.cpp — every backward formula on CUDA tensors, checked by
// gradcheck / gradgradcheck in float64 (issue 5: "gradcheck passes on CUDA in float64").
//
// The op table is the CPU one (tests/autograd/gradcheck_cases.h): each case builds its
// inputs — contiguous and non-contiguous — and its index/target tensors on the GPU, so
// the forward kernels, the backward formulas and the finite differences all run there.
// Needs a GPU; skipped without one (EMBER_REQUIRE_GPU, test_gpu_skip.cpp).
#include <ember/ember.h>

#include "../autograd/gradcheck_cases.h"
#include "cuda_test_support.h"

namespace gc = ember::testing::gradcheck_cases;

TEST_CASE("cuda gradcheck: every differentiable op passes gradcheck on CUDA in float64", "[cuda][gpu][gradcheck]") {
  EMBER_REQUIRE_GPU();
  const ember::Device gpu("cuda:0");
  for (const gc::OpCase& c : gc::cases()) {
    for (bool non_contiguous : {false, true}) {
      INFO(c.name << (non_contiguous ? " (non-contiguous)" : "") << " on " << gpu);
      gc::TensorList inputs = gc::make_inputs(c, non_contiguous, gpu);
      for (const ember::Tensor& x : inputs) REQUIRE(x.is_cuda());
      REQUIRE(ember::autograd::gradcheck(c.fn, inputs));
    }
  }
}

TEST_CASE("cuda gradcheck: every differentiable op passes gradgradcheck on CUDA in float64",
          "[cuda][gpu][gradcheck][higher-order]") {
  EMBER_REQUIRE_GPU();
  for (const gc::OpCase& c : gc::cases()) {
    if (!c.second_order) continue;
    INFO(c.name);
    REQUIRE(ember::autograd::gradgradcheck(c.fn, gc::make_inputs(c, false, ember::Device("cuda:0"))));
  }
}

TEST_CASE("cuda gradcheck: the CUDA gradients equal the CPU gradients", "[cuda][gpu][gradcheck]") {
  EMBER_REQUIRE_GPU();
  for (const gc::OpCase& c : gc::cases()) {
    INFO(c.name);
    gc::TensorList cpu_inputs = gc::make_inputs(c, true), gpu_inputs = gc::make_inputs(c, true, ember::Device("cuda:0"));
    ember::Tensor cpu_out = c.fn(cpu_inputs), gpu_out = c.fn(gpu_inputs);
    REQUIRE(gpu_out.cpu().allclose(cpu_out, 1e-10, 1e-12));
    if (!cpu_out.requires_grad() || cpu_out.numel() == 0) continue;
    ember::autograd::TensorList cpu_grads = ember::autograd::grad({cpu_out.sum()}, cpu_inputs, {}, false, false, true);
    ember::autograd::TensorList gpu_grads = ember::autograd::grad({gpu_out.sum()}, gpu_inputs, {}, false, false, true);
    for (std::size_t i = 0; i < cpu_grads.size(); ++i) {
      REQUIRE(cpu_grads[i].defined() == gpu_grads[i].defined());
      if (cpu_grads[i].defined()) REQUIRE(gpu_grads[i].cpu().allclose(cpu_grads[i], 1e-10, 1e-12));
    }
  }
}
