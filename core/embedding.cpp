// core/embedding.cpp — native::embedding and native::embedding_backward (core/embedding.h):
// PyTorch's checks and messages, the flat [count, dim] layout, one kernel call.
//
// Index values are checked here on the host, as core/indexing.cpp does for index_select:
// kernels never validate input (core/backend.h), and the backward kernels rely on every
// index lying in [0, num_weights) (they sort by it).
#include <ember/core/embedding.h>

#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>

namespace ember::native {

namespace {

// How PyTorch's checkScalarTypes names a tensor's type: its legacy class (torch.FloatTensor,
// torch.cuda.ByteTensor), or for Bool, which has none, "CPUBoolType" / "CUDABoolType".
std::string legacy_type_name(const Tensor& tensor) {
  if (tensor.dtype() == DType::Bool) return tensor.is_cuda() ? "CUDABoolType" : "CPUBoolType";
  return std::string(tensor.is_cuda() ? "torch.cuda." : "torch.") + scalar_type_name(tensor.dtype()) + "Tensor";
}

}  // namespace

void check_embedding_indices(const Tensor& indices, int argument, const char* function) {
  EMBER_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32, DTypeError,
              "Expected tensor for argument #", argument,
              " 'indices' to have one of the following scalar types: Long, Int; but got ", legacy_type_name(indices),
              " instead (while checking arguments for ", function, ")");
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  EMBER_CHECK(weight.dim() == 2, ShapeError, "'weight' must be 2-D");
  check_embedding_indices(indices, 1, "embedding");
  // index_select checks the range ("index out of range in self") and copies only the rows.
  Tensor rows = index_select(weight, 0, reshape(indices, {-1}));
  Shape out_sizes = indices.sizes();
  out_sizes.push_back(weight.size(1));
  return view(rows, out_sizes);
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_weights,
                          std::int64_t padding_idx) {
  check_embedding_indices(indices, 2, "embedding_backward");
  EMBER_CHECK(is_floating_point(grad.dtype()), DTypeError, "\"embedding_backward\" not implemented for '",
              scalar_type_name(grad.dtype()), "'");
  EMBER_CHECK(num_weights >= 0, ValueError, "embedding_backward(): num_weights must be non-negative, got ",
              num_weights);
  bool fits = grad.dim() == indices.dim() + 1;
  for (std::int64_t d = 0; fits && d < indices.dim(); ++d) fits = grad.size(d) == indices.size(d);
  EMBER_CHECK(fits, ShapeError, "embedding_backward(): grad of shape ", shape_to_string(grad.sizes()),
              " does not fit indices of shape ", shape_to_string(indices.sizes()),
              " (expected the indices' shape followed by the embedding dim)");
  const std::int64_t dim = grad.size(-1);
  Tensor grad_weight = empty({num_weights, dim}, grad.options());
  if (grad_weight.numel() == 0) return grad_weight;

  Tensor index_cpu = contiguous(to_dtype(to_device(reshape(indices, {-1}), kCPU), DType::Int64));
  const auto* values = index_cpu.data_ptr<std::int64_t>();
  for (std::int64_t p = 0; p < index_cpu.numel(); ++p) {
    EMBER_CHECK(values[p] >= 0 && values[p] < num_weights, IndexError, "embedding_backward(): index ", values[p],
                " is out of range for num_weights ", num_weights);
  }
  Tensor index_device = contiguous(to_device(index_cpu, grad.device()));
  Tensor grad_data = contiguous(grad);
  EmbeddingBackwardPlan plan;
  plan.grad = grad_data.data_ptr();
  plan.indices = static_cast<const std::int64_t*>(index_device.data_ptr());
  plan.grad_weight = grad_weight.data_ptr();
  plan.count = index_cpu.numel();
  plan.dim = dim;
  plan.num_weights = num_weights;
  plan.padding_idx = padding_idx;
  plan.dtype = grad.dtype();
  plan.device = grad.device().index();
  embedding_backward_kernel(grad.device(), plan);
  return grad_weight;
}

}  // namespace ember::native
