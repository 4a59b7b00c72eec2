// tests/nn/test_conv_pool.cpp — conv2d, max/avg/adaptive-average pooling and their modules
// against PyTorch (tests/reference/gen_conv_pool.py -> conv_pool.json): values and gradients
// for padding/stride/dilation/groups combinations, batch 1, odd sizes, an empty batch, on
// contiguous, channels-last-strided (a permuted NHWC tensor) and strided inputs; gradcheck
// and gradgradcheck in float64; the fast kernels (im2col + GEMM) against the reference loops
// (EMBER_KERNELS=reference); nn::Conv2d's init at manual_seed(0) bit for bit; reprs; errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <ember/autograd/gradcheck.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>
#include <ember/ember.h>

#include "forced_gemm_kernel.h"
#include "nn_test_helpers.h"
#include "test_support.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;
using ember::autograd::TensorList;
namespace F = ember::nn::functional;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json json = load_reference("conv_pool.json");
  return json;
}

// Same shape; every value within tolerance; NaN where PyTorch has NaN.
void require_matches(const Tensor& actual, const nlohmann::json& expected, DType dtype) {
  const Tensor want = tensor_from_json(expected);
  REQUIRE(actual.sizes() == want.sizes());
  const double rtol = dtype == DType::Float64 ? 1e-10 : 2e-5, atol = dtype == DType::Float64 ? 1e-12 : 2e-5;
  const std::vector<double> a = to_vector(actual), b = to_vector(want);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": ember " << a[i] << " vs PyTorch " << b[i]);
    if (std::isnan(b[i])) {
      REQUIRE(std::isnan(a[i]));
      continue;
    }
    REQUIRE(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i]));
  }
}

ExpandingArray<2> pair_from(const nlohmann::json& value) {
  if (value.is_array()) return value.get<std::vector<std::int64_t>>();
  return value.get<std::int64_t>();
}

// The same values in three layouts: contiguous NCHW; channels last (an NHWC tensor permuted
// to NCHW, strides [HWC, 1, WC, C]); every other element of a tensor twice as wide.
enum class Layout { Contiguous, ChannelsLast, Strided };
const char* layout_name(Layout layout) {
  return layout == Layout::Contiguous ? "contiguous" : layout == Layout::ChannelsLast ? "channels_last" : "strided";
}

Tensor in_layout(const Tensor& x, Layout layout) {
  if (layout == Layout::Contiguous || x.dim() != 4) return x.clone();
  if (layout == Layout::ChannelsLast) {
    Tensor out = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
    if (x.size(1) > 1 && x.numel() > 0) REQUIRE_FALSE(out.is_contiguous());  // (one channel: NHWC is NCHW)
    return out;
  }
  Shape wide = x.sizes();
  wide[3] *= 2;
  Tensor storage = ember::full(wide, -77.0, x.options());
  Tensor out = storage.slice(3, 0, std::nullopt, 2);
  out.copy_(x);
  return out;
}

// Runs fn in both kernel modes and requires the same values within rounding.
void require_same_in_reference_mode(const std::function<std::vector<Tensor>()>& fn) {
  std::vector<Tensor> fast, slow;
  {
    KernelModeGuard guard(KernelMode::Fast);
    fast = fn();
  }
  {
    KernelModeGuard guard(KernelMode::Reference);
    slow = fn();
  }
  REQUIRE(fast.size() == slow.size());
  for (std::size_t t = 0; t < fast.size(); ++t) {
    const std::vector<double> a = to_vector(fast[t]), b = to_vector(slow[t]);
    REQUIRE(fast[t].sizes() == slow[t].sizes());
    const double tol = fast[t].dtype() == DType::Float64 ? 1e-11 : 1e-4;
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO("tensor " << t << " element " << i << ": fast " << a[i] << " vs reference " << b[i]);
      if (std::isnan(b[i])) {
        REQUIRE(std::isnan(a[i]));
        continue;
      }
      if (a[i] == b[i]) continue;  // equal infinities too
      REQUIRE(std::abs(a[i] - b[i]) <= tol * (1.0 + std::abs(b[i])));
    }
  }
}

struct ConvRun {
  Tensor out, grad_input, grad_weight, grad_bias;
};

