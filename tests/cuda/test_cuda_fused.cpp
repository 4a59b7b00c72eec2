// tests/cuda/test_cuda_fused.cpp — the fused training ops on a real GPU (issue 8 + issue 5):
// the CUDA kernels of cross_entropy, sgd_step, one_hot and BinaryOp::ReluBackward, reached
// through the public API, against the CPU backend; the GPU's fused SGD step against the
// GPU's own composite ops, bit for bit (the kernel spells the composite kernels' FMAs);
// Linear + ReLU's tape on the GPU. Skipped without a GPU (EMBER_REQUIRE_GPU).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <ember/autograd/graph_inspector.h>
#include <ember/core/native.h>
#include <ember/ember.h>
#include <ember/nn/clip_grad.h>

#include "cuda_test_support.h"
#include "test_support.h"

namespace {

using namespace ember;

double max_relative_difference(const Tensor& a, const Tensor& b) {
  Tensor x = a.cpu().to(kFloat64), y = b.cpu().to(kFloat64);
  return ((x - y).abs() / (y.abs() + 1e-6)).max().item<double>();
}

Tensor labels_for(std::int64_t rows, std::int64_t classes) {
  Tensor t = ember::randint(0, classes, {rows});
  for (std::int64_t r = 1; r < rows; r += 5) t.data_ptr<std::int64_t>()[r] = -100;  // ignored rows
  return t;
}

}  // namespace

TEST_CASE("cuda fused: cross_entropy on the GPU equals the CPU (held and re-read rows)", "[cuda][gpu][fused]") {
  EMBER_REQUIRE_GPU();
  ember::manual_seed(3);
  for (std::int64_t classes : {1, 10, 2048, 3001}) {
    for (Reduction reduction : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
      INFO("classes " << classes << " reduction " << static_cast<int>(reduction));
      Tensor cpu_x = (ember::randn({67, classes}) * 3.0).requires_grad_();
      Tensor gpu_x = cpu_x.detach().cuda().requires_grad_();
      Tensor labels = labels_for(67, classes);
      Tensor cpu_loss = ember::cross_entropy(cpu_x, labels, reduction);
      Tensor gpu_loss = ember::cross_entropy(gpu_x, labels.cuda(), reduction);
      REQUIRE(gpu_loss.is_cuda());
      REQUIRE(max_relative_difference(gpu_loss, cpu_loss) < 1e-5);
      cpu_loss.sum().backward();
      gpu_loss.sum().backward();
      REQUIRE(gpu_x.grad().is_cuda());
      REQUIRE((gpu_x.grad().cpu() - cpu_x.grad()).abs().max().item<double>() < 1e-6);
    }
  }
}

TEST_CASE("cuda fused: the SGD step on the GPU is bit-identical to the GPU's composite ops", "[cuda][gpu][fused][sgd]") {
  EMBER_REQUIRE_GPU();
  ember::manual_seed(4);
  for (std::int64_t numel : {1, 7, 1000, 100003}) {
    for (optim::SGDOptions options : {optim::SGDOptions{.lr = 0.1}, optim::SGDOptions{.lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01},
                                      optim::SGDOptions{.lr = 0.1, .momentum = 0.8, .weight_decay = 0.001, .nesterov = true, .maximize = true}}) {
      INFO("numel " << numel << " momentum " << options.momentum);
      Tensor start = ember::randn({numel});
      Tensor fused_p = start.cuda().requires_grad_(), composite_p = start.cuda().requires_grad_();
      Tensor cpu_p = start.clone().requires_grad_();
      optim::SGDOptions composite_options = options;
      composite_options.fused = false;
      optim::SGD fused({fused_p}, options), composite({composite_p}, composite_options), cpu({cpu_p}, options);
      for (int step = 0; step < 3; ++step) {
        Tensor grad = ember::randn({numel});
        fused_p.mutable_grad() = grad.cuda();
        composite_p.mutable_grad() = grad.cuda();
        cpu_p.mutable_grad() = grad;
        fused.step();
        composite.step();
        cpu.step();
      }
      REQUIRE(fused_p.cpu().equal(composite_p.cpu()));
      // nvcc contracts p - lr * g into one FMA where the CPU rounds twice: an ulp of the
      // operands apart, a large *relative* difference where p ends near 0 (seen on an H200:
      // 3e-4). The values are O(1), so the bound is absolute.
      REQUIRE((fused_p.cpu().to(kFloat64) - cpu_p.detach().to(kFloat64)).abs().max().item<double>() < 1e-5);
    }
  }
}

