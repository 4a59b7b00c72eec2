// core/reduce.cpp — native reductions: sum, mean, prod, amax/amin, max/min with indices,
// argmax/argmin, softmax/log_softmax, and the allclose/equal comparisons.
//
// Tutorial §2.3 (x.sum(), x.mean(dim=1)) and §5 (softmax in the loss). A reduction folds
// some dims of its input away. Backends get one simple picture of it, a ReducePlan
// (core/strided_index.h): a contiguous input seen as [outer, reduce, inner], folded along the
// middle. Getting there (reduction_layout below):
//   - reduced dims that sit next to each other (dims {1, 2} of a 4-d tensor) already are a
//     middle block: outer = product of the dims before, inner = product of the dims after;
//   - scattered dims ({0, 2}) are first moved to the end by a permuted view and copied
//     contiguous, giving [kept..., reduced...] = [outer, reduce, 1]; a sum avoids that copy
//     by reducing in stages, the last run of reduced dims first (accumulate below).
// Either way the output's elements come out in the kept dims' order, so the output is just
// a fresh contiguous tensor of the kept sizes (with 1s for keepdim).
#include <ember/core/native.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <ember/core/backend.h>
#include <ember/core/type_promotion.h>

namespace ember::native {

namespace {

// Which dims a reduction folds: 1 for a reduced dim, 0 for a kept one. A DimVector
// (core/dim_vector.h) holds it inline, so the bookkeeping of a reduction takes no heap block.
using DimMask = DimVector;

// The mask of `dims`, wrapped and checked, or of every dim when dims is empty.
DimMask reduced_dims_mask(const Tensor& self, IntArrayRef dims) {
  const std::int64_t ndim = self.dim();
  DimMask mask(static_cast<std::size_t>(ndim), dims.empty() ? 1 : 0);
  bool zero_d_dim_seen = false;  // a 0-d tensor accepts dim 0 / -1 once: there is nothing to fold
  for (std::int64_t dim : dims) {
    std::int64_t wrapped = wrap_dim(dim, ndim);
    const bool seen = ndim == 0 ? zero_d_dim_seen : static_cast<bool>(mask[wrapped]);
    EMBER_CHECK(!seen, ValueError, "dim ", wrapped, " appears multiple times in the list of dims");
    if (ndim == 0) zero_d_dim_seen = true;
    else mask[wrapped] = true;
  }
  return mask;
}

Shape reduced_sizes(const Tensor& self, const DimMask& mask, bool keepdim) {
  Shape sizes;
  for (std::size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) {
      sizes.push_back(self.sizes()[d]);
    } else if (keepdim) {
      sizes.push_back(1);
    }
  }
  return sizes;
}

// The input laid out as [outer, reduce, inner] (see the header comment).
struct ReductionLayout {
  Tensor input;  // contiguous
  std::int64_t outer = 1, reduce = 1, inner = 1;
};

ReductionLayout reduction_layout(const Tensor& self, const DimMask& mask) {
  const std::size_t ndim = mask.size();
  ReductionLayout layout;
  auto first = std::find(mask.begin(), mask.end(), true);
  if (first == mask.end()) {  // nothing reduced (a 0-d input): every element is its own result
    layout.input = contiguous(self);
    layout.outer = self.numel();
    return layout;
  }
  std::size_t lo = static_cast<std::size_t>(first - mask.begin());
  std::size_t hi = ndim - 1;
  while (!mask[hi]) --hi;
  bool adjacent = std::all_of(mask.begin() + static_cast<std::ptrdiff_t>(lo),
                              mask.begin() + static_cast<std::ptrdiff_t>(hi) + 1, [](bool m) { return m; });
  const Shape& sizes = self.sizes();
  if (adjacent) {
    layout.input = contiguous(self);
    for (std::size_t d = 0; d < ndim; ++d) {
      std::int64_t& part = d < lo ? layout.outer : d <= hi ? layout.reduce : layout.inner;
      part *= sizes[d];
    }
    return layout;
  }
  // Scattered dims: a permuted view [kept..., reduced...] (only sizes and strides change),
  // then a contiguous copy of it.
  Shape permuted_sizes, permuted_strides;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t d = 0; d < ndim; ++d) {
      if (mask[d] != (pass == 1)) continue;
      permuted_sizes.push_back(sizes[d]);
      permuted_strides.push_back(self.strides()[d]);
      (pass == 0 ? layout.outer : layout.reduce) *= sizes[d];
    }
  }
  Tensor permuted = make_tensor(self.storage(), permuted_sizes, permuted_strides, self.storage_offset(), self.dtype());
  layout.input = contiguous(permuted);
  return layout;
}

