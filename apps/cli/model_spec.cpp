// apps/cli/model_spec.cpp — reads, checks and builds `--model spec:FILE.json` (see model_spec.h).
//
// One table, kLayerKinds, says for each PyTorch module name how its arguments are read (with
// PyTorch's defaults and limits), what shape it gives for the shape it gets, and how it is
// built. Resolving walks the list once, carrying the shape of one example, so every size
// that can be computed is, and every mismatch is caught before anything is allocated.
#include "model_spec.h"

#include <algorithm>
#include <array>
#include <optional>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>
#include <ember/nn/activation.h>
#include <ember/nn/batch_norm.h>
#include <ember/nn/conv.h>
#include <ember/nn/dropout.h>
#include <ember/nn/layer_norm.h>
#include <ember/nn/linear.h>
#include <ember/nn/pooling.h>
#include <ember/nn/shape_layers.h>

#include "model.h"
#include "spec_layer_reader.h"

namespace ember::cli {

namespace {

using Json = nlohmann::ordered_json;
constexpr std::int64_t kMax = kMaxLayerWidth;  // the largest size any argument may have

std::string shape_text(const Shape& sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

// What a layer is resolved against: the number of classes, and whether it is the list's last Linear.
struct Context {
  std::int64_t num_classes = 0;
  bool last_linear = false;
};

// The size an input size must have: computed when not given, checked against `incoming` when given.
std::int64_t input_size(LayerReader& reader, const std::string& key, std::int64_t incoming, const Shape& shape,
                        const std::string& what) {
  const std::int64_t value = reader.integer(key, incoming, 1, kMax);
  if (value != incoming) {
    reader.fail(make_message("\"", key, "\" is ", value, " but the layer before gives ", incoming, " ", what,
                             " (shape ", shape_text(shape), " per example)"));
  }
  return value;
}

void need_image(LayerReader& reader, const Shape& shape) {
  if (shape.size() != 3) {
    reader.fail("needs images C x H x W, but the layer before gives shape " + shape_text(shape) + " per example" +
                (shape.size() == 1 ? " (a model that starts with flat features cannot go back to images)" : ""));
  }
}

// PyTorch's output size of a convolution or pooling along one dim (floor or ceil mode).
std::int64_t sliding_output(LayerReader& reader, std::int64_t size, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding, std::int64_t dilation, bool ceil_mode) {
  const std::int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
  std::int64_t out = span < 0 ? 0 : (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && out > 0 && (out - 1) * stride >= size + padding) --out;
  if (out < 1) {
    reader.fail(make_message("its kernel (", kernel, ", dilation ", dilation, ", padding ", padding,
                             ") does not fit the input size ", size));
  }
  return out;
}

void resolve_linear(LayerReader& r, Shape& shape, const Context& context) {
  if (shape.empty()) r.fail("needs features, got a scalar");
  input_size(r, "in_features", shape.back(), shape, "features");
  // The last Linear's out_features defaults to the class count; any other Linear must give it.
  shape.back() = context.last_linear ? r.integer("out_features", context.num_classes, 1, kMax)
                                     : r.integer("out_features", std::nullopt, 1, kMax);
  r.boolean("bias", true);
  r.finish("in_features, out_features, bias");
}

void resolve_conv2d(LayerReader& r, Shape& shape, const Context&) {
  need_image(r, shape);
  const std::int64_t in = input_size(r, "in_channels", shape[0], shape, "channels");
  const std::int64_t out = r.integer("out_channels", std::nullopt, 1, kMax);
  const auto kernel = r.pair("kernel_size", std::nullopt, 1);
  const auto stride = r.pair("stride", Json(1), 1);
  const auto padding = r.pair("padding", Json(0), 0);
  const auto dilation = r.pair("dilation", Json(1), 1);
  const std::int64_t groups = r.integer("groups", 1, 1, kMax);
  if (in % groups != 0) r.fail(make_message("in_channels must be divisible by groups (", in, " and ", groups, ")"));
  if (out % groups != 0) r.fail(make_message("out_channels must be divisible by groups (", out, " and ", groups, ")"));
  r.boolean("bias", true);
  r.finish("in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias");
  for (int d = 0; d < 2; ++d) shape[1 + d] = sliding_output(r, shape[1 + d], kernel[d], stride[d], padding[d], dilation[d], false);
  shape[0] = out;
}

// MaxPool2d and AvgPool2d: stride defaults to kernel_size (PyTorch's stride=None).
void resolve_pool(LayerReader& r, Shape& shape, bool max_pool) {
  need_image(r, shape);
  const auto kernel = r.pair("kernel_size", std::nullopt, 1);
  const auto stride = r.pair("stride", r.resolved["kernel_size"], 1);
  const auto padding = r.pair("padding", Json(0), 0);
  const auto dilation = max_pool ? r.pair("dilation", Json(1), 1) : std::array<std::int64_t, 2>{1, 1};
  const bool ceil_mode = r.boolean("ceil_mode", false);
  if (!max_pool) {
    r.boolean("count_include_pad", true);
    if (r.given("divisor_override")) {
      r.integer("divisor_override", std::nullopt, 1, kMax);
    } else {
      r.resolved["divisor_override"] = nullptr;
    }
  }
  r.finish(max_pool ? "kernel_size, stride, padding, dilation, ceil_mode"
                    : "kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override");
  for (int d = 0; d < 2; ++d) {
    // PyTorch: "pad should be at most half of effective kernel size".
    if (padding[d] > (dilation[d] * (kernel[d] - 1) + 1) / 2) {
      r.fail(make_message("padding ", padding[d], " is more than half of the kernel size ", kernel[d]));
    }
    shape[1 + d] = sliding_output(r, shape[1 + d], kernel[d], stride[d], padding[d], dilation[d], ceil_mode);
  }
}

void resolve_max_pool(LayerReader& r, Shape& shape, const Context&) { resolve_pool(r, shape, true); }
void resolve_avg_pool(LayerReader& r, Shape& shape, const Context&) { resolve_pool(r, shape, false); }

void resolve_adaptive_avg_pool(LayerReader& r, Shape& shape, const Context&) {
  need_image(r, shape);
  const auto size = r.pair("output_size", std::nullopt, 1);
  r.finish("output_size");
  shape[1] = size[0];
  shape[2] = size[1];
}

// BatchNorm1d takes [N, C] or [N, C, L]; BatchNorm2d [N, C, H, W]. C is num_features.
void resolve_batch_norm(LayerReader& r, Shape& shape, bool two_d) {
  if (two_d) {
    need_image(r, shape);
  } else if (shape.size() != 1 && shape.size() != 2) {
    r.fail("needs features [C] or [C, L] per example, but the layer before gives shape " + shape_text(shape) +
           (shape.size() == 3 ? " (BatchNorm2d normalises images)" : ""));
  }
  input_size(r, "num_features", shape[0], shape, two_d ? "channels" : "features");
  r.number("eps", 1e-5, 0, 1e30);
  if (r.null_given("momentum")) {
    r.resolved["momentum"] = nullptr;  // PyTorch's None: a cumulative moving average
  } else {
    r.number("momentum", 0.1, 0, 1);
  }
  r.boolean("affine", true);
  r.boolean("track_running_stats", true);
  r.boolean("bias", true);
  r.finish("num_features, eps, momentum, affine, track_running_stats, bias");
}

void resolve_batch_norm1d(LayerReader& r, Shape& shape, const Context&) { resolve_batch_norm(r, shape, false); }
void resolve_batch_norm2d(LayerReader& r, Shape& shape, const Context&) { resolve_batch_norm(r, shape, true); }

// LayerNorm normalises the last dims of an example: normalized_shape (an integer or a list,
// resolved as a list) must be the trailing sizes of the shape the layer before gives; left
// out, it is the last one (the features).
void resolve_layer_norm(LayerReader& r, Shape& shape, const Context&) {
  if (shape.empty()) r.fail("needs features, got a scalar");
  Shape normalized;
  if (const Json* given = r.find("normalized_shape")) {
    auto in_range = [](const Json& v) {
      return v.is_number_integer() && v.get<std::int64_t>() >= 1 &&
             !(v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMax)) &&
             v.get<std::int64_t>() <= kMax;
    };
    if (in_range(*given)) {
      normalized = {given->get<std::int64_t>()};
    } else if (given->is_array() && !given->empty() && std::all_of(given->begin(), given->end(), in_range)) {
      for (const Json& size : *given) normalized.push_back(size.get<std::int64_t>());
    } else {
      r.fail("normalized_shape", make_message("an integer in [1, ", kMax, "] or a non-empty list of them"));
    }
  } else {
    normalized = {shape.back()};
  }
  if (normalized.size() > shape.size() || !std::equal(normalized.rbegin(), normalized.rend(), shape.rbegin())) {
    r.fail("\"normalized_shape\" is " + shape_text(normalized) + " but the layer before gives shape " +
           shape_text(shape) + " per example, which does not end in it");
  }
  r.resolved["normalized_shape"] = normalized;
  r.number("eps", 1e-5, 0, 1e30);
  r.boolean("elementwise_affine", true);
  r.boolean("bias", true);
  r.finish("normalized_shape, eps, elementwise_affine, bias");
}

void resolve_no_arguments(LayerReader& r, Shape&, const Context&) { r.finish(""); }

void resolve_gelu(LayerReader& r, Shape&, const Context&) {
  r.choice("approximate", "none", {"none", "tanh"});
  r.finish("approximate");
}

void resolve_dropout(LayerReader& r, Shape&, const Context&) {
  r.number("p", 0.5, 0, 1);
  r.finish("p");
}

// Flatten(start_dim, end_dim) over the batched shape [N, ...]; dim 0, the batch, stays.
void resolve_flatten(LayerReader& r, Shape& shape, const Context&) {
  const auto rank = static_cast<std::int64_t>(shape.size()) + 1;
  const std::int64_t start = r.integer("start_dim", 1, -rank, rank - 1);
  const std::int64_t end = r.integer("end_dim", -1, -rank, rank - 1);
  r.finish("start_dim, end_dim");
  const std::int64_t first = start < 0 ? start + rank : start, last = end < 0 ? end + rank : end;
  if (first < 1) r.fail("start_dim must not flatten dim 0, the batch");
  if (first > last) r.fail(make_message("start_dim ", start, " comes after end_dim ", end));
  std::int64_t product = 1;
  for (std::int64_t d = first; d <= last; ++d) {
    if (__builtin_mul_overflow(product, shape[d - 1], &product) || product > kMax) {
      r.fail(make_message("the flattened size exceeds ", kMax));
    }
  }
  shape.erase(shape.begin() + (first - 1), shape.begin() + last);
  shape.insert(shape.begin() + (first - 1), product);
}

// ------------------------------------------------------------------ building

std::int64_t get(const Json& layer, const char* key) { return layer.at(key).get<std::int64_t>(); }

ExpandingArray<2> expanding(const Json& value) {
  if (value.is_array()) return ExpandingArray<2>(value.get<std::vector<std::int64_t>>());
  return ExpandingArray<2>(value.get<std::int64_t>());
}

std::shared_ptr<nn::Module> build_linear(const Json& l) {
  return std::make_shared<nn::Linear>(get(l, "in_features"), get(l, "out_features"), l.at("bias").get<bool>());
}
std::shared_ptr<nn::Module> build_conv2d(const Json& l) {
  nn::Conv2dOptions options{.stride = expanding(l.at("stride")), .padding = expanding(l.at("padding")),
                            .dilation = expanding(l.at("dilation")), .groups = get(l, "groups"),
                            .bias = l.at("bias").get<bool>()};
  return std::make_shared<nn::Conv2d>(get(l, "in_channels"), get(l, "out_channels"), expanding(l.at("kernel_size")),
                                      options);
}
std::shared_ptr<nn::Module> build_max_pool(const Json& l) {
  nn::MaxPool2dOptions options{.stride = expanding(l.at("stride")), .padding = expanding(l.at("padding")),
                               .dilation = expanding(l.at("dilation")), .ceil_mode = l.at("ceil_mode").get<bool>()};
  return std::make_shared<nn::MaxPool2d>(expanding(l.at("kernel_size")), options);
}
std::shared_ptr<nn::Module> build_avg_pool(const Json& l) {
  nn::AvgPool2dOptions options{.stride = expanding(l.at("stride")), .padding = expanding(l.at("padding")),
                               .ceil_mode = l.at("ceil_mode").get<bool>(),
                               .count_include_pad = l.at("count_include_pad").get<bool>(), .divisor_override = {}};
  if (!l.at("divisor_override").is_null()) options.divisor_override = get(l, "divisor_override");
  return std::make_shared<nn::AvgPool2d>(expanding(l.at("kernel_size")), options);
}
std::shared_ptr<nn::Module> build_adaptive_avg_pool(const Json& l) {
  return std::make_shared<nn::AdaptiveAvgPool2d>(expanding(l.at("output_size")));
}
std::optional<double> momentum_of(const Json& l) {
  if (l.at("momentum").is_null()) return std::nullopt;
  return l.at("momentum").get<double>();
}
std::shared_ptr<nn::Module> build_batch_norm1d(const Json& l) {
  return std::make_shared<nn::BatchNorm1d>(get(l, "num_features"), l.at("eps").get<double>(), momentum_of(l),
                                           l.at("affine").get<bool>(), l.at("track_running_stats").get<bool>(),
                                           l.at("bias").get<bool>());
}
std::shared_ptr<nn::Module> build_batch_norm2d(const Json& l) {
  return std::make_shared<nn::BatchNorm2d>(get(l, "num_features"), l.at("eps").get<double>(), momentum_of(l),
                                           l.at("affine").get<bool>(), l.at("track_running_stats").get<bool>(),
                                           l.at("bias").get<bool>());
}
std::shared_ptr<nn::Module> build_layer_norm(const Json& l) {
  return std::make_shared<nn::LayerNorm>(nn::LayerNormOptions(l.at("normalized_shape").get<std::vector<std::int64_t>>())
                                             .eps(l.at("eps").get<double>())
                                             .elementwise_affine(l.at("elementwise_affine").get<bool>())
                                             .bias(l.at("bias").get<bool>()));
}
template <class Layer>
std::shared_ptr<nn::Module> build_plain(const Json&) {
  return std::make_shared<Layer>();
}
std::shared_ptr<nn::Module> build_gelu(const Json& l) {
  return std::make_shared<nn::GELU>(l.at("approximate").get<std::string>());
}
std::shared_ptr<nn::Module> build_dropout(const Json& l) { return std::make_shared<nn::Dropout>(l.at("p").get<double>()); }
std::shared_ptr<nn::Module> build_flatten(const Json& l) {
  return std::make_shared<nn::Flatten>(get(l, "start_dim"), get(l, "end_dim"));
}

// ------------------------------------------------------------------ the table

struct LayerKind {
  const char* type;
  bool takes_images;  // as a first layer: the model views examples as C x H x W
  void (*resolve)(LayerReader&, Shape&, const Context&);
  std::shared_ptr<nn::Module> (*build)(const Json&);
};

constexpr LayerKind kLayerKinds[] = {
    {"Linear", false, resolve_linear, build_linear},
    {"Conv2d", true, resolve_conv2d, build_conv2d},
    {"MaxPool2d", true, resolve_max_pool, build_max_pool},
    {"AvgPool2d", true, resolve_avg_pool, build_avg_pool},
    {"AdaptiveAvgPool2d", true, resolve_adaptive_avg_pool, build_adaptive_avg_pool},
    {"BatchNorm1d", false, resolve_batch_norm1d, build_batch_norm1d},
    {"BatchNorm2d", true, resolve_batch_norm2d, build_batch_norm2d},
    {"LayerNorm", false, resolve_layer_norm, build_layer_norm},
    {"ReLU", false, resolve_no_arguments, build_plain<nn::ReLU>},
    {"GELU", false, resolve_gelu, build_gelu},
    {"Sigmoid", false, resolve_no_arguments, build_plain<nn::Sigmoid>},
    {"Tanh", false, resolve_no_arguments, build_plain<nn::Tanh>},
    {"SiLU", false, resolve_no_arguments, build_plain<nn::SiLU>},
    {"Dropout", false, resolve_dropout, build_dropout},
    {"Flatten", false, resolve_flatten, build_flatten},
    {"Identity", false, resolve_no_arguments, build_plain<nn::Identity>},
};

const LayerKind* find_kind(const std::string& type) {
  for (const LayerKind& kind : kLayerKinds) {
    if (type == kind.type) return &kind;
  }
  return nullptr;
}

std::string known_types() {
  std::string names;
  for (const LayerKind& kind : kLayerKinds) names += (names.empty() ? "" : ", ") + std::string(kind.type);
  return names;
}

// The list, checked to be a non-empty JSON list of objects with a known "type".
Json parse_layers(const std::string& spec_json) {
  Json layers;
  try {
    layers = Json::parse(spec_json);
  } catch (const nlohmann::json::exception& error) {
    throw ValueError(std::string("not valid JSON (") + error.what() + ")");
  }
  EMBER_CHECK(layers.is_array() && !layers.empty(), ValueError,
              "expected a non-empty JSON list of layers ([{\"type\": \"Linear\", ...}, ...]), got ",
              layers.dump().substr(0, 80));
  for (std::size_t index = 0; index < layers.size(); ++index) {
    const Json& layer = layers[index];
    EMBER_CHECK(layer.is_object(), ValueError, "layer ", index, ": expected an object {\"type\": ...}, got ",
                layer.dump().substr(0, 80));
    EMBER_CHECK(layer.contains("type") && layer.at("type").is_string(), ValueError, "layer ", index,
                ": needs \"type\", a PyTorch module name (", known_types(), ")");
    const std::string type = layer.at("type").get<std::string>();
    EMBER_CHECK(find_kind(type) != nullptr, ValueError, "layer ", index, ": unknown type \"", type,
                "\" (known: ", known_types(), ")");
  }
  return layers;
}

}  // namespace

bool spec_takes_images(const std::string& spec_json) {
  return find_kind(parse_layers(spec_json)[0].at("type").get<std::string>())->takes_images;
}

std::string resolve_model_spec(const std::string& spec_json, const Shape& example_shape, std::int64_t num_classes) {
  const Json layers = parse_layers(spec_json);
  std::size_t last_linear = layers.size();
  for (std::size_t index = 0; index < layers.size(); ++index) {
    if (layers[index].at("type") == "Linear") last_linear = index;
  }
  Json resolved = Json::array();
  Shape shape = example_shape;
  for (std::size_t index = 0; index < layers.size(); ++index) {
    const std::string type = layers[index].at("type").get<std::string>();
    LayerReader reader(layers[index], index, type);
    find_kind(type)->resolve(reader, shape, Context{num_classes, index == last_linear});
    resolved.push_back(std::move(reader.resolved));
  }
  EMBER_CHECK(shape == Shape{num_classes}, ValueError, "the model gives shape ", shape_text(shape),
              " per example, but cross_entropy needs one score per class: [", num_classes, "]");
  return resolved.dump();
}

std::shared_ptr<nn::Sequential> build_spec_model(const std::string& resolved_spec, const Shape& image_shape) {
  std::shared_ptr<nn::Sequential> model = image_shape.empty() ? std::make_shared<nn::Sequential>()
                                                              : make_image_sequential(image_shape);
  for (const Json& layer : Json::parse(resolved_spec)) {
    model->push_back(find_kind(layer.at("type").get<std::string>())->build(layer));
  }
  return model;
}

std::vector<StateEntry> spec_state_entries(const std::string& resolved_spec) {
  std::vector<StateEntry> entries;
  const Json layers = Json::parse(resolved_spec);
  for (std::size_t index = 0; index < layers.size(); ++index) {
    const Json& l = layers[index];
    const std::string type = l.at("type").get<std::string>();
    auto add = [&](const char* name, Shape shape, DType dtype = kFloat32) {
      entries.push_back({std::to_string(index) + "." + name, std::move(shape), dtype});
    };
    if (type == "Linear") {
      add("weight", {get(l, "out_features"), get(l, "in_features")});
      if (l.at("bias").get<bool>()) add("bias", {get(l, "out_features")});
    } else if (type == "Conv2d") {
      const std::int64_t out = get(l, "out_channels");
      const Json& k = l.at("kernel_size");
      const std::int64_t kh = k.is_array() ? k[0].get<std::int64_t>() : k.get<std::int64_t>();
      const std::int64_t kw = k.is_array() ? k[1].get<std::int64_t>() : k.get<std::int64_t>();
      add("weight", {out, get(l, "in_channels") / get(l, "groups"), kh, kw});
      if (l.at("bias").get<bool>()) add("bias", {out});
    } else if (type == "BatchNorm1d" || type == "BatchNorm2d") {
      const std::int64_t features = get(l, "num_features");
      if (l.at("affine").get<bool>()) {
        add("weight", {features});
        if (l.at("bias").get<bool>()) add("bias", {features});
      }
      if (l.at("track_running_stats").get<bool>()) {
        add("running_mean", {features});
        add("running_var", {features});
        add("num_batches_tracked", {}, kInt64);
      }
    } else if (type == "LayerNorm") {
      if (l.at("elementwise_affine").get<bool>()) {
        const Shape normalized = l.at("normalized_shape").get<Shape>();
        add("weight", normalized);
        if (l.at("bias").get<bool>()) add("bias", normalized);
      }
    }
  }
  return entries;
}

bool same_spec(const std::string& a, const std::string& b) {
  return nlohmann::json::parse(a) == nlohmann::json::parse(b);
}

std::string spec_layer_types(const std::string& resolved_spec) {
  std::string text;
  for (const Json& layer : Json::parse(resolved_spec)) {
    text.append(text.empty() ? "" : "-").append(layer.at("type").get<std::string>());
  }
  return text;
}

}  // namespace ember::cli
