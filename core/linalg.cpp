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
//   N-D · 1-D/2-D -> the leading dims of A are folded into its rows, one big mm (when that
//                  is a view, or the smaller operand requires grad: matmul_should_fold)
//   otherwise   -> batched: leading ("batch") dims broadcast, then bmm per batch element
// The error messages are PyTorch 2.x's (measured on 2.15), including the ones its folding
// produces.
#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

#include <algorithm>
#include <utility>

namespace ember::native {

namespace {

// "2x3": how PyTorch writes a matrix shape in matmul messages.
std::string matrix_shape(std::int64_t rows, std::int64_t cols) { return make_message(rows, "x", cols); }

// PyTorch has no bool matrix product; it names the kernel that refused.
void check_not_bool(const Tensor& a, const char* kernel_name) {
  EMBER_CHECK(a.dtype() != DType::Bool, DTypeError, "\"", kernel_name, "\" not implemented for 'Bool'");
}

// The element type's C++ name, as PyTorch's mm message writes it (c10's TypeMeta names).
const char* cpp_type_name(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "unsigned char";
    case DType::Int32: return "int";
    case DType::Int64: return "long int";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float16: return "c10::Half";
    case DType::BFloat16: return "c10::BFloat16";
  }
  return "?";
}

// mm (and matmul's matrix products): both operands share a dtype, no promotion.
void check_mm_dtypes(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), DTypeError, "expected m1 and m2 to have the same dtype, but got: ",
              cpp_type_name(a.dtype()), " != ", cpp_type_name(b.dtype()));
}

// bmm: both operands must share a dtype (no promotion, as in PyTorch).
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

// The plan for C_b = alpha * A_b · B_b + beta * C_b; with `bias` (addmm on a backend that
// reads it, see addmm below) the addend scaled by beta is read from bias instead of C.
GemmPlan make_gemm_plan(const Operand& a, const Operand& b, const Operand& c, std::int64_t batch, std::int64_t m,
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
  return plan;
}

void run_gemm(const Operand& a, const Operand& b, const Operand& c, std::int64_t batch, std::int64_t m,
              std::int64_t n, std::int64_t k, double beta, double alpha, const Operand* bias = nullptr);

// The 16-bit floats multiply in float32: the operands are widened (exactly), the float32
// GEMM accumulates, and the result is rounded into C once, which is what PyTorch's bfloat16
// and float16 matmuls compute (fp32 accumulation; the order of the additions may differ, so
// a result can differ in its last bit). This is the plain path; a GEMM that reads 16-bit
// operands directly (AVX512-BF16 on the CPU: gemm_reads_16_bit_kernel) is used instead where
// the backend has one.
void run_gemm_in_float32(const Operand& a, const Operand& b, const Operand& c, std::int64_t batch, std::int64_t m,
                         std::int64_t n, std::int64_t k, double beta, double alpha, const Operand* bias) {
  const Tensor a32 = to_dtype(*a.tensor, DType::Float32), b32 = to_dtype(*b.tensor, DType::Float32);
  const Tensor c32 = beta != 0.0 && bias == nullptr ? to_dtype(*c.tensor, DType::Float32)
                                                    : empty(c.tensor->sizes(), c.tensor->options().dtype(DType::Float32));
  Tensor bias32;
  Operand bias_operand{};
  if (bias != nullptr) {
    bias32 = to_dtype(*bias->tensor, DType::Float32);
    bias_operand = {&bias32, bias->batch_dim, bias->row_dim, bias->col_dim};
  }
  run_gemm({&a32, a.batch_dim, a.row_dim, a.col_dim}, {&b32, b.batch_dim, b.row_dim, b.col_dim},
           {&c32, c.batch_dim, c.row_dim, c.col_dim}, batch, m, n, k, beta, alpha,
           bias != nullptr ? &bias_operand : nullptr);
  copy_(*c.tensor, c32);
}