void run_reduce(ReduceOp op, const ReductionLayout& layout, const Tensor& output, const Tensor& indices = {}) {
  if (output.numel() == 0) return;
  ReducePlan plan;
  plan.outer = layout.outer;
  plan.reduce = layout.reduce;
  plan.inner = layout.inner;
  plan.input = layout.input.data_ptr();
  plan.input_dtype = layout.input.dtype();
  plan.output = output.data_ptr();
  plan.output_dtype = output.dtype();
  plan.indices = indices.defined() ? indices.data_ptr() : nullptr;
  plan.device = output.device().index();
  reduce_kernel(layout.input.device(), op, plan);
}

// The last run of adjacent reduced dims, when the reduced dims form more than one run
// ({0, 2, 3} of [N, C, H, W]: the run {2, 3}); empty when they form one run or none.
DimMask last_run_if_scattered(const DimMask& mask) {
  DimMask run(mask.size(), 0);
  std::size_t d = mask.size();
  while (d > 0 && !mask[d - 1]) --d;
  while (d > 0 && mask[d - 1]) run[--d] = true;
  if (std::find(mask.begin(), mask.begin() + static_cast<std::ptrdiff_t>(d), true) == mask.begin() + static_cast<std::ptrdiff_t>(d))
    return {};
  return run;
}

// sum/prod/mean: cast to the result dtype first, so the kernel reads and writes one dtype.
// A sum over scattered dims runs in stages, the last run of reduced dims first (kept as size
// 1): each stage reads its input in place, where one pass would first copy the whole input
// into a permuted contiguous layout (a convolution's bias gradient, the sum of d out over
// {0, 2, 3}, spent more time in that copy than in the sum). A bfloat16 / float16 sum keeps
// its partial sums in float32 (rounded to 16 bits between stages they lost the precision a
// one-pass sum keeps) and rounds once at the end.
Tensor accumulate(ReduceOp op, const Tensor& self, IntArrayRef dims, bool keepdim, DType dtype) {
  Tensor input = to_dtype(self, dtype);
  DimMask mask = reduced_dims_mask(input, dims);
  const TensorOptions options = TensorOptions().dtype(dtype).device(self.device());
  Tensor output = empty(reduced_sizes(input, mask, keepdim), options);
  if (op == ReduceOp::Sum && output.numel() != 0) {
    const TensorOptions partial_options = is_reduced_floating_point(dtype) ? options.dtype(kFloat32) : options;
    for (DimMask run = last_run_if_scattered(mask); !run.empty(); run = last_run_if_scattered(mask)) {
      Tensor partial = empty(reduced_sizes(input, run, /*keepdim=*/true), partial_options);
      run_reduce(op, reduction_layout(input, run), partial);
      input = partial;
      for (std::size_t d = 0; d < mask.size(); ++d) mask[d] = mask[d] && !run[d];
    }
    if (input.dtype() != dtype) {  // float32 partials of a 16-bit sum: the last stage in float32, then one rounding
      Tensor sums = empty(output.sizes(), partial_options);
      run_reduce(op, reduction_layout(input, mask), sums);
      return to_dtype(sums, dtype);
    }
  }
  run_reduce(op, reduction_layout(input, mask), output);
  return output;
}

// sum and prod of integers (and bool) give int64 unless a dtype is asked for.
DType integer_accumulate_dtype(const Tensor& self, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self.dtype(), true) ? kInt64 : self.dtype();
}

