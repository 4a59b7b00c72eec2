// apps/cli/model.cpp — builds the MLP and checks that a checkpoint fits it (see model.h).
#include "model.h"

#include <ember/nn/activation.h>
#include <ember/nn/dropout.h>
#include <ember/nn/linear.h>

namespace ember::cli {

namespace {
// "[30, 2]": sizes as PyTorch prints them inside torch.Size(...).
std::string shape_text(const Shape& sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}
}  // namespace

std::shared_ptr<nn::Sequential> build_mlp(const ModelConfig& config) {
  std::vector<std::int64_t> widths = {config.in_features};
  widths.insert(widths.end(), config.hidden.begin(), config.hidden.end());
  widths.push_back(config.num_classes);

  auto model = std::make_shared<nn::Sequential>();
  for (std::size_t layer = 0; layer + 1 < widths.size(); ++layer) {
    model->push_back(std::make_shared<nn::Linear>(widths[layer], widths[layer + 1]));
    bool is_output_layer = layer + 2 == widths.size();
    if (is_output_layer) break;
    model->push_back(std::make_shared<nn::ReLU>());
    // Dropout only when asked: a Dropout(0) layer would still shift the Sequential's
    // indices and so the state_dict names.
    if (config.dropout > 0) model->push_back(std::make_shared<nn::Dropout>(config.dropout));
  }
  return model;
}

std::string describe_layers(const ModelConfig& config) {
  // Appends one piece at a time ("-" + std::to_string(...) trips GCC 12's -Wrestrict false positive).
  std::string text = std::to_string(config.in_features);
  for (std::int64_t width : config.hidden) text.append("-").append(std::to_string(width));
  return text.append("-").append(std::to_string(config.num_classes));
}

void check_state_fits(const nn::StateDict& checkpoint_state, const nn::Module& model) {
  nn::StateDict expected = model.state_dict();
  std::vector<std::string> problems;
  for (const auto& [name, tensor] : expected) {
    const Tensor* found = checkpoint_state.find(name);
    if (found == nullptr) {
      problems.push_back("missing key " + name + " (model " + shape_text(tensor.sizes()) + ")");
    } else if (found->sizes() != tensor.sizes()) {
      problems.push_back("size mismatch for " + name + ": checkpoint " + shape_text(found->sizes()) + ", model " +
                         shape_text(tensor.sizes()));
    }
  }
  for (const auto& [name, tensor] : checkpoint_state) {
    if (!expected.contains(name)) {
      problems.push_back("unexpected key " + name + " (checkpoint " + shape_text(tensor.sizes()) + ")");
    }
  }
  if (problems.empty()) return;
  std::string message = "the checkpoint does not fit the model:";
  for (const auto& problem : problems) message += "\n  " + problem;
  throw ValueError(message);
}

}  // namespace ember::cli
