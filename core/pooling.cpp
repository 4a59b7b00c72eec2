// core/pooling.cpp — max_pool2d, avg_pool2d, adaptive_avg_pool2d and their gradients at the
// kernel level: checks, output sizes, the plan.
//
// Issue 19. Output sizes and checks are PyTorch's (aten/src/ATen/native/Pool.h,
// pooling_output_shape and pool2d_shape_check), with its messages. A 3-D input (C, H, W)
// is one sample; any layout is copied to contiguous NCHW first. The work is one call of the
// device's pool2d kernels (core/backend.h): core/cpu/pool_kernels.cpp or the reference loops
// of core/reference/pool_loops.cpp.
#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>

namespace ember::native {

namespace {

// PyTorch's pooling_output_shape: floor (or ceil) of the sliding count, and with ceil_mode
// the last window must start inside the input or its left padding.
std::int64_t pooling_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad, std::int64_t stride,
                                 std::int64_t dilation, bool ceil_mode) {
  const std::int64_t numerator = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // Rounded toward -infinity, as PyTorch's div_rtn.
  std::int64_t quotient = numerator / stride;
  if ((numerator % stride != 0) && ((numerator < 0) != (stride < 0))) --quotient;
  std::int64_t out = quotient + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

void check_floating(const Tensor& t, const char* name) {
  EMBER_CHECK(is_floating_point(t.dtype()), DTypeError, "\"", name,
              "\" not implemented for '", scalar_type_name(t.dtype()), "'");
}

std::array<std::int64_t, 2> expand_pool_arg(const ExpandingArray<2>& value, const char* message) {
  EMBER_CHECK(value.valid(), ValueError, message);
  return value.expanded();
}

// The 4-D sizes of input (a 3-D input is one sample).
Shape batched_sizes(const Tensor& input) {
  Shape sizes = input.sizes();
  if (sizes.size() == 3) sizes.insert(sizes.begin(), 1);
  return sizes;
}

Pool2dPlan make_plan(const Pool2dArgs& args, const Shape& in, std::int64_t out_h, std::int64_t out_w) {
  Pool2dPlan plan;
  plan.mode = args.mode;
  plan.planes = in[0] * in[1];
  plan.in_h = in[2];
  plan.in_w = in[3];
  plan.out_h = out_h;
  plan.out_w = out_w;
  plan.kernel_h = args.kernel[0];
  plan.kernel_w = args.kernel[1];
  plan.stride_h = args.stride[0];
  plan.stride_w = args.stride[1];
  plan.pad_h = args.padding[0];
  plan.pad_w = args.padding[1];
  plan.dilation_h = args.dilation[0];
  plan.dilation_w = args.dilation[1];
  plan.count_include_pad = args.count_include_pad;
  plan.divisor_override = args.divisor_override;
  return plan;
}

}  // namespace

Pool2dArgs check_pool2d(PoolMode mode, const Tensor& input, const ExpandingArray<2>& kernel_size,
                        const ExpandingArray<2>& stride, const ExpandingArray<2>& padding,
                        const ExpandingArray<2>& dilation, bool ceil_mode, bool count_include_pad,
                        std::optional<std::int64_t> divisor_override) {
  const bool is_max = mode == PoolMode::Max;
  const char* name = is_max ? "max_pool2d" : "avg_pool2d";
  Pool2dArgs args;
  args.mode = mode;
  args.ceil_mode = ceil_mode;
  args.count_include_pad = count_include_pad;
  args.kernel = expand_pool_arg(kernel_size, make_message(name, ": kernel_size must either be a single int, or a tuple of two ints").c_str());
  args.stride = stride.empty() ? args.kernel
                               : expand_pool_arg(stride, make_message(name, ": stride must either be omitted, a single int, or a tuple of two ints").c_str());
  args.padding = expand_pool_arg(padding, make_message(name, ": padding must either be a single int, or a tuple of two ints").c_str());
  args.dilation = expand_pool_arg(dilation, make_message(name, ": dilation must be either a single int, or a tuple of two ints").c_str());
  if (!is_max) {
    EMBER_CHECK(input.dim() >= 2, IndexError, "Dimension out of range (expected to be in range of [", -input.dim(),
                ", ", input.dim() - 1, "], but got -3)");
  }
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, ShapeError, "non-empty 3D or 4D (batch mode) tensor expected for input");
  EMBER_CHECK(args.stride[0] != 0 && args.stride[1] != 0, ValueError, "stride should not be zero");
  if (divisor_override) {
    EMBER_CHECK(*divisor_override != 0, ValueError, "divisor must be not zero");
    args.divisor_override = *divisor_override;
  }
  EMBER_CHECK(args.kernel[0] > 0 && args.kernel[1] > 0, ValueError, "kernel size should be greater than zero, but got kH: ",
              args.kernel[0], " kW: ", args.kernel[1]);
  EMBER_CHECK(args.stride[0] > 0 && args.stride[1] > 0, ValueError, "stride should be greater than zero, but got dH: ",
              args.stride[0], " dW: ", args.stride[1]);
  EMBER_CHECK(args.dilation[0] > 0 && args.dilation[1] > 0, ValueError,
              "dilation should be greater than zero, but got dilationH: ", args.dilation[0], " dilationW: ", args.dilation[1]);
  for (int d = 0; d < 2; ++d) {
    const std::int64_t effective = (args.kernel[d] - 1) * args.dilation[d] + 1;
    EMBER_CHECK(args.padding[d] >= 0 && args.padding[d] <= effective / 2, ValueError,
                "pad should be at most half of effective kernel size, but got pad=", args.padding[d],
                ", kernel_size=", args.kernel[d], " and dilation=", args.dilation[d]);
  }
  const Shape in = batched_sizes(input);
  EMBER_CHECK(in[1] != 0 && in[2] != 0 && in[3] != 0, ShapeError,
              "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:",
              shape_to_string(input.sizes()));
  for (int d = 0; d < 2; ++d)
    args.output[d] = pooling_output_size(in[2 + d], args.kernel[d], args.padding[d], args.stride[d], args.dilation[d], ceil_mode);
  EMBER_CHECK(args.output[0] >= 1 && args.output[1] >= 1, ShapeError, "Given input size: (", in[1], "x", in[2], "x",
              in[3], "). Calculated output size: (", in[1], "x", args.output[0], "x", args.output[1],
              "). Output size is too small");
  check_floating(input, name);
  return args;
}