ConvRun run_conv(const nlohmann::json& c, Layout layout) {
  Tensor x = in_layout(tensor_from_json(c["input"]), layout).requires_grad_();
  Tensor w = tensor_from_json(c["weight"]).requires_grad_();
  Tensor b = c.contains("bias") ? tensor_from_json(c["bias"]).requires_grad_() : Tensor();
  Tensor out = F::conv2d(x, w, b, pair_from(c["stride"]), pair_from(c["padding"]), pair_from(c["dilation"]),
                         c["groups"].get<std::int64_t>());
  out.backward(tensor_from_json(c["grad_output"]));
  return {out, x.grad(), w.grad(), b.defined() ? b.grad() : Tensor()};
}

Tensor run_pool(const nlohmann::json& c, const Tensor& x) {
  const auto& a = c["args"];
  const std::string kind = c["kind"];
  if (kind == "adaptive") return F::adaptive_avg_pool2d(x, pair_from(a["output_size"]));
  ExpandingArray<2> stride = a.contains("stride") ? pair_from(a["stride"]) : ExpandingArray<2>{};
  ExpandingArray<2> padding = a.contains("padding") ? pair_from(a["padding"]) : ExpandingArray<2>(0);
  const bool ceil_mode = a.value("ceil_mode", false);
  if (kind == "max") {
    ExpandingArray<2> dilation = a.contains("dilation") ? pair_from(a["dilation"]) : ExpandingArray<2>(1);
    return F::max_pool2d(x, pair_from(a["kernel_size"]), stride, padding, dilation, ceil_mode);
  }
  std::optional<std::int64_t> divisor;
  if (a.contains("divisor_override")) divisor = a["divisor_override"].get<std::int64_t>();
  return F::avg_pool2d(x, pair_from(a["kernel_size"]), stride, padding, ceil_mode, a.value("count_include_pad", true),
                       divisor);
}

}  // namespace

TEST_CASE("conv2d: values and gradients match PyTorch in every layout", "[conv]") {
  for (const auto& c : reference()["conv"]) {
    const DType dtype = ember::testing::dtype_from_name(c["dtype"]);
    for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast, Layout::Strided}) {
      INFO("case " << c["name"].get<std::string>() << " " << c["dtype"].get<std::string>() << " "
                   << layout_name(layout));
      ConvRun run = run_conv(c, layout);
      require_matches(run.out, c["output"], dtype);
      require_matches(run.grad_input, c["grad_input"], dtype);
      require_matches(run.grad_weight, c["grad_weight"], dtype);
      if (c.contains("bias")) require_matches(run.grad_bias, c["grad_bias"], dtype);
      CHECK(run.out.grad_fn()->name() == "ConvolutionBackward0");
    }
  }
}

TEST_CASE("conv2d: the im2col + GEMM kernels agree with the reference seven loops", "[conv]") {
  for (const auto& c : reference()["conv"]) {
    INFO("case " << c["name"].get<std::string>() << " " << c["dtype"].get<std::string>());
    require_same_in_reference_mode([&] {
      ConvRun run = run_conv(c, Layout::ChannelsLast);
      std::vector<Tensor> out{run.out, run.grad_input, run.grad_weight};
      if (run.grad_bias.defined()) out.push_back(run.grad_bias);
      return out;
    });
  }
}

TEST_CASE("conv2d: an unbatched (C, H, W) input is a batch of one", "[conv]") {
  ember::manual_seed(3);
  Tensor x = ember::randn({3, 6, 5});
  Tensor w = ember::randn({4, 3, 3, 3});
  Tensor b = ember::randn({4});
  Tensor unbatched = F::conv2d(x, w, b, 1, 1);
  Tensor batched = F::conv2d(x.unsqueeze(0), w, b, 1, 1);
  REQUIRE(unbatched.sizes() == Shape{4, 6, 5});
  REQUIRE(to_vector(unbatched) == to_vector(batched));
}

TEST_CASE("pooling: values and gradients match PyTorch (ties to the first max, NaN wins)", "[pool]") {
  for (const auto& c : reference()["pool"]) {
    const DType dtype = ember::testing::dtype_from_name(c["dtype"]);
    for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast, Layout::Strided}) {
      INFO("case " << c["name"].get<std::string>() << " " << c["dtype"].get<std::string>() << " "
                   << layout_name(layout));
      Tensor x = in_layout(tensor_from_json(c["input"]), layout).requires_grad_();
      Tensor out = run_pool(c, x);
      require_matches(out, c["output"], dtype);
      if (out.numel() > 0) {
        out.backward(tensor_from_json(c["grad_output"]));
        require_matches(x.grad(), c["grad_input"], dtype);
      }
    }
  }
}

