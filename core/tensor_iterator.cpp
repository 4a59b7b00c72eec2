// core/tensor_iterator.cpp — builds StridedPlans (the steps are explained in tensor_iterator.h).
#include <ember/core/tensor_iterator.h>

#include <algorithm>

namespace ember {

Shape broadcast_shape_of(const std::vector<Tensor>& tensors) {
  Shape shape;
  for (const Tensor& tensor : tensors) shape = broadcast_shapes(shape, tensor.sizes());
  return shape;
}

namespace {

// Operand k's stride for each of the output's dims, in the output's dim order (outermost
// first, as in Tensor::strides()). Step 1 of the header: broadcast dims get stride 0.
Shape broadcast_strides(const Tensor& operand, const Shape& out_sizes) {
  const std::size_t out_ndim = out_sizes.size();
  const std::size_t ndim = static_cast<std::size_t>(operand.dim());
  EMBER_CHECK(ndim <= out_ndim, ShapeError, "output with shape ", shape_to_string(out_sizes),
              " doesn't match the broadcast shape ", shape_to_string(broadcast_shapes(out_sizes, operand.sizes())));
  Shape strides(out_ndim, 0);
  const std::size_t lead = out_ndim - ndim;  // missing leading dims read like size 1
  for (std::size_t d = 0; d < ndim; ++d) {
    std::int64_t size = operand.sizes()[d];
    std::int64_t out_size = out_sizes[lead + d];
    if (size == out_size) {
      strides[lead + d] = operand.strides()[d];
    } else {
      // Only a size-1 dim may be stretched; anything else is a caller's mistake.
      EMBER_CHECK(size == 1, ShapeError, "output with shape ", shape_to_string(out_sizes),
                  " doesn't match the broadcast shape ",
                  shape_to_string(broadcast_shapes(out_sizes, operand.sizes())));
      strides[lead + d] = 0;
    }
  }
  return strides;
}

}  // namespace

void check_no_internal_overlap(const Tensor& output) {
  for (std::int64_t d = 0; d < output.dim(); ++d) {
    EMBER_CHECK(output.sizes()[d] <= 1 || output.strides()[d] != 0, ValueError,
                "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.");
  }
}

StridedPlan make_strided_plan(const Tensor& output, const std::vector<Tensor>& inputs) {
  EMBER_CHECK(inputs.size() + 1 <= static_cast<std::size_t>(kMaxOperands), ValueError,
              "make_strided_plan: at most ", kMaxOperands - 1, " inputs, got ", inputs.size());
  StridedPlan plan;
  plan.num_operands = static_cast<int>(inputs.size()) + 1;
  plan.numel = output.numel();

  const Shape& out_sizes = output.sizes();
  std::vector<Shape> strides;  // [operand][output dim]
  strides.push_back(output.strides());
  for (const Tensor& input : inputs) strides.push_back(broadcast_strides(input, out_sizes));

  // Step 2: keep only dims that actually move (size != 1). Listing them last-dim-first gives
  // the row-major order (innermost first) as the starting point.
  std::vector<int> dims;
  for (int d = static_cast<int>(out_sizes.size()) - 1; d >= 0; --d) {
    if (out_sizes[d] != 1) dims.push_back(d);
  }
  // Step 3: the output's smallest stride first. stable_sort keeps row-major order on ties.
  std::stable_sort(dims.begin(), dims.end(), [&](int a, int b) { return strides[0][a] < strides[0][b]; });

  // Step 4: coalesce, walking from the innermost dim outwards.
  std::vector<std::int64_t> sizes;
  std::vector<std::vector<std::int64_t>> plan_strides(plan.num_operands);
  for (int d : dims) {
    bool merge = !sizes.empty();
    for (int k = 0; merge && k < plan.num_operands; ++k) {
      merge = strides[k][d] == plan_strides[k].back() * sizes.back();
    }
    if (merge) {
      sizes.back() *= out_sizes[d];  // the inner dim keeps its stride and just gets longer
    } else {
      sizes.push_back(out_sizes[d]);
      for (int k = 0; k < plan.num_operands; ++k) plan_strides[k].push_back(strides[k][d]);
    }
  }
  EMBER_CHECK(sizes.size() <= static_cast<std::size_t>(kMaxDims), ValueError,
              "elementwise ops support at most ", kMaxDims, " dimensions after coalescing, got ", sizes.size());

  plan.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < plan.ndim; ++d) {
    plan.sizes[d] = sizes[d];
    for (int k = 0; k < plan.num_operands; ++k) plan.strides[k][d] = plan_strides[k][d];
  }
  plan.data[0] = output.data_ptr();
  plan.dtypes[0] = output.dtype();
  plan.device = output.device().index();  // every operand is on this device (checked by the caller)
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    plan.data[i + 1] = inputs[i].data_ptr();
    plan.dtypes[i + 1] = inputs[i].dtype();
  }

  // Step 5: the fast path: at most one dim left and every operand walks it with stride 1.
  plan.contiguous = plan.ndim == 0;
  if (plan.ndim == 1) {
    plan.contiguous = true;
    for (int k = 0; k < plan.num_operands; ++k) plan.contiguous = plan.contiguous && plan.strides[k][0] == 1;
  }
  return plan;
}

}  // namespace ember