void run_gemm(const Operand& a, const Operand& b, const Operand& c, std::int64_t batch, std::int64_t m,
              std::int64_t n, std::int64_t k, double beta, double alpha, const Operand* bias) {
  if (is_reduced_floating_point(c.tensor->dtype()) && !gemm_reads_16_bit_operands(c.tensor->device(), c.tensor->dtype()))
    return run_gemm_in_float32(a, b, c, batch, m, n, k, beta, alpha, bias);
  const GemmPlan plan = make_gemm_plan(a, b, c, batch, m, n, k, beta, alpha, bias);
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

// mv(a, v) for 2-D a and 1-D v: an m x k matrix times a k x 1 column -> [m]. PyTorch runs
// it as addmv into a result of v's dtype, which its messages call "input".
Tensor mv(const Tensor& a, const Tensor& v) {
  EMBER_CHECK(a.size(1) == v.size(0), ShapeError, "size mismatch, got input (", a.size(0), "), mat (",
              matrix_shape(a.size(0), a.size(1)), "), vec (", v.size(0), ")");
  EMBER_CHECK(a.dtype() == v.dtype(), DTypeError, "addmv input tensors must have the same dtype, but got ",
              scalar_type_name(v.dtype()), ", ", scalar_type_name(a.dtype()), ", and ", scalar_type_name(v.dtype()));
  check_not_bool(a, "addmv_impl_cpu");
  Tensor out = empty({a.size(0)}, a.options());
  run_gemm({&a, -1, 0, 1}, {&v, -1, 0, -1}, {&out, -1, 0, -1}, 1, a.size(0), 1, a.size(1), 0.0, 1.0);
  return out;
}

// `op` names the op in the message ("mm", "addmm"), as PyTorch 2.x does.
void check_mm_shapes(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(a.size(1) == b.size(0), ShapeError, op, ": mat1 and mat2 shapes cannot be multiplied (",
              matrix_shape(a.size(0), a.size(1)), " and ", matrix_shape(b.size(0), b.size(1)), ")");
}

// The batch dims of a batched matmul (a, b broadcast to one batch shape, out dense), merged
// wherever all three step through two neighbouring dims as through one: the outer dim's
// stride is the inner group's size times its stride. Size-1 dims never step and drop out.
// One group left means one strided-batch GEMM. More remain when an operand is a permuted
// view whose batch dims interleave with its rows, e.g. q = x.view(B, T, H, D).transpose(1, 2)
// (strides T·H·D, D, H·D, 1: B and H cannot merge), or when a dim is broadcast (stride 0)
// next to one that is not. Listed outermost first.
struct MergedBatch {
  Shape sizes, a_strides, b_strides, out_strides;
};

MergedBatch merge_batch_dims(const Tensor& a_full, const Tensor& b_full, IntArrayRef out_strides) {
  MergedBatch merged;
  for (std::int64_t d = a_full.dim() - 3; d >= 0; --d) {
    const std::int64_t size = a_full.size(d);
    if (size == 1) continue;
    const std::int64_t sa = a_full.stride(d), sb = b_full.stride(d), so = out_strides[d];
    if (!merged.sizes.empty()) {
      const std::int64_t inner = merged.sizes.back();
      if (sa == inner * merged.a_strides.back() && sb == inner * merged.b_strides.back() &&
          so == inner * merged.out_strides.back()) {
        merged.sizes.back() *= size;
        continue;
      }
    }
    merged.sizes.push_back(size);
    merged.a_strides.push_back(sa);
    merged.b_strides.push_back(sb);
    merged.out_strides.push_back(so);
  }
  for (Shape* list : {&merged.sizes, &merged.a_strides, &merged.b_strides, &merged.out_strides})
    std::reverse(list->begin(), list->end());
  return merged;
}

// a and b with their batch dims broadcast: [batch..., n, k] and [batch..., k, p] (expand is
// free: stride 0). Vectors become matrices first ([k] -> [1, k] left, [k, 1] right).
std::pair<Tensor, Tensor> broadcast_batch(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in.dim() == 1 ? unsqueeze(a_in, 0) : a_in;
  Tensor b = b_in.dim() == 1 ? unsqueeze(b_in, 1) : b_in;
  Shape a_batch(a.sizes().begin(), a.sizes().end() - 2);
  Shape b_batch(b.sizes().begin(), b.sizes().end() - 2);
  Shape batch = broadcast_shapes(a_batch, b_batch);
  EMBER_CHECK(b.size(-2) == a.size(-1), ShapeError, "Expected size for first two dimensions of batch2 tensor to be: [",
              compute_numel(batch), ", ", a.size(-1), "] but got: [", compute_numel(batch), ", ", b.size(-2), "].");
  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {a.size(-2), a.size(-1)});
  b_full.insert(b_full.end(), {b.size(-2), b.size(-1)});
  return {expand(a, a_full), expand(b, b_full)};
}

