// apps/cli/model.cpp — builds the MLP and checks that a checkpoint fits it (see model.h).
#include "model.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <ember/nn/activation.h>
#include <ember/nn/dropout.h>
#include <ember/nn/linear.h>

#include <ember/core/error.h>

namespace ember::cli {

namespace {
// "[30, 2]": sizes as PyTorch prints them inside torch.Size(...).
std::string shape_text(const Shape& sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}
}  // namespace

void check_config_fits_state(const ModelConfig& config, const nn::StateDict& checkpoint_state,
                             const std::string& path) {
  std::vector<std::int64_t> widths = {config.in_features};
  widths.insert(widths.end(), config.hidden.begin(), config.hidden.end());
  widths.push_back(config.num_classes);
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const char* what = i == 0 ? "in_features" : i + 1 == widths.size() ? "num_classes" : "a hidden width";
    if (widths[i] < 1 || widths[i] > kMaxLayerWidth) {
      problems.push_back(make_message(what, " ", widths[i], " is outside [1, ", kMaxLayerWidth, "]"));
    }
  }
  if (!(config.dropout >= 0 && config.dropout <= 1)) {  // --dropout takes [0, 1], as torch.nn.Dropout
    problems.push_back(make_message("dropout ", config.dropout, " is outside [0, 1]"));
  }
  if (problems.empty()) {
    // The names build_mlp gives: Linear k sits at index k * (2 or 3) (ReLU and Dropout between).
    const std::size_t stride = config.dropout > 0 ? 3 : 2;
    std::vector<std::string> expected_names;
    for (std::size_t layer = 0; layer + 1 < widths.size(); ++layer) {
      const std::string prefix = std::to_string(layer * stride) + ".";
      const Shape weight = {widths[layer + 1], widths[layer]}, bias = {widths[layer + 1]};
      for (const auto& [name, shape] : {std::pair{prefix + "weight", weight}, std::pair{prefix + "bias", bias}}) {
        expected_names.push_back(name);
        const Tensor* found = checkpoint_state.find(name);
        if (found == nullptr) {
          problems.push_back("missing tensor model." + name + " (the config says " + shape_text(shape) + ")");
        } else if (found->sizes() != shape) {
          problems.push_back("model." + name + " is " + shape_text(found->sizes()) + " but the config says " +
                             shape_text(shape));
        } else if (found->dtype() != kFloat32) {
          problems.push_back("model." + name + " has dtype " + dtype_name(found->dtype()) + ", expected float32");
        }
      }
    }
    for (const auto& [name, tensor] : checkpoint_state) {
      if (std::find(expected_names.begin(), expected_names.end(), name) == expected_names.end()) {
        problems.push_back("unexpected tensor model." + name + " " + shape_text(tensor.sizes()));
      }
    }
  }
  if (problems.empty()) return;
  std::string message = path + ": the checkpoint's model config does not match its tensors:";
  for (const auto& problem : problems) message += "\n  " + problem;
  throw IOError(message);
}

void check_model_fits_memory(const ModelConfig& config) {
  std::vector<std::int64_t> widths = {config.in_features};
  widths.insert(widths.end(), config.hidden.begin(), config.hidden.end());
  widths.push_back(config.num_classes);
  std::int64_t parameters = 0;
  bool overflow = false;
  for (std::size_t layer = 0; layer + 1 < widths.size(); ++layer) {
    std::int64_t weights = 0;
    overflow = overflow || __builtin_mul_overflow(widths[layer], widths[layer + 1], &weights) ||
               __builtin_add_overflow(parameters, weights, &parameters) ||
               __builtin_add_overflow(parameters, widths[layer + 1], &parameters);
  }
  std::int64_t bytes = 0;
  overflow = overflow || __builtin_mul_overflow(parameters, std::int64_t{4}, &bytes);
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  const double memory = pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size) : 0;
  if (memory == 0 || (!overflow && static_cast<double>(bytes) <= memory)) return;
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f", memory / (1024.0 * 1024.0 * 1024.0));
  throw ValueError(make_message("the ", describe_layers(config), " MLP has ",
                                overflow ? std::string("more than 2^63") : std::to_string(parameters),
                                " parameters: as float32 they need more than this machine's ", gib,
                                " GiB of memory (use smaller --hidden widths)"));
}

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
