// core/topk.cpp — native::topk (core/native.h): PyTorch's checks, the [slices, size] layout,
// one call of the topk kernel family (core/backend.h, core/topk_plan.h).
//
// Issue 21 (text generation keeps the k most likely tokens; multinomial without replacement
// is a topk, core/sampling.cpp). The kernels see the chosen dim last and contiguous: a
// permuted view copied once, [slices, size]; the [slices, k] results are permuted back and
// made contiguous, as PyTorch's outputs are. Tensors on a GPU are copied to the CPU, selected
// there and copied back (no device kernel: a selection is branchy, and the results must
// order ties as the CPU does).
#include <ember/core/native.h>

#include <numeric>

#include <ember/core/backend.h>
#include <ember/core/factories.h>

namespace ember::native {

std::tuple<Tensor, Tensor> topk(const Tensor& self, std::int64_t k, std::int64_t dim, bool largest, bool sorted) {
  const std::int64_t ndim = self.dim();
  const std::int64_t d = wrap_dim(dim, ndim);
  EMBER_CHECK(k >= 0 && k <= (ndim > 0 ? self.size(d) : 1), IndexError, "selected index k out of range");
  EMBER_CHECK(self.dtype() != DType::Bool, NotImplementedError, "topk does not support bool dtypes on CPU");
  if (!self.is_cpu()) {
    auto [values, indices] = topk(to_device(self, kCPU), k, dim, largest, sorted);
    return {to_device(values, self.device()), to_device(indices, self.device())};
  }
  const TensorOptions index_options = TensorOptions().dtype(DType::Int64);
  if (ndim == 0) return {clone(self), zeros({}, index_options)};  // a 0-d tensor is its own top 1 (even for k = 0)

  // dim moved last: [other dims..., size] -> rows of `size`.
  std::vector<std::int64_t> order(static_cast<std::size_t>(ndim));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  order.erase(order.begin() + d);
  order.push_back(d);
  Tensor rows = contiguous(permute(self, order));
  Shape permuted_out = rows.sizes();
  permuted_out.back() = k;
  Tensor values = empty(permuted_out, self.options());
  Tensor indices = empty(permuted_out, index_options);
  if (values.numel() > 0) {
    TopkPlan plan;
    plan.input = rows.data_ptr();
    plan.values = values.data_ptr();
    plan.indices = indices.data_ptr<std::int64_t>();
    plan.size = self.size(d);
    plan.slices = rows.numel() / plan.size;
    plan.k = k;
    plan.largest = largest;
    plan.sorted = sorted;
    plan.dtype = self.dtype();
    topk_kernel(self.device(), plan);
  }
  // Back to the input's dim order: the inverse permutation puts the last dim at d.
  std::vector<std::int64_t> inverse(static_cast<std::size_t>(ndim));
  for (std::int64_t i = 0; i < ndim; ++i) inverse[static_cast<std::size_t>(order[i])] = i;
  return {contiguous(permute(values, inverse)), contiguous(permute(indices, inverse))};
}

}  // namespace ember::native
