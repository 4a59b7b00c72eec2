// tests/cuda/test_fused_kernels.cpp — the fused training kernels through the emulator:
// cross-entropy forward + backward (cuda/kernels/cross_entropy.cuh), the SGD step
// (sgd.cuh), ReLU backward (relu_backward.cuh, also reached as BinaryOp::ReluBackward)
// one_hot (one_hot.cuh) and foreach_norm (foreach_norm.cuh), on small and odd sizes (warp and block edges), against plain
// double-precision loops written from the formulas (PyTorch's definitions) and against the
// CPU backend's fused kernels (core/cpu/fused_kernels.cpp) — the same kernel families (core/backend.h).
#include <cmath>
#include <limits>
#include <vector>

#include "cuda_test_support.h"
#include "host_scratch.h"
#include "emulator_schedules.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/elementwise_ops.cuh>

#include <ember/cuda/kernels/cross_entropy.cuh>
#include <ember/cuda/kernels/foreach_norm.cuh>
#include <ember/cuda/kernels/one_hot.cuh>
#include <ember/cuda/kernels/relu_backward.cuh>
#include <ember/cuda/kernels/sgd.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

}  // namespace

TEST_CASE("cuda kernels (emulated): fused cross-entropy gives each row's loss and the logits' gradient",
          "[cuda][fused][cross_entropy]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (std::int64_t rows : {1, 7, 33}) {
    for (std::int64_t classes : {1, 7, 31, 1000}) {
      INFO("rows " << rows << ", classes " << classes);
      auto logits = random_values<float>(rows * classes, -4, 4, 5);
      auto targets = random_values<std::int64_t>(rows, 0, static_cast<double>(classes - 1), 7);
      if (rows > 1) targets[1] = -100;  // an ignored row
      std::vector<float> losses(rows, -1.0f), grad(rows * classes, -1.0f);
      std::int64_t valid = 0;
      for (auto t : targets) valid += t != -100;
      gpu::CrossEntropyPlan plan;
      plan.logits = logits.data();
      plan.targets = targets.data();
      plan.losses = losses.data();
      plan.grad_logits = grad.data();
      plan.rows = rows;
      plan.classes = classes;
      plan.scale = 1.0 / static_cast<double>(valid);  // reduction='mean', grad_output = 1
      gpu::dispatch_cross_entropy(plan, nullptr);
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* x = logits.data() + r * classes;
        double m = x[0];
        for (std::int64_t c = 1; c < classes; ++c) m = std::max(m, static_cast<double>(x[c]));
        double s = 0;
        for (std::int64_t c = 0; c < classes; ++c) s += std::exp(x[c] - m);
        const bool ignored = targets[r] == -100;
        const double want_loss = ignored ? 0.0 : m + std::log(s) - x[targets[r]];
        REQUIRE(values_close(static_cast<double>(losses[r]), want_loss, 1e-5, 1e-6));
        for (std::int64_t c = 0; c < classes; ++c) {
          const double p = std::exp(x[c] - m) / s;
          const double want = ignored ? 0.0 : (p - (c == targets[r] ? 1.0 : 0.0)) / static_cast<double>(valid);
          REQUIRE(values_close(static_cast<double>(grad[r * classes + c]), want, 1e-5, 1e-7));
        }
      }
    }
  }
}

TEST_CASE("cuda kernels (emulated): fused cross-entropy without a gradient buffer writes only the losses",
          "[cuda][fused][cross_entropy]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  std::vector<double> logits{1.0, 2.0, 3.0, 1000.0, 1000.0, -1000.0};  // the second row would overflow exp
  std::vector<std::int64_t> targets{2, 0};
  std::vector<double> losses(2, -1.0);
  gpu::CrossEntropyPlan plan;
  plan.logits = logits.data();
  plan.targets = targets.data();
  plan.losses = losses.data();
  plan.rows = 2;
  plan.classes = 3;
  plan.dtype = DType::Float64;
  gpu::dispatch_cross_entropy(plan, nullptr);
  REQUIRE(losses[0] == Approx(std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0));
  REQUIRE(losses[1] == Approx(std::log(2.0)));  // stable: max subtracted before exp
}

