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
// "784-256-128-10" for the summary line.
std::string describe_layers(const ModelConfig& config);

// Raises ValueError listing every missing key, unexpected key and shape mismatch when a
// checkpoint's model tensors do not fit `model` (more useful than stopping at the first).
void check_state_fits(const nn::StateDict& checkpoint_state, const nn::Module& model);

}  // namespace ember::cli
