// core/conv.cpp — conv2d and its two gradients at the kernel level: checks, shapes, the plan.
//
// Issue 19. The checks are PyTorch's (aten/src/ATen/native/Convolution.cpp), in its order and
// with its words, e.g. "Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 1, 5,
// 5] to have 3 channels, but got 1 channels instead". The work itself is one call of the
// device's conv2d kernels (core/backend.h) on contiguous NCHW operands: the CPU's im2col +
// GEMM (core/cpu/conv_kernels.cpp) or the reference seven loops (core/reference/conv_loops.cpp).
// A channels-last or otherwise strided input is copied to NCHW first.
// Autograd (autograd/conv_ops.cpp) records the three functions here as three differentiable ops.
#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember::native {

namespace {

// "expected stride to be a single integer value or a list of 2 values to match the
// convolution dimensions, but got stride=[1, 2, 3]"
std::array<std::int64_t, 2> expand_conv_arg(const char* name, const ExpandingArray<2>& value, std::int64_t dims) {
  EMBER_CHECK(dims == 2 && value.valid(), ShapeError, "expected ", name, " to be a single integer value or a list of ",
              dims, " values to match the convolution dimensions, but got ", name, "=",
              shape_to_string(value.valid() ? IntArrayRef(std::vector<std::int64_t>{value.expanded()[0], value.expanded()[1]})
                                            : IntArrayRef(value.given())));
  return value.expanded();
}

std::int64_t conv_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                              std::int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

void check_floating(const Tensor& t) {
  EMBER_CHECK(is_floating_point(t.dtype()), DTypeError,
              "\"conv2d\" not implemented for '", scalar_type_name(t.dtype()), "'");
}

Conv2dPlan make_plan(const Tensor& input, const Tensor& weight, const Tensor& output, const Conv2dArgs& args) {
  Conv2dPlan plan;
  plan.batch = input.size(0);
  plan.in_channels = input.size(1);
  plan.in_h = input.size(2);
  plan.in_w = input.size(3);
  plan.out_channels = weight.size(0);
  plan.kernel_h = weight.size(2);
  plan.kernel_w = weight.size(3);
  plan.out_h = output.size(2);
  plan.out_w = output.size(3);
  plan.groups = args.groups;
  plan.stride_h = args.stride[0];
  plan.stride_w = args.stride[1];
  plan.pad_h = args.padding[0];
  plan.pad_w = args.padding[1];
  plan.dilation_h = args.dilation[0];
  plan.dilation_w = args.dilation[1];
  plan.input = input.data_ptr();
  plan.weight = weight.data_ptr();
  plan.output = output.data_ptr();
  plan.dtype = input.dtype();
  plan.device = input.device().index();
  return plan;
}

// Does this tensor's backend convolve its 16-bit dtype itself? Only the CPU, whose bfloat16
// GEMM reads the operands (core/cpu/conv_kernels.cpp); the CUDA convolution kernels are
// float32/float64 (a GPU's 16-bit GEMM serves matrix products only), so there a 16-bit
// convolution widens.
bool convolves_16_bit(const Tensor& tensor) {
  return tensor.device().is_cpu() && gemm_reads_16_bit_operands(tensor.device(), tensor.dtype());
}

}  // namespace

Conv2dArgs check_conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ExpandingArray<2>& stride,
                        const ExpandingArray<2>& padding, const ExpandingArray<2>& dilation, std::int64_t groups) {
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, ShapeError,
              "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: ",
              shape_to_string(input.sizes()));
  check_same_device(input, weight);
  if (bias.defined()) check_same_device(input, bias);
  const std::int64_t dims = weight.dim() - 2;
  Conv2dArgs args;
  args.stride = expand_conv_arg("stride", stride, dims);
  args.padding = expand_conv_arg("padding", padding, dims);
  args.dilation = expand_conv_arg("dilation", dilation, dims);
  args.groups = groups;
  EMBER_CHECK(args.stride[0] > 0 && args.stride[1] > 0, ValueError, "non-positive stride is not supported");
  EMBER_CHECK(args.padding[0] >= 0 && args.padding[1] >= 0, ValueError, "negative padding is not supported");
  EMBER_CHECK(args.dilation[0] > 0 && args.dilation[1] > 0, ValueError,
              "dilation should be greater than zero, but got ", shape_to_string({args.dilation[0], args.dilation[1]}));
  EMBER_CHECK(groups > 0, ValueError, "non-positive groups is not supported");
  EMBER_CHECK(weight.size(0) % groups == 0, ShapeError, "Given groups=", groups,
              ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size [",
              shape_to_string(weight.sizes()), "] instead");
  // An unbatched input is checked as the batch of one PyTorch makes of it.
  Shape batched = input.sizes();
  if (input.dim() == 3) batched.insert(batched.begin(), 1);
  EMBER_CHECK(batched[1] == weight.size(1) * groups, ShapeError, "Given groups=", groups, ", weight of size ",
              shape_to_string(weight.sizes()), ", expected input", shape_to_string(batched), " to have ",
              weight.size(1) * groups, " channels, but got ", batched[1], " channels instead");
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)), ShapeError,
              "Given weight of size ", shape_to_string(weight.sizes()), ", expected bias to be 1-dimensional with ",
              weight.size(0), " elements, but got bias of size ", shape_to_string(bias.sizes()), " instead");
  std::int64_t padded[2], kernel[2];
  for (int d = 0; d < 2; ++d) {
    padded[d] = batched[2 + d] + 2 * args.padding[d];
    kernel[d] = args.dilation[d] * (weight.size(2 + d) - 1) + 1;
  }
  EMBER_CHECK(padded[0] >= kernel[0] && padded[1] >= kernel[1], ShapeError,
              "Calculated padded input size per channel: (", padded[0], " x ", padded[1], "). Kernel size: (",
              kernel[0], " x ", kernel[1], "). Kernel size can't be greater than actual input size");
  EMBER_CHECK(input.dtype() == weight.dtype(), DTypeError, "expected scalar type ", scalar_type_name(input.dtype()),
              " but found ", scalar_type_name(weight.dtype()));
  EMBER_CHECK(!bias.defined() || bias.dtype() == input.dtype(), DTypeError, "expected scalar type ",
              scalar_type_name(input.dtype()), " but found ", scalar_type_name(bias.dtype()));
  check_floating(input);
  return args;
}