TEST_CASE("cuda kernels (emulated): the fused SGD step follows torch.optim.SGD", "[cuda][fused][sgd]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  struct Setting {
    double momentum, dampening, weight_decay;
    bool nesterov;
  };
  for (const Setting& setting : {Setting{0, 0, 0, false}, Setting{0, 0, 0.01, false}, Setting{0.9, 0, 0, false},
                                 Setting{0.9, 0.1, 0.001, false}, Setting{0.9, 0, 0.01, true}}) {
    for (std::int64_t n : odd_sizes()) {
      INFO("n " << n << ", momentum " << setting.momentum << ", nesterov " << setting.nesterov);
      auto param = random_values<float>(n, -1, 1, 3);
      std::vector<float> buffer(n, 0.0f);
      std::vector<double> want_param(param.begin(), param.end()), want_buffer(n, 0.0);
      for (int step = 0; step < 3; ++step) {
        auto grad = random_values<float>(n, -1, 1, 11 + step);
        gpu::SgdPlan plan;
        plan.param = param.data();
        plan.grad = grad.data();
        plan.momentum_buffer = buffer.data();
        plan.numel = n;
        plan.options = {.lr = 0.1, .momentum = setting.momentum, .dampening = setting.dampening,
                        .weight_decay = setting.weight_decay, .nesterov = setting.nesterov};
        plan.first_step = step == 0;
        gpu::dispatch_sgd(plan, nullptr);
        for (std::int64_t i = 0; i < n; ++i) {
          double d = grad[i] + setting.weight_decay * want_param[i];
          if (setting.momentum != 0) {
            want_buffer[i] = step == 0 ? d : setting.momentum * want_buffer[i] + (1 - setting.dampening) * d;
            d = setting.nesterov ? d + setting.momentum * want_buffer[i] : want_buffer[i];
          }
          want_param[i] -= 0.1 * d;
        }
      }
      for (std::int64_t i = 0; i < n; ++i) {
        REQUIRE(values_close(static_cast<double>(param[i]), want_param[i], 1e-5, 1e-6));
        if (setting.momentum != 0) REQUIRE(values_close(static_cast<double>(buffer[i]), want_buffer[i], 1e-5, 1e-6));
      }
    }
  }
}

TEST_CASE("cuda kernels (emulated): ReLU backward passes the gradient only where the input is positive",
          "[cuda][fused][relu]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (std::int64_t n : odd_sizes()) {
    for (bool strided : {false, true}) {
      INFO("n " << n << (strided ? " strided input" : " contiguous"));
      auto grad_output = random_values<float>(n, -1, 1, 2);
      auto input = random_values<float>(2 * n, -1, 1, 4);
      input[0] = 0.0f;  // exactly 0: no gradient (PyTorch's threshold_backward: result <= 0 ? 0 : grad)
      input[2 % (2 * n)] = NAN;  // NaN <= 0 is false: the gradient passes, as in PyTorch
      std::vector<float> grad_input(n, -7.0f);
      const std::int64_t input_stride = strided ? 2 : 1;
      StridedPlan plan = make_plan({n}, {{1}, {1}, {input_stride}}, {grad_input.data(), grad_output.data(), input.data()},
                                   {DType::Float32, DType::Float32, DType::Float32}, !strided);
      gpu::dispatch_relu_backward(plan, nullptr);
      for (std::int64_t i = 0; i < n; ++i) {
        const float x = input[i * input_stride];
        REQUIRE(grad_input[i] == (x <= 0.0f ? 0.0f : grad_output[i]));
      }
    }
  }
}

TEST_CASE("cuda kernels (emulated): one_hot writes one 1 per row at the class index", "[cuda][fused][one_hot]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (std::int64_t rows : odd_sizes()) {
    for (std::int64_t classes : {1, 3, 33}) {
      auto index = random_values<std::int64_t>(rows, 0, static_cast<double>(classes - 1), 9);
      std::vector<std::int64_t> out(rows * classes, -1);
      gpu::OneHotPlan plan;
      plan.index = index.data();
      plan.out = out.data();
      plan.rows = rows;
      plan.classes = classes;
      gpu::dispatch_one_hot(plan, nullptr);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < classes; ++c) REQUIRE(out[r * classes + c] == (index[r] == c ? 1 : 0));
    }
  }
}