TEST_CASE("pooling: the fast kernels agree with the reference loops", "[pool]") {
  for (const auto& c : reference()["pool"]) {
    INFO("case " << c["name"].get<std::string>() << " " << c["dtype"].get<std::string>());
    require_same_in_reference_mode([&] {
      Tensor x = tensor_from_json(c["input"]).requires_grad_();
      Tensor out = run_pool(c, x);
      if (out.numel() == 0) return std::vector<Tensor>{out};
      out.backward(tensor_from_json(c["grad_output"]));
      return std::vector<Tensor>{out, x.grad()};
    });
  }
}

TEST_CASE("pooling: grad_fn names are PyTorch's", "[pool]") {
  Tensor x = ember::randn({1, 2, 4, 4}).requires_grad_();
  CHECK(F::max_pool2d(x, 2).grad_fn()->name() == "MaxPool2DWithIndicesBackward0");
  CHECK(F::avg_pool2d(x, 2).grad_fn()->name() == "AvgPool2DBackward0");
  CHECK(F::adaptive_avg_pool2d(x, 1).grad_fn()->name() == "AdaptiveAvgPool2DBackward0");
}

TEST_CASE("conv2d and pooling: gradcheck and gradgradcheck in float64", "[conv][pool][gradcheck]") {
  using autograd::gradcheck;
  using autograd::gradgradcheck;
  ember::manual_seed(11);
  const auto f64 = TensorOptions().dtype(DType::Float64).requires_grad(true);
  struct ConvConfig {
    Shape input, weight;
    ExpandingArray<2> stride, padding, dilation;
    std::int64_t groups;
  };
  const std::vector<ConvConfig> configs = {
      {{2, 3, 5, 4}, {4, 3, 3, 2}, 1, 0, 1, 1},
      {{1, 2, 6, 5}, {2, 2, 3, 3}, {2, 1}, {1, 2}, 1, 1},
      {{2, 2, 7, 6}, {3, 2, 2, 2}, 1, 1, {2, 3}, 1},
      {{1, 4, 5, 5}, {4, 2, 3, 3}, 2, 1, 1, 2},
      {{2, 3, 3, 3}, {2, 3, 1, 1}, 1, 0, 1, 1},
  };
  for (std::size_t i = 0; i < configs.size(); ++i) {
    INFO("conv config " << i);
    const ConvConfig& cfg = configs[i];
    Tensor x = ember::randn(cfg.input, f64), w = ember::randn(cfg.weight, f64), b = ember::randn({cfg.weight[0]}, f64);
    auto fn = [&cfg](const TensorList& in) {
      return F::conv2d(in[0], in[1], in[2], cfg.stride, cfg.padding, cfg.dilation, cfg.groups);
    };
    REQUIRE(gradcheck(fn, {x, w, b}));
    REQUIRE(gradgradcheck(fn, {x, w, b}));
  }
  // Distinct values (no ties, where max is not differentiable).
  Tensor x = (ember::randperm(2 * 2 * 7 * 6).to(DType::Float64) * 0.1).view({2, 2, 7, 6}).requires_grad_();
  std::vector<std::function<Tensor(const TensorList&)>> pools = {
      [](const TensorList& in) { return F::max_pool2d(in[0], 3, 2, 1); },
      [](const TensorList& in) { return F::max_pool2d(in[0], {2, 3}, 1, 1, 2, true); },
      [](const TensorList& in) { return F::avg_pool2d(in[0], 3, 2, 1, true, false); },
      [](const TensorList& in) { return F::avg_pool2d(in[0], 2, 1, 1, false, true, 3); },
      [](const TensorList& in) { return F::adaptive_avg_pool2d(in[0], {3, 4}); },
  };
  for (std::size_t i = 0; i < pools.size(); ++i) {
    INFO("pool " << i);
    REQUIRE(gradcheck(pools[i], {x}));
    REQUIRE(gradgradcheck(pools[i], {x}));
  }
}

