// core/linalg.cpp — mm, bmm, addmm and matmul: checks, shapes, and one GemmPlan each.
//
// Tutorial §2.4: `tensor2d.matmul(tensor2d.T)` and `tensor2d @ tensor2d.T` (int64 inputs
// give [[14, 32], [32, 77]]), and the matrix products inside every nn.Linear.
// Every op here reduces to a batched strided GEMM (core/strided_index.h, GemmPlan) that
// the device's backend runs (core/cpu/gemm.cpp on the CPU). Because a GemmPlan takes
// arbitrary strides, transposed and sliced operands are passed as they are — no copies.
//
// torch.matmul's dispatch on the operands' dims (reproduced in matmul below):
//   1-D · 1-D  -> dot product, a 0-d tensor
//   2-D · 1-D  -> matrix-vector, 2-D · 2-D -> mm, 1-D · 2-D -> [1, k] · B, then squeezed
//   N-D · 1-D/2-D -> the leading dims of A are folded into its rows, one big mm
//   otherwise   -> batched: leading ("batch") dims broadcast, then bmm per batch element
// The error messages are PyTorch 1.13's, including the ones its folding produces.
#include <ember/core/backend.h>
#include <ember/core/native.h>

namespace ember::native {

namespace {

// "2x3": how PyTorch writes a matrix shape in matmul messages.
std::string matrix_shape(std::int64_t rows, std::int64_t cols) { return make_message(rows, "x", cols); }

// PyTorch has no bool matrix product; it names the kernel that refused.
void check_not_bool(const Tensor& a, const char* kernel_name) {
  EMBER_CHECK(a.dtype() != DType::Bool, DTypeError, "\"", kernel_name, "\" not implemented for 'Bool'");
}

// mm / bmm / mv: both operands must share a dtype (no promotion, as in PyTorch).
void check_same_dtype(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), DTypeError, "expected scalar type ", scalar_type_name(a.dtype()),
              " but found ", scalar_type_name(b.dtype()));
}

// Runs C_b = alpha * A_b · B_b + beta * C_b on the operands' device. Each operand is given
// as a tensor plus the indices of its batch / row / column dims (-1: that dim is absent
// and has size 1), so vectors and matrices need no reshaping.
struct Operand {
  const Tensor* tensor;
  int batch_dim, row_dim, col_dim;
  std::int64_t stride(int dim) const { return dim < 0 ? 0 : tensor->stride(dim); }
};

// With `bias` (addmm on a backend that reads it, see addmm below) the addend scaled by beta
// is read from bias instead of C.
void run_gemm(const Operand& a, const Operand& b, const Operand& c, std::int64_t batch, std::int64_t m,
              std::int64_t n, std::int64_t k, double beta, double alpha, const Operand* bias = nullptr) {
  GemmPlan plan;
  plan.batch = batch;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  plan.a = a.tensor->data_ptr();
  plan.batch_stride_a = a.stride(a.batch_dim);
  plan.row_stride_a = a.stride(a.row_dim);
  plan.col_stride_a = a.stride(a.col_dim);
  plan.b = b.tensor->data_ptr();
  plan.batch_stride_b = b.stride(b.batch_dim);
  plan.row_stride_b = b.stride(b.row_dim);
  plan.col_stride_b = b.stride(b.col_dim);
  plan.c = c.tensor->data_ptr();
  plan.batch_stride_c = c.stride(c.batch_dim);
  plan.row_stride_c = c.stride(c.row_dim);
  plan.col_stride_c = c.stride(c.col_dim);
  plan.alpha = alpha;
  plan.beta = beta;
  plan.dtype = c.tensor->dtype();
  if (bias != nullptr) {
    plan.bias = bias->tensor->data_ptr();
    plan.batch_stride_bias = bias->stride(bias->batch_dim);
    plan.row_stride_bias = bias->stride(bias->row_dim);
    plan.col_stride_bias = bias->stride(bias->col_dim);
  }
  plan.device = c.tensor->device().index();
  if (bias != nullptr) addmm_kernel(c.tensor->device(), plan);
  else gemm_kernel(c.tensor->device(), plan);
}

// Plain out = a · b for 2-D a and b that have already been checked.
Tensor mm_unchecked(const Tensor& a, const Tensor& b) {
  Tensor out = empty({a.size(0), b.size(1)}, a.options());
  run_gemm({&a, -1, 0, 1}, {&b, -1, 0, 1}, {&out, -1, 0, 1}, 1, a.size(0), b.size(1), a.size(1), 0.0, 1.0);
  return out;
}

