// nn/batch_norm.h — nn::BatchNorm1d and nn::BatchNorm2d: normalise each channel over the batch.
//
// Issue 19 (PyTorch's torch.nn.BatchNorm1d / BatchNorm2d). In training mode each channel c
// is normalised with the batch's mean and biased variance over (N) or (N, L) for
// BatchNorm1d and (N, H, W) for BatchNorm2d, then scaled and shifted:
//   y = (x - mean_c) / sqrt(var_c + eps) · weight[c] + bias[c]
// and the running statistics move towards the batch's,
//   running = (1 - momentum) · running + momentum · batch statistic   (the variance unbiased),
// num_batches_tracked counting the training batches (momentum = nullopt, PyTorch's None, uses
// the cumulative average 1 / num_batches_tracked instead). eval() normalises with the running
// statistics. weight starts at ones, bias at zeros, running_mean at 0, running_var at 1.
// The state_dict holds PyTorch's names: weight, bias, running_mean, running_var,
// num_batches_tracked (int64, 0-d); checkpoints save and load them, to() moves them.
#pragma once

#include <cstdint>
#include <optional>

#include <ember/nn/module.h>

namespace ember::nn {

// PyTorch's _BatchNorm: everything but the accepted input ranks.
class BatchNormBase : public Module {
 public:
  // affine = false: no weight and no bias; bias = false (PyTorch's keyword-only bias=):
  // a weight but no bias; track_running_stats = false: no buffers, batch statistics in
  // eval mode too.
  BatchNormBase(std::int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                bool track_running_stats, bool bias);

  Tensor forward(const Tensor& input) override;
  // "32, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True"
  std::string extra_repr() const override;
  // running_mean = 0, running_var = 1, num_batches_tracked = 0.
  void reset_running_stats();
  // reset_running_stats(), weight = 1, bias = 0.
  void reset_parameters();

  std::int64_t num_features;
  double eps;
  std::optional<double> momentum;
  bool affine;
  bool track_running_stats;
  Parameter weight;             // [num_features]; undefined when affine = false
  Parameter bias;               // [num_features]; undefined when affine = false or bias = false
  Tensor running_mean;          // [num_features]; undefined when track_running_stats = false
  Tensor running_var;           // [num_features]
  Tensor num_batches_tracked;   // int64, 0-d

 protected:
  // ValueError with PyTorch's message when the input's rank is not the layer's.
  virtual void check_input_dim(const Tensor& input) const = 0;
};

// Input [N, C] or [N, C, L].
class BatchNorm1d : public BatchNormBase {
 public:
  explicit BatchNorm1d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, bool bias = true)
      : BatchNormBase(num_features, eps, momentum, affine, track_running_stats, bias) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Input [N, C, H, W].
class BatchNorm2d : public BatchNormBase {
 public:
  explicit BatchNorm2d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, bool bias = true)
      : BatchNormBase(num_features, eps, momentum, affine, track_running_stats, bias) {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

}  // namespace ember::nn