// The batched case of matmul: at least one operand has >= 3 dims, or the right one does.
// The batch dims broadcast, and the result drops the dims the vectors added. The operands
// are read in place whatever their strides: one strided-batch GEMM over the merged batch
// dims (the usual case), or, when they do not all merge (merge_batch_dims), one strided-batch
// GEMM per index of the other groups; never a copy.
Tensor matmul_batched(const Tensor& a_in, const Tensor& b_in) {
  // The 16-bit floats: in float32, rounded once, as run_gemm_in_float32 (this path builds its
  // own plans), unless the backend reads them itself.
  if (is_reduced_floating_point(a_in.dtype()) && !gemm_reads_16_bit_operands(a_in.device(), a_in.dtype()))
    return to_dtype(matmul_batched(widened(a_in), widened(b_in)), a_in.dtype());
  auto [a, b] = broadcast_batch(a_in, b_in);
  const std::int64_t batch_dims = a.dim() - 2;
  const std::int64_t n = a.size(-2), k = a.size(-1), p = b.size(-1);
  Shape batch(a.sizes().begin(), a.sizes().end() - 2);
  Shape out_full = batch;
  out_full.insert(out_full.end(), {n, p});
  Tensor out = empty(out_full, a.options());

  if (out.numel() > 0) {
    const MergedBatch merged = merge_batch_dims(a, b, out.strides());
    const int row = static_cast<int>(batch_dims), col = row + 1;
    GemmPlan plan = make_gemm_plan({&a, -1, row, col}, {&b, -1, row, col}, {&out, -1, row, col}, 1, n, p, k, 0.0, 1.0);
    // The largest group is the GEMM's own batch (fewest calls: on a GPU, fewest launches);
    // the GEMM runs once per index of the other groups, from offset base pointers.
    const std::size_t groups = merged.sizes.size();
    std::size_t gemm_group = 0;
    for (std::size_t g = 1; g < groups; ++g)
      if (merged.sizes[g] > merged.sizes[gemm_group]) gemm_group = g;
    std::int64_t outer_count = 1;
    if (groups > 0) {
      plan.batch = merged.sizes[gemm_group];
      plan.batch_stride_a = merged.a_strides[gemm_group];
      plan.batch_stride_b = merged.b_strides[gemm_group];
      plan.batch_stride_c = merged.out_strides[gemm_group];
      for (std::size_t g = 0; g < groups; ++g)
        if (g != gemm_group) outer_count *= merged.sizes[g];
    }
    const auto* a_base = static_cast<const char*>(plan.a);
    const auto* b_base = static_cast<const char*>(plan.b);
    auto* c_base = static_cast<char*>(plan.c);
    const auto item = static_cast<std::int64_t>(out.element_size());
    for (std::int64_t outer = 0; outer < outer_count; ++outer) {
      // This call's element offsets in each operand: `outer` spelled in the other groups'
      // sizes, the innermost group's index varying fastest.
      std::int64_t rest = outer, offset_a = 0, offset_b = 0, offset_c = 0;
      for (std::size_t g = groups; g > 0; --g) {
        if (g - 1 == gemm_group) continue;
        const std::int64_t index = rest % merged.sizes[g - 1];
        rest /= merged.sizes[g - 1];
        offset_a += index * merged.a_strides[g - 1];
        offset_b += index * merged.b_strides[g - 1];
        offset_c += index * merged.out_strides[g - 1];
      }
      // k = 0: a and b hold no elements and may have no storage (a null base); the GEMM then
      // only writes zeros to c, and an offset from null would be undefined behaviour.
      plan.a = a_base != nullptr ? a_base + offset_a * item : nullptr;
      plan.b = b_base != nullptr ? b_base + offset_b * item : nullptr;
      plan.c = c_base + offset_c * item;
      gemm_kernel(out.device(), plan);
    }
  }

  Shape out_sizes = batch;
  if (a_in.dim() > 1) out_sizes.push_back(n);
  if (b_in.dim() > 1) out_sizes.push_back(p);
  return view(out, out_sizes);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  check_same_device(a, b);
  EMBER_CHECK(a.dim() == 2, ShapeError, "mm: self must be a matrix, got ", a.dim(), "-D tensor");
  EMBER_CHECK(b.dim() == 2, ShapeError, "mm: mat2 must be a matrix, got ", b.dim(), "-D tensor");
  check_mm_shapes(a, b, "mm");
  check_mm_dtypes(a, b);
  check_not_bool(a, "addmm_impl_cpu_");
  profiler::add_flops(2.0 * static_cast<double>(a.size(0)) * static_cast<double>(a.size(1)) * static_cast<double>(b.size(1)));
  return mm_unchecked(a, b);
}

