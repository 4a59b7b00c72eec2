// benchmarks/ember_bench/ember_runner.cpp — ember's side of every figure (tutorial §2–§9:
// tensors, autograd, nn.Sequential MLPs, SGD, DataLoader, .to(device)).
#include "ember_runner.h"

#include <memory>
#include <stdexcept>

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
  const std::int64_t n = w.dims.at(0);
  if (w.group == "elementwise" || w.group == "reduction" || w.group == "copy") {
    Tensor x = uniform({n}, device);
    if (w.op == "add" || w.op == "mul") {
      Tensor y = uniform({n}, device);
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

Measurement run_training(const Workload& w, const ember::Device& device, const Policy& policy, Timer& timer) {
  ember::manual_seed(123);
  auto model = make_mlp(w.layers);
  model->to(device);
  ember::optim::SGD optimizer(model->parameters(), {.lr = 1e-3});
  const std::int64_t inputs = w.layers.front(), classes = w.layers.back();
  auto step = [&](const Tensor& features, const Tensor& labels) {
    optimizer.zero_grad();
    Tensor loss = F::cross_entropy((*model)(features), labels);
    loss.backward();
    optimizer.step();
  };
  const auto int64 = ember::TensorOptions().dtype(ember::kInt64);
  if (w.group == "train_step") {
    Tensor features = ember::randn({w.batch, inputs}).to(device);
    Tensor labels = ember::randint(0, classes, {w.batch}, int64).to(device);
    return measure([&] { step(features, labels); }, policy, timer);
  }
  // One epoch: synthetic examples held on the CPU, batched by the DataLoader, moved per batch.
  auto dataset = std::make_shared<ember::data::TensorDataset>(ember::randn({w.examples, inputs}),
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
  return run_op(workload, device, policy, timer);
}

}  // namespace ember_bench
