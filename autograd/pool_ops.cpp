// autograd/pool_ops.cpp — differentiable max_pool2d, avg_pool2d and adaptive_avg_pool2d.
//
// Issue 19 (core/pooling.cpp, core/conv_plans.h). The gradients:
//   max:  d x = each output gradient added at its window's argmax (the indices the forward
//         kept: the first maximum in scan order, or the NaN); MaxPool2DWithIndicesBackward0;
//   avg:  d x = each output gradient spread evenly over its window (divided by the same
//         divisor as the forward); AvgPool2DBackward0 / AdaptiveAvgPool2DBackward0.
// Both backward maps are linear in the output gradient and recorded as differentiable ops:
// the max one's adjoint is a gather at the indices, the average one's is the average pooling
// itself, so double backward (create_graph=true) works.
#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

namespace {

Tensor pool_forward(const Tensor& input, const native::Pool2dArgs& args);

// d input of a max pooling: the kernel adds each gradient at its index.
Tensor max_pool_input_grad(const Tensor& grad_output, const Tensor& indices, const Shape& input_sizes,
                           const native::Pool2dArgs& args) {
  Tensor out = native::pool2d_backward(grad_output, indices, input_sizes, args);
  if (needs_grad(grad_output)) {
    auto node = record("MaxPool2DWithIndicesBackwardBackward0", {grad_output}, out);
    node->save("indices", indices);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      Tensor idx = n.saved(0);
      // Reads each output's gradient back from its argmax: a gather over the flat plane.
      Tensor picked = ember::gather(ember::flatten(grads[0], -2), -1, ember::flatten(idx, -2));
      return {ember::view(picked, idx.sizes())};
    });
  }
  return out;
}

// d input of an average pooling: the adjoint of the average (same windows, same divisors).
Tensor avg_pool_input_grad(const Tensor& grad_output, const Shape& input_sizes, const native::Pool2dArgs& args) {
  Tensor out = native::pool2d_backward(grad_output, Tensor(), input_sizes, args);
  if (needs_grad(grad_output)) {
    const char* name = args.mode == PoolMode::AdaptiveAvg ? "AdaptiveAvgPool2DBackwardBackward0" : "AvgPool2DBackwardBackward0";
    auto node = record(name, {grad_output}, out);
    node->set_backward([args](Node&, const TensorList& grads) -> TensorList { return {pool_forward(grads[0], args)}; });
  }
  return out;
}

Tensor pool_forward(const Tensor& input, const native::Pool2dArgs& args) {
  auto [out, indices] = native::pool2d(input, args);
  if (!needs_grad(input)) return out;
  if (args.mode == PoolMode::Max) {
    auto node = record("MaxPool2DWithIndicesBackward0", {input}, out);
    node->save("indices", indices);
    Shape input_sizes = input.sizes();
    node->set_backward([args, input_sizes](Node& n, const TensorList& grads) -> TensorList {
      return {max_pool_input_grad(grads[0], n.saved(0), input_sizes, args)};
    });
    return out;
  }
  auto node = record(args.mode == PoolMode::AdaptiveAvg ? "AdaptiveAvgPool2DBackward0" : "AvgPool2DBackward0", {input}, out);
  Shape input_sizes = input.sizes();
  node->set_backward([args, input_sizes](Node&, const TensorList& grads) -> TensorList {
    return {avg_pool_input_grad(grads[0], input_sizes, args)};
  });
  return out;
}

}  // namespace

Tensor max_pool2d(const Tensor& input, const ExpandingArray<2>& kernel_size, const ExpandingArray<2>& stride,
                  const ExpandingArray<2>& padding, const ExpandingArray<2>& dilation, bool ceil_mode) {
  EMBER_RECORD_FUNCTION("max_pool2d", input);
  return pool_forward(input, native::check_pool2d(PoolMode::Max, input, kernel_size, stride, padding, dilation,
                                                  ceil_mode, true, std::nullopt));
}

Tensor avg_pool2d(const Tensor& input, const ExpandingArray<2>& kernel_size, const ExpandingArray<2>& stride,
                  const ExpandingArray<2>& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<std::int64_t> divisor_override) {
  EMBER_RECORD_FUNCTION("avg_pool2d", input);
  return pool_forward(input, native::check_pool2d(PoolMode::Avg, input, kernel_size, stride, padding, 1, ceil_mode,
                                                  count_include_pad, divisor_override));
}

Tensor adaptive_avg_pool2d(const Tensor& input, const ExpandingArray<2>& output_size) {
  EMBER_RECORD_FUNCTION("adaptive_avg_pool2d", input);
  return pool_forward(input, native::check_adaptive_avg_pool2d(input, output_size));
}

}  // namespace ember