TEST_CASE("nn::Conv2d: PyTorch's weights at manual_seed(0) and its repr", "[conv][nn]") {
  const auto& init = reference()["init"];
  ember::manual_seed(0);
  nn::Conv2d first(1, 32, 3, {.padding = 1});
  ember::manual_seed(0);
  nn::Conv2d second(32, 64, 3, {.padding = 1});
  ember::manual_seed(0);
  nn::Conv2d grouped(4, 8, {3, 5}, {.stride = 2, .dilation = {2, 1}, .groups = 2, .bias = false});
  const std::vector<nn::Conv2d*> modules{&first, &second, &grouped};
  for (std::size_t i = 0; i < modules.size(); ++i) {
    INFO("module " << i);
    ember::testing::require_equal(modules[i]->weight, init[i]["weight"]);
    if (init[i]["bias"].is_null()) REQUIRE_FALSE(modules[i]->bias.defined());
    else ember::testing::require_equal(modules[i]->bias, init[i]["bias"]);
    REQUIRE(modules[i]->repr() == init[i]["repr"].get<std::string>());
  }
  REQUIRE(first.weight.sizes() == Shape{32, 1, 3, 3});
  REQUIRE(grouped.weight.sizes() == Shape{8, 2, 3, 5});
  REQUIRE(first.forward(ember::zeros({2, 1, 28, 28})).sizes() == Shape{2, 32, 28, 28});
  REQUIRE_THROWS_WITH(nn::Conv2d(3, 4, 3, {.groups = 2}), "in_channels must be divisible by groups");
  REQUIRE_THROWS_WITH(nn::Conv2d(4, 3, 3, {.groups = 2}), "out_channels must be divisible by groups");
}

TEST_CASE("pooling modules print as PyTorch's", "[pool][nn]") {
  CHECK(nn::MaxPool2d(2).repr() == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  CHECK(nn::MaxPool2d({2, 3}, {.stride = 1, .padding = 1, .dilation = 2, .ceil_mode = true}).repr() ==
        "MaxPool2d(kernel_size=(2, 3), stride=1, padding=1, dilation=2, ceil_mode=True)");
  CHECK(nn::AvgPool2d(2).repr() == "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  CHECK(nn::AvgPool2d({2, 3}, {.stride = 1, .padding = 1, .ceil_mode = true, .count_include_pad = false,
                               .divisor_override = 3})
            .repr() == "AvgPool2d(kernel_size=(2, 3), stride=1, padding=1)");
  CHECK(nn::AdaptiveAvgPool2d(1).repr() == "AdaptiveAvgPool2d(output_size=1)");
  CHECK(nn::AdaptiveAvgPool2d({3, 4}).repr() == "AdaptiveAvgPool2d(output_size=(3, 4))");
  // The CNN, shapes through a 28 x 28 image.
  ember::manual_seed(0);
  auto model = nn::sequential({std::make_shared<nn::Conv2d>(1, 32, 3, nn::Conv2dOptions{.padding = 1}),
                               std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
                               std::make_shared<nn::Conv2d>(32, 64, 3, nn::Conv2dOptions{.padding = 1}),
                               std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
                               std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(64 * 7 * 7, 128),
                               std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(128, 10)});
  Tensor logits = model->forward(ember::randn({2, 1, 28, 28}));
  REQUIRE(logits.sizes() == Shape{2, 10});
}

