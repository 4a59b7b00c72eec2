// apps/cli/model_spec.h — `ember train --model spec:FILE.json`: a model written as a list of
// PyTorch layers, so a new architecture needs no rebuild.
//
// The file is a JSON list; each entry is one torch.nn module of an nn.Sequential, by its
// PyTorch class name and constructor arguments (keyword names, PyTorch's defaults):
//   [{"type": "Conv2d", "out_channels": 32, "kernel_size": 3, "padding": 1},
//    {"type": "ReLU"}, {"type": "MaxPool2d", "kernel_size": 2},
//    {"type": "Flatten"}, {"type": "Linear", "out_features": 128}, {"type": "ReLU"},
//    {"type": "Linear"}]
// Types: Linear, Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, BatchNorm1d, BatchNorm2d,
// LayerNorm, ReLU, GELU, Sigmoid, Tanh, SiLU, Dropout, Flatten, Identity (what nn/ has). A
// kernel_size, stride, padding, dilation or output_size is an integer or a list of two.
// Computed when left out: a layer's input size — Linear's in_features, Conv2d's in_channels,
// BatchNorm's num_features, LayerNorm's normalized_shape (the last size) — is what the layer
// before it gives; the last Linear's
// out_features is the number of classes. Given, they must match.
// Input: examples are images C x H x W (IDX images; CSV rows with --input-shape) when the
// first layer takes images (Conv2d, a 2-d pool, BatchNorm2d), otherwise flat feature vectors.
// The model's output must be one score per class.
//
// Every problem — an unknown type or argument, a value of the wrong type or range, a shape
// that does not fit the layer before — is a ValueError naming the layer's index (the index
// PyTorch's repr shows, from 0) and the argument. The resolved spec (every argument written
// out) is what a checkpoint stores, so eval, predict and --resume rebuild the same model.
// The presets --model mlp and --model cnn are written as specs (model.cpp) and built by the
// same code, layer by layer in order, so their parameters are drawn exactly as before.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ember/core/dtype.h>
#include <ember/core/shape.h>
#include <ember/nn/sequential.h>

#include "datasets.h"
#include "model.h"

namespace ember::cli {

// --model spec:FILE
inline bool is_spec_model(const std::string& model) { return model.rfind("spec:", 0) == 0; }

// Whether the spec's first layer takes images (then the model views flat examples as C x H x W).
// ValueError when `spec_json` is not a non-empty JSON list of layer objects.
bool spec_takes_images(const std::string& spec_json);

// Checks `spec_json` against examples of `example_shape` ({F} or {C, H, W}) and
// `num_classes`, and returns it resolved: a JSON list with every argument of every layer
// written out. ValueError "layer 3 (Linear): ..." on any problem.
std::string resolve_model_spec(const std::string& spec_json, const Shape& example_shape, std::int64_t num_classes);

// The model of a resolved spec; image_shape {C, H, W} when it takes images (else empty).
std::shared_ptr<nn::Sequential> build_spec_model(const std::string& resolved_spec, const Shape& image_shape);

// Every state_dict entry of a resolved spec's model (parameters and buffers), in order:
// name, shape and dtype — computed, nothing allocated.
struct StateEntry {
  std::string name;
  Shape shape;
  DType dtype;
};
std::vector<StateEntry> spec_state_entries(const std::string& resolved_spec);

// The config of --model spec:FILE (model_flag) on `data`: reads FILE; a spec whose first
// layer takes images gets --input-shape (input_shape_flag) or the IDX images' shape. UsageError
// "--model spec:FILE: layer 2 (Conv2d): ..." on any problem (spec_model_config.cpp).
ModelConfig spec_model_config(const std::string& model_flag, const Shape& input_shape_flag, const LoadedData& data);

// Whether two resolved specs describe the same layers (JSON equality: key order aside).
bool same_spec(const std::string& a, const std::string& b);

// "Conv2d-ReLU-MaxPool2d-Flatten-Linear": the layer types, for the summary lines.
std::string spec_layer_types(const std::string& resolved_spec);

}  // namespace ember::cli
