// benchmarks/ember_bench/workloads.cpp — which shapes each figure uses, and the work per call.
//
// Work accounting (what the rates mean, docs/benchmarks.md repeats it):
//   GEMM M×K×N: 2·M·K·N floating-point operations.
//   Elementwise/copy/reductions: the minimum bytes moved (each input read once, each output
//   written once, 4-byte floats), so GB/s compares directly with a copy's bandwidth.
//   Training: examples per second; GFLOP/s counts 6 flops per weight per example (forward
//   2, backward 4), the usual estimate that ignores the cheap bias, ReLU and loss work.
//   Bytes (for the roofline only): a step's minimum traffic by the model of set_training_bytes.
//   For the CNN, 6 flops per multiply-add of one example's forward pass (a convolution's
//   weight is used Hout·Wout times per example).
//   Convolution: 2·N·Cout·Hout·Wout·(Cin/groups)·kH·kW flops forward (the multiply-adds of the
//   equivalent GEMM); forward + backward is 3× that (input and weight gradients each cost a
//   forward's GEMM; the bias gradient's sum is ignored).
//   Pooling and batch norm: the minimum bytes, as the streaming ops, with the backward reading
//   what the forward read again (pooling: input and output gradient read, input gradient
//   written; batch norm: input and output gradient read, input gradient written).
#include "workloads.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace ember_bench {
namespace {

constexpr double kFloat = 4.0;

std::string human_count(std::int64_t n) {
  if (n >= (1 << 20) && n % (1 << 20) == 0) return std::to_string(n >> 20) + "M";
  if (n >= (1 << 10) && n % (1 << 10) == 0) return std::to_string(n >> 10) + "K";
  return std::to_string(n);
}

// group "gemm" multiplies float32 matrices, "gemm_bf16" bfloat16 ones (2 bytes an element).
Workload gemm(const std::string& family, std::int64_t m, std::int64_t k, std::int64_t n,
              const std::string& group = "gemm") {
  Workload w;
  const std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  w.id = group + "/" + family + "/" + (family == "square" ? std::to_string(m) : shape);
  w.group = group;
  w.op = "matmul";
  w.shape = shape;
  w.dims = {m, k, n};
  w.size = static_cast<double>(m);
  w.flops = 2.0 * m * k * n;
  w.bytes = (group == "gemm_bf16" ? 2.0 : kFloat) * (m * k + k * n + m * n);
  w.footprint_bytes = w.bytes;
  w.unit = "GFLOP/s";
  if (group == "gemm_bf16") w.precision = "bf16";  // its roof is the bfloat16 peak (plot.py)
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

// The minimum bytes a training step moves, a model rather than a measurement (it places the
// training figures on the roofline): the parameters read by the forward and again by the
// backward, their gradients written, and the optimizer's pass over them (SGD reads parameters
// and gradients and writes parameters: 5 passes in all; AdamW also reads and writes its two
// moments: 9); each layer's output written, read by the next layer and again by the backward,
// its gradient written and read (5 passes); the input read by the forward and by the first
// weight gradient. Parameters are float32; activations take `activation_size` bytes (2 under
// bfloat16 autocast). An epoch is its steps' sum.
double step_bytes(double parameters, double optimizer_passes, double activations_per_example,
                  double inputs_per_example, std::int64_t batch, double activation_size) {
  return kFloat * optimizer_passes * parameters +
         activation_size * static_cast<double>(batch) * (5.0 * activations_per_example + 2.0 * inputs_per_example);
}

// Sets w.bytes for a training figure of `ember train`'s models (w.model: toy, fmnist, wide,
// cnn, gpt). Activations per example: the MLP's hidden and output widths; the CNN's two
// convolution and two pooling outputs and its head; the GPT's tokens times (16 C per block, its
// embedding and logits).
void set_training_bytes(Workload& w, double activation_size);

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
  set_training_bytes(w, kFloat);
  return w;
}

std::string pass_suffix(bool backward) { return backward ? "fwd_bwd" : "fwd"; }

// dims: N, Cin, H, W, Cout, kH, kW, stride, padding, dilation, groups (conv_gemm_plan reads them).
Workload conv2d(const std::string& name, std::int64_t n, std::int64_t c_in, std::int64_t h, std::int64_t width,
                std::int64_t c_out, std::int64_t k, std::int64_t padding, bool backward) {
  Workload w;
  w.id = "conv2d/" + name + "/b" + std::to_string(n) + "/" + pass_suffix(backward);
  w.group = "conv2d";
  w.op = backward ? "forward_backward" : "forward";
  const std::int64_t stride = 1, dilation = 1, groups = 1;
  w.dims = {n, c_in, h, width, c_out, k, k, stride, padding, dilation, groups};
  const std::int64_t h_out = conv_output_size(h, k, stride, padding, dilation),
                     w_out = conv_output_size(width, k, stride, padding, dilation);
  w.shape = std::to_string(n) + "x" + std::to_string(c_in) + "x" + std::to_string(h) + "x" + std::to_string(width) +
            " -> " + std::to_string(c_out) + "x" + std::to_string(h_out) + "x" + std::to_string(w_out) + ", " +
            std::to_string(k) + "x" + std::to_string(k) + (padding ? " pad " + std::to_string(padding) : "");
  w.batch = n;
  w.size = 2.0 * n * c_out * h_out * w_out * (c_in / groups) * k * k;  // forward flops: the x axis
  w.flops = (backward ? 3.0 : 1.0) * w.size;
  const double input = static_cast<double>(n) * c_in * h * width, output = static_cast<double>(n) * c_out * h_out * w_out,
               weight = static_cast<double>(c_out) * (c_in / groups) * k * k;
  w.bytes = kFloat * (input + weight + output);
  // Input, output, their gradients, and the im2col buffer of a GEMM-based implementation.
  w.footprint_bytes = kFloat * (2 * input + 2 * output + 2 * weight + input * k * k);
  w.unit = "GFLOP/s";
  return w;
}

// dims: N, C, H, W, kernel, stride.
Workload max_pool(const std::string& name, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t width,
                  bool backward) {
  Workload w;
  const std::int64_t kernel = 2, stride = 2, h_out = h / stride, w_out = width / stride;
  w.id = "max_pool2d/" + name + "/b" + std::to_string(n) + "/" + pass_suffix(backward);
  w.group = "max_pool2d";
  w.op = backward ? "forward_backward" : "forward";
  w.dims = {n, c, h, width, kernel, stride};
  w.shape = std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(width) +
            ", 2x2 stride 2";
  w.batch = n;
  const double input = static_cast<double>(n) * c * h * width, output = static_cast<double>(n) * c * h_out * w_out;
  w.size = input;
  w.bytes = kFloat * (backward ? 3 * input + 2 * output : input + output);
  w.footprint_bytes = kFloat * (2 * input + 2 * output) + 8.0 * output;  // with int64 argmax indices
  w.unit = "GB/s";
  return w;
}

// dims: N, C, H, W.
Workload batch_norm(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t width, bool backward) {
  Workload w;
  w.shape = std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(width);
  w.id = "batch_norm/" + w.shape + "/" + pass_suffix(backward);
  w.shape += ", train mode";
  w.group = "batch_norm";
  w.op = backward ? "forward_backward" : "forward";
  w.dims = {n, c, h, width};
  w.batch = n;
  const double elements = static_cast<double>(n) * c * h * width;
  w.size = elements;
  w.bytes = kFloat * elements * (backward ? 5 : 2);
  w.footprint_bytes = 5 * kFloat * elements;
  w.unit = "GB/s";
  return w;
}

// Scaled dot-product attention (issue 21): B x H heads of T queries and T keys, head dim D,
// causal. dims: B, H, T, D, causal (1), fused (1: ember's fused kernel, 0: the composite; the
// PyTorch peer runs its default CPU kernel, flash, for the first and its math path for the
// second). Work: the two products of the forward, 2·2·T²·D flops per head, halved by the
// causal mask; the backward's five products count 2.5 forwards (FlashAttention's convention),
// so forward + backward is 3.5 forwards.
Workload attention(std::int64_t batch, std::int64_t heads, std::int64_t time, std::int64_t head_dim, bool fused,
                   bool backward) {
  Workload w;
  const std::string path = fused ? "fused" : "composite";
  w.id = "attention/T" + std::to_string(time) + "/" + path + "/" + pass_suffix(backward);
  w.group = "attention";
  w.op = backward ? "forward_backward" : "forward";
  w.dims = {batch, heads, time, head_dim, 1, fused ? 1 : 0};
  w.shape = std::to_string(batch) + "x" + std::to_string(heads) + "x" + std::to_string(time) + "x" +
            std::to_string(head_dim) + ", causal, " + path;
  w.batch = batch;
  w.size = static_cast<double>(time);
  const double forward = 2.0 * batch * heads * static_cast<double>(time) * time * head_dim;
  w.flops = (backward ? 3.5 : 1.0) * forward;
  const double qkv = static_cast<double>(batch) * heads * time * head_dim;
  w.bytes = kFloat * qkv * (backward ? 8 : 4);  // q, k, v, out (+ their gradients and dO)
  // q, k, v, out and their gradients; the composite holds a few [T, T] matrices per head too.
  const double scores = static_cast<double>(batch) * heads * time * time;
  w.footprint_bytes = kFloat * (8 * qkv + (fused ? 0.0 : (backward ? 5.0 : 2.0) * scores));
  w.unit = "GFLOP/s";
  return w;
}

// Layer norm (issue 21) over the last dim of [rows, C], with weight and bias: the GPT's
// ln_1/ln_2/ln_f at batch x context rows. dims: rows, C. Traffic: x in, y out (forward);
// x, dy in, dx out, and the parameters' gradients (backward, so about 5 passes in all).
Workload layer_norm(std::int64_t rows, std::int64_t width, bool backward) {
  Workload w;
  w.shape = std::to_string(rows) + "x" + std::to_string(width);
  w.id = "layer_norm/" + w.shape + "/" + pass_suffix(backward);
  w.group = "layer_norm";
  w.op = backward ? "forward_backward" : "forward";
  w.dims = {rows, width};
  w.batch = rows;
  const double elements = static_cast<double>(rows) * width;
  w.size = elements;
  w.bytes = kFloat * elements * (backward ? 5 : 2);
  w.footprint_bytes = 5 * kFloat * elements;
  w.unit = "GB/s";
  return w;
}

// Embedding (issue 21): `tokens` ids looked up in a [V, C] table (forward), and the backward's
// index-add of their gradients into the table's gradient. dims: V, C, tokens. Traffic: the
// rows read and written (forward); the gradient rows read and added, plus zeroing the [V, C]
// gradient (backward).
Workload embedding(std::int64_t vocabulary, std::int64_t width, std::int64_t tokens, bool backward) {
  Workload w;
  w.shape = std::to_string(vocabulary) + "x" + std::to_string(width) + ", " + std::to_string(tokens) + " tokens";
  w.id = "embedding/" + std::to_string(vocabulary) + "x" + std::to_string(width) + "/t" + std::to_string(tokens) +
         "/" + pass_suffix(backward);
  w.group = "embedding";
  w.op = backward ? "forward_backward" : "forward";
  w.dims = {vocabulary, width, tokens};
  w.batch = tokens;
  const double gathered = static_cast<double>(tokens) * width, table = static_cast<double>(vocabulary) * width;
  w.size = gathered;
  w.bytes = kFloat * (backward ? 4 * gathered + 2 * table : 2 * gathered);
  w.footprint_bytes = kFloat * (2 * table + 3 * gathered);
  w.unit = "GB/s";
  return w;
}

// `ember train --model gpt`'s default GPT (2 layers, 4 heads, width 128, context 64, a
// 65-character vocabulary) and its step: forward, cross-entropy, backward, AdamW with
// nanoGPT's two groups. dims: V, T, L, heads, C. Rate: training tokens (batch x T) per second.
// Work: 6 flops per parameter per token (the Linear layers and lm_head, forward and
// backward) plus the attention's products (3.5 causal forwards, as the attention figures).
Workload gpt_training(std::int64_t batch) {
  Workload w;
  const std::int64_t vocabulary = 65, time = 64, layers = 2, heads = 4, width = 128;
  w.model = "gpt";
  w.group = "train_step";
  w.op = "step";
  w.batch = batch;
  w.dims = {vocabulary, time, layers, heads, width};
  w.id = "train_step/gpt/b" + std::to_string(batch);
  w.shape = "batch " + std::to_string(batch) + " x " + std::to_string(time) + " tokens, 2 layers, width 128";
  w.items = static_cast<double>(batch * time);
  w.size = static_cast<double>(batch);
  w.unit = "tokens/s";
  const double c = static_cast<double>(width);
  const double matrix_parameters = layers * 12.0 * c * c + vocabulary * c;  // blocks' Linears + lm_head
  const double attention = 3.5 * 2.0 * batch * layers * static_cast<double>(time) * time * c;
  w.flops = 6.0 * matrix_parameters * w.items + attention;
  // Parameters, gradients and AdamW's two moments; a block's activations (a few [B, T, 4C]).
  w.footprint_bytes = kFloat * (4 * (matrix_parameters + time * c) + 16.0 * batch * time * 4 * c * layers);
  set_training_bytes(w, kFloat);
  return w;
}

// `ember train --model cnn`'s network on 1x28x28 images (its defaults: channels 32,64,
// hidden 128, 10 classes). dims: C, H, W, C1, C2; layers: the Linear head (flattened
// features, hidden, classes).
Workload cnn_training(const std::string& group, std::int64_t batch, std::int64_t examples) {
  Workload w;
  w.model = "cnn";
  w.group = group;
  w.batch = batch;
  w.dims = {1, 28, 28, 32, 64};
  w.layers = {64 * 7 * 7, 128, 10};
  w.size = static_cast<double>(batch);
  w.unit = "examples/s";
  const bool step = group == "train_step";
  w.id = group + "/cnn/b" + std::to_string(batch);
  w.op = step ? "step" : "epoch";
  w.examples = step ? 0 : examples;
  w.shape = step ? "batch " + std::to_string(batch)
                 : std::to_string(examples) + " examples, batch " + std::to_string(batch);
  w.items = static_cast<double>(step ? batch : examples);
  w.flops = 6.0 * cnn_macs_per_example(w) * w.items;
  // Parameters (x3: value, gradient, slack), the activations of a batch (the widest: conv1's
  // 32x28x28 output, a few copies) and the dataset of an epoch.
  const double image = 28.0 * 28.0;
  w.footprint_bytes = kFloat * (3 * cnn_parameters(w) + 8.0 * batch * 32 * image + 9.0 * batch * image +
                                (w.examples ? w.examples * (image + 2.0) : 0.0));
  set_training_bytes(w, kFloat);
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

std::int64_t conv_output_size(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                              std::int64_t dilation) {
  return (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
}

double cnn_macs_per_example(const Workload& w) {
  const std::int64_t channels = w.dims[0], c1 = w.dims[3], c2 = w.dims[4];
  const double h = static_cast<double>(w.dims[1]), width = static_cast<double>(w.dims[2]);
  // 3x3 convolutions with padding 1 keep the size; each 2x2 pool halves it.
  const double conv1 = h * width * c1 * channels * 9, conv2 = (h / 2) * (width / 2) * c2 * c1 * 9;
  return conv1 + conv2 + model_macs_per_example(w.layers);
}

double cnn_parameters(const Workload& w) {
  const std::int64_t channels = w.dims[0], c1 = w.dims[3], c2 = w.dims[4];
  return static_cast<double>(c1 * (channels * 9 + 1) + c2 * (c1 * 9 + 1)) + model_parameters(w.layers);
}

namespace {

void set_training_bytes(Workload& w, double activation_size) {
  double parameters = 0, optimizer_passes = 5, activations = 0, inputs = 0;
  if (w.model == "cnn") {
    const double channels = static_cast<double>(w.dims[0]), h = static_cast<double>(w.dims[1]),
                 width = static_cast<double>(w.dims[2]), c1 = static_cast<double>(w.dims[3]),
                 c2 = static_cast<double>(w.dims[4]);
    parameters = cnn_parameters(w);
    const double plane = h * width;  // conv1 out, pool1 out, conv2 out, pool2 out, the head
    activations = c1 * plane + c1 * plane / 4 + c2 * plane / 4 + c2 * plane / 16 +
                  static_cast<double>(w.layers[1] + w.layers[2]);
    inputs = channels * plane;
  } else if (w.model == "gpt") {
    const double vocabulary = static_cast<double>(w.dims[0]), time = static_cast<double>(w.dims[1]),
                 layers = static_cast<double>(w.dims[2]), c = static_cast<double>(w.dims[4]);
    parameters = layers * 12.0 * c * c + vocabulary * c + time * c;
    optimizer_passes = 9;  // AdamW
    activations = time * (16.0 * c * layers + c + vocabulary);  // per sequence
  } else {
    parameters = model_parameters(w.layers);
    for (std::size_t i = 1; i < w.layers.size(); ++i) activations += static_cast<double>(w.layers[i]);
    inputs = static_cast<double>(w.layers.front());
  }
  const double step = step_bytes(parameters, optimizer_passes, activations, inputs, w.batch, activation_size);
  const double steps = w.examples > 0 ? std::ceil(static_cast<double>(w.examples) / static_cast<double>(w.batch)) : 1.0;
  w.bytes = step * steps;
}

}  // namespace

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
  // The same in bfloat16 (issue 22): squares and the MLP's forward products. The CPU reads the
  // 16-bit operands directly where it has AVX512-BF16 (core/cpu/gemm_kernel_bf16_avx512.cpp).
  const std::vector<std::int64_t> bf16_squares =
      quick ? std::vector<std::int64_t>{128, 512} : std::vector<std::int64_t>{256, 512, 1024, 2048};
  for (auto n : bf16_squares) list.push_back(gemm("square", n, n, n, "gemm_bf16"));
  for (std::size_t i = 0; i + 1 < mlp.size() && !quick; ++i)
    list.push_back(gemm("mlp_forward", batch, mlp[i], mlp[i + 1], "gemm_bf16"));
  // And the Linear products of one forward of `ember train --model gpt`'s GPT at batch 32
  // (2048 tokens, width 128, 65 characters): attention's q/k/v, the MLP's two, lm_head
  // (the projection after attention is 2048 x 128 x 128, the MLP's second's shape transposed).
  if (!quick) {
    const std::int64_t tokens = 32 * 64, width = 128, vocabulary = 65;
    list.push_back(gemm("gpt_qkv", tokens, width, 3 * width, "gemm_bf16"));
    list.push_back(gemm("gpt_mlp_up", tokens, width, 4 * width, "gemm_bf16"));
    list.push_back(gemm("gpt_mlp_down", tokens, 4 * width, width, "gemm_bf16"));
    list.push_back(gemm("gpt_lm_head", tokens, width, vocabulary, "gemm_bf16"));
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
  // The same at 4M elements in bfloat16 (issue 22; 2 bytes an element): each op widens to
  // float, computes and rounds once; the id gains "/bf16".
  if (!quick) {
    for (const char* op : {"add", "mul", "relu", "sum"}) {
      const bool reduction = std::string(op) == "sum";
      const double moved = std::string(op) == "relu" ? 2 : reduction ? 1 : 3;
      Workload w = streaming(reduction ? "reduction" : "elementwise", op, std::int64_t{1} << 22, moved, moved);
      w.precision = "bf16";
      w.id += "/bf16";
      w.shape = "4M bfloat16";
      w.bytes /= 2;
      w.footprint_bytes /= 2;
      list.push_back(w);
    }
  }
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
  // Convolutional networks (issue 19): `ember train --model cnn`'s two convolutions at batch
  // 32 and 128, a ResNet-style 3x3 64->64 on 56x56 and a 1x1 256->64 on 56x56 (batch 8, so
  // that a CPU run stays short), forward alone and forward + backward (input, weight and bias
  // gradients); the CNN's two 2x2 max pools; BatchNorm2d in train mode. (The whole CNN's
  // training step and epoch are with the MLPs' below.)
  const std::vector<std::int64_t> cnn_batches = quick ? std::vector<std::int64_t>{32} : std::vector<std::int64_t>{32, 128};
  for (auto b : cnn_batches)
    for (bool backward : {false, true}) list.push_back(conv2d("cnn_conv1", b, 1, 28, 28, 32, 3, 1, backward));
  for (auto b : cnn_batches)
    for (bool backward : {false, true}) list.push_back(conv2d("cnn_conv2", b, 32, 14, 14, 64, 3, 1, backward));
  // The CNN's convolutions in bfloat16 (issue 22): every tensor bfloat16, as under autocast;
  // the figure id gains "/bf16".
  if (!quick) {
    for (const char* layer : {"cnn_conv1", "cnn_conv2"})
      for (bool backward : {false, true}) {
        const bool first = std::string(layer) == "cnn_conv1";
        Workload w = conv2d(layer, 128, first ? 1 : 32, first ? 28 : 14, first ? 28 : 14, first ? 32 : 64, 3, 1,
                            backward);
        w.precision = "bf16";
        w.id += "/bf16";
        w.shape += ", bf16";
        w.bytes /= 2;
        w.footprint_bytes /= 2;
        list.push_back(w);
      }
  }
  for (bool backward : {false, true}) list.push_back(conv2d("resnet_3x3", 8, 64, 56, 56, 64, 3, 1, backward));
  for (bool backward : {false, true}) list.push_back(conv2d("pointwise_1x1", 8, 256, 56, 56, 64, 1, 0, backward));
  for (auto b : cnn_batches)
    for (bool backward : {false, true}) list.push_back(max_pool("cnn_pool1", b, 32, 28, 28, backward));
  for (auto b : cnn_batches)
    for (bool backward : {false, true}) list.push_back(max_pool("cnn_pool2", b, 64, 14, 14, backward));
  std::vector<std::vector<std::int64_t>> norm_shapes = {{32, 64, 14, 14}};
  if (!quick) norm_shapes.insert(norm_shapes.end(), {{128, 64, 14, 14}, {8, 64, 56, 56}});
  for (const auto& s : norm_shapes)
    for (bool backward : {false, true}) list.push_back(batch_norm(s[0], s[1], s[2], s[3], backward));
  // Attention (issue 21): 1 x 8 heads of head dim 64, causal, T = 128 ... 4096, the fused
  // kernel and the composite, forward and forward + backward. Long sequences take seconds a call
  // on a CPU: the policy then keeps few samples.
  const std::vector<std::int64_t> times = quick ? std::vector<std::int64_t>{128, 512}
                                                : std::vector<std::int64_t>{128, 256, 512, 1024, 2048, 4096};
  for (auto t : times)
    for (bool fused : {true, false})
      for (bool backward : {false, true}) list.push_back(attention(1, 8, t, 64, fused, backward));
  // The GPT's other layers (issue 21): layer norm over its width at batch x context rows, and
  // the token embedding; the larger shapes are GPT-2 small's (width 768, vocabulary 50257).
  for (bool backward : {false, true}) {
    list.push_back(layer_norm(2048, 128, backward));
    list.push_back(embedding(65, 128, 2048, backward));
    if (quick) continue;
    list.push_back(layer_norm(8192, 768, backward));
    list.push_back(embedding(50257, 768, 8192, backward));
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
  // `ember train --model cnn`'s network at the batch sizes of issue 19 (an epoch: 60000
  // Fashion-MNIST-shaped 1x28x28 examples; 1024 in --quick).
  for (auto b : cnn_batches) list.push_back(cnn_training("train_step", b, 0));
  list.push_back(gpt_training(32));  // `ember train --model gpt`'s default step
  // The same steps in mixed precision (issue 22): forward and loss under bfloat16 autocast,
  // as `ember train --precision bf16` and PyTorch's torch.autocast("cpu") run them. The
  // figure id gains "/bf16"; the ceilings (float32 GEMMs) are not drawn for them.
  if (!quick) {
    std::vector<Workload> mixed = {training("train_step", "fmnist", 128, 0), cnn_training("train_step", 128, 0),
                                   gpt_training(32)};
    for (Workload& w : mixed) {
      w.precision = "bf16";
      set_training_bytes(w, 2.0);  // bfloat16 activations
      w.id += "/bf16";
      w.shape += ", bf16 autocast";
      list.push_back(w);
    }
  }
  for (const std::string model : {"toy", "fmnist", "wide"}) {
    if (quick && model == "wide") continue;
    const std::int64_t examples = quick ? 1024 : (model == "wide" ? 4096 : 60000);
    for (auto b : batches) list.push_back(training("train_epoch", model, b, examples));
  }
  for (auto b : cnn_batches) list.push_back(cnn_training("train_epoch", b, quick ? 1024 : 60000));
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
