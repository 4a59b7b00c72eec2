// tests/autograd/gradcheck_cases.h — the table of every differentiable op that gradcheck
// runs: tests/autograd/test_gradcheck.cpp on the CPU, tests/cuda/test_cuda_gradcheck.cpp
// on a GPU (the same formulas on CUDA tensors, issue 5). Each case builds its inputs and
// any index/target tensors on the device of its first input.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <ember/autograd/fused_ops.h>
#include <ember/ember.h>

namespace ember::testing::gradcheck_cases {

using ember::Shape;
using ember::Tensor;
using ember::autograd::TensorList;

// Deterministic float64 values in about [-1.5, 1.5] (or [0.5, 2] when positive), laid out
// non-contiguously on request (every other element of a wider buffer). Values are spread
// so that ties (max, relu kinks, clamp bounds) do not occur.
inline Tensor input(const Shape& sizes, int seed, bool positive = false, bool non_contiguous = false,
                    ember::Device device = ember::kCPU) {
  Tensor values = ember::empty(sizes, ember::kFloat64);
  double* data = values.data_ptr<double>();
  for (std::int64_t i = 0; i < values.numel(); ++i) {
    double v = std::sin(1.3 * static_cast<double>(i) + 0.7 * seed + 0.3) * 1.5 + 0.011 * static_cast<double>(i);
    data[i] = positive ? 0.5 + std::fabs(v) : v;
  }
  if (!device.is_cpu()) values = values.to(device);
  if (non_contiguous && !sizes.empty()) {
    Shape wide = sizes;
    wide.back() *= 2;
    Tensor buffer = ember::zeros(wide, ember::TensorOptions().dtype(ember::kFloat64).device(device));
    Tensor view = buffer.slice(-1, 0, std::nullopt, 2);
    view.copy_(values);
    values = view;
  }
  return values.requires_grad_(true);
}

struct OpCase {
  std::string name;
  std::function<Tensor(const TensorList&)> fn;
  std::vector<Shape> shapes;      // one per input
  std::vector<bool> positive;     // inputs that must stay > 0 (log, sqrt, pow base, divisors)
  bool second_order = true;       // run gradgradcheck too
};

inline std::vector<OpCase> cases() {
  using L = const TensorList&;
  return {
      {"add broadcast", [](L x) { return ember::add(x[0], x[1], 2.0); }, {{2, 3}, {3}}, {}},
      {"sub broadcast", [](L x) { return x[0] - x[1]; }, {{2, 1}, {2, 3}}, {}},
      {"mul broadcast", [](L x) { return x[0] * x[1]; }, {{2, 3}, {2, 1}}, {}},
      {"mul 0-d", [](L x) { return x[0] * x[1]; }, {{}, {2, 2}}, {}},
      {"div broadcast", [](L x) { return x[0] / x[1]; }, {{2, 3}, {3}}, {false, true}},
      {"add number alpha", [](L x) { return ember::add(x[0], 2.5, 3.0); }, {{2, 3}}, {}},
      {"sub number first", [](L x) { return ember::sub(2.0, x[0], 0.5); }, {{2, 3}}, {}},
      {"mul number (method)", [](L x) { return x[0].mul(-1.5); }, {{2, 3}}, {}},
      {"div by number (method)", [](L x) { return x[0].div(4.0); }, {{2, 3}}, {}},
      {"number div", [](L x) { return ember::div(3.0, x[0]); }, {{2, 3}}, {true}},
      {"neg", [](L x) { return -x[0]; }, {{2, 3}}, {}},
      {"exp 0-d", [](L x) { return x[0].exp(); }, {{}}, {}},
      {"mul empty broadcast", [](L x) { return x[0] * x[1]; }, {{0, 3}, {3}}, {}},
      {"sum empty", [](L x) { return x[0].sum({0}); }, {{0, 3}}, {}},
      {"exp", [](L x) { return x[0].exp(); }, {{2, 3}}, {}},
      {"log", [](L x) { return x[0].log(); }, {{2, 3}}, {true}},
      {"sqrt", [](L x) { return x[0].sqrt(); }, {{2, 3}}, {true}},
      {"abs", [](L x) { return x[0].abs(); }, {{2, 3}}, {}},
      {"pow scalar", [](L x) { return x[0].pow(2.5); }, {{2, 3}}, {true}},
      {"pow tensor", [](L x) { return x[0].pow(x[1]); }, {{2, 3}, {3}}, {true, false}},
      {"sigmoid", [](L x) { return x[0].sigmoid(); }, {{2, 3}}, {}},
      {"tanh", [](L x) { return x[0].tanh(); }, {{2, 3}}, {}},
      {"relu", [](L x) { return x[0].relu(); }, {{2, 3}}, {}},
      {"clamp", [](L x) { return x[0].clamp(-0.4, 0.9); }, {{2, 3}}, {}},
      {"where", [](L x) { return ember::where(x[0] > 0.0, x[0], x[1]); }, {{2, 3}, {3}}, {}},
      {"maximum", [](L x) { return ember::maximum(x[0], x[1]); }, {{2, 3}, {3}}, {}},
      {"minimum", [](L x) { return ember::minimum(x[0], x[1]); }, {{2, 3}, {2, 1}}, {}},
      {"view", [](L x) { return x[0].contiguous().view({3, 2}); }, {{2, 3}}, {}},
      {"reshape", [](L x) { return x[0].reshape({6}); }, {{2, 3}}, {}},
      {"transpose", [](L x) { return x[0].transpose(0, 2); }, {{2, 3, 2}}, {}},
      {"T", [](L x) { return x[0].T(); }, {{2, 3}}, {}},
      {"t", [](L x) { return x[0].t(); }, {{2, 3}}, {}},
      {"permute", [](L x) { return x[0].permute({1, 2, 0}); }, {{2, 3, 2}}, {}},
      {"squeeze/unsqueeze", [](L x) { return x[0].unsqueeze(0).squeeze(1) * 2.0; }, {{2, 1, 3}}, {}},
      {"squeeze all", [](L x) { return x[0].squeeze() * 2.0; }, {{2, 1, 3, 1}}, {}},
      {"flatten", [](L x) { return x[0].flatten(1); }, {{2, 2, 2}}, {}},
      {"expand", [](L x) { return x[0].expand({2, 2, 3}) * 1.5; }, {{2, 1}}, {}},
      {"select", [](L x) { return x[0].select(1, -1); }, {{2, 3}}, {}},
      {"narrow", [](L x) { return x[0].narrow(1, 1, 2); }, {{2, 3}}, {}},
      {"slice step", [](L x) { return x[0].slice(1, 0, 4, 2); }, {{2, 4}}, {}},
      {"clone", [](L x) { return x[0].clone(); }, {{2, 3}}, {}},
      {"sum", [](L x) { return x[0].sum(); }, {{2, 3}}, {}},
      {"sum dims", [](L x) { return x[0].sum({0, 2}); }, {{2, 3, 2}}, {}},
      {"mean keepdim", [](L x) { return x[0].mean({1}, true); }, {{2, 3}}, {}},
      {"mean all", [](L x) { return x[0].mean(); }, {{2, 3}}, {}},
      {"prod", [](L x) { return x[0].prod(); }, {{2, 3}}, {}},
      {"prod dim", [](L x) { return x[0].prod(1); }, {{2, 3}}, {}},
      {"amax", [](L x) { return x[0].amax({1}); }, {{2, 3}}, {}},
      {"amin keepdim", [](L x) { return x[0].amin({0}, true); }, {{2, 3}}, {}},
      {"max all", [](L x) { return x[0].max(); }, {{2, 3}}, {}},
      {"min all", [](L x) { return x[0].min(); }, {{2, 3}}, {}},
      {"max dim", [](L x) { return std::get<0>(x[0].max(1)); }, {{2, 3}}, {}},
      {"topk", [](L x) { return std::get<0>(x[0].topk(2, 1)); }, {{2, 4}}, {}},
      {"topk smallest dim 0", [](L x) { return std::get<0>(ember::topk(x[0], 2, 0, false)); }, {{3, 2}}, {}},
      {"min dim keepdim", [](L x) { return std::get<0>(x[0].min(0, true)); }, {{2, 3}}, {}},
      {"softmax", [](L x) { return x[0].softmax(1); }, {{2, 3}}, {}},
      {"log_softmax", [](L x) { return x[0].log_softmax(0); }, {{2, 3}}, {}},
      {"mm", [](L x) { return x[0].mm(x[1]); }, {{2, 3}, {3, 2}}, {}},
      {"bmm", [](L x) { return ember::bmm(x[0], x[1]); }, {{2, 2, 3}, {2, 3, 2}}, {}},
      {"addmm", [](L x) { return ember::addmm(x[0], x[1], x[2], 0.5, 2.0); }, {{2}, {2, 3}, {3, 2}}, {}},
      {"matmul 1-D", [](L x) { return x[0].matmul(x[1]); }, {{3}, {3, 2}}, {}},
      {"matmul dot", [](L x) { return x[0].matmul(x[1]); }, {{3}, {3}}, {}},
      {"matmul mv", [](L x) { return x[0].matmul(x[1]); }, {{2, 3}, {3}}, {}},
      {"matmul batched", [](L x) { return x[0].matmul(x[1]); }, {{2, 2, 3}, {3, 2}}, {}},
      {"matmul matrix @ batch", [](L x) { return x[0].matmul(x[1]); }, {{2, 3}, {2, 3, 2}}, {}},
      {"matmul vector @ batch", [](L x) { return x[0].matmul(x[1]); }, {{3}, {2, 3, 2}}, {}},
      {"matmul batch @ vector", [](L x) { return x[0].matmul(x[1]); }, {{2, 2, 3}, {3}}, {}},
      {"matmul batch broadcast", [](L x) { return x[0].matmul(x[1]); }, {{2, 1, 2, 3}, {3, 3, 2}}, {}},
      {"matmul transposed batch", [](L x) { return x[0].transpose(1, 2).matmul(x[1]); }, {{2, 3, 2}, {3, 2}}, {}},
      {"cat", [](L x) { return ember::cat({x[0], x[1]}, 1); }, {{2, 2}, {2, 3}}, {}},
      {"stack", [](L x) { return ember::stack({x[0], x[1]}, 0); }, {{2, 3}, {2, 3}}, {}},
      {"index_select", [](L x) { return x[0].index_select(1, ember::tensor({2, 0, 2}).to(x[0].device())); }, {{2, 3}}, {}},
      {"gather", [](L x) { return x[0].gather(1, ember::tensor({{0, 0}, {2, 1}}).to(x[0].device())); }, {{2, 3}}, {}},
      {"index_add", [](L x) { return ember::index_add(x[0], 0, ember::tensor({1, 1}).to(x[0].device()), x[1]); }, {{3, 2}, {2, 2}}, {}},
      {"scatter_add", [](L x) { return ember::scatter_add(x[0], 1, ember::tensor({{0, 0}, {2, 1}}).to(x[0].device()), x[1]); },
       {{2, 3}, {2, 2}}, {}},
      {"contiguous", [](L x) { return x[0].t().contiguous(); }, {{2, 3}}, {}},
      {"in-place add_/sub_", [](L x) {
         Tensor y = x[0] * 1.0;
         y.add_(x[1], 2.0);
         y.sub_(x[1]);
         return y;
       },
       {{2, 3}, {3}}, {}},
      {"in-place mul_/div_", [](L x) {
         Tensor y = x[0] * 1.0;
         y.mul_(x[1]);
         y.div_(x[2]);
         return y;
       },
       {{2, 3}, {3}, {2, 1}}, {false, false, true}},
      {"in-place fill_/zero_", [](L x) {
         // The filled values carry no gradient; x[0] still gets one through the exp term.
         Tensor y = x[0] * x[1];
         y.fill_(0.5);
         Tensor z = x[1] * 2.0;
         z.zero_();
         return y * x[1] + z + x[0].exp();
       },
       {{2, 3}, {2, 3}}, {}},
      // to(device) to the CPU and back: no node on the CPU (same device), ToCopyBackward0
      // twice on a GPU. to(dtype) goes through float32, too coarse for these tolerances:
      // test_gradcheck.cpp checks it with a wider step.
      {"to(device)", [](L x) { return x[0].to(ember::kCPU).to(x[0].device()) * 1.5; }, {{2, 3}}, {}},
      {"in-place copy_", [](L x) {
         Tensor y = ember::zeros({2, 3}, ember::TensorOptions().dtype(ember::kFloat64).device(x[0].device()));
         y.copy_(x[0] * 2.0);
         return y * x[1];
       },
       {{3}, {2, 3}}, {}},
      {"binary_cross_entropy", [](L x) { return ember::binary_cross_entropy(x[0].sigmoid(), x[1].sigmoid()); },
       {{2, 3}, {2, 3}}, {}},
      {"binary_cross_entropy_with_logits", [](L x) { return ember::binary_cross_entropy_with_logits(x[0], x[1].sigmoid()); },
       {{2, 3}, {2, 3}}, {}},
      {"nll_loss", [](L x) { return ember::nll_loss(x[0], ember::tensor({2, 0}).to(x[0].device()), ember::Reduction::Sum); }, {{2, 3}}, {}},
      {"cross_entropy", [](L x) { return ember::cross_entropy(x[0], ember::tensor({1, -100, 0}).to(x[0].device()), ember::Reduction::Mean,
                                                               -100, 0.2); },
       {{3, 3}}, {}},
      {"cross_entropy [N, C, d]", [](L x) {
         return ember::cross_entropy(x[0], ember::tensor({{0, 2}, {1, -100}}).to(x[0].device()), ember::Reduction::Mean, -100, 0.1);
       },
       {{2, 3, 2}}, {}},
      // The fused path (issue 8): [N, C] logits, no label smoothing.
      {"cross_entropy fused mean", [](L x) { return ember::cross_entropy(x[0], ember::tensor({1, -100, 0}).to(x[0].device())); },
       {{3, 4}}, {}},
      {"cross_entropy fused none", [](L x) {
         return ember::cross_entropy(x[0], ember::tensor({3, 0, 2}).to(x[0].device()), ember::Reduction::None, 0);
       },
       {{3, 4}}, {}},
      {"linear + relu fused", [](L x) { return ember::relu_of_fresh(ember::addmm(x[2], x[0], x[1].t())); },
       {{3, 4}, {5, 4}, {5}}, {}},
      {"mse_loss", [](L x) { return ember::mse_loss(x[0], x[1], ember::Reduction::None); }, {{2, 3}, {2, 3}}, {}},
      {"layer_norm [B, T, C]", [](L x) { return ember::layer_norm(x[0], {4}, x[1], x[2]); }, {{2, 3, 4}, {4}, {4}}, {}},
      {"layer_norm over two dims", [](L x) { return ember::layer_norm(x[0], {3, 4}); }, {{2, 3, 4}}, {}},
      // The fused attention (issue 21): L != S across the causal diagonal, and a plain one.
      {"scaled_dot_product_flash_attention causal", [](L x) {
         return std::get<0>(ember::scaled_dot_product_flash_attention(x[0], x[1], x[2], true));
       },
       {{1, 2, 4, 3}, {1, 2, 3, 3}, {1, 2, 3, 3}}, {}},
      {"scaled_dot_product_flash_attention", [](L x) {
         return std::get<0>(ember::scaled_dot_product_flash_attention(x[0], x[1], x[2], false, 0.5));
       },
       {{2, 3, 4}, {2, 5, 4}, {2, 5, 2}}, {}},
  };
}

inline TensorList make_inputs(const OpCase& c, bool non_contiguous, ember::Device device = ember::kCPU) {
  TensorList inputs;
  for (std::size_t i = 0; i < c.shapes.size(); ++i) {
    bool positive = i < c.positive.size() && c.positive[i];
    inputs.push_back(input(c.shapes[i], static_cast<int>(i) + 1, positive, non_contiguous, device));
  }
  return inputs;
}

}  // namespace ember::testing::gradcheck_cases
