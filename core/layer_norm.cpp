// core/layer_norm.cpp — native::layer_norm and native::layer_norm_backward (core/layer_norm.h):
// the checks PyTorch makes (its messages, in its order), the [rows, row_size] layout, one kernel call.
#include <ember/core/layer_norm.h>

#include <limits>

#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/norm_parameters.h>

namespace ember::native {

namespace {

// The input seen as [rows, row_size]: row_size = Π normalized_shape, rows = Π leading dims.
struct RowLayout {
  std::int64_t rows = 1, row_size = 1;
  Shape stats_shape;  // mean's and rstd's: the leading dims, then 1 per normalised dim
};

RowLayout row_layout(const Tensor& input, IntArrayRef normalized_shape) {
  RowLayout layout;
  const std::int64_t leading = input.dim() - static_cast<std::int64_t>(normalized_shape.size());
  for (std::int64_t d = 0; d < input.dim(); ++d) {
    if (d < leading) {
      layout.rows *= input.size(d);
      layout.stats_shape.push_back(input.size(d));
    } else {
      layout.row_size *= input.size(d);
      layout.stats_shape.push_back(1);
    }
  }
  return layout;
}

// PyTorch's _check_layer_norm_inputs.
void check_shapes(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(!normalized_shape.empty(), ShapeError,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but "
              "got normalized_shape = ",
              shape_to_string(normalized_shape));
  for (auto [tensor, name] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}}) {
    EMBER_CHECK(!tensor->defined() || IntArrayRef(tensor->sizes()) == normalized_shape, ShapeError, "Expected ", name,
                " to be of same shape as normalized_shape, but got ", name, " of shape ",
                shape_to_string(tensor->sizes()), " and normalized_shape = ", shape_to_string(normalized_shape));
  }
  const auto normalized_dims = static_cast<std::int64_t>(normalized_shape.size());
  bool fits = input.dim() >= normalized_dims;
  for (std::int64_t k = 0; fits && k < normalized_dims; ++k)
    fits = input.size(input.dim() - normalized_dims + k) == normalized_shape[static_cast<std::size_t>(k)];
  if (!fits) {
    std::string expected = "[*";
    for (std::int64_t size : normalized_shape) expected += ", " + std::to_string(size);
    throw ShapeError(make_message("Given normalized_shape=", shape_to_string(normalized_shape),
                                  ", expected input with shape ", expected, "], but got input of size",
                                  shape_to_string(input.sizes())));
  }
}

void check_kernel_dtypes(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(is_floating_point(input.dtype()), DTypeError, "\"LayerNormKernelImpl\" not implemented for '",
              scalar_type_name(input.dtype()), "'");
  for (const Tensor* parameter : {&weight, &bias})
    if (parameter->defined()) check_same_device(input, *parameter);
}

Tensor contiguous_or_undefined(const Tensor& tensor) { return tensor.defined() ? contiguous(tensor) : Tensor(); }
const void* pointer_or_null(const Tensor& tensor) { return tensor.defined() ? tensor.data_ptr() : nullptr; }

}  // namespace

LayerNormResult layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                           double eps) {
  const DType parameter_dtype = normalization_parameter_dtype(input, {&weight, &bias});
  check_shapes(input, normalized_shape, weight, bias);
  check_kernel_dtypes(input, weight, bias);
  if (is_reduced_floating_point(input.dtype())) {
    // bfloat16 and float16: PyTorch's kernels compute in float32 and round once; so does the
    // float32 kernel on widened values. mean and rstd keep the parameters' dtype (float32
    // beside float32 parameters, PyTorch's "mixed" case).
    LayerNormResult wide = layer_norm(widened(input), normalized_shape, widened(weight), widened(bias), eps);
    return {to_dtype(wide.output, input.dtype()), to_dtype(wide.mean, parameter_dtype),
            to_dtype(wide.rstd, parameter_dtype)};
  }
  const RowLayout layout = row_layout(input, normalized_shape);
  LayerNormResult result;
  result.output = empty(input.sizes(), input.options());
  result.mean = empty(layout.stats_shape, input.options());
  result.rstd = empty(layout.stats_shape, input.options());
  if (layout.rows == 0) return result;
  if (layout.row_size == 0) {  // an empty row: mean 0, variance 0/0 (PyTorch's values)
    fill_(result.mean, 0);
    fill_(result.rstd, std::numeric_limits<double>::quiet_NaN());
    return result;
  }
  Tensor x = contiguous(input);
  Tensor weight_data = contiguous_or_undefined(weight), bias_data = contiguous_or_undefined(bias);
  LayerNormPlan plan;
  plan.input = x.data_ptr();
  plan.output = result.output.data_ptr();
  plan.weight = pointer_or_null(weight_data);
  plan.bias = pointer_or_null(bias_data);
  plan.mean = result.mean.data_ptr();
  plan.rstd = result.rstd.data_ptr();
  plan.rows = layout.rows;
  plan.row_size = layout.row_size;
  plan.eps = eps;
  plan.dtype = input.dtype();
  plan.device = input.device().index();
  layer_norm_kernel(input.device(), plan);
  return result;
}