Pool2dArgs check_adaptive_avg_pool2d(const Tensor& input, const ExpandingArray<2>& output_size) {
  EMBER_CHECK(output_size.valid(), ValueError, "adaptive_avg_pool2d: output_size must be 2");
  Pool2dArgs args;
  args.mode = PoolMode::AdaptiveAvg;
  args.output = output_size.expanded();
  EMBER_CHECK(args.output[0] >= 0 && args.output[1] >= 0, ValueError,
              "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {",
              args.output[0], ", ", args.output[1], "}");
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, ShapeError, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ",
              shape_to_string(input.sizes()));
  for (std::int64_t d = 1; d < input.dim(); ++d) {
    EMBER_CHECK(input.size(d) != 0, ShapeError,
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                shape_to_string(input.sizes()), " with dimension ", d, " being empty");
  }
  check_floating(input, "adaptive_avg_pool2d");
  return args;
}

namespace {

// Whether `device`'s pooling kernels run 16-bit max pooling themselves: the CPU's (fast and
// reference loops); CUDA widens.
bool pools_16_bit(Device device, const Pool2dArgs& args) {
  return args.mode == PoolMode::Max && device.is_cpu();
}

}  // namespace

std::tuple<Tensor, Tensor> pool2d(const Tensor& input_any, const Pool2dArgs& args) {
  // bfloat16/float16: the float32 kernel on the widened input, rounded once (a max is exact;
  // an average is PyTorch's float32 sum, rounded). Likewise the backward. The CPU's max
  // pooling runs in 16 bits itself (no copies: a max is exact, and its backward adds as
  // PyTorch's does, one rounding per addition).
  if (is_reduced_floating_point(input_any.dtype()) && !pools_16_bit(input_any.device(), args)) {
    auto [output, indices] = pool2d(widened(input_any), args);
    return {to_dtype(output, input_any.dtype()), indices};
  }
  const Tensor input = contiguous(input_any);
  const Shape in = batched_sizes(input);
  Shape out_sizes = input.sizes();
  out_sizes[out_sizes.size() - 2] = args.output[0];
  out_sizes[out_sizes.size() - 1] = args.output[1];
  Tensor output = empty(out_sizes, input.options());
  Tensor indices;
  if (args.mode == PoolMode::Max) indices = empty(out_sizes, input.options().dtype(DType::Int64));
  if (output.numel() == 0) return {output, indices};
  Pool2dPlan plan = make_plan(args, in, args.output[0], args.output[1]);
  plan.input = input.data_ptr();
  plan.output = output.data_ptr();
  plan.indices = indices.defined() ? static_cast<std::int64_t*>(indices.data_ptr()) : nullptr;
  plan.dtype = input.dtype();
  plan.device = input.device().index();
  pool2d_kernel(input.device(), plan);
  return {output, indices};
}

Tensor pool2d_backward(const Tensor& grad_output_any, const Tensor& indices_any, IntArrayRef input_sizes,
                       const Pool2dArgs& args) {
  if (is_reduced_floating_point(grad_output_any.dtype()) && !pools_16_bit(grad_output_any.device(), args))
    return to_dtype(pool2d_backward(widened(grad_output_any), indices_any, input_sizes, args), grad_output_any.dtype());
  const Tensor grad_output = contiguous(grad_output_any);
  const Tensor indices = indices_any.defined() ? contiguous(indices_any) : indices_any;
  Tensor grad_input = empty(input_sizes, grad_output.options());
  if (grad_input.numel() == 0) return grad_input;
  Shape in(input_sizes.begin(), input_sizes.end());
  if (in.size() == 3) in.insert(in.begin(), 1);
  Pool2dPlan plan = make_plan(args, in, args.output[0], args.output[1]);
  plan.input = grad_input.data_ptr();
  plan.output = grad_output.data_ptr();
  plan.indices = indices.defined() ? static_cast<std::int64_t*>(indices.data_ptr()) : nullptr;
  plan.dtype = grad_output.dtype();
  plan.device = grad_output.device().index();
  pool2d_backward_kernel(grad_output.device(), plan);
  return grad_input;
}

}  // namespace ember::native