TEST_CASE("conv2d errors use PyTorch's words", "[conv][errors]") {
  auto conv = [](Shape input, Shape weight, auto&&... args) {
    return F::conv2d(ember::zeros(input), ember::zeros(weight), args...);
  };
  REQUIRE_THROWS_WITH(conv({2, 1, 5, 5}, {8, 3, 3, 3}),
                      "Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 1, 5, 5] to have 3 channels, but "
                      "got 1 channels instead");
  REQUIRE_THROWS_AS(conv({2, 1, 5, 5}, {8, 3, 3, 3}), ShapeError);
  REQUIRE_THROWS_WITH(conv({1, 3, 5, 5}, {8, 3, 3}),
                      "expected stride to be a single integer value or a list of 1 values to match the convolution "
                      "dimensions, but got stride=[1, 1]");
  REQUIRE_THROWS_WITH(conv({1, 5, 5}, {8, 3, 3, 3}),
                      "Given groups=1, weight of size [8, 3, 3, 3], expected input[1, 1, 5, 5] to have 3 channels, but "
                      "got 1 channels instead");
  REQUIRE_THROWS_WITH(conv({5, 5}, {8, 3, 3, 3}),
                      "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [5, 5]");
  REQUIRE_THROWS_WITH(conv({1, 6, 5, 5}, {8, 2, 3, 3}, Tensor(), 1, 0, 1, 3),
                      "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size [[8, "
                      "2, 3, 3]] instead");
  REQUIRE_THROWS_WITH(conv({1, 3, 2, 2}, {8, 3, 3, 3}),
                      "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be "
                      "greater than actual input size");
  REQUIRE_THROWS_WITH(F::conv2d(ember::zeros({1, 3, 5, 5}), ember::zeros({8, 3, 3, 3}), ember::zeros({7})),
                      "Given weight of size [8, 3, 3, 3], expected bias to be 1-dimensional with 8 elements, but got "
                      "bias of size [7] instead");
  REQUIRE_THROWS_WITH(conv({1, 3, 5, 5}, {8, 3, 3, 3}, Tensor(), 0), "non-positive stride is not supported");
  REQUIRE_THROWS_WITH(conv({1, 3, 5, 5}, {8, 3, 3, 3}, Tensor(), 1, -1), "negative padding is not supported");
  REQUIRE_THROWS_WITH(conv({1, 3, 5, 5}, {8, 3, 3, 3}, Tensor(), 1, 0, 0),
                      "dilation should be greater than zero, but got [0, 0]");
  REQUIRE_THROWS_WITH(conv({1, 3, 5, 5}, {8, 3, 3, 3}, Tensor(), 1, 0, 1, 0), "non-positive groups is not supported");
  REQUIRE_THROWS_WITH(conv({1, 3, 5, 5}, {8, 3, 3, 3}, Tensor(), ExpandingArray<2>{1, 2, 3}),
                      "expected stride to be a single integer value or a list of 2 values to match the convolution "
                      "dimensions, but got stride=[1, 2, 3]");
  REQUIRE_THROWS_WITH(F::conv2d(ember::zeros({1, 3, 5, 5}), ember::zeros({8, 3, 3, 3}, DType::Float64)),
                      "expected scalar type Float but found Double");
  REQUIRE_THROWS_AS(F::conv2d(ember::zeros({1, 3, 5, 5}), ember::zeros({8, 3, 3, 3}, DType::Float64)), DTypeError);
  // An empty batch and zero input channels are valid, as in PyTorch.
  REQUIRE(conv({0, 3, 5, 5}, {8, 3, 3, 3}).sizes() == Shape{0, 8, 3, 3});
  Tensor no_channels = F::conv2d(ember::zeros({1, 0, 5, 5}), ember::zeros({8, 0, 3, 3}), ember::ones({8}));
  REQUIRE(no_channels.sizes() == Shape{1, 8, 3, 3});
  REQUIRE(to_vector(no_channels) == std::vector<double>(72, 1.0));
}

