// tests/cuda/test_cuda_flash_attention.cpp — F::scaled_dot_product_attention's fused path on a
// GPU (cuda/kernels/flash_attention.cuh through ember::scaled_dot_product_flash_attention)
// against the same call on the CPU: the node (ScaledDotProductFlashAttentionBackward0), the
// output and the three gradients, float32 and float64, on shapes across the CUDA tiles
// (odd L and S, L != S, causal, head dims 16, 64 and 80, the heads of a packed projection).
// The emulated kernels are checked on every build (test_flash_attention_kernels.cpp); this
// one needs a GPU and is skipped without one (EMBER_REQUIRE_GPU, test_gpu_skip.cpp).
#include <array>

#include <ember/ember.h>

#include "cuda_test_support.h"

namespace {

using namespace ember;
namespace F = ember::nn::functional;

struct Run {
  Tensor out;
  std::vector<Tensor> grads;
};

Run attend(const Tensor& x_host, std::int64_t heads, std::int64_t head_dim, bool causal, Device device) {
  Tensor x = x_host.to(device).detach().requires_grad_(true);
  const std::int64_t batch = x.size(0), time = x.size(1), channels = heads * head_dim;
  auto head = [&](std::int64_t i) {
    return x.narrow(-1, i * channels, channels).view({batch, time, heads, head_dim}).transpose(1, 2);
  };
  Run run;
  run.out = F::scaled_dot_product_attention(head(0), head(1), head(2), {}, 0.0, causal);
  if (!device.is_cpu()) REQUIRE(run.out.grad_fn()->name() == "ScaledDotProductFlashAttentionBackward0");
  (run.out * run.out).sum().backward();
  run.grads = {x.grad()};
  return run;
}

}  // namespace

TEST_CASE("cuda flash attention: the GPU's fused path equals the CPU's", "[cuda][gpu][flash_attention]") {
  EMBER_REQUIRE_GPU();
  struct Shape4 {
    std::int64_t batch, time, heads, head_dim;
    bool causal;
  };
  for (const Shape4& s : {Shape4{2, 37, 2, 16, true}, Shape4{1, 130, 3, 64, true}, Shape4{1, 67, 2, 80, false}}) {
    for (DType dtype : {DType::Float32, DType::Float64}) {
      INFO("B " << s.batch << " T " << s.time << " H " << s.heads << " D " << s.head_dim << " " << dtype_name(dtype));
      manual_seed(4);
      Tensor x = ember::randn({s.batch, s.time, 3 * s.heads * s.head_dim}, ember::dtype(dtype));
      const Run cpu = attend(x, s.heads, s.head_dim, s.causal, kCPU);
      const Run gpu = attend(x, s.heads, s.head_dim, s.causal, Device("cuda:0"));
      const double rtol = dtype == DType::Float32 ? 1e-4 : 1e-10, atol = dtype == DType::Float32 ? 1e-5 : 1e-12;
      REQUIRE(gpu.out.cpu().allclose(cpu.out, rtol, atol));
      REQUIRE(gpu.grads[0].cpu().allclose(cpu.grads[0], rtol, atol));
    }
  }
}