// max/min/amax/amin/argmax/argmin have no value to give for an empty reduction.
void check_nonempty_reduction(const std::string& name, const Tensor& self, const DimMask& mask,
                              bool all_dims) {
  if (self.numel() != 0) return;
  if (all_dims) {
    // PyTorch words (and classes) this slightly differently for the arg- versions.
    const std::string message = name + "(): Expected reduction dim to be specified for input.numel() == 0.";
    if (name.rfind("arg", 0) == 0) throw IndexError(message);
    throw ValueError(message + " Specify the reduction dim with the 'dim' argument.");
  }
  for (std::size_t d = 0; d < mask.size(); ++d) {
    EMBER_CHECK(!mask[d] || self.sizes()[d] != 0, IndexError, name, "(): Expected reduction dim ", d,
                " to have non-zero size.");
  }
}

Tensor extremum(ReduceOp op, const char* name, const Tensor& self, IntArrayRef dims, bool keepdim) {
  DimMask mask = reduced_dims_mask(self, dims);
  check_nonempty_reduction(name, self, mask, dims.empty());
  Tensor output = empty(reduced_sizes(self, mask, keepdim), self.options());
  run_reduce(op, reduction_layout(self, mask), output);
  return output;
}

std::tuple<Tensor, Tensor> extremum_with_indices(ReduceOp op, const char* name, const Tensor& self, std::int64_t dim,
                                                 bool keepdim) {
  DimMask mask = reduced_dims_mask(self, {dim});
  check_nonempty_reduction(name, self, mask, false);
  Shape sizes = reduced_sizes(self, mask, keepdim);
  Tensor values = empty(sizes, self.options());
  Tensor indices = empty(sizes, TensorOptions().dtype(kInt64).device(self.device()));
  run_reduce(op, reduction_layout(self, mask), values, indices);
  return {values, indices};
}

Tensor arg_extremum(ReduceOp op, const char* name, const Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  EMBER_CHECK(self.dtype() != kBool, DTypeError, name, "(): does not support bool input");
  Tensor output;
  if (dim) {
    DimMask mask = reduced_dims_mask(self, {*dim});
    check_nonempty_reduction(name, self, mask, false);
    output = empty(reduced_sizes(self, mask, keepdim), TensorOptions().dtype(kInt64).device(self.device()));
    run_reduce(op, reduction_layout(self, mask), output);
  } else {
    // No dim: the index into the flattened tensor (keepdim keeps every dim as size 1).
    check_nonempty_reduction(name, self, {}, true);
    Shape sizes = keepdim ? Shape(static_cast<std::size_t>(self.dim()), 1) : Shape{};
    output = empty(sizes, TensorOptions().dtype(kInt64).device(self.device()));
    ReductionLayout layout{contiguous(self), 1, self.numel(), 1};
    run_reduce(op, layout, output);
  }
  return output;
}

Tensor softmax_impl(const Tensor& self, std::int64_t dim, bool log) {
  const std::int64_t wrapped = wrap_dim(dim, self.dim());
  EMBER_CHECK(is_floating_point(self.dtype()), DTypeError, log ? "\"log_softmax" : "\"softmax",
              "_lastdim_kernel_impl\" not implemented for '", scalar_type_name(self.dtype()), "'");
  // bfloat16 and float16 compute in float32 and round once, as PyTorch's kernels do: the
  // float32 kernel on the widened input (core/reduced_float.h).
  if (is_reduced_floating_point(self.dtype()))
    return to_dtype(softmax_impl(to_dtype(self, DType::Float32), dim, log), self.dtype());
  Tensor input = contiguous(self);
  Tensor output = empty(self.sizes(), self.options());
  if (output.numel() == 0) return output;
  SoftmaxPlan plan;
  for (std::int64_t d = 0; d < self.dim(); ++d) {
    std::int64_t& part = d < wrapped ? plan.outer : d == wrapped ? plan.dim : plan.inner;
    part *= self.sizes()[d];
  }
  plan.input = input.data_ptr();
  plan.output = output.data_ptr();
  plan.dtype = self.dtype();
  plan.device = output.device().index();
  softmax_kernel(self.device(), plan, log);
  return output;
}

