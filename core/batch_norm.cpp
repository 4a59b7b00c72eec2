// core/batch_norm.cpp — native::batch_norm and native::batch_norm_backward (core/batch_norm.h):
// the checks PyTorch makes (its messages), the [batch, channels, inner] layout, one kernel call.
#include <ember/core/batch_norm.h>

#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/norm_parameters.h>

namespace ember::native {

namespace {

// batch · channels · inner = input.numel(), with inner the product of the dims after 1.
struct ChannelLayout {
  std::int64_t batch = 0, channels = 0, inner = 1;
};

ChannelLayout channel_layout(const Tensor& input) {
  ChannelLayout layout;
  layout.batch = input.size(0);
  layout.channels = input.size(1);
  for (std::int64_t d = 2; d < input.dim(); ++d) layout.inner *= input.size(d);
  return layout;
}

// One of weight, bias, running_mean, running_var: [channels], on input's device (the dtypes
// are checked together: normalization_parameter_dtype).
void check_per_channel(const Tensor& input, const Tensor& tensor, const char* name, std::int64_t channels) {
  if (!tensor.defined()) return;
  EMBER_CHECK(tensor.numel() == channels, ShapeError, name, " should contain ", channels, " elements not ",
              tensor.numel());
  check_same_device(input, tensor);
}

// A [channels] tensor's data for a kernel: the tensor itself when contiguous, else a copy.
Tensor per_channel_data(const Tensor& tensor) { return tensor.defined() ? contiguous(tensor) : Tensor(); }
const void* pointer_or_null(const Tensor& tensor) { return tensor.defined() ? tensor.data_ptr() : nullptr; }

BatchNormResult batch_norm_16_bit(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                  const Tensor& running_mean, const Tensor& running_var, bool training,
                                  double momentum, double eps, DType parameter_dtype);

}  // namespace

BatchNormResult batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                           const Tensor& running_var, bool training, double momentum, double eps) {
  EMBER_CHECK(is_floating_point(input.dtype()), DTypeError, "\"batch_norm\" not implemented for '",
              scalar_type_name(input.dtype()), "'");
  EMBER_CHECK(running_mean.defined() == running_var.defined(), ValueError,
              "running_mean and running_var must either both be None or neither be None");
  // PyTorch counts the features as size(1), or 0 for a 1-D input.
  const std::int64_t features = input.dim() > 1 ? input.size(1) : 0;
  check_per_channel(input, running_mean, "running_mean", features);
  check_per_channel(input, running_var, "running_var", features);
  check_per_channel(input, weight, "weight", features);
  check_per_channel(input, bias, "bias", features);
  const DType parameter_dtype =
      normalization_parameter_dtype(input, {&weight, &bias, &running_mean, &running_var});
  EMBER_CHECK(input.dim() >= 2, IndexError, "Dimension out of range (expected to be in range of [-",
              std::max<std::int64_t>(input.dim(), 1), ", ", std::max<std::int64_t>(input.dim(), 1) - 1,
              "], but got 1)");
  EMBER_CHECK(training || running_mean.defined(), ValueError, "running_mean must be defined in evaluation mode");
  if (is_reduced_floating_point(input.dtype())) return batch_norm_16_bit(input, weight, bias, running_mean,
                                                                          running_var, training, momentum, eps,
                                                                          parameter_dtype);

  const ChannelLayout layout = channel_layout(input);
  BatchNormResult result;
  result.output = empty(input.sizes(), input.options());
  result.save_mean = empty({layout.channels}, input.options());
  result.save_invstd = empty({layout.channels}, input.options());
  // An empty batch normalises nothing and leaves the running statistics as they are (PyTorch).
  if (input.numel() == 0) return result;

  Tensor x = contiguous(input);
  Tensor weight_data = per_channel_data(weight), bias_data = per_channel_data(bias);
  const bool updates_running = training && running_mean.defined();
  Tensor mean_data = per_channel_data(running_mean), var_data = per_channel_data(running_var);
  BatchNormPlan plan;
  plan.input = x.data_ptr();
  plan.output = result.output.data_ptr();
  plan.weight = pointer_or_null(weight_data);
  plan.bias = pointer_or_null(bias_data);
  plan.running_mean = mean_data.defined() ? mean_data.data_ptr() : nullptr;
  plan.running_var = var_data.defined() ? var_data.data_ptr() : nullptr;
  plan.save_mean = result.save_mean.data_ptr();
  plan.save_invstd = result.save_invstd.data_ptr();
  plan.batch = layout.batch;
  plan.channels = layout.channels;
  plan.inner = layout.inner;
  plan.training = training;
  plan.momentum = momentum;
  plan.eps = eps;
  plan.dtype = input.dtype();
  plan.device = input.device().index();
  batch_norm_kernel(input.device(), plan);
  if (updates_running) {
    // Written in place (through a contiguous copy when a buffer is strided): a graph that
    // saved the old statistics notices, as after any in-place op.
    if (!mean_data.is_same(running_mean)) copy_(running_mean, mean_data);
    if (!var_data.is_same(running_var)) copy_(running_var, var_data);
    running_mean.bump_version();
    running_var.bump_version();
  }
  return result;
}

