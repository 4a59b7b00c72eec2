// apps/tutorial/tutorial_12_autocast.cpp — §12, beyond the tutorial: mixed precision,
// part 2: autocast and loss scaling (docs/mixed-precision.md).
//
// Part 1 (tutorial_12_mixed_precision.cpp) showed what a 16-bit number holds. This part
// trains with them the way a PyTorch user does:
//   1. autocast picks a dtype per op: a Linear runs in bfloat16, the cross-entropy in float32,
//      and the parameters stay float32;
//   2. the gradients come back through the casts as float32, for float32 parameters;
//   3. float16 overflows at 65504 where bfloat16 does not;
//   4. a float16 loop with a loss scaler: the steps whose gradients overflowed are skipped
//      and the scale backs off; two good steps in a row and it grows again.
// The numbers are chosen so that every sum before a rounding is exact in float32: the
// transcript shows where the roundings happen, whatever order the adders ran in. The output
// matches tests/apps/expected/tutorial_12_autocast.txt, which
// tests/reference/tutorial_12_autocast.py printed running the same steps in PyTorch.
#include <cstdio>
#include <iostream>
#include <string>

#include <ember/ember.h>

using ember::Tensor;
namespace F = ember::nn::functional;

namespace {

// Python's f"{value:.4f}" and f"{value:>9.0f}".
std::string fixed(double value, int decimals, int width = 0) {
  char text[64];
  std::snprintf(text, sizeof text, "%*.*f", width, decimals, value);
  return text;
}

}  // namespace

int main() {
  // ---------------------------------------------------------------- 1. a dtype per op
  std::cout << "== 1. Autocast picks a dtype per op ==\n";
  const Tensor x = ember::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  const Tensor weight = ember::tensor({{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}}).requires_grad_(true);
  const Tensor bias = ember::tensor({0.1, -0.2}).requires_grad_(true);
  const Tensor target = ember::tensor({0, 1}, ember::kInt64);
  Tensor logits, loss;
  {
    // with torch.autocast("cpu", dtype=torch.bfloat16):
    const ember::AutocastGuard autocast(ember::DeviceType::CPU, ember::kBFloat16);
    logits = F::linear(x, weight, bias);      // on the lower-precision list: bfloat16
    loss = F::cross_entropy(logits, target);  // on the float32 list
    std::cout << "autocast enabled: " << (ember::is_autocast_enabled(ember::DeviceType::CPU) ? "True" : "False") << " "
              << ember::get_autocast_dtype(ember::DeviceType::CPU) << "\n";
  }
  std::cout << "autocast enabled: " << (ember::is_autocast_enabled(ember::DeviceType::CPU) ? "True" : "False") << "\n";
  std::cout << "logits: " << logits << "\n";
  std::cout << "float32 logits: " << F::linear(x, weight, bias).detach() << "\n";
  std::cout << "loss: " << loss.dtype() << " " << fixed(loss.item().to_double(), 4) << "\n";

  // ---------------------------------------------------------------- 2. gradients through the casts
  std::cout << "== 2. Gradients come back through the casts ==\n";
  loss.backward();
  std::cout << "weight: " << weight.dtype() << " grad: " << weight.grad().dtype() << "\n";
  std::cout << weight.grad() << "\n";
  std::cout << bias.grad() << "\n";

  // ---------------------------------------------------------------- 3. float16's range
  std::cout << "== 3. float16 overflows where bfloat16 does not ==\n";
  const Tensor row = ember::tensor({{300.0, 300.0}}), column_weights = ember::tensor({{150.0, 100.0}});
  {
    const ember::AutocastGuard autocast(ember::DeviceType::CPU, ember::kFloat16);
    std::cout << "float16 linear: " << F::linear(row, column_weights) << "\n";  // 75000 > 65504
  }
  {
    const ember::AutocastGuard autocast(ember::DeviceType::CPU, ember::kBFloat16);
    std::cout << "bfloat16 linear: " << F::linear(row, column_weights) << "\n";
  }

  // ---------------------------------------------------------------- 4. loss scaling
  std::cout << "== 4. Loss scaling: skip the steps that overflow, then back off ==\n";
  ember::nn::Linear model(2, 1);
  {
    ember::NoGradGuard no_grad;
    model.weight.copy_(ember::tensor({{1.0, -1.0}}));
    model.bias.fill_(0.5);
  }
  ember::optim::SGD optimizer(model.parameters(), {.lr = 0.05});
  ember::amp::GradScaler scaler({.init_scale = 262144.0 /* 2^18 */, .growth_interval = 2});
  const Tensor inputs = ember::tensor({{2.0, 1.0}, {1.0, 3.0}});
  const Tensor wanted = ember::tensor({{1.0}, {-1.0}});
  for (int step = 1; step <= 10; ++step) {
    optimizer.zero_grad();
    Tensor step_loss;
    {
      const ember::AutocastGuard autocast(ember::DeviceType::CPU, ember::kFloat16);
      step_loss = F::mse_loss(model.forward(inputs), wanted);
    }
    const double scale = scaler.get_scale();
    scaler.scale(step_loss).backward();  // the float16 gradients of loss * scale
    const Tensor before = model.weight.detach().clone();
    scaler.step(optimizer);  // unscales; skips the step if a gradient is inf or NaN
    scaler.update();         // backs off after a skip, grows after growth_interval good steps
    const bool stepped = !before.equal(model.weight.detach());
    std::cout << "step " << step << ": loss " << fixed(step_loss.item().to_double(), 4) << "  scale "
              << fixed(scale, 0, 9) << "  " << (stepped ? "stepped" : "skipped (inf in the float16 gradients)") << "\n";
  }
  std::cout << "final scale: " << fixed(scaler.get_scale(), 1) << "\n";
  std::cout << "weight: " << model.weight.detach() << " bias: " << model.bias.detach() << "\n";
  return 0;
}