TEST_CASE("cuda kernels (emulated): fused cross-entropy equals the CPU backend, rows held in registers or not",
          "[cuda][fused][cross_entropy]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // 2048 classes is the most a 256-thread block holds in registers (8 each); 3001 re-reads.
  for (std::int64_t rows : {1, 7, 33}) {
    for (std::int64_t classes : {1, 7, 255, 2048, 3001}) {
      for (bool with_grad : {true, false}) {
        INFO("rows " << rows << ", classes " << classes << (with_grad ? "" : ", forward only"));
        auto logits = random_values<double>(rows * classes, -6, 6, 21);
        auto targets = random_values<std::int64_t>(rows, 0, static_cast<double>(classes - 1), 23);
        if (rows > 2) targets[2] = 5;  // a class index used as ignore_index below
        std::vector<double> gpu_losses(rows, -1), cpu_losses(rows, -2);
        std::vector<double> gpu_grad(with_grad ? rows * classes : 0, -1), cpu_grad(with_grad ? rows * classes : 0, -2);
        CrossEntropyPlan plan;
        plan.logits = logits.data();
        plan.targets = targets.data();
        plan.rows = rows;
        plan.classes = classes;
        plan.ignore_index = 5;
        plan.scale = 0.25;
        plan.dtype = DType::Float64;
        plan.losses = gpu_losses.data();
        plan.grad_logits = with_grad ? gpu_grad.data() : nullptr;
        gpu::dispatch_cross_entropy(plan, nullptr);
        plan.losses = cpu_losses.data();
        plan.grad_logits = with_grad ? cpu_grad.data() : nullptr;
        cpu::cross_entropy(plan);
        REQUIRE(first_mismatch(gpu_losses.data(), cpu_losses.data(), rows, 1e-12, 1e-12) == -1);
        REQUIRE(first_mismatch(gpu_grad.data(), cpu_grad.data(), static_cast<std::int64_t>(gpu_grad.size()), 1e-10,
                               1e-14) == -1);
      }
    }
  }
}

TEST_CASE("cuda kernels (emulated): the fused SGD step is bit-identical to the CPU backend's", "[cuda][fused][sgd]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  // Under the emulator add_scaled/product are the plain host expressions, exactly as the CPU
  // kernel rounds them; on a GPU they are the FMA the composite add kernel (element::AddScaled) compiles to.
  struct Setting {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize;
  };
  for (const Setting& setting : {Setting{0.1, 0, 0, 0, false, false}, Setting{1.0, 0, 0, 1.0, false, true},
                                 Setting{0.05, 0.9, 0.1, 0.01, false, false}, Setting{0.1, 0.8, 0, 0.001, true, true}}) {
    for (std::int64_t n : odd_sizes()) {
      INFO("n " << n << ", momentum " << setting.momentum << ", maximize " << setting.maximize);
      auto gpu_param = random_values<float>(n, -1, 1, 3);
      auto cpu_param = gpu_param;
      std::vector<float> gpu_buffer(n, 0.0f), cpu_buffer(n, 0.0f);
      for (int step = 0; step < 3; ++step) {
        auto grad = random_values<float>(n, -1, 1, 40 + step);
        SgdPlan plan;
        plan.grad = grad.data();
        plan.numel = n;
        plan.options = {.lr = setting.lr, .momentum = setting.momentum, .dampening = setting.dampening,
                        .weight_decay = setting.weight_decay, .nesterov = setting.nesterov, .maximize = setting.maximize};
        plan.first_step = step == 0;
        plan.param = gpu_param.data();
        plan.momentum_buffer = setting.momentum != 0 ? gpu_buffer.data() : nullptr;
        gpu::dispatch_sgd(plan, nullptr);
        plan.param = cpu_param.data();
        plan.momentum_buffer = setting.momentum != 0 ? cpu_buffer.data() : nullptr;
        cpu::sgd_step(plan);
      }
      REQUIRE(gpu_param == cpu_param);
      REQUIRE(gpu_buffer == cpu_buffer);
    }
  }
}

TEST_CASE("cuda kernels (emulated): one_hot equals the CPU backend", "[cuda][fused][one_hot]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (std::int64_t rows : odd_sizes()) {
    auto index = random_values<std::int64_t>(rows, 0, 6, 17);
    std::vector<std::int64_t> gpu_out(rows * 7, -1), cpu_out(rows * 7, -2);
    OneHotPlan plan;
    plan.index = index.data();
    plan.rows = rows;
    plan.classes = 7;
    plan.out = gpu_out.data();
    gpu::dispatch_one_hot(plan, nullptr);
    plan.out = cpu_out.data();
    cpu::one_hot(plan);
    REQUIRE(gpu_out == cpu_out);
  }
}

