// tests/cuda/test_conv_kernels.cpp — the GPU convolution and pooling kernels through the
// emulator (cuda/kernels/conv.cuh: im2col / col2im + the CUDA GEMM; cuda/kernels/pool.cuh)
// against the CPU backend's kernels (core/cpu/conv_kernels.cpp, pool_kernels.cpp), which
// tests/nn/test_conv_pool.cpp checks against PyTorch: forward, input and weight gradients
// for padding / stride / dilation / groups / 1x1 combinations, a batch chunked by the
// scratch cap, and every pooling mode with ties, NaNs, ceil_mode and padding.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_test_support.h"
#include "host_scratch.h"
#include "emulator_schedules.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/conv.cuh>
#include <ember/cuda/kernels/pool.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

void require_close(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": gpu " << a[i] << " vs cpu " << b[i]);
    if (std::isnan(b[i])) {
      REQUIRE(std::isnan(a[i]));
      continue;
    }
    REQUIRE(std::abs(a[i] - b[i]) <= 1e-10 * (1 + std::abs(b[i])));
  }
}

struct ConvShape {
  std::int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool bias;
};

}  // namespace

TEST_CASE("cuda kernels (emulated): conv2d and its gradients match the CPU's im2col + GEMM", "[cuda][conv]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  const std::vector<ConvShape> shapes = {
      {2, 3, 5, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},  {1, 2, 7, 6, 3, 3, 2, 2, 3, 1, 0, 1, 1, 1, false},
      {2, 2, 8, 7, 2, 2, 3, 1, 2, 0, 1, 3, 2, 1, true},  {2, 4, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2, true},
      {2, 3, 4, 3, 2, 1, 1, 1, 1, 0, 0, 1, 1, 1, true},  {3, 3, 5, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3, false},
  };
  unsigned seed = 1;
  for (const ConvShape& s : shapes) {
    INFO("shape n=" << s.n << " c=" << s.c << " o=" << s.o << " groups=" << s.groups);
    Conv2dPlan plan;
    plan.batch = s.n, plan.in_channels = s.c, plan.out_channels = s.o, plan.groups = s.groups;
    plan.in_h = s.h, plan.in_w = s.w, plan.kernel_h = s.kh, plan.kernel_w = s.kw;
    plan.stride_h = s.sh, plan.stride_w = s.sw, plan.pad_h = s.ph, plan.pad_w = s.pw;
    plan.dilation_h = s.dh, plan.dilation_w = s.dw;
    plan.out_h = (s.h + 2 * s.ph - s.dh * (s.kh - 1) - 1) / s.sh + 1;
    plan.out_w = (s.w + 2 * s.pw - s.dw * (s.kw - 1) - 1) / s.sw + 1;
    plan.dtype = DType::Float64;
    const std::int64_t in_n = s.n * s.c * s.h * s.w, w_n = s.o * (s.c / s.groups) * s.kh * s.kw;
    const std::int64_t out_n = s.n * s.o * plan.out_h * plan.out_w;
    auto input = random_values<double>(in_n, -1, 1, seed++);
    auto weight = random_values<double>(w_n, -1, 1, seed++);
    auto bias = random_values<double>(s.o, -1, 1, seed++);
    auto grad_out = random_values<double>(out_n, -1, 1, seed++);
    plan.bias = s.bias ? bias.data() : nullptr;

    std::vector<double> out_gpu(out_n, -7), out_cpu(out_n, -7);
    HostScratch scratch;
    plan.input = input.data(), plan.weight = weight.data();
    plan.output = out_gpu.data();
    gpu::dispatch_conv2d(plan, nullptr, &scratch);
    plan.output = out_cpu.data();
    cpu::conv2d(plan);
    require_close(out_gpu, out_cpu);

    std::vector<double> gi_gpu(in_n, -7), gi_cpu(in_n, -7);
    plan.output = grad_out.data();
    plan.input = gi_gpu.data();
    gpu::dispatch_conv2d_backward_input(plan, nullptr, &scratch);
    plan.input = gi_cpu.data();
    cpu::conv2d_backward_input(plan);
    require_close(gi_gpu, gi_cpu);

    std::vector<double> gw_gpu(w_n, -7), gw_cpu(w_n, -7);
    plan.input = input.data();
    plan.weight = gw_gpu.data();
    gpu::dispatch_conv2d_backward_weight(plan, nullptr, &scratch);
    plan.weight = gw_cpu.data();
    cpu::conv2d_backward_weight(plan);
    require_close(gw_gpu, gw_cpu);
    // The same with scratch for one sample at a time: a chunk per sample, then the chunks'
    // sums added in a second reduction.
    std::vector<double> gw_chunked(w_n, -7);
    plan.weight = gw_chunked.data();
    const std::int64_t one_sample = std::max((s.c / s.groups) * s.kh * s.kw * plan.out_h * plan.out_w,
                                             (s.o / s.groups) * (s.c / s.groups) * s.kh * s.kw);
    gpu::dispatch_conv2d_backward_weight(plan, nullptr, &scratch, one_sample);
    require_close(gw_chunked, gw_cpu);
  }
}

