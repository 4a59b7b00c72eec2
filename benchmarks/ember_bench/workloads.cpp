// benchmarks/ember_bench/workloads.cpp — which shapes each figure uses, and the work per call.
//
// Work accounting (what the rates mean, docs/benchmarks.md repeats it):
//   GEMM M×K×N: 2·M·K·N floating-point operations.
//   Elementwise/copy/reductions: the minimum bytes moved (each input read once, each output
//   written once, 4-byte floats), so GB/s compares directly with a copy's bandwidth.
//   Training: examples per second; GFLOP/s counts 6 flops per weight per example (forward
//   2, backward 4), the usual estimate that ignores the cheap bias, ReLU and loss work.
#include "workloads.h"

#include <algorithm>
#include <string>

namespace ember_bench {
namespace {

constexpr double kFloat = 4.0;

std::string human_count(std::int64_t n) {
  if (n >= (1 << 20) && n % (1 << 20) == 0) return std::to_string(n >> 20) + "M";
  if (n >= (1 << 10) && n % (1 << 10) == 0) return std::to_string(n >> 10) + "K";
  return std::to_string(n);
}

Workload gemm(const std::string& family, std::int64_t m, std::int64_t k, std::int64_t n) {
  Workload w;
  const std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  w.id = "gemm/" + family + "/" + (family == "square" ? std::to_string(m) : shape);
  w.group = "gemm";
  w.op = "matmul";
  w.shape = shape;
  w.dims = {m, k, n};
  w.size = static_cast<double>(m);
  w.flops = 2.0 * m * k * n;
  w.bytes = kFloat * (m * k + k * n + m * n);
  w.footprint_bytes = w.bytes;
  w.unit = "GFLOP/s";
  return w;
}

Workload streaming(const std::string& group, const std::string& op, std::int64_t n, double tensors_moved,
                   double tensors_held) {
  Workload w;
  w.id = group + "/" + op + "/" + human_count(n);
  w.group = group;
  w.op = op;
  w.shape = human_count(n) + " floats";
  w.dims = {n};
  w.size = static_cast<double>(n);
  w.bytes = tensors_moved * kFloat * n;
  w.footprint_bytes = tensors_held * kFloat * n;
  w.unit = "GB/s";
  return w;
}

Workload rows(const std::string& group, const std::string& op, std::int64_t rows, std::int64_t cols,
              double tensors_moved) {
  Workload w;
  w.id = group + "/" + std::to_string(rows) + "x" + std::to_string(cols);
  w.group = group;
  w.op = op;
  w.shape = std::to_string(rows) + "x" + std::to_string(cols);
  w.dims = {rows, cols};
  w.size = static_cast<double>(rows * cols);
  w.bytes = tensors_moved * kFloat * rows * cols;
  w.footprint_bytes = 4 * kFloat * rows * cols;
  w.unit = "GB/s";
  return w;
}

Workload training(const std::string& group, const std::string& model, std::int64_t batch, std::int64_t examples) {
  Workload w;
  w.layers = model_layers(model);
  w.model = model;
  w.group = group;
  w.batch = batch;
  w.size = static_cast<double>(batch);
  w.unit = "examples/s";
  const double weights = model_macs_per_example(w.layers);
  if (group == "train_step") {
    w.id = "train_step/" + model + "/b" + std::to_string(batch);
    w.op = "step";
    w.shape = "batch " + std::to_string(batch);
    w.items = static_cast<double>(batch);
  } else {
    w.id = "train_epoch/" + model + "/b" + std::to_string(batch);
    w.op = "epoch";
    w.examples = examples;
    w.shape = std::to_string(examples) + " examples, batch " + std::to_string(batch);
    w.items = static_cast<double>(examples);
  }
  w.flops = 6.0 * weights * w.items;
  // Parameters, gradients and a few activations of the widest layer per example.
  std::int64_t widest = 0;
  for (auto width : w.layers) widest = std::max(widest, width);
  w.footprint_bytes = kFloat * (3 * model_parameters(w.layers) + 6.0 * batch * widest +
                                (w.examples ? w.examples * (w.layers.front() + 2.0) : 0.0));
  return w;
}

}  // namespace

std::vector<std::int64_t> model_layers(const std::string& model) {
  if (model == "toy") return {2, 30, 20, 2};          // tutorial §5/§7 NeuralNetwork(2, 2)
  if (model == "fmnist") return {784, 256, 128, 10};  // the Fashion-MNIST MLP of the ember CLI
  return {784, 4096, 4096, 10};                       // "wide": big enough to be GEMM-bound
}

double model_macs_per_example(const std::vector<std::int64_t>& layers) {
  double macs = 0;
  for (std::size_t i = 0; i + 1 < layers.size(); ++i) macs += static_cast<double>(layers[i]) * layers[i + 1];
  return macs;
}

double model_parameters(const std::vector<std::int64_t>& layers) {
  double count = 0;
  for (std::size_t i = 0; i + 1 < layers.size(); ++i) count += static_cast<double>(layers[i] + 1) * layers[i + 1];
  return count;
}

std::vector<Workload> build_workloads(bool quick) {
  std::vector<Workload> list;
  // GEMM: square sizes, then the products of one training step of the 784-256-128-10 MLP at
  // batch 128: forward X·W (B×in×out), input gradient dY·Wᵀ (B×out×in), weight gradient
  // Xᵀ·dY (in×B×out). Operands are contiguous (nn::Linear's transposed views are not the point).
  const std::vector<std::int64_t> squares = quick ? std::vector<std::int64_t>{128, 512}
                                                  : std::vector<std::int64_t>{128, 256, 512, 1024, 2048, 4096};
  for (auto n : squares) list.push_back(gemm("square", n, n, n));
  const std::vector<std::int64_t> mlp = model_layers("fmnist");
  const std::int64_t batch = 128;
  for (std::size_t i = 0; i + 1 < mlp.size(); ++i) {
    list.push_back(gemm("mlp_forward", batch, mlp[i], mlp[i + 1]));
    if (quick) continue;
    list.push_back(gemm("mlp_input_grad", batch, mlp[i + 1], mlp[i]));
    list.push_back(gemm("mlp_weight_grad", mlp[i], batch, mlp[i + 1]));
  }
  // Streaming ops: 1K … 256M elements (each size 16× the last, 256M last). Capped per device
  // by available memory when run.
  const std::vector<std::int64_t> lengths =
      quick ? std::vector<std::int64_t>{1 << 10, 1 << 20}
            : std::vector<std::int64_t>{1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26, 1 << 28};
  for (auto n : lengths) list.push_back(streaming("elementwise", "add", n, 3, 3));
  for (auto n : lengths) list.push_back(streaming("elementwise", "mul", n, 3, 3));
  for (auto n : lengths) list.push_back(streaming("elementwise", "relu", n, 2, 2));
  for (auto n : lengths) list.push_back(streaming("reduction", "sum", n, 1, 1));
  // Copy: ember's clone against memcpy (host) / cudaMemcpy device-to-device: the ceilings.
  for (auto n : lengths) list.push_back(streaming("copy", "clone", n, 2, 2));
  // Host<->device over PCIe/NVLink (GPU only): ember's .to() against pinned cudaMemcpy.
  const std::vector<std::int64_t> transfers =
      quick ? std::vector<std::int64_t>{1 << 20} : std::vector<std::int64_t>{1 << 20, 1 << 24, 1 << 26};
  for (auto n : transfers) {
    Workload up = streaming("h2d", "to_device", n, 1, 2);
    Workload down = streaming("d2h", "to_host", n, 1, 2);
    up.cuda_only = down.cuda_only = true;
    list.push_back(up);
    list.push_back(down);
  }
  // Softmax over rows of 1024 (read + write), cross-entropy forward + backward over C classes
  // (forward reads the logits, backward reads them again and writes their gradient).
  const std::vector<std::int64_t> softmax_rows =
      quick ? std::vector<std::int64_t>{64} : std::vector<std::int64_t>{64, 4096, 65536};
  for (auto r : softmax_rows) list.push_back(rows("softmax", "softmax", r, 1024, 2));
  list.push_back(rows("cross_entropy", "cross_entropy", 128, 10, 3));
  if (!quick) {
    list.push_back(rows("cross_entropy", "cross_entropy", 4096, 10, 3));
    list.push_back(rows("cross_entropy", "cross_entropy", 4096, 1000, 3));
  }
  // One SGD step (p -= lr·g: read p and g, write p) over each model's parameters.
  for (const std::string model : {"toy", "fmnist", "wide"}) {
    if (quick && model == "wide") continue;
    Workload w;
    w.layers = model_layers(model);
    w.model = model;
    const double parameters = model_parameters(w.layers);
    w.id = "sgd/" + model;
    w.group = "sgd";
    w.op = "sgd";
    w.shape = std::to_string(static_cast<long long>(parameters)) + " parameters";
    w.size = parameters;
    w.bytes = 3 * kFloat * parameters;
    w.footprint_bytes = 2 * kFloat * parameters;
    w.unit = "GB/s";
    list.push_back(w);
  }
  // End to end: one training step (batch already on the device) and one epoch through the
  // DataLoader (shuffle, collate, .to(device) per batch) on synthetic data of the right
  // shape. An epoch is 60000 examples (Fashion-MNIST's training set); for the wide MLP it is
  // 4096 examples so that the CPU run stays within minutes.
  const std::vector<std::int64_t> batches = quick ? std::vector<std::int64_t>{32, 256}
                                                  : std::vector<std::int64_t>{32, 64, 128, 256, 512, 1024, 2048, 4096};
  for (const std::string model : {"toy", "fmnist", "wide"}) {
    if (quick && model == "wide") continue;
    for (auto b : batches) list.push_back(training("train_step", model, b, 0));
  }
  for (const std::string model : {"toy", "fmnist", "wide"}) {
    if (quick && model == "wide") continue;
    const std::int64_t examples = quick ? 1024 : (model == "wide" ? 4096 : 60000);
    for (auto b : batches) list.push_back(training("train_epoch", model, b, examples));
  }
  // DataLoader throughput: one pass over a Fashion-MNIST-shaped dataset (784 floats + an
  // int64 label per example), batch 128, shuffled, with 0…4 workers. Host work only.
  for (std::int64_t workers = 0; workers <= 4; ++workers) {
    if (quick && workers > 2) continue;
    Workload w;
    w.examples = quick ? 2048 : 60000;
    w.batch = 128;
    w.workers = workers;
    w.layers = model_layers("fmnist");
    w.id = "dataloader/workers" + std::to_string(workers);
    w.group = "dataloader";
    w.op = "load";
    w.shape = std::to_string(w.examples) + " examples, batch 128, " + std::to_string(workers) + " workers";
    w.size = static_cast<double>(workers);
    w.items = static_cast<double>(w.examples);
    w.bytes = w.examples * (784 * kFloat + 8.0);
    w.footprint_bytes = 2 * w.bytes;
    w.unit = "examples/s";
    w.cpu_only = true;
    list.push_back(w);
  }
  return list;
}

}  // namespace ember_bench