TEST_CASE("pooling errors use PyTorch's words", "[pool][errors]") {
  REQUIRE_THROWS_WITH(F::max_pool2d(ember::zeros({1, 3, 5, 5}), 2, {}, 2),
                      "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1");
  REQUIRE_THROWS_WITH(F::max_pool2d(ember::zeros({1, 3, 1, 1}), 3),
                      "Given input size: (3x1x1). Calculated output size: (3x0x0). Output size is too small");
  REQUIRE_THROWS_WITH(F::max_pool2d(ember::zeros({1, 3, 5, 5}), 0), "stride should not be zero");
  REQUIRE_THROWS_WITH(F::max_pool2d(ember::zeros({1, 3, 5, 5}), 2, 0), "stride should not be zero");
  REQUIRE_THROWS_WITH(F::max_pool2d(ember::zeros({3, 5}), 2), "non-empty 3D or 4D (batch mode) tensor expected for input");
  REQUIRE_THROWS_WITH(F::max_pool2d(ember::zeros({1, 3, 5, 5}), 2, {}, 0, 0),
                      "dilation should be greater than zero, but got dilationH: 0 dilationW: 0");
  REQUIRE_THROWS_WITH(F::max_pool2d(ember::zeros({1, 3, 0, 5}), 2),
                      "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[1, 3, 0, 5]");
  REQUIRE_THROWS_WITH(F::avg_pool2d(ember::zeros({1, 3, 5, 5}), 2, {}, 2),
                      "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1");
  REQUIRE_THROWS_WITH(F::avg_pool2d(ember::zeros({1, 3, 1, 1}), 3),
                      "Given input size: (3x1x1). Calculated output size: (3x0x0). Output size is too small");
  REQUIRE_THROWS_WITH(F::avg_pool2d(ember::zeros({1, 3, 5, 5}), 2, {}, 0, false, true, 0), "divisor must be not zero");
  REQUIRE_THROWS_WITH(F::adaptive_avg_pool2d(ember::zeros({3, 5}), 2),
                      "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [3, 5]");
  REQUIRE_THROWS_WITH(F::adaptive_avg_pool2d(ember::zeros({1, 3, 0, 5}), 2),
                      "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input "
                      "has sizes [1, 3, 0, 5] with dimension 2 being empty");
  REQUIRE_THROWS_WITH(F::adaptive_avg_pool2d(ember::zeros({1, 3, 4, 5}), -1),
                      "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-1, -1}");
  REQUIRE(F::adaptive_avg_pool2d(ember::zeros({0, 3, 4, 5}), 2).sizes() == Shape{0, 3, 2, 2});
  // Argument lists of the wrong length.
  Tensor x = ember::zeros({1, 3, 5, 5});
  REQUIRE_THROWS_WITH(F::max_pool2d(x, ExpandingArray<2>{1, 2, 3}),
                      "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  REQUIRE_THROWS_WITH(F::max_pool2d(x, 2, ExpandingArray<2>{1, 2, 3}),
                      "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
  REQUIRE_THROWS_WITH(F::max_pool2d(x, 2, {}, ExpandingArray<2>{1, 2, 3}),
                      "max_pool2d: padding must either be a single int, or a tuple of two ints");
  REQUIRE_THROWS_WITH(F::max_pool2d(x, 2, {}, 0, ExpandingArray<2>{1, 2, 3}),
                      "max_pool2d: dilation must be either a single int, or a tuple of two ints");
  REQUIRE_THROWS_WITH(F::avg_pool2d(x, ExpandingArray<2>{1, 2, 3}),
                      "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
}

TEST_CASE("max_pool2d's gradient goes to the first maximum, or to the last NaN, as PyTorch's", "[pool]") {
  const double nan = std::nan("");
  Tensor ties = ember::tensor({3.0, 1.0, 3.0, 2.0}).view({1, 1, 2, 2}).requires_grad_();
  F::max_pool2d(ties, 2).sum().backward();
  REQUIRE(to_vector(ties.grad()) == std::vector<double>{1, 0, 0, 0});
  Tensor nans = ember::tensor({nan, 1.0, nan, 2.0}).view({1, 1, 2, 2}).requires_grad_();
  Tensor out = F::max_pool2d(nans, 2);
  REQUIRE(std::isnan(out.item<double>()));
  out.sum().backward();
  REQUIRE(to_vector(nans.grad()) == std::vector<double>{0, 0, 1, 0});
}

// The CPU's vectorised max pooling (windows two columns wide side by side, wholly inside the
// plane: core/cpu/pool_kernels.cpp, and MaxPool2d(2)'s AVX-512 kernel,
// core/cpu/max_pool_2x2_avx512.cpp, where the CPU has it) against the reference loops, on
// planes full of ties, NaNs and -infs, with widths that leave a vector remainder (34: 16 + 1
// windows, 65: two full steps and a column left over) and windows 1 to 3 rows high: the same
// maxima, and the gradient at the same positions (the same argmax).
TEST_CASE("max_pool2d's vectorised 2-wide path picks the reference path's maxima and argmaxes", "[pool]") {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> palette = {0.0, 1.0, 1.0, -inf, nan, 2.0, -1.0, 0.0};
  const std::vector<std::pair<std::int64_t, std::int64_t>> kernel_and_stride_h = {{1, 1}, {2, 1}, {3, 1}, {2, 2}};
  for (const DType dtype : {DType::Float32, DType::Float64, DType::BFloat16}) {
    for (const auto& kernel_stride : kernel_and_stride_h) {
      // Plain variables, not a structured binding: the lambda below captures them (clang
      // before 16 cannot capture a binding).
      const std::int64_t kernel_h = kernel_stride.first, stride_h = kernel_stride.second;
      for (const std::int64_t width : {2, 9, 34, 65}) {
        std::vector<double> values(static_cast<std::size_t>(2 * 3 * 7 * width));
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = palette[(i * 7 + i / 5) % palette.size()];
        const Tensor x = ember::from_blob(values.data(), {2, 3, 7, width}, TensorOptions().dtype(DType::Float64))
                             .to(dtype);
        INFO(dtype << " kernel (" << kernel_h << ", 2) stride (" << stride_h << ", 2) width " << width);
        require_same_in_reference_mode([&] {
          Tensor input = x.clone().requires_grad_();
          Tensor out = F::max_pool2d(input, {kernel_h, 2}, {stride_h, 2});
          out.backward(ember::ones_like(out));
          return std::vector<Tensor>{out, input.grad()};
        });
      }
    }
  }
}

namespace {

// Every element's bits (float32 or bfloat16, contiguous), so -0.0 and NaN payloads compare too.
std::vector<std::uint32_t> bit_patterns(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<std::uint32_t> bits(static_cast<std::size_t>(c.numel()));
  const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
  const std::size_t width = c.dtype() == DType::Float32 ? 4 : 2;
  for (std::size_t i = 0; i < bits.size(); ++i) std::memcpy(&bits[i], bytes + i * width, width);
  return bits;
}

}  // namespace

// MaxPool2d(2) on the CPU's vectorised kernels (core/cpu/max_pool_2x2_avx512.cpp and
// max_pool_2x2_avx2.cpp, chosen with the GEMM's instruction set, each forced here where the CPU
// has it: the bfloat16 forward pools its planes as read, and the backward writes every input
// element once instead of zeroing and scattering) against the reference loops, bit for bit:
// maxima, indices and the input gradient, with gradients that are -0.0 (+0.0 + -0.0 is +0.0),
// NaN, infinite or tiny, on planes of odd height and width (a row and a column no window
// covers, which must come back zero) and widths past one step of 8 and of 16.
TEST_CASE("max_pool2d(2) forward and backward: the same bits as the reference loops", "[pool]") {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values_palette = {0.0, 1.0, 1.0, -inf, nan, 2.0, -1.0, 0.0, -0.0, 3.0};
  const std::vector<double> grad_palette = {-0.0, 1.5, nan, -2.25, inf, 1e-3, 0.0, -inf, 7.0};
  for (const char* isa : {"avx512", "avx2", "portable"}) {
    if (!cpu::gemm_kernel_available(isa)) continue;
    testing::ForcedKernel forced(isa);
    for (const DType dtype : {DType::Float32, DType::BFloat16}) {
      for (const std::int64_t height : {2, 7, 8}) {
        for (const std::int64_t width : {2, 5, 9, 18, 34, 65}) {
          INFO(isa << " " << dtype << " height " << height << " width " << width);
          std::vector<double> values(static_cast<std::size_t>(2 * 3 * height * width));
          for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = values_palette[(i * 7 + i / 5) % values_palette.size()];
          const Tensor x =
              ember::from_blob(values.data(), {2, 3, height, width}, TensorOptions().dtype(DType::Float64)).to(dtype);
          const native::Pool2dArgs args = native::check_pool2d(PoolMode::Max, x, 2, 2, 0, 1, false, true, std::nullopt);
          std::vector<double> grads(static_cast<std::size_t>(2 * 3 * (height / 2) * (width / 2)));
          for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = grad_palette[(i * 5 + i / 3) % grad_palette.size()];
          const Tensor grad_out = ember::from_blob(grads.data(), {2, 3, height / 2, width / 2},
                                                   TensorOptions().dtype(DType::Float64)).to(dtype);
          std::vector<std::uint32_t> out_bits[2], grad_bits[2];
          std::vector<double> indices[2];
          for (int reference = 0; reference < 2; ++reference) {
            KernelModeGuard guard(reference != 0 ? KernelMode::Reference : KernelMode::Fast);
            const auto [out, index] = native::pool2d(x, args);
            out_bits[reference] = bit_patterns(out);
            indices[reference] = to_vector(index);
            grad_bits[reference] = bit_patterns(native::pool2d_backward(grad_out, index, x.sizes(), args));
          }
          CHECK(out_bits[0] == out_bits[1]);
          CHECK(indices[0] == indices[1]);
          CHECK(grad_bits[0] == grad_bits[1]);
        }
      }
    }
  }
}

// The AVX2 kernels store whole vectors wherever they stay inside the plane (a short step's
// spill lands where a later store of the call writes) and mask what would leave it: called on
// one plane whose output, indices and input gradient are followed by guard values, every guard
// survives, and the plane holds each window's maximum, its index and the routed gradient. The
// inputs are exactly their size, so under ASan a read past the plane fails too.
TEST_CASE("max_pool2d(2)'s AVX2 kernels never write past the plane", "[pool]") {
  if (!cpu::gemm_kernel_available("avx2")) {
    testing::mark_skipped("the CPU has no AVX2");
    return;
  }
  constexpr std::int64_t kGuards = 16;
  const float guard = -12345.0f;
  for (const std::int64_t in_h : {2, 3, 4, 5}) {
    for (const std::int64_t in_w : {2, 3, 5, 14, 16, 17, 28, 33}) {
      INFO("in_h " << in_h << " in_w " << in_w);
      const std::int64_t out_h = in_h / 2, out_w = in_w / 2, outputs = out_h * out_w;
      std::vector<float> in(static_cast<std::size_t>(in_h * in_w));
      for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 37) % 101) - 50.0f;  // distinct per window
      std::vector<float> out(static_cast<std::size_t>(outputs + kGuards), guard);
      std::vector<std::int64_t> indices(static_cast<std::size_t>(outputs + kGuards), -7);
      cpu::max_pool_2x2_plane_avx2(in.data(), in_w, out_h, out_w, out.data(), indices.data());
      for (std::int64_t y = 0; y < out_h; ++y) {
        for (std::int64_t x = 0; x < out_w; ++x) {
          std::int64_t best = 2 * y * in_w + 2 * x;
          for (const std::int64_t at : {best + 1, best + in_w, best + in_w + 1})
            if (in[static_cast<std::size_t>(at)] > in[static_cast<std::size_t>(best)]) best = at;
          CHECK(indices[static_cast<std::size_t>(y * out_w + x)] == best);
          CHECK(out[static_cast<std::size_t>(y * out_w + x)] == in[static_cast<std::size_t>(best)]);
        }
      }
      for (std::int64_t i = outputs; i < outputs + kGuards; ++i) {
        CHECK(out[static_cast<std::size_t>(i)] == guard);
        CHECK(indices[static_cast<std::size_t>(i)] == -7);
      }
      std::vector<float> grad_out(static_cast<std::size_t>(outputs));
      for (std::size_t i = 0; i < grad_out.size(); ++i) grad_out[i] = 1.0f + static_cast<float>(i);
      const std::vector<std::int64_t> forward_indices(indices.begin(), indices.begin() + outputs);
      std::vector<float> grad_in(static_cast<std::size_t>(in_h * in_w + kGuards), guard);
      REQUIRE(cpu::max_pool_2x2_backward_plane_avx2(grad_out.data(), forward_indices.data(), in_h, in_w, out_h, out_w,
                                                    grad_in.data()));
      std::vector<float> want(static_cast<std::size_t>(in_h * in_w), 0.0f);
      for (std::int64_t o = 0; o < outputs; ++o)
        want[static_cast<std::size_t>(forward_indices[static_cast<std::size_t>(o)])] = grad_out[static_cast<std::size_t>(o)];
      CHECK(std::vector<float>(grad_in.begin(), grad_in.begin() + in_h * in_w) == want);
      for (std::int64_t i = in_h * in_w; i < in_h * in_w + kGuards; ++i) CHECK(grad_in[static_cast<std::size_t>(i)] == guard);
    }
  }
}