TEST_CASE("cuda kernels (emulated): BinaryOp::ReluBackward in the binary dispatch equals the CPU backend",
          "[cuda][fused][relu]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  for (std::int64_t n : odd_sizes()) {
    // contiguous (vector path), strided result, broadcast (stride-0) result
    for (int layout = 0; layout < 3; ++layout) {
      INFO("n " << n << ", layout " << layout);
      auto grad = random_values<double>(n, -1, 1, 8);
      auto result = random_values<double>(2 * n, -1, 1, 9);
      for (std::int64_t i = 0; i < 2 * n; i += 3) result[i] = 0.0;
      result[1 % (2 * n)] = NAN;
      const std::int64_t result_stride = layout == 0 ? 1 : layout == 1 ? 2 : 0;
      std::vector<double> gpu_out(n, -7), cpu_out(n, -8);
      auto plan_for = [&](std::vector<double>& out) {
        return make_plan({n}, {{1}, {1}, {result_stride}}, {out.data(), grad.data(), result.data()},
                         {DType::Float64, DType::Float64, DType::Float64}, layout == 0);
      };
      gpu::dispatch_binary(BinaryOp::ReluBackward, plan_for(gpu_out), 1, nullptr);
      cpu::binary(BinaryOp::ReluBackward, plan_for(cpu_out), 1);
      REQUIRE(gpu_out == cpu_out);
      for (std::int64_t i = 0; i < n; ++i) {
        const double r = result[i * result_stride];
        REQUIRE(gpu_out[i] == (r <= 0.0 ? 0.0 : grad[i]));
      }
    }
  }
}

TEST_CASE("cuda kernels (emulated): foreach_norm gives each tensor's p-norm, as the CPU backend",
          "[cuda][fused][foreach_norm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  HostScratch scratch;
  // Lengths around the 16384-element chunks and the 256-thread blocks, one empty tensor,
  // one with a NaN (its sums and its max are NaN).
  const std::vector<std::int64_t> lengths{1, 255, 257, 16384, 16385, 40000, 0, 5};
  const double inf = std::numeric_limits<double>::infinity();
  for (const bool as_double : {false, true})
    for (double p : {1.0, 2.0, 3.0, inf}) {
      std::vector<HostVector<float>> floats;
      std::vector<HostVector<double>> doubles;
      ForeachNormPlan plan;
      plan.count = static_cast<int>(lengths.size());
      plan.p = p;
      plan.dtype = as_double ? DType::Float64 : DType::Float32;
      for (std::size_t i = 0; i < lengths.size(); ++i) {
        floats.push_back(random_values<float>(lengths[i], -2, 2, 40 + static_cast<unsigned>(i)));
        doubles.push_back(random_values<double>(lengths[i], -2, 2, 40 + static_cast<unsigned>(i)));
        plan.numel[i] = lengths[i];
      }
      floats.back()[2] = std::nanf("");
      doubles.back()[2] = std::nan("");
      for (std::size_t i = 0; i < lengths.size(); ++i)
        plan.data[i] = as_double ? static_cast<const void*>(doubles[i].data()) : floats[i].data();
      std::vector<double> got(lengths.size()), want(lengths.size());
      std::vector<float> got_f(lengths.size()), want_f(lengths.size());
      ForeachNormPlan cpu_plan = plan;
      plan.output = as_double ? static_cast<void*>(got.data()) : got_f.data();
      cpu_plan.output = as_double ? static_cast<void*>(want.data()) : want_f.data();
      gpu::dispatch_foreach_norm(plan, nullptr, &scratch);
      cpu::foreach_norm(cpu_plan);
      if (!as_double)
        for (std::size_t i = 0; i < lengths.size(); ++i) {
          got[i] = got_f[i];
          want[i] = want_f[i];
        }
      for (std::size_t i = 0; i < lengths.size(); ++i) {
        INFO((as_double ? "float64" : "float32") << " p " << p << " tensor " << i << ": " << got[i] << " vs " << want[i]);
        if (i + 1 == lengths.size()) {
          CHECK(std::isnan(got[i]));
        } else {
          // float32 sums in float on the GPU, in double on the CPU.
          CHECK(std::abs(got[i] - want[i]) <= (as_double ? 1e-13 : 2e-5) * std::abs(want[i]));
        }
      }
      CHECK(got[6] == 0.0);  // the empty tensor
    }
}