// Both tensors' values broadcast to `sizes`, as float64 ... or any dtype, on the CPU and
// contiguous: the simple form allclose/equal compare element by element.
Tensor host_values(const Tensor& tensor, IntArrayRef sizes, DType dtype) {
  Tensor out = empty(sizes, dtype);
  copy_(out, tensor);  // broadcasts, casts and moves to the CPU in one go
  return out;
}

}  // namespace

// ------------------------------------------------------------------ sum / mean / prod

Tensor sum(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return accumulate(ReduceOp::Sum, self, dims, keepdim, integer_accumulate_dtype(self, dtype));
}

Tensor prod(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return accumulate(ReduceOp::Prod, self, dims, keepdim, integer_accumulate_dtype(self, dtype));
}

Tensor mean(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  if (dtype) {
    EMBER_CHECK(is_floating_point(*dtype), DTypeError,
                "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
                "dtype. Got: ",
                scalar_type_name(*dtype));
  } else {
    EMBER_CHECK(is_floating_point(self.dtype()), DTypeError,
                "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                "dtype. Got: ",
                scalar_type_name(self.dtype()));
  }
  return accumulate(ReduceOp::Mean, self, dims, keepdim, dtype.value_or(self.dtype()));
}

// ------------------------------------------------------------------ max / min

Tensor amax(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return extremum(ReduceOp::Max, "amax", self, dims, keepdim);
}
Tensor amin(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return extremum(ReduceOp::Min, "amin", self, dims, keepdim);
}
std::tuple<Tensor, Tensor> max(const Tensor& self, std::int64_t dim, bool keepdim) {
  return extremum_with_indices(ReduceOp::Max, "max", self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& self, std::int64_t dim, bool keepdim) {
  return extremum_with_indices(ReduceOp::Min, "min", self, dim, keepdim);
}
Tensor argmax(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  return arg_extremum(ReduceOp::ArgMax, "argmax", self, dim, keepdim);
}
Tensor argmin(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  return arg_extremum(ReduceOp::ArgMin, "argmin", self, dim, keepdim);
}

// ------------------------------------------------------------------ softmax

Tensor softmax(const Tensor& self, std::int64_t dim) { return softmax_impl(self, dim, false); }
Tensor log_softmax(const Tensor& self, std::int64_t dim) { return softmax_impl(self, dim, true); }

// ------------------------------------------------------------------ comparisons

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(a.dtype() == b.dtype(), DTypeError, scalar_type_name(a.dtype()), " did not match ",
              scalar_type_name(b.dtype()));
  Shape sizes = broadcast_shapes(a.sizes(), b.sizes());
  Tensor x = host_values(a, sizes, kFloat64), y = host_values(b, sizes, kFloat64);
  const double* xs = x.data_ptr<double>();
  const double* ys = y.data_ptr<double>();
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    if (xs[i] == ys[i]) continue;  // also equal infinities
    if (std::isnan(xs[i]) || std::isnan(ys[i])) {
      if (equal_nan && std::isnan(xs[i]) && std::isnan(ys[i])) continue;
      return false;
    }
    // PyTorch's rule |a - b| <= atol + rtol * |b|: note it is not symmetric in a and b.
    double difference = std::abs(xs[i] - ys[i]);
    if (!std::isfinite(difference) || difference > atol + rtol * std::abs(ys[i])) return false;
  }
  return true;
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return false;
  DType common = promote_types(a.dtype(), b.dtype());
  Tensor x = host_values(a, a.sizes(), common), y = host_values(b, b.sizes(), common);
  bool same = true;
  EMBER_DISPATCH_ALL_AND_REDUCED(common, {
    const scalar_t* xs = x.data_ptr<scalar_t>();
    const scalar_t* ys = y.data_ptr<scalar_t>();
    for (std::int64_t i = 0; i < x.numel() && same; ++i) same = xs[i] == ys[i];
  });
  return same;
}

}  // namespace ember::native
