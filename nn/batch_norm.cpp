// nn/batch_norm.cpp — nn::BatchNorm1d / BatchNorm2d (see batch_norm.h) and F::batch_norm
// (nn/functional.h), which adds torch.nn.functional.batch_norm's Python-level checks to
// ember::batch_norm (autograd/batch_norm_ops.cpp).
#include <ember/nn/batch_norm.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/print.h>
#include <ember/nn/functional.h>
#include <ember/nn/python_format.h>

namespace ember::nn {

namespace functional {

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  if (training) {
    // PyTorch's _verify_batch_size: a channel needs two values to have a variance.
    std::int64_t values_per_channel = input.dim() > 0 ? input.size(0) : 1;
    for (std::int64_t d = 2; d < input.dim(); ++d) values_per_channel *= input.size(d);
    EMBER_CHECK(values_per_channel != 1, ValueError,
                "Expected more than 1 value per channel when training, got input size ", size_string(input.sizes()));
    EMBER_CHECK(eps > 0.0, ValueError, "batch_norm eps must be positive during training, but got ", python_float(eps));
  } else {
    EMBER_CHECK(eps >= 0.0, ValueError, "batch_norm eps must be non-negative, but got ", python_float(eps));
  }
  return ember::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

}  // namespace functional

BatchNormBase::BatchNormBase(std::int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                             bool track_running_stats, bool with_bias)
    : num_features(num_features), eps(eps), momentum(momentum), affine(affine), track_running_stats(track_running_stats) {
  EMBER_CHECK(num_features >= 0, ValueError, "Trying to create tensor with negative dimension ", num_features, ": [",
              num_features, "]");
  // Registered in PyTorch's order, which is the state_dict's order.
  if (affine) {
    weight = register_parameter("weight", ember::empty({num_features}));
    if (with_bias) bias = register_parameter("bias", ember::empty({num_features}));
  }
  if (track_running_stats) {
    running_mean = register_buffer("running_mean", ember::zeros({num_features}));
    running_var = register_buffer("running_var", ember::ones({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", ember::zeros({}, TensorOptions().dtype(kInt64)));
  }
  reset_parameters();
}

void BatchNormBase::reset_running_stats() {
  if (!track_running_stats) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void BatchNormBase::reset_parameters() {
  reset_running_stats();
  if (!affine) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  if (bias.defined()) bias.zero_();
}

Tensor BatchNormBase::forward(const Tensor& input) {
  check_input_dim(input);
  double average_factor = momentum.value_or(0.0);
  if (is_training() && track_running_stats && num_batches_tracked.defined()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    // momentum = None: the cumulative moving average over the batches seen so far.
    if (!momentum) average_factor = 1.0 / num_batches_tracked.item<double>();
  }
  // Batch statistics in training, and in eval when there are no running ones.
  const bool use_batch_statistics = is_training() || (!running_mean.defined() && !running_var.defined());
  // Buffers are passed only where they are read (eval) or updated (training, tracked).
  const bool pass_buffers = !is_training() || track_running_stats;
  return functional::batch_norm(input, pass_buffers ? running_mean : Tensor(), pass_buffers ? running_var : Tensor(),
                                weight, bias, use_batch_statistics, average_factor, eps);
}

std::string BatchNormBase::extra_repr() const {
  auto python_bool = [](bool value) { return value ? "True" : "False"; };
  return std::to_string(num_features) + ", eps=" + python_float(eps) +
         ", momentum=" + (momentum ? python_float(*momentum) : std::string("None")) +
         ", affine=" + python_bool(affine) + ", bias=" + python_bool(bias.defined()) +
         ", track_running_stats=" + python_bool(track_running_stats);
}

void BatchNorm1d::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, ValueError, "expected 2D or 3D input (got ", input.dim(),
              "D input)");
}

void BatchNorm2d::check_input_dim(const Tensor& input) const {
  EMBER_CHECK(input.dim() == 4, ValueError, "expected 4D input (got ", input.dim(), "D input)");
}

}  // namespace ember::nn
