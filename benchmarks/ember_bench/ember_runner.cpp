// benchmarks/ember_bench/ember_runner.cpp — ember's side of every figure (tutorial §2–§9:
// tensors, autograd, nn.Sequential MLPs, SGD, DataLoader, .to(device); §10: Conv2d,
// MaxPool2d, BatchNorm2d and the CNN of `ember train --model cnn`; scaled dot-product attention,
// layer norm, embedding and the GPT of `ember train --model gpt`).
#include "ember_runner.h"

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include <ember/ember.h>

namespace ember_bench {
namespace {

namespace nn = ember::nn;
namespace F = ember::nn::functional;
using ember::Tensor;

Tensor uniform(ember::IntArrayRef sizes, const ember::Device& device) {
  // Centred on 0 so that ReLU has work on both sides.
  return ember::rand(sizes, ember::TensorOptions().device(device)) - 0.5;
}

std::shared_ptr<nn::Sequential> make_mlp(const std::vector<std::int64_t>& layers) {
  auto model = std::make_shared<nn::Sequential>();
  for (std::size_t i = 0; i + 1 < layers.size(); ++i) {
    if (i > 0) model->push_back(std::make_shared<nn::ReLU>());
    model->push_back(std::make_shared<nn::Linear>(layers[i], layers[i + 1]));
  }
  return model;
}

Measurement run_op(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  ember::NoGradGuard no_grad;
  if (w.group == "gemm") {
    Tensor a = uniform({w.dims[0], w.dims[1]}, device), b = uniform({w.dims[1], w.dims[2]}, device);
    return measure([&] { (void)a.matmul(b); }, policy, timer);
  }
  if (w.group == "gemm_bf16") {
    Tensor a = uniform({w.dims[0], w.dims[1]}, device).to(ember::kBFloat16);
    Tensor b = uniform({w.dims[1], w.dims[2]}, device).to(ember::kBFloat16);
    return measure([&] { (void)a.matmul(b); }, policy, timer);
  }
  const std::int64_t n = w.dims.at(0);
  if (w.group == "elementwise" || w.group == "reduction" || w.group == "copy") {
    const ember::DType dtype = w.precision == "bf16" ? ember::kBFloat16 : ember::kFloat32;
    Tensor x = uniform({n}, device).to(dtype);
    if (w.op == "add" || w.op == "mul") {
      Tensor y = uniform({n}, device).to(dtype);
      if (w.op == "add") return measure([&] { (void)(x + y); }, policy, timer);
      return measure([&] { (void)(x * y); }, policy, timer);
    }
    if (w.op == "relu") return measure([&] { (void)x.relu(); }, policy, timer);
    if (w.op == "sum") return measure([&] { (void)x.sum(); }, policy, timer);
    if (w.op == "clone") return measure([&] { (void)x.clone(); }, policy, timer);
  }
  if (w.group == "h2d") {
    Tensor host = uniform({n}, ember::kCPU);
    return measure([&] { (void)host.to(device); }, policy, timer);
  }
  if (w.group == "d2h") {
    Tensor on_device = uniform({n}, device);
    return measure([&] { (void)on_device.to(ember::kCPU); }, policy, timer);
  }
  if (w.group == "softmax") {
    Tensor x = uniform({w.dims[0], w.dims[1]}, device);
    return measure([&] { (void)x.softmax(1); }, policy, timer);
  }
  throw std::runtime_error("ember-bench: no ember runner for " + w.id);
}

Measurement run_cross_entropy(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  Tensor logits = uniform({w.dims[0], w.dims[1]}, device).requires_grad_(true);
  Tensor target = ember::randint(0, w.dims[1], {w.dims[0]}, ember::TensorOptions().dtype(ember::kInt64)).to(device);
  return measure(
      [&] {
        logits.mutable_grad() = Tensor();  // a fresh gradient each call, not an accumulation
        F::cross_entropy(logits, target).backward();
      },
      policy, timer);
}

Measurement run_sgd(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  auto model = make_mlp(w.layers);
  model->to(device);
  std::vector<Tensor> parameters = model->parameters();
  for (auto& parameter : parameters) parameter.mutable_grad() = ember::randn_like(parameter);
  ember::optim::SGD optimizer(parameters, {.lr = 1e-3});
  return measure([&] { optimizer.step(); }, policy, timer);
}

// `ember train --model cnn`'s network (apps/cli/model.cpp), in PyTorch terms: Conv2d(C, C1, 3,
// padding=1), ReLU, MaxPool2d(2), Conv2d(C1, C2, 3, padding=1), ReLU, MaxPool2d(2), Flatten,
// then the Linear head of w.layers with ReLU between. dims: C, H, W, C1, C2.
std::shared_ptr<nn::Sequential> make_cnn(const Workload& w) {
  auto model = std::make_shared<nn::Sequential>();
  std::int64_t channels = w.dims[0];
  for (std::int64_t out : {w.dims[3], w.dims[4]}) {
    model->push_back(std::make_shared<nn::Conv2d>(channels, out, 3, nn::Conv2dOptions{.padding = 1}));
    model->push_back(std::make_shared<nn::ReLU>());
    model->push_back(std::make_shared<nn::MaxPool2d>(2));
    channels = out;
  }
  model->push_back(std::make_shared<nn::Flatten>());
  auto head = make_mlp(w.layers);
  for (std::size_t i = 0; i < head->size(); ++i) model->push_back((*head)[i]);
  return model;
}

// A fresh gradient each call, not an accumulation into the last call's.
void clear_grads(const std::vector<Tensor*>& tensors) {
  for (Tensor* tensor : tensors)
    if (tensor->defined()) tensor->mutable_grad() = Tensor();
}

// conv2d, max_pool2d, batch_norm: the forward alone (no autograd recording, as in inference),
// or forward + backward from a fixed output gradient (every input that has a gradient gets it).
Measurement run_conv_layer(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  const bool backward = w.op == "forward_backward";
  std::optional<ember::NoGradGuard> no_grad;
  if (!backward) no_grad.emplace();
  const auto& d = w.dims;
  if (w.group == "conv2d") {
    // d: N, Cin, H, W, Cout, kH, kW, stride, padding, dilation, groups
    Tensor input = uniform({d[0], d[1], d[2], d[3]}, device), weight = uniform({d[4], d[1] / d[10], d[5], d[6]}, device),
           bias = uniform({d[4]}, device);
    if (w.precision == "bf16")
      for (Tensor* t : {&input, &weight, &bias}) *t = t->to(ember::kBFloat16);
    auto forward = [&] { return F::conv2d(input, weight, bias, d[7], d[8], d[9], d[10]); };
    if (!backward) return measure([&] { (void)forward(); }, policy, timer);
    for (Tensor* t : {&input, &weight, &bias}) t->requires_grad_(true);
    Tensor grad_output = uniform(forward().sizes(), device).to(input.dtype());
    return measure(
        [&] {
          clear_grads({&input, &weight, &bias});
          forward().backward(grad_output);
        },
        policy, timer);
  }
  Tensor input = uniform({d[0], d[1], d[2], d[3]}, device);
  if (w.group == "max_pool2d") {
    auto forward = [&] { return F::max_pool2d(input, d[4], d[5]); };
    if (!backward) return measure([&] { (void)forward(); }, policy, timer);
    input.requires_grad_(true);
    Tensor grad_output = uniform(forward().sizes(), device);
    return measure(
        [&] {
          clear_grads({&input});
          forward().backward(grad_output);
        },
        policy, timer);
  }
  if (w.group == "batch_norm") {
    nn::BatchNorm2d norm(d[1]);
    norm.to(device);
    norm.train();
    if (!backward) return measure([&] { (void)norm(input); }, policy, timer);
    input.requires_grad_(true);
    Tensor grad_output = uniform(input.sizes(), device);
    return measure(
        [&] {
          clear_grads({&input});
          norm.zero_grad();
          norm(input).backward(grad_output);
        },
        policy, timer);
  }
  throw std::runtime_error("ember-bench: no ember runner for " + w.id);
}

// attention: F::scaled_dot_product_attention on [B, H, T, D] q, k, v, restricted to the fused
// kernel or to the composite (nn::SdpaKernelGuard); the forward alone (no recording), or
// forward + backward from a fixed output gradient into q, k and v.
Measurement run_attention(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  const bool backward = w.op == "forward_backward";
  const auto& d = w.dims;
  const bool causal = d[4] != 0;
  nn::SdpaKernelGuard only(d[5] != 0 ? nn::SDPBackend::FlashAttention : nn::SDPBackend::Math);
  Tensor q = uniform({d[0], d[1], d[2], d[3]}, device), k = uniform({d[0], d[1], d[2], d[3]}, device),
         v = uniform({d[0], d[1], d[2], d[3]}, device);
  auto forward = [&] { return F::scaled_dot_product_attention(q, k, v, {}, 0.0, causal); };
  if (!backward) {
    ember::NoGradGuard no_grad;
    return measure([&] { (void)forward(); }, policy, timer);
  }
  for (Tensor* t : {&q, &k, &v}) t->requires_grad_(true);
  Tensor grad_output = uniform(q.sizes(), device);
  return measure(
      [&] {
        clear_grads({&q, &k, &v});
        forward().backward(grad_output);
      },
      policy, timer);
}

// layer_norm: F::layer_norm over the last dim of [rows, C] with weight and bias; embedding:
// F::embedding of `tokens` random ids in a [V, C] table. The forward alone (no recording), or
// forward + backward from a fixed output gradient into the input (layer norm) and the
// parameters.
Measurement run_gpt_layer(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  const bool backward = w.op == "forward_backward";
  const auto& d = w.dims;
  std::vector<Tensor*> grads;
  Tensor input, weight, bias;
  std::function<Tensor()> forward;
  if (w.group == "layer_norm") {
    input = uniform({d[0], d[1]}, device);
    weight = uniform({d[1]}, device);
    bias = uniform({d[1]}, device);
    forward = [&] { return F::layer_norm(input, {d[1]}, weight, bias); };
    grads = {&input, &weight, &bias};
  } else {
    input = ember::randint(0, d[0], {d[2]}, ember::TensorOptions().dtype(ember::kInt64)).to(device);
    weight = uniform({d[0], d[1]}, device);
    forward = [&] { return F::embedding(input, weight); };
    grads = {&weight};
  }
  if (!backward) {
    ember::NoGradGuard no_grad;
    return measure([&] { (void)forward(); }, policy, timer);
  }
  for (Tensor* t : grads) t->requires_grad_(true);
  Tensor grad_output;
  {
    ember::NoGradGuard no_grad;
    grad_output = uniform(forward().sizes(), device);
  }
  return measure(
      [&] {
        clear_grads(grads);
        forward().backward(grad_output);
      },
      policy, timer);
}

// train_step/gpt: `ember train --model gpt`'s step (gpt_training.cpp) on a fixed batch of
// random ids: forward, the mean cross-entropy, backward, AdamW with nanoGPT's two groups.
Measurement run_gpt_training(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  ember::manual_seed(123);
  const auto& d = w.dims;
  nn::GPTConfig config{.vocab_size = d[0], .block_size = d[1], .n_layer = d[2], .n_head = d[3], .n_embd = d[4]};
  nn::GPT model(config);
  model.to(device);
  std::vector<Tensor> decay, no_decay;
  for (const auto& [name, parameter] : model.named_parameters())
    (parameter.dim() >= 2 ? decay : no_decay).push_back(parameter);
  ember::optim::AdamW optimizer({{.params = decay, .weight_decay = 0.1}, {.params = no_decay, .weight_decay = 0.0}},
                                {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.95});
  const auto ids = ember::TensorOptions().dtype(ember::kInt64);
  Tensor x = ember::randint(0, d[0], {w.batch, d[1]}, ids).to(device);
  Tensor y = ember::randint(0, d[0], {w.batch, d[1]}, ids).to(device);
  return measure(
      [&] {
        Tensor loss;
        {
          const ember::AutocastGuard autocast(device.type(), ember::kBFloat16, w.precision == "bf16");
          loss = nn::GPT::loss(model.forward(x), y);
        }
        loss.backward();
        optimizer.step();
        optimizer.zero_grad();
      },
      policy, timer);
}

Measurement run_training(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  if (w.model == "gpt") return run_gpt_training(w, device, policy, timer);
  ember::manual_seed(123);
  const bool cnn = w.model == "cnn";
  auto model = cnn ? make_cnn(w) : make_mlp(w.layers);
  model->to(device);
  ember::optim::SGD optimizer(model->parameters(), {.lr = 1e-3});
  const std::int64_t classes = w.layers.back();
  // One example: a C x H x W image for the CNN, a row of features for an MLP.
  const std::vector<std::int64_t> example =
      cnn ? std::vector<std::int64_t>{w.dims[0], w.dims[1], w.dims[2]} : std::vector<std::int64_t>{w.layers.front()};
  auto batch_of = [&](std::int64_t count) {
    std::vector<std::int64_t> sizes{count};
    sizes.insert(sizes.end(), example.begin(), example.end());
    return sizes;
  };
  auto step = [&](const Tensor& features, const Tensor& labels) {
    optimizer.zero_grad();
    Tensor loss;
    {
      const ember::AutocastGuard autocast(device.type(), ember::kBFloat16, w.precision == "bf16");
      loss = F::cross_entropy((*model)(features), labels);
    }
    loss.backward();
    optimizer.step();
  };
  const auto int64 = ember::TensorOptions().dtype(ember::kInt64);
  if (w.group == "train_step") {
    Tensor features = ember::randn(batch_of(w.batch)).to(device);
    Tensor labels = ember::randint(0, classes, {w.batch}, int64).to(device);
    return measure([&] { step(features, labels); }, policy, timer);
  }
  // One epoch: synthetic examples held on the CPU, batched by the DataLoader, moved per batch.
  auto dataset = std::make_shared<ember::data::TensorDataset>(ember::randn(batch_of(w.examples)),
                                                              ember::randint(0, classes, {w.examples}, int64));
  ember::data::DataLoader loader(dataset, {.batch_size = w.batch, .shuffle = true});
  return measure(
      [&] {
        for (auto& [features, labels] : loader) step(features.to(device), labels.to(device));
      },
      policy, timer);
}

Measurement run_dataloader(const Workload& w, const Policy& policy, Timer& timer) {
  auto dataset = std::make_shared<ember::data::TensorDataset>(
      ember::randn({w.examples, w.layers.front()}),
      ember::randint(0, w.layers.back(), {w.examples}, ember::TensorOptions().dtype(ember::kInt64)));
  ember::data::DataLoader loader(dataset, {.batch_size = w.batch, .shuffle = true, .num_workers = w.workers});
  std::int64_t seen = 0;
  Measurement result = measure(
      [&] {
        for (auto& [features, labels] : loader) seen += features.size(0);
      },
      policy, timer);
  if (seen % w.examples != 0) throw std::runtime_error("ember-bench: DataLoader pass lost examples");
  return result;
}

}  // namespace

Measurement run_ember(const Workload& workload, const ember::Device& device, const Policy& policy, Timer& timer) {
  if (workload.group == "cross_entropy") return run_cross_entropy(workload, device, policy, timer);
  if (workload.group == "sgd") return run_sgd(workload, device, policy, timer);
  if (workload.group == "train_step" || workload.group == "train_epoch")
    return run_training(workload, device, policy, timer);
  if (workload.group == "dataloader") return run_dataloader(workload, policy, timer);
  if (workload.group == "conv2d" || workload.group == "max_pool2d" || workload.group == "batch_norm")
    return run_conv_layer(workload, device, policy, timer);
  if (workload.group == "attention") return run_attention(workload, device, policy, timer);
  if (workload.group == "layer_norm" || workload.group == "embedding")
    return run_gpt_layer(workload, device, policy, timer);
  return run_op(workload, device, policy, timer);
}

}  // namespace ember_bench
