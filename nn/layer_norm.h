// nn/layer_norm.h — nn::LayerNorm: normalise each example over its last dims.
//
// Issue 21 (PyTorch's torch.nn.LayerNorm; libtorch's torch::nn::LayerNorm and
// LayerNormOptions). Over the last normalized_shape.size() dims of the input (which must
// end in normalized_shape), every row is normalised with its own mean and biased variance,
// then scaled and shifted element by element:
//   y = (x - mean) / sqrt(var + eps) · weight + bias      (weight, bias: normalized_shape)
// Unlike BatchNorm there are no running statistics: training and eval compute the same.
// weight starts at ones and bias at zeros, registered in that order (the state_dict's).
#pragma once

#include <cstdint>
#include <vector>

#include <ember/nn/module.h>

namespace ember::nn {

// libtorch's builder: LayerNormOptions({8}).eps(1e-6).elementwise_affine(false). Each
// setter returns the options; the same name without an argument reads the value.
class LayerNormOptions {
 public:
  LayerNormOptions(std::vector<std::int64_t> normalized_shape)  // NOLINT: implicit, as libtorch's
      : normalized_shape_(std::move(normalized_shape)) {}
  LayerNormOptions(std::int64_t normalized_size) : normalized_shape_{normalized_size} {}  // NOLINT: LayerNorm(8)

  LayerNormOptions& normalized_shape(std::vector<std::int64_t> value) {
    normalized_shape_ = std::move(value);
    return *this;
  }
  LayerNormOptions& eps(double value) {
    eps_ = value;
    return *this;
  }
  // false: no weight and no bias.
  LayerNormOptions& elementwise_affine(bool value) {
    elementwise_affine_ = value;
    return *this;
  }
  // false: a weight but no bias (PyTorch's bias=; nothing without elementwise_affine).
  LayerNormOptions& bias(bool value) {
    bias_ = value;
    return *this;
  }
  const std::vector<std::int64_t>& normalized_shape() const { return normalized_shape_; }
  double eps() const { return eps_; }
  bool elementwise_affine() const { return elementwise_affine_; }
  bool bias() const { return bias_; }

 private:
  std::vector<std::int64_t> normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
  bool bias_ = true;
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(LayerNormOptions options);

  Tensor forward(const Tensor& input) override;
  // "(8,), eps=1e-05, elementwise_affine=True, bias=True"
  std::string extra_repr() const override;
  // weight = 1, bias = 0.
  void reset_parameters();

  LayerNormOptions options;
  Parameter weight;  // normalized_shape; undefined when elementwise_affine = false
  Parameter bias;    // normalized_shape; undefined when elementwise_affine = false or bias = false
};

}  // namespace ember::nn