// Indices that are not the forward's (one names a position in the next window) are still
// honoured: the dense backward (AVX-512 or AVX2) gives that plane up to the scatter.
TEST_CASE("max_pool2d(2) backward with an index outside its window puts the gradient there", "[pool]") {
  for (const char* isa : {"avx512", "avx2", "portable"}) {
    if (!cpu::gemm_kernel_available(isa)) continue;
    testing::ForcedKernel forced(isa);
    for (const DType dtype : {DType::Float32, DType::BFloat16}) {
      INFO(isa << " " << dtype);
      const Tensor x = ember::zeros({1, 2, 2, 4}, TensorOptions().dtype(dtype));
      const native::Pool2dArgs args = native::check_pool2d(PoolMode::Max, x, 2, 2, 0, 1, false, true, std::nullopt);
      // Plane 0: window 0's gradient goes to (0, 2) (window 1's), window 1's to (1, 3).
      // Plane 1: the forward's own.
      const std::vector<double> index_values = {2, 7, 4, 3};
      const Tensor index = ember::from_blob(const_cast<double*>(index_values.data()), {1, 2, 1, 2},  // NOLINT
                                            TensorOptions().dtype(DType::Float64)).to(DType::Int64);
      const std::vector<double> grads = {1.0, 2.0, 3.0, 4.0};
      const Tensor grad_out = ember::from_blob(const_cast<double*>(grads.data()), {1, 2, 1, 2},  // NOLINT
                                               TensorOptions().dtype(DType::Float64)).to(dtype);
      const Tensor grad_in = native::pool2d_backward(grad_out, index, x.sizes(), args);
      CHECK(to_vector(grad_in) == std::vector<double>{0, 0, 1, 0, 0, 0, 0, 2,  // plane 0
                                                      0, 0, 0, 4, 3, 0, 0, 0});
    }
  }
}