TEST_CASE("cuda fused: one_hot is built on the GPU and equals the CPU", "[cuda][gpu][fused]") {
  EMBER_REQUIRE_GPU();
  Tensor index = ember::randint(0, 9, {4, 1001});
  Tensor gpu = ember::one_hot(index.cuda(), 9);
  REQUIRE(gpu.is_cuda());
  REQUIRE(gpu.cpu().equal(ember::one_hot(index, 9)));
}

TEST_CASE("cuda fused: relu's backward and Linear + ReLU on the GPU", "[cuda][gpu][fused]") {
  EMBER_REQUIRE_GPU();
  Tensor x = ember::tensor({NAN, 0.0, -1.0, 2.0}).cuda().requires_grad_();
  x.relu().backward(ember::ones({4}).cuda());
  REQUIRE(testing::to_vector(x.grad()) == std::vector<double>{1.0, 0.0, 0.0, 1.0});
  ember::manual_seed(123);
  auto model = nn::sequential({std::make_shared<nn::Linear>(40, 30), std::make_shared<nn::ReLU>(),
                               std::make_shared<nn::Linear>(30, 3)});
  Tensor input = ember::randn({17, 40});
  Tensor cpu_out = (*model)(input);
  model->to(kCUDA);
  Tensor gpu_out = (*model)(input.cuda());
  REQUIRE(max_relative_difference(gpu_out, cpu_out) < 1e-4);
  Tensor unfused = (*model)[2]->forward(ember::relu((*model)[0]->forward(input.cuda())));
  REQUIRE(gpu_out.cpu().equal(unfused.cpu()));
  REQUIRE(autograd::dump(gpu_out) == autograd::dump(unfused));
}

TEST_CASE("cuda fused: clip_grad_norm_ on the GPU (foreach_norm) equals the CPU", "[cuda][gpu][fused][clip_grad]") {
  EMBER_REQUIRE_GPU();
  ember::manual_seed(5);
  const double inf = std::numeric_limits<double>::infinity();
  for (double norm_type : {2.0, 1.0, inf}) {
    INFO("norm_type " << norm_type);
    // Sizes across the kernel's 16384-element chunks, and a float64 parameter among float32.
    std::vector<Tensor> cpu_params, gpu_params;
    for (std::int64_t numel : {100003, 7, 16384}) cpu_params.push_back(ember::zeros({numel}).requires_grad_());
    cpu_params.push_back(ember::zeros({33}, kFloat64).requires_grad_());
    for (Tensor& p : cpu_params) {
      p.mutable_grad() = ember::randn(p.sizes()).to(p.dtype());
      Tensor on_gpu = p.detach().cuda().requires_grad_();
      on_gpu.mutable_grad() = p.grad().cuda();
      gpu_params.push_back(on_gpu);
    }
    const double cpu_norm = nn::utils::clip_grad_norm_(cpu_params, 0.5, norm_type).item<double>();
    const Tensor gpu_total = nn::utils::clip_grad_norm_(gpu_params, 0.5, norm_type);
    REQUIRE(gpu_total.device() == gpu_params.front().device());
    REQUIRE(gpu_total.item<double>() == Approx(cpu_norm).epsilon(1e-5));
    for (std::size_t i = 0; i < cpu_params.size(); ++i)
      REQUIRE((gpu_params[i].grad().cpu().to(kFloat64) - cpu_params[i].grad().to(kFloat64)).abs().max().item<double>() <
              1e-5);
  }
}