Tensor mm_transposed(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, bool transposed_result) {
  check_same_device(a, b);
  EMBER_CHECK(a.dim() == 2, ShapeError, "mm: self must be a matrix, got ", a.dim(), "-D tensor");
  EMBER_CHECK(b.dim() == 2, ShapeError, "mm: mat2 must be a matrix, got ", b.dim(), "-D tensor");
  // The dims of each stored matrix that are op()'s rows and columns.
  const int a_row = transpose_a ? 1 : 0, b_row = transpose_b ? 1 : 0;
  const std::int64_t m = a.size(a_row), k = a.size(1 - a_row), n = b.size(1 - b_row);
  EMBER_CHECK(b.size(b_row) == k, ShapeError, "mm: mat1 and mat2 shapes cannot be multiplied (", matrix_shape(m, k),
              " and ", matrix_shape(b.size(b_row), n), ")");
  check_mm_dtypes(a, b);
  check_not_bool(a, "addmm_impl_cpu_");
  profiler::add_flops(2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n));
  // A transposed result is the transpose of a contiguous [n, m]: strides (1, m), 1 for an empty dim.
  const Tensor out = transposed_result ? empty_strided({m, n}, {1, std::max<std::int64_t>(m, 1)}, a.options())
                                       : empty({m, n}, a.options());
  run_gemm({&a, -1, a_row, 1 - a_row}, {&b, -1, b_row, 1 - b_row}, {&out, -1, 0, 1}, 1, m, n, k, 0.0, 1.0);
  return out;
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
  profiler::add_flops(2.0 * static_cast<double>(a.size(0)) * static_cast<double>(a.size(1)) *
                      static_cast<double>(a.size(2)) * static_cast<double>(b.size(2)));
  return bmm_unchecked(a, b);
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  check_same_device(a, b);
  check_same_device(bias, a);
  // PyTorch's order: the dtypes (bias against mat2, then mat1 against mat2), the dims, the
  // shapes, the bias's broadcast, the kernel. Its message calls mat1 "self" in the dim check.
  EMBER_CHECK(bias.dtype() == b.dtype(), DTypeError, "self and mat2 must have the same dtype, but got ",
              scalar_type_name(bias.dtype()), " and ", scalar_type_name(b.dtype()));
  EMBER_CHECK(a.dtype() == b.dtype(), DTypeError, "mat1 and mat2 must have the same dtype, but got ",
              scalar_type_name(a.dtype()), " and ", scalar_type_name(b.dtype()));
  EMBER_CHECK(a.dim() == 2, ShapeError, "addmm: self must be a matrix, got ", a.dim(), "-D tensor");
  EMBER_CHECK(b.dim() == 2, ShapeError, "addmm: mat2 must be a matrix, got ", b.dim(), "-D tensor");
  check_mm_shapes(a, b, "addmm");
  std::int64_t m = a.size(0), n = b.size(1);
  profiler::add_flops(2.0 * static_cast<double>(m) * static_cast<double>(a.size(1)) * static_cast<double>(n));
  Tensor bias_full = expand(bias, {m, n});  // checks the broadcast with PyTorch's message
  check_not_bool(a, "addmm_impl_cpu_");
  // beta == 0 ignores the bias entirely (even NaNs in it), as PyTorch does. Otherwise a
  // backend with an addmm kernel (CUDA's GEMM epilogue, the CPU's row copies) gets the
  // broadcast view itself — stride 0 along the rows, so the bias vector is read in place;
  // other backends start from a general copy of it in `out`.
  const bool use_bias = beta.to_double() != 0.0;
  // (A 0-d CPU bias may join a CUDA addmm: that one still goes through the copy.)
  const bool epilogue_reads_bias =
      use_bias && bias.device() == a.device() && addmm_kernel.has_kernel(a.device());
  // The copy makes `out` (not copy_ into an empty one): a fresh result starts at version
  // 0, as PyTorch's does, and the fused Linear + ReLU, whose result shares this storage
  // and its counter (native::relu_over_fresh), records the unfused tape's versions.
  Tensor out = !use_bias || epilogue_reads_bias ? empty({m, n}, a.options())
                : bias.device() == a.device()        ? clone(bias_full)  // always a new dense tensor
                                                     : to_device(bias_full, a.device());
  const Operand bias_operand{&bias_full, -1, 0, 1};
  run_gemm({&a, -1, 0, 1}, {&b, -1, 0, 1}, {&out, -1, 0, 1}, 1, m, n, a.size(1), beta.to_double(),
           alpha.to_double(), epilogue_reads_bias ? &bias_operand : nullptr);
  return out;
}