// Plain out = a · b for 3-D a and b that have already been checked.
Tensor bmm_unchecked(const Tensor& a, const Tensor& b) {
  Tensor out = empty({a.size(0), a.size(1), b.size(2)}, a.options());
  run_gemm({&a, 0, 1, 2}, {&b, 0, 1, 2}, {&out, 0, 1, 2}, a.size(0), a.size(1), b.size(2), a.size(2), 0.0, 1.0);
  return out;
}

// dot(a, b) for 1-D a, b: a 1 x k row times a k x 1 column, written into a 0-d tensor.
Tensor dot(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), DTypeError, "dot : expected both vectors to have same dtype, but found ",
              scalar_type_name(a.dtype()), " and ", scalar_type_name(b.dtype()));
  check_not_bool(a, "dot");
  EMBER_CHECK(a.numel() == b.numel(), ShapeError, "inconsistent tensor size, expected tensor [", a.numel(),
              "] and src [", b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ",
              b.numel(), " elements respectively");
  Tensor out = empty({}, a.options());
  run_gemm({&a, -1, -1, 0}, {&b, -1, 0, -1}, {&out, -1, -1, -1}, 1, 1, 1, a.size(0), 0.0, 1.0);
  return out;
}

// mv(a, v) for 2-D a and 1-D v: an m x k matrix times a k x 1 column -> [m].
Tensor mv(const Tensor& a, const Tensor& v) {
  check_same_dtype(a, v);
  check_not_bool(a, "addmv_impl_cpu");
  EMBER_CHECK(a.size(1) == v.size(0), ShapeError, "size mismatch, got ", a.size(0), ", ",
              matrix_shape(a.size(0), a.size(1)), ",", v.size(0));
  Tensor out = empty({a.size(0)}, a.options());
  run_gemm({&a, -1, 0, 1}, {&v, -1, 0, -1}, {&out, -1, 0, -1}, 1, a.size(0), 1, a.size(1), 0.0, 1.0);
  return out;
}

void check_mm_shapes(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.size(1) == b.size(0), ShapeError, "mat1 and mat2 shapes cannot be multiplied (",
              matrix_shape(a.size(0), a.size(1)), " and ", matrix_shape(b.size(0), b.size(1)), ")");
}

// Shapes as PyTorch's folding sees them when a 1-D/2-D tensor multiplies an N-D one
// (N >= 3): it computes (b^T folded to rows) · a^T. We compute the result the batched
// way, but word shape errors as that fold does so they match PyTorch's text.
void check_folded_transposed_shapes(const Tensor& a, const Tensor& b) {
  std::int64_t k = a.size(-1);
  std::int64_t b_rows = b.size(-2);
  if (k == b_rows) return;
  std::int64_t folded_rows = 1;  // batch * p: every dim of b except its rows
  for (std::int64_t d = 0; d < b.dim(); ++d)
    if (d != b.dim() - 2) folded_rows *= b.size(d);
  if (a.dim() == 1) {
    throw ShapeError(make_message("size mismatch, got ", folded_rows, ", ", matrix_shape(folded_rows, b_rows), ",", k));
  }
  throw ShapeError(make_message("mat1 and mat2 shapes cannot be multiplied (", matrix_shape(folded_rows, b_rows),
                                " and ", matrix_shape(k, a.size(0)), ")"));
}