BatchNormGradients batch_norm_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                       const Tensor& save_mean, const Tensor& save_invstd, bool training,
                                       std::array<bool, 3> output_mask) {
  check_same_device(input, grad_output);
  if (is_reduced_floating_point(input.dtype())) {
    // The float32 backward on widened values (the saved statistics as they were stored),
    // each gradient rounded once to its tensor's dtype.
    const DType parameter_dtype = weight.defined() ? weight.dtype() : save_mean.dtype();
    BatchNormGradients wide = batch_norm_backward(widened(grad_output), widened(input), widened(weight),
                                                  widened(save_mean), widened(save_invstd), training, output_mask);
    auto narrowed = [](const Tensor& gradient, DType dtype) {
      return gradient.defined() ? to_dtype(gradient, dtype) : gradient;
    };
    return {narrowed(wide.grad_input, input.dtype()), narrowed(wide.grad_weight, parameter_dtype),
            narrowed(wide.grad_bias, parameter_dtype)};
  }
  EMBER_CHECK(IntArrayRef(grad_output.sizes()) == IntArrayRef(input.sizes()), ShapeError,
              "batch_norm_backward: grad_output's shape ", shape_to_string(grad_output.sizes()),
              " does not match the input's ", shape_to_string(input.sizes()));
  const ChannelLayout layout = channel_layout(input);
  BatchNormGradients result;
  if (output_mask[0]) result.grad_input = empty(input.sizes(), input.options());
  if (output_mask[1]) result.grad_weight = empty({layout.channels}, input.options());
  if (output_mask[2]) result.grad_bias = empty({layout.channels}, input.options());
  if (input.numel() == 0) {  // nothing was normalised: every gradient is zero
    for (Tensor* gradient : {&result.grad_input, &result.grad_weight, &result.grad_bias})
      if (gradient->defined()) fill_(*gradient, 0);
    return result;
  }
  Tensor x = contiguous(input);
  Tensor dy = contiguous(to_dtype(grad_output, input.dtype()));
  Tensor weight_data = per_channel_data(weight);
  Tensor mean_data = contiguous(save_mean), invstd_data = contiguous(save_invstd);
  BatchNormBackwardPlan plan;
  plan.grad_output = dy.data_ptr();
  plan.input = x.data_ptr();
  plan.weight = pointer_or_null(weight_data);
  plan.save_mean = mean_data.data_ptr();
  plan.save_invstd = invstd_data.data_ptr();
  plan.grad_input = output_mask[0] ? result.grad_input.data_ptr() : nullptr;
  plan.grad_weight = output_mask[1] ? result.grad_weight.data_ptr() : nullptr;
  plan.grad_bias = output_mask[2] ? result.grad_bias.data_ptr() : nullptr;
  plan.batch = layout.batch;
  plan.channels = layout.channels;
  plan.inner = layout.inner;
  plan.training = training;
  plan.dtype = input.dtype();
  plan.device = input.device().index();
  batch_norm_backward_kernel(input.device(), plan);
  return result;
}

namespace {

// bfloat16 and float16: PyTorch's kernels compute in float32 and round once; so does the
// float32 kernel on widened values. 16-bit running statistics are updated on float32 copies
// and rounded back in place; float32 ones (the "mixed" case) are updated directly. The saved
// statistics keep the parameters' dtype.
BatchNormResult batch_norm_16_bit(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                  const Tensor& running_mean, const Tensor& running_var, bool training,
                                  double momentum, double eps, DType parameter_dtype) {
  const Tensor wide_input = widened(input), wide_mean = widened(running_mean), wide_var = widened(running_var);
  BatchNormResult wide =
      batch_norm(wide_input, widened(weight), widened(bias), wide_mean, wide_var, training, momentum, eps);
  if (training && running_mean.defined() && input.numel() > 0 && !wide_mean.is_same(running_mean)) {
    copy_(running_mean, wide_mean);
    copy_(running_var, wide_var);
    running_mean.bump_version();
    running_var.bump_version();
  }
  BatchNormResult result{to_dtype(wide.output, input.dtype()), to_dtype(wide.save_mean, parameter_dtype),
                         to_dtype(wide.save_invstd, parameter_dtype)};
  if (training && parameter_dtype == input.dtype() && input.numel() > 0) {
    // With 16-bit parameters PyTorch normalises with the batch statistics as it stores them,
    // rounded to 16 bits: output = x·alpha + beta in float32, alpha = invstd·weight and
    // beta = bias − mean·alpha per channel (measured bit for bit against PyTorch 2.15).
    Shape channel_shape(static_cast<std::size_t>(input.dim()), 1);
    channel_shape[1] = input.size(1);
    Tensor alpha = widened(result.save_invstd);
    if (weight.defined()) alpha = mul(alpha, widened(weight));
    Tensor beta = mul(widened(result.save_mean), alpha);
    beta = bias.defined() ? sub(widened(bias), beta) : neg(beta);
    result.output = to_dtype(add(mul(wide_input, reshape(alpha, channel_shape)), reshape(beta, channel_shape)),
                             input.dtype());
  }
  return result;
}

}  // namespace

}  // namespace ember::native