// PyTorch's (2.x) rule for folding the batch dims of the larger operand (>= 3-D, beside a
// matrix or a vector) into the rows of one mm or mv instead of one bmm: fold when the smaller
// operand requires grad (its gradient is then one product, not a batch of products summed
// over the broadcast batch: a copy now saves memory in the backward), otherwise only when
// the fold is a free view (the batch dims are contiguous with each other) and the first
// operand is not a matrix (matrix @ batch would need its result transposed and copied).
// PyTorch 1.13 folded whenever the larger operand was not a transposed 3-D tensor.
bool matmul_should_fold(const Tensor& a, const Tensor& b) {
  const bool a_larger = a.dim() >= b.dim();
  const Tensor& larger = a_larger ? a : b;
  const Tensor& smaller = a_larger ? b : a;
  if (larger.dim() < 3 || smaller.dim() > 2) return false;
  if (smaller.requires_grad()) return true;
  if (a.dim() == 2) return false;
  if (larger.numel() == 0) return true;
  // The larger operand as the left one: b's last two dims swap when b is the larger.
  Shape sizes = larger.sizes(), strides = larger.strides();
  if (!a_larger) {
    std::swap(sizes[sizes.size() - 1], sizes[sizes.size() - 2]);
    std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
  }
  for (std::size_t i = 0; i + 2 < sizes.size(); ++i)
    if (strides[i] != strides[i + 1] * sizes[i + 1]) return false;
  return true;
}

bool matmul_batch_is_one_stride(const Tensor& a, const Tensor& b) {
  auto [a_full, b_full] = broadcast_batch(a, b);
  Shape out_full(a_full.sizes().begin(), a_full.sizes().end() - 2);
  out_full.insert(out_full.end(), {a_full.size(-2), b_full.size(-1)});
  return merge_batch_dims(a_full, b_full, contiguous_strides(out_full)).sizes.size() <= 1;
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
    check_mm_shapes(row, b, "mm");
    check_mm_dtypes(a, b);
    check_not_bool(a, "addmm_impl_cpu_");
    return squeeze(mm_unchecked(row, b), 0);
  }
  if (dim_a == 2 && dim_b == 2) return mm(a, b);
  if (matmul_should_fold(a, b) && dim_a >= 3) {
    // Fold A's leading dims into rows: [..., n, k] -> [(...) * n, k], one mm, unfold.
    // (A batch on the right folds only when the smaller operand requires grad, which the
    // autograd matmul handles; here it runs as the bmm it computes the same values as.)
    Shape leading(a.sizes().begin(), a.sizes().end() - 1);
    Tensor folded = reshape(a, {compute_numel(leading), a.size(-1)});  // explicit rows: k may be 0
    Tensor product = dim_b == 1 ? mv(folded, b) : mm(folded, b);
    if (dim_b == 2) leading.push_back(b.size(1));
    return view(product, leading);
  }
  check_same_dtype(a, b);
  check_not_bool(a, "bmm");
  return matmul_batched(a, b);
}

}  // namespace ember::native