LayerNormGradients layer_norm_backward(const Tensor& grad_output, const Tensor& input, IntArrayRef normalized_shape,
                                       const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                                       std::array<bool, 3> output_mask) {
  const DType parameter_dtype = normalization_parameter_dtype(input, {&weight, &bias});
  check_shapes(input, normalized_shape, weight, bias);
  check_kernel_dtypes(input, weight, bias);
  if (is_reduced_floating_point(input.dtype())) {
    // The float32 backward on widened values (the saved mean and rstd as they were stored,
    // rounded in the plain 16-bit case, as PyTorch's kernel reads them), each gradient
    // rounded once to its tensor's dtype.
    LayerNormGradients wide = layer_norm_backward(widened(grad_output), widened(input), normalized_shape,
                                                  widened(mean), widened(rstd), widened(weight), widened(bias),
                                                  output_mask);
    auto narrowed = [](const Tensor& gradient, DType dtype) {
      return gradient.defined() ? to_dtype(gradient, dtype) : gradient;
    };
    return {narrowed(wide.grad_input, input.dtype()), narrowed(wide.grad_weight, parameter_dtype),
            narrowed(wide.grad_bias, parameter_dtype)};
  }
  check_same_device(input, grad_output);
  EMBER_CHECK(IntArrayRef(grad_output.sizes()) == IntArrayRef(input.sizes()), ShapeError,
              "layer_norm_backward: grad_out's shape ", shape_to_string(grad_output.sizes()),
              " does not match the input's ", shape_to_string(input.sizes()));
  const RowLayout layout = row_layout(input, normalized_shape);
  EMBER_CHECK(mean.numel() == layout.rows && rstd.numel() == layout.rows, ShapeError,
              "layer_norm_backward: mean and rstd need ", layout.rows, " elements (one per row), got ", mean.numel(),
              " and ", rstd.numel());
  LayerNormGradients result;
  if (output_mask[0]) result.grad_input = empty(input.sizes(), input.options());
  if (output_mask[1]) result.grad_weight = empty(normalized_shape, input.options());
  if (output_mask[2]) result.grad_bias = empty(normalized_shape, input.options());
  if (input.numel() == 0) {  // no rows, or empty rows: every gradient is zero (or empty)
    for (Tensor* gradient : {&result.grad_input, &result.grad_weight, &result.grad_bias})
      if (gradient->defined()) fill_(*gradient, 0);
    return result;
  }
  Tensor x = contiguous(input);
  Tensor dy = contiguous(to_dtype(grad_output, input.dtype()));
  Tensor weight_data = contiguous_or_undefined(weight);
  Tensor mean_data = contiguous(to_dtype(mean, input.dtype())), rstd_data = contiguous(to_dtype(rstd, input.dtype()));
  LayerNormBackwardPlan plan;
  plan.grad_output = dy.data_ptr();
  plan.input = x.data_ptr();
  plan.mean = mean_data.data_ptr();
  plan.rstd = rstd_data.data_ptr();
  plan.weight = pointer_or_null(weight_data);
  plan.grad_input = output_mask[0] ? result.grad_input.data_ptr() : nullptr;
  plan.grad_weight = output_mask[1] ? result.grad_weight.data_ptr() : nullptr;
  plan.grad_bias = output_mask[2] ? result.grad_bias.data_ptr() : nullptr;
  plan.rows = layout.rows;
  plan.row_size = layout.row_size;
  plan.dtype = input.dtype();
  plan.device = input.device().index();
  layer_norm_backward_kernel(input.device(), plan);
  return result;
}

}  // namespace ember::native
