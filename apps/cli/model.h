// apps/cli/model.h — the MLP that `ember train` builds from --hidden and --dropout.
//
// Tutorial §5's NeuralNetwork generalised: Linear(in, h1), ReLU, [Dropout], ..., Linear(hk, out),
// as a plain nn::Sequential, so its state_dict keys are PyTorch's for the same
// torch.nn.Sequential ("0.weight", "0.bias", "2.weight", ...) and the reference program
// tests/reference/cli_reference.py can be compared parameter by parameter. The layers are
// constructed in order, so after manual_seed(seed) they consume the generator exactly as
// PyTorch's constructors do (weight then bias of each Linear).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ember/nn/sequential.h>

namespace ember::cli {

struct ModelConfig {
  std::int64_t in_features = 0;
  std::vector<std::int64_t> hidden;
  std::int64_t num_classes = 0;
  double dropout = 0.0;
};

std::shared_ptr<nn::Sequential> build_mlp(const ModelConfig& config);

// ValueError when the model's float32 parameters alone would exceed this machine's
// physical memory (counted with overflow checks): --hidden 2147483647,2147483647 is an
// error before anything is allocated, not an out-of-memory kill.
void check_model_fits_memory(const ModelConfig& config);
// "784-256-128-10" for the summary line.
std::string describe_layers(const ModelConfig& config);

// The widest layer the CLI builds: --hidden above it is a usage error, a checkpoint
// config above it a damaged checkpoint (2^31 - 1: a Linear of that width is already far
// beyond any memory, and every product of two widths still fits an int64).
constexpr std::int64_t kMaxLayerWidth = 2147483647;

// Checks a model config read from a checkpoint against the checkpoint's model tensors
// BEFORE any model is built from it, so that a damaged or hostile config (a width of 2^62,
// a negative class count) is an error, never an allocation: every width in
// [1, kMaxLayerWidth], dropout in [0, 1], and each Linear's weight [out, in] and bias
// [out] present as float32 with exactly those sizes, no other model tensor. IOError
// naming `path` and listing every problem.
void check_config_fits_state(const ModelConfig& config, const nn::StateDict& checkpoint_state,
                             const std::string& path);

// Raises ValueError listing every missing key, unexpected key and shape mismatch when a
// checkpoint's model tensors do not fit `model` (more useful than stopping at the first).
void check_state_fits(const nn::StateDict& checkpoint_state, const nn::Module& model);

}  // namespace ember::cli