// The batched case of matmul: at least one operand has >= 3 dims, or the right one does.
// Vectors become matrices ([k] -> [1, k] on the left, [k, 1] on the right), the batch dims
// broadcast, and the result drops the dims the vectors added.
Tensor matmul_batched(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in.dim() == 1 ? unsqueeze(a_in, 0) : a_in;
  Tensor b = b_in.dim() == 1 ? unsqueeze(b_in, 1) : b_in;
  std::int64_t n = a.size(-2), k = a.size(-1), p = b.size(-1);
  Shape a_batch(a.sizes().begin(), a.sizes().end() - 2);
  Shape b_batch(b.sizes().begin(), b.sizes().end() - 2);
  Shape batch = broadcast_shapes(a_batch, b_batch);
  std::int64_t batch_numel = compute_numel(batch);

  // Broadcast each operand to batch + its matrix shape, then view the batch dims as one.
  // expand is free (stride 0); reshape copies only when the batch dims cannot be merged.
  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {n, k});
  b_full.insert(b_full.end(), {b.size(-2), p});
  EMBER_CHECK(b.size(-2) == k, ShapeError, "Expected size for first two dimensions of batch2 tensor to be: [",
              batch_numel, ", ", k, "] but got: [", batch_numel, ", ", b.size(-2), "].");
  Tensor a3 = reshape(expand(a, a_full), {batch_numel, n, k});
  Tensor b3 = reshape(expand(b, b_full), {batch_numel, k, p});
  Tensor out3 = bmm_unchecked(a3, b3);

  Shape out_sizes = batch;
  if (a_in.dim() > 1) out_sizes.push_back(n);
  if (b_in.dim() > 1) out_sizes.push_back(p);
  return view(out3, out_sizes);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  check_same_device(a, b);
  EMBER_CHECK(a.dim() == 2, ShapeError, "self must be a matrix");
  EMBER_CHECK(b.dim() == 2, ShapeError, "mat2 must be a matrix");
  check_mm_shapes(a, b);
  check_same_dtype(a, b);
  check_not_bool(a, "addmm_impl_cpu_");
  return mm_unchecked(a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  check_same_device(a, b);
  EMBER_CHECK(a.dim() == 3, ShapeError, "batch1 must be a 3D tensor");
  EMBER_CHECK(b.dim() == 3, ShapeError, "batch2 must be a 3D tensor");
  EMBER_CHECK(b.size(0) == a.size(0) && b.size(1) == a.size(2), ShapeError,
              "Expected size for first two dimensions of batch2 tensor to be: [", a.size(0), ", ", a.size(2),
              "] but got: [", b.size(0), ", ", b.size(1), "].");
  check_same_dtype(a, b);
  check_not_bool(a, "bmm");
  return bmm_unchecked(a, b);
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  check_same_device(a, b);
  check_same_device(bias, a);
  EMBER_CHECK(a.dim() == 2, ShapeError, "mat1 must be a matrix, got ", a.dim(), "-D tensor");
  EMBER_CHECK(b.dim() == 2, ShapeError, "mat2 must be a matrix, got ", b.dim(), "-D tensor");
  check_mm_shapes(a, b);
  EMBER_CHECK(bias.dtype() == a.dtype() && a.dtype() == b.dtype(), DTypeError,
              "self and mat2 must have the same dtype");
  check_not_bool(a, "addmm_impl_cpu_");
  std::int64_t m = a.size(0), n = b.size(1);
  Tensor bias_full = expand(bias, {m, n});  // checks the broadcast with PyTorch's message
  Tensor out = empty({m, n}, a.options());
  // beta == 0 ignores the bias entirely (even NaNs in it), as PyTorch does. Otherwise a
  // backend whose GEMM epilogue reads the bias (CUDA) gets the broadcast view itself —
  // stride 0 along the rows, so the bias vector is read in place and never copied into
  // `out`; other backends (the CPU's) start from a copy of it in `out`.
  const bool use_bias = beta.to_double() != 0.0;
  // (A 0-d CPU bias may join a CUDA addmm: that one still goes through the copy.)
  const bool epilogue_reads_bias =
      use_bias && bias.device() == out.device() && addmm_kernel.has_kernel(out.device());
  if (use_bias && !epilogue_reads_bias) copy_(out, bias_full);
  const Operand bias_operand{&bias_full, -1, 0, 1};
  run_gemm({&a, -1, 0, 1}, {&b, -1, 0, 1}, {&out, -1, 0, 1}, 1, m, n, a.size(1), beta.to_double(),
           alpha.to_double(), epilogue_reads_bias ? &bias_operand : nullptr);
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_device(a, b);
  std::int64_t dim_a = a.dim(), dim_b = b.dim();
  EMBER_CHECK(dim_a > 0 && dim_b > 0, ShapeError, "both arguments to matmul need to be at least 1D, but they are ",
              dim_a, "D and ", dim_b, "D");
  if (dim_a == 1 && dim_b == 1) return dot(a, b);
  if (dim_a == 2 && dim_b == 1) return mv(a, b);
  if (dim_a == 1 && dim_b == 2) {
    Tensor row = unsqueeze(a, 0);
    check_mm_shapes(row, b);
    check_same_dtype(a, b);
    check_not_bool(a, "addmm_impl_cpu_");
    return squeeze(mm_unchecked(row, b), 0);
  }
  if (dim_a == 2 && dim_b == 2) return mm(a, b);
  if (dim_a >= 3 && dim_b <= 2) {
    // Fold A's leading dims into rows: [..., n, k] -> [(...) * n, k], one mm, unfold.
    Shape leading(a.sizes().begin(), a.sizes().end() - 1);
    Tensor folded = reshape(a, {compute_numel(leading), a.size(-1)});  // explicit rows: k may be 0
    Tensor product = dim_b == 1 ? mv(folded, b) : mm(folded, b);
    if (dim_b == 2) leading.push_back(b.size(1));
    return view(product, leading);
  }
  if (dim_a <= 2) check_folded_transposed_shapes(a, b);  // 1-D/2-D times N-D
  check_same_dtype(a, b);
  check_not_bool(a, "bmm");
  return matmul_batched(a, b);
}

}  // namespace ember::native
