// apps/cli/model.cpp — builds the MLP or the CNN and checks that a checkpoint fits it (see model.h).
#include "model.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <ember/nn/activation.h>
#include <ember/nn/conv.h>
#include <ember/nn/dropout.h>
#include <ember/nn/linear.h>
#include <ember/nn/pooling.h>
#include <ember/nn/shape_layers.h>

#include <ember/core/error.h>

#include <nlohmann/json.hpp>

#include "model_spec.h"

namespace ember::cli {

namespace {
// "[30, 2]": sizes as PyTorch prints them inside torch.Size(...).
std::string shape_text(const Shape& sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}
}  // namespace

namespace {

// A spec config: its input and its layers (model_spec.h checks every layer against the one before).
void spec_problems(const ModelConfig& config, std::vector<std::string>& problems) {
  if (!problems.empty()) return;  // in_features or num_classes out of range
  Shape example = {config.in_features};
  if (!config.input_shape.empty()) {
    std::int64_t product = 1;
    bool fits = config.input_shape.size() == 3;
    for (std::int64_t size : config.input_shape) {
      fits = fits && size >= 1 && size <= kMaxLayerWidth && !__builtin_mul_overflow(product, size, &product);
    }
    if (!fits || product != config.in_features) {
      problems.push_back(make_message("the input shape does not hold ", config.in_features, " features as C, H, W"));
      return;
    }
    example = config.input_shape;
  }
  try {
    if (config.spec.empty() || spec_takes_images(config.spec) != !config.input_shape.empty()) {
      problems.push_back("the spec's first layer does not fit its input shape");
    } else if (nlohmann::json::parse(resolve_model_spec(config.spec, example, config.num_classes)) !=
               nlohmann::json::parse(config.spec)) {
      problems.push_back("the spec is not resolved (every argument written out)");
    }
  } catch (const ValueError& error) {
    problems.push_back(std::string("the spec: ") + error.what());
  }
}

// Every problem with the config's numbers, before any size is multiplied.
std::vector<std::string> config_problems(const ModelConfig& config) {
  std::vector<std::string> problems;
  auto check_width = [&](const char* what, std::int64_t width) {
    if (width < 1 || width > kMaxLayerWidth) {
      problems.push_back(make_message(what, " ", width, " is outside [1, ", kMaxLayerWidth, "]"));
    }
  };
  check_width("in_features", config.in_features);
  for (std::int64_t width : config.hidden) check_width("a hidden width", width);
  check_width("num_classes", config.num_classes);
  if (!(config.dropout >= 0 && config.dropout <= 1)) {  // --dropout takes [0, 1], as torch.nn.Dropout
    problems.push_back(make_message("dropout ", config.dropout, " is outside [0, 1]"));
  }
  if (config.kind == "cnn") {
    if (config.channels.empty()) problems.push_back("a CNN needs at least one channel width");
    for (std::int64_t width : config.channels) check_width("a channel width", width);
    if (config.dropout != 0) problems.push_back(make_message("dropout ", config.dropout, " for a CNN (it has none)"));
    if (config.input_shape.size() != 3) {
      problems.push_back(make_message("the input shape has ", config.input_shape.size(), " sizes, expected C, H, W"));
    } else {
      for (std::int64_t size : config.input_shape) check_width("an input size", size);
      // Each stage halves H and W (MaxPool2d(2) floors): at least one pixel must remain.
      const std::int64_t smallest = std::int64_t{1} << std::min<std::size_t>(config.channels.size(), 62);
      if (config.input_shape[1] < smallest || config.input_shape[2] < smallest) {
        problems.push_back(make_message("images of ", config.input_shape[1], "x", config.input_shape[2],
                                        " are too small for ", config.channels.size(),
                                        " pooling stages (at least ", smallest, "x", smallest, ")"));
      }
      std::int64_t product = 0;
      if (__builtin_mul_overflow(config.input_shape[0], config.input_shape[1], &product) ||
          __builtin_mul_overflow(product, config.input_shape[2], &product) || product != config.in_features) {
        problems.push_back(make_message("the input shape ", config.input_shape[0], "x", config.input_shape[1], "x",
                                        config.input_shape[2], " does not hold ", config.in_features, " features"));
      }
    }
  } else if (config.kind == "spec") {
    spec_problems(config, problems);
  } else if (config.kind != "mlp") {
    problems.push_back("unknown model \"" + config.kind + "\" (expected mlp, cnn or spec)");
  }
  return problems;
}

// The CNN's flattened feature count: the last channel width times what the pools leave of
// H and W (each stage floors H/2 and W/2). Overflow-checked: ValueError when it does not fit.
std::int64_t cnn_flat_features(const ModelConfig& config) {
  std::int64_t height = config.input_shape[1], width = config.input_shape[2];
  for (std::size_t stage = 0; stage < config.channels.size(); ++stage) height /= 2, width /= 2;
  std::int64_t features = 0;
  EMBER_CHECK(!__builtin_mul_overflow(config.channels.back(), height, &features) &&
                  !__builtin_mul_overflow(features, width, &features) && features <= kMaxLayerWidth,
              ValueError, "the CNN's flattened features (", config.channels.back(), " x ", height, " x ", width,
              ") exceed ", kMaxLayerWidth);
  return features;
}

// Where the Linear layers start in the Sequential, and their widths from there.
struct Head {
  std::int64_t first_index = 0;
  std::vector<std::int64_t> widths;  // in, hidden..., num_classes
};

Head head_of(const ModelConfig& config) {
  Head head;
  head.widths.push_back(config.kind == "cnn" ? cnn_flat_features(config) : config.in_features);
  // CNN: three modules per stage (Conv2d, ReLU, MaxPool2d), then Flatten.
  head.first_index = config.kind == "cnn" ? 3 * static_cast<std::int64_t>(config.channels.size()) + 1 : 0;
  head.widths.insert(head.widths.end(), config.hidden.begin(), config.hidden.end());
  head.widths.push_back(config.num_classes);
  return head;
}

}  // namespace

std::vector<std::pair<std::string, Shape>> expected_parameters(const ModelConfig& config) {
  std::vector<std::pair<std::string, Shape>> parameters;
  if (config.kind == "spec") {
    for (StateEntry& entry : spec_state_entries(config.spec)) parameters.emplace_back(entry.name, entry.shape);
    return parameters;
  }
  auto add = [&](std::int64_t index, Shape weight, std::int64_t out) {
    parameters.emplace_back(std::to_string(index) + ".weight", std::move(weight));
    parameters.emplace_back(std::to_string(index) + ".bias", Shape{out});
  };
  if (config.kind == "cnn") {
    std::int64_t in_channels = config.input_shape[0];
    for (std::size_t stage = 0; stage < config.channels.size(); ++stage) {
      const std::int64_t out = config.channels[stage];
      add(3 * static_cast<std::int64_t>(stage), {out, in_channels, 3, 3}, out);
      in_channels = out;
    }
  }
  const Head head = head_of(config);
  // Linear k sits at index first + k * (2 or 3): ReLU (and Dropout) between.
  const std::int64_t stride = config.dropout > 0 ? 3 : 2;
  for (std::size_t layer = 0; layer + 1 < head.widths.size(); ++layer) {
    add(head.first_index + static_cast<std::int64_t>(layer) * stride, {head.widths[layer + 1], head.widths[layer]},
        head.widths[layer + 1]);
  }
  return parameters;
}

void check_config_fits_state(const ModelConfig& config, const nn::StateDict& checkpoint_state,
                             const std::string& path) {
  std::vector<std::string> problems = config_problems(config);
  if (problems.empty()) {
    std::vector<std::pair<std::string, Shape>> expected;
    try {
      expected = expected_parameters(config);
    } catch (const ValueError& error) {  // a flattened width that does not fit
      problems.push_back(error.what());
    }
    std::vector<std::string> expected_names;
    // Float32 everywhere, but BatchNorm's step counter (a spec's num_batches_tracked) is int64.
    auto expected_dtype = [](const std::string& name) {
      return name.size() > 20 && name.compare(name.size() - 20, 20, ".num_batches_tracked") == 0 ? kInt64 : kFloat32;
    };
    for (const auto& [name, shape] : expected) {
      expected_names.push_back(name);
      const Tensor* found = checkpoint_state.find(name);
      if (found == nullptr) {
        problems.push_back("missing tensor model." + name + " (the config says " + shape_text(shape) + ")");
      } else if (found->sizes() != shape) {
        problems.push_back("model." + name + " is " + shape_text(found->sizes()) + " but the config says " +
                           shape_text(shape));
      } else if (found->dtype() != expected_dtype(name)) {
        problems.push_back("model." + name + " has dtype " + dtype_name(found->dtype()) + ", expected " +
                           dtype_name(expected_dtype(name)));
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

void check_model_config(const ModelConfig& config) {
  std::vector<std::string> problems = config_problems(config);
  if (problems.empty()) return;
  std::string message = problems[0];
  for (std::size_t i = 1; i < problems.size(); ++i) message += "; " + problems[i];
  throw ValueError(message);
}

void check_model_fits_memory(const ModelConfig& config) {
  std::int64_t parameters = 0;
  bool overflow = false;
  for (const auto& [name, shape] : expected_parameters(config)) {
    std::int64_t count = 1;
    for (std::int64_t size : shape) overflow = overflow || __builtin_mul_overflow(count, size, &count);
    overflow = overflow || __builtin_add_overflow(parameters, count, &parameters);
  }
  std::int64_t bytes = 0;
  overflow = overflow || __builtin_mul_overflow(parameters, std::int64_t{4}, &bytes);
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  const double memory = pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size) : 0;
  if (memory == 0 || (!overflow && static_cast<double>(bytes) <= memory)) return;
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f", memory / (1024.0 * 1024.0 * 1024.0));
  throw ValueError(make_message("the ", describe_model(config), " has ",
                                overflow ? std::string("more than 2^63") : std::to_string(parameters),
                                " parameters: as float32 they need more than this machine's ", gib,
                                " GiB of memory (use smaller --hidden", config.kind == "cnn" ? " or --channels" : "",
                                " widths)"));
}

namespace {

// The CNN reads examples stored flat ([N, C*H*W], as the data sets and the DataLoader hold
// them) as images: the view is the first thing its forward does. Everything else is
// nn::Sequential's, so printing and state_dict names are PyTorch's Sequential's.
class ImageSequential : public nn::Sequential {
 public:
  explicit ImageSequential(Shape image_shape) : image_shape_(std::move(image_shape)) {}
  Tensor forward(const Tensor& input) override {
    if (input.dim() != 2) return nn::Sequential::forward(input);
    return nn::Sequential::forward(input.reshape({input.size(0), image_shape_[0], image_shape_[1], image_shape_[2]}));
  }
  std::string name() const override { return "Sequential"; }

 private:
  Shape image_shape_;
};

}  // namespace

std::shared_ptr<nn::Sequential> make_image_sequential(Shape image_shape) {
  return std::make_shared<ImageSequential>(std::move(image_shape));
}

std::string preset_spec(const ModelConfig& config) {
  using Json = nlohmann::ordered_json;
  Json layers = Json::array();
  if (config.kind == "cnn") {
    std::int64_t in_channels = config.input_shape[0];
    for (std::int64_t out_channels : config.channels) {
      layers.push_back({{"type", "Conv2d"}, {"in_channels", in_channels}, {"out_channels", out_channels},
                        {"kernel_size", 3}, {"padding", 1}});
      layers.push_back({{"type", "ReLU"}});
      layers.push_back({{"type", "MaxPool2d"}, {"kernel_size", 2}});
      in_channels = out_channels;
    }
    layers.push_back({{"type", "Flatten"}});
  }
  // The head: Linear(in, h1), ReLU, [Dropout], ..., Linear(hk, num_classes). Dropout only
  // when asked: a Dropout(0) layer would still shift the indices and so the state_dict names.
  for (std::int64_t width : config.hidden) {
    layers.push_back({{"type", "Linear"}, {"out_features", width}});
    layers.push_back({{"type", "ReLU"}});
    if (config.dropout > 0) layers.push_back({{"type", "Dropout"}, {"p", config.dropout}});
  }
  layers.push_back({{"type", "Linear"}, {"out_features", config.num_classes}});
  return layers.dump();
}

std::shared_ptr<nn::Sequential> build_model(const ModelConfig& config) {
  if (config.kind == "spec") return build_spec_model(config.spec, config.input_shape);
  const bool cnn = config.kind == "cnn";
  const Shape example = cnn ? Shape(config.input_shape) : Shape{config.in_features};
  const std::string resolved = resolve_model_spec(preset_spec(config), example, config.num_classes);
  return build_spec_model(resolved, cnn ? Shape(config.input_shape) : Shape{});
}

std::string describe_model(const ModelConfig& config) {
  // Appends one piece at a time ("-" + std::to_string(...) trips GCC 12's -Wrestrict false positive).
  std::string text;
  if (config.kind == "spec") {  // "1x4x4-Conv2d-ReLU-Flatten-Linear-3 model"
    if (config.input_shape.size() == 3) {
      text.append(std::to_string(config.input_shape[0])).append("x").append(std::to_string(config.input_shape[1]));
      text.append("x").append(std::to_string(config.input_shape[2]));
    } else {
      text = std::to_string(config.in_features);
    }
    text.append("-").append(spec_layer_types(config.spec)).append("-").append(std::to_string(config.num_classes));
    return text.append(" model");
  }
  if (config.kind == "cnn") {
    text.append(std::to_string(config.input_shape[0])).append("x").append(std::to_string(config.input_shape[1]));
    text.append("x").append(std::to_string(config.input_shape[2]));
    for (std::int64_t width : config.channels) text.append("-conv").append(std::to_string(width));
  } else {
    text = std::to_string(config.in_features);
  }
  for (std::int64_t width : config.hidden) text.append("-").append(std::to_string(width));
  text.append("-").append(std::to_string(config.num_classes));
  return text.append(config.kind == "cnn" ? " CNN" : " MLP");
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
