// tests/cuda/test_fused_kernels.cpp — the fused training kernels through the emulator:
// cross-entropy forward + backward (cuda/kernels/cross_entropy.cuh), the SGD step
// (sgd.cuh), ReLU backward (relu_backward.cuh) and one_hot (one_hot.cuh), on small and odd
// sizes (warp and block edges), against plain double-precision loops written from the
// formulas (PyTorch's definitions).
#include <cmath>
#include <vector>

#include "cuda_test_support.h"

#include <ember/cuda/kernels/cross_entropy.cuh>
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
        plan.lr = 0.1;
        plan.momentum = setting.momentum;
        plan.dampening = setting.dampening;
        plan.weight_decay = setting.weight_decay;
        plan.nesterov = setting.nesterov;
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
