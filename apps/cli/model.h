// apps/cli/model.h — the models `ember train` builds: an MLP (--hidden, --dropout), a CNN
// (--model cnn: --channels, --hidden) or any list of layers (--model spec:FILE, model_spec.h).
//
// mlp: tutorial §5's NeuralNetwork generalised: Linear(in, h1), ReLU, [Dropout], ...,
//      Linear(hk, out).
// cnn: the network of PyTorch's and ggml's MNIST examples (docs/tutorial.md, chapter 10): per
//      --channels width c, Conv2d(prev, c, 3, padding=1), ReLU, MaxPool2d(2); then Flatten and
//      the MLP head Linear(c_last * (H/2^k) * (W/2^k), h1), ReLU, ..., Linear(hk, out). Examples
//      are stored flat ([N, C*H*W]); the model views them as [N, C, H, W] (input_shape).
// Both are a plain nn::Sequential, so their state_dict keys are PyTorch's for the same
// torch.nn.Sequential ("0.weight", "0.bias", "3.weight", ...) and the reference program
// tests/reference/cli_reference.py can be compared parameter by parameter. The layers are
// constructed in order, so after manual_seed(seed) they consume the generator exactly as
// PyTorch's constructors do (weight then bias of each Linear and Conv2d).
// mlp and cnn are presets of --model spec: build_model writes them as a layer list and builds
// that with model_spec.h's builder, the one a spec file goes through.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ember/nn/sequential.h>

namespace ember::cli {

struct ModelConfig {
  std::int64_t in_features = 0;
  std::vector<std::int64_t> hidden;
  std::int64_t num_classes = 0;
  double dropout = 0.0;
  std::string kind = "mlp";                // "mlp", "cnn" or "spec"
  std::vector<std::int64_t> channels;      // cnn: one Conv2d/ReLU/MaxPool2d stage per width
  // cnn, and a spec that takes images: {C, H, W}, C * H * W == in_features
  std::vector<std::int64_t> input_shape;
  std::string spec;  // spec: the resolved layer list (JSON, model_spec.h)
};

// The layer list of an mlp or cnn config (JSON, in --model spec's schema).
std::string preset_spec(const ModelConfig& config);

// An nn::Sequential that views flat examples [N, C*H*W] as images [N, C, H, W] first.
std::shared_ptr<nn::Sequential> make_image_sequential(Shape image_shape);

// The model `config` describes, its layers constructed in order (see above).
std::shared_ptr<nn::Sequential> build_model(const ModelConfig& config);

// The parameters `config`'s model has, in state_dict order: names ("0.weight") and shapes.
// Sizes are not checked: call it on a config that passed check_config_fits_state or came
// from validated flags.
std::vector<std::pair<std::string, Shape>> expected_parameters(const ModelConfig& config);

// ValueError naming every problem with a config built from the command line and the data
// (the checks of check_config_fits_state that need no tensors).
void check_model_config(const ModelConfig& config);

// ValueError when the model's float32 parameters alone would exceed this machine's
// physical memory (counted with overflow checks): --hidden 2147483647,2147483647 is an
// error before anything is allocated, not an out-of-memory kill.
void check_model_fits_memory(const ModelConfig& config);
// "784-256-128-10 MLP" or "1x28x28-conv32-conv64-128-10 CNN" for the summary lines.
std::string describe_model(const ModelConfig& config);

// The widest layer the CLI builds: --hidden above it is a usage error, a checkpoint
// config above it a damaged checkpoint (2^31 - 1: a Linear of that width is already far
// beyond any memory, and every product of two widths still fits an int64).
constexpr std::int64_t kMaxLayerWidth = 2147483647;

// Checks a model config read from a checkpoint against the checkpoint's model tensors
// BEFORE any model is built from it, so that a damaged or hostile config (a width of 2^62,
// a negative class count) is an error, never an allocation: every width in
// [1, kMaxLayerWidth], dropout in [0, 1] (0 for a CNN), a CNN's input shape C x H x W equal
// to in_features with H and W at least 2^stages, and each layer's weight and bias present as
// float32 with exactly those sizes, no other model tensor. IOError naming `path` and
// listing every problem.
void check_config_fits_state(const ModelConfig& config, const nn::StateDict& checkpoint_state,
                             const std::string& path);

// Raises ValueError listing every missing key, unexpected key and shape mismatch when a
// checkpoint's model tensors do not fit `model` (more useful than stopping at the first).
void check_state_fits(const nn::StateDict& checkpoint_state, const nn::Module& model);

}  // namespace ember::cli