// A convolution's multiply-adds, ×2: each output element sums (in/groups)·kH·kW products. The
// same count holds for both backward products.
double conv_flops(const Tensor& output, const Tensor& weight) {
  return 2.0 * static_cast<double>(output.numel()) * static_cast<double>(weight.size(1) * weight.size(2) * weight.size(3));
}

Tensor conv2d(const Tensor& input_any, const Tensor& weight_any, const Tensor& bias_any, const Conv2dArgs& args) {
  // bfloat16/float16: the float32 kernel on the widened operands, rounded once, which is
  // what PyTorch's 16-bit convolutions compute (float32 accumulation). Likewise below. A
  // backend whose GEMM reads the dtype itself (the CPU's bfloat16 GEMM) runs the convolution
  // in it: im2col copies 16-bit values, the GEMM accumulates in float32 and adds the bias
  // before rounding once; the gradients keep their partial sums (col2im, the weight
  // gradient's sum over the batch) in float32 and round once (core/cpu/conv_kernels.cpp).
  if (is_reduced_floating_point(input_any.dtype()) && !convolves_16_bit(input_any))
    return to_dtype(conv2d(widened(input_any), widened(weight_any), widened(bias_any), args), input_any.dtype());
  const Tensor input = contiguous(input_any), weight = contiguous(weight_any);
  const Tensor bias = bias_any.defined() ? contiguous(bias_any) : bias_any;
  const std::int64_t out_h = conv_output_size(input.size(2), weight.size(2), args.stride[0], args.padding[0], args.dilation[0]);
  const std::int64_t out_w = conv_output_size(input.size(3), weight.size(3), args.stride[1], args.padding[1], args.dilation[1]);
  Tensor output = empty({input.size(0), weight.size(0), out_h, out_w}, input.options());
  if (output.numel() == 0) return output;
  Conv2dPlan plan = make_plan(input, weight, output, args);
  plan.bias = bias.defined() ? bias.data_ptr() : nullptr;
  profiler::add_flops(conv_flops(output, weight));
  conv2d_kernel(input.device(), plan);
  return output;
}

Tensor conv2d_backward_input(const Tensor& grad_output_any, const Tensor& weight_any, IntArrayRef input_sizes,
                             const Conv2dArgs& args) {
  if (is_reduced_floating_point(grad_output_any.dtype()) && !convolves_16_bit(grad_output_any))
    return to_dtype(conv2d_backward_input(widened(grad_output_any), widened(weight_any), input_sizes, args),
                    grad_output_any.dtype());
  const Tensor grad_output = contiguous(grad_output_any), weight = contiguous(weight_any);
  Tensor grad_input = empty(input_sizes, grad_output.options());
  if (grad_input.numel() == 0) return grad_input;
  if (grad_output.numel() == 0) return zeros(input_sizes, grad_output.options());
  profiler::add_flops(conv_flops(grad_output, weight));
  conv2d_backward_input_kernel(grad_output.device(), make_plan(grad_input, weight, grad_output, args));
  return grad_input;
}

Tensor conv2d_backward_weight(const Tensor& input_any, const Tensor& grad_output_any, IntArrayRef weight_sizes,
                              const Conv2dArgs& args) {
  if (is_reduced_floating_point(input_any.dtype()) && !convolves_16_bit(input_any))
    return to_dtype(conv2d_backward_weight(widened(input_any), widened(grad_output_any), weight_sizes, args),
                    input_any.dtype());
  const Tensor input = contiguous(input_any), grad_output = contiguous(grad_output_any);
  Tensor grad_weight = empty(weight_sizes, input.options());
  if (grad_weight.numel() == 0) return grad_weight;
  if (grad_output.numel() == 0) return zeros(weight_sizes, input.options());
  profiler::add_flops(conv_flops(grad_output, grad_weight));
  conv2d_backward_weight_kernel(input.device(), make_plan(input, grad_weight, grad_output, args));
  return grad_weight;
}

}  // namespace ember::native