TEST_CASE("cuda kernels (emulated): pooling forward and backward match the CPU's", "[cuda][pool]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  struct PoolShape {
    PoolMode mode;
    std::int64_t h, w, kh, kw, sh, sw, ph, pw, dh, dw;
    bool ceil_mode, count_include_pad;
    std::int64_t divisor, out_h_adaptive, out_w_adaptive;
  };
  const std::vector<PoolShape> shapes = {
      {PoolMode::Max, 6, 6, 2, 2, 2, 2, 0, 0, 1, 1, false, true, 0, 0, 0},
      {PoolMode::Max, 7, 5, 3, 3, 2, 2, 1, 1, 1, 1, true, true, 0, 0, 0},
      {PoolMode::Max, 9, 8, 2, 3, 1, 1, 1, 1, 2, 2, false, true, 0, 0, 0},
      {PoolMode::Avg, 7, 5, 3, 3, 2, 2, 1, 1, 1, 1, true, true, 0, 0, 0},
      {PoolMode::Avg, 8, 7, 2, 2, 3, 3, 1, 1, 1, 1, true, false, 0, 0, 0},
      {PoolMode::Avg, 6, 5, 2, 3, 1, 1, 1, 1, 1, 1, false, true, 5, 0, 0},
      {PoolMode::AdaptiveAvg, 7, 9, 1, 1, 1, 1, 0, 0, 1, 1, false, true, 0, 3, 4},
      {PoolMode::AdaptiveAvg, 3, 2, 1, 1, 1, 1, 0, 0, 1, 1, false, true, 0, 5, 4},
  };
  unsigned seed = 50;
  for (const PoolShape& s : shapes) {
    Pool2dPlan plan;
    plan.mode = s.mode;
    plan.planes = 3, plan.in_h = s.h, plan.in_w = s.w, plan.kernel_h = s.kh, plan.kernel_w = s.kw;
    plan.stride_h = s.sh, plan.stride_w = s.sw, plan.pad_h = s.ph, plan.pad_w = s.pw;
    plan.dilation_h = s.dh, plan.dilation_w = s.dw, plan.count_include_pad = s.count_include_pad;
    plan.divisor_override = s.divisor;
    auto size = [&](std::int64_t in, std::int64_t k, std::int64_t st, std::int64_t p, std::int64_t d) {
      std::int64_t num = in + 2 * p - d * (k - 1) - 1 + (s.ceil_mode ? st - 1 : 0);
      std::int64_t out = num / st + 1;
      if (s.ceil_mode && (out - 1) * st >= in + p) --out;
      return out;
    };
    plan.out_h = s.mode == PoolMode::AdaptiveAvg ? s.out_h_adaptive : size(s.h, s.kh, s.sh, s.ph, s.dh);
    plan.out_w = s.mode == PoolMode::AdaptiveAvg ? s.out_w_adaptive : size(s.w, s.kw, s.sw, s.pw, s.dw);
    plan.dtype = DType::Float64;
    INFO("mode " << static_cast<int>(s.mode) << " out " << plan.out_h << "x" << plan.out_w);
    const std::int64_t in_n = plan.planes * s.h * s.w, out_n = plan.planes * plan.out_h * plan.out_w;
    auto input = random_values<double>(in_n, -1, 1, seed++);
    input[1] = input[0];           // a tie
    input[in_n - 2] = std::nan(""); // a NaN
    auto grad_out = random_values<double>(out_n, -1, 1, seed++);
    std::vector<double> out_gpu(out_n, -7), out_cpu(out_n, -7);
    std::vector<std::int64_t> idx_gpu(out_n, -7), idx_cpu(out_n, -7);
    plan.input = input.data();
    plan.output = out_gpu.data(), plan.indices = idx_gpu.data();
    gpu::dispatch_pool2d(plan, nullptr);
    plan.output = out_cpu.data(), plan.indices = idx_cpu.data();
    cpu::pool2d(plan);
    require_close(out_gpu, out_cpu);
    if (s.mode == PoolMode::Max) REQUIRE(idx_gpu == idx_cpu);

    std::vector<double> gi_gpu(in_n, -7), gi_cpu(in_n, -7);
    plan.output = grad_out.data();
    plan.input = gi_gpu.data();
    gpu::dispatch_pool2d_backward(plan, nullptr);
    plan.input = gi_cpu.data();
    cpu::pool2d_backward(plan);
    require_close(gi_gpu, gi_cpu);
  }
}
