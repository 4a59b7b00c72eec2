// core/factories.cpp — making tensors: from nested braces, filled, ranges, identity, raw memory.
//
// Tutorial §2.1–2.2: torch.tensor(1), torch.tensor([[1, 2], [3, 4]]), and the dtype rules
// (integers -> int64, floating numbers -> float32). ember::tensor walks the braces once to
// find the shape (rejecting ragged lists with PyTorch's message), once more to find the
// dtype, then writes the numbers row-major into a fresh CPU tensor.
//
// Filled tensors (zeros, ones, full, *_like) are an empty tensor plus native::fill_, so they
// work on any device. Ranges (arange, linspace) are computed on the CPU with PyTorch's
// formulas (including how its vectorised CPU loop rounds) and then moved if needed.
#include <ember/core/factories.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/core/native.h>
#include <ember/core/value_range.h>

// Like core/random.cpp: the range formulas fuse exactly where written (std::fma).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace ember {

namespace {

// Applies the parts of TensorOptions that come after the values: device, then requires_grad.
Tensor finish(Tensor result, const TensorOptions& options) {
  const Device wanted = options.device();
  if (result.device().type() != wanted.type() || (wanted.has_index() && result.device() != wanted)) {
    result = native::to_device(result, wanted);
  }
  if (options.requires_grad()) result.requires_grad_(true);
  return result;
}

// ----------------------------------------------------------------------- ember::tensor

// The shape is read along the first child of every level; check_shape then makes sure
// every list at depth d has sizes[d] entries.
void infer_shape(const NestedData& data, Shape& sizes) {
  const NestedData* level = &data;
  while (!level->is_scalar()) {
    sizes.push_back(static_cast<std::int64_t>(level->children().size()));
    if (level->children().empty()) break;
    level = &level->children().front();
  }
}

void check_shape(const NestedData& data, const Shape& sizes, std::size_t depth) {
  if (depth == sizes.size()) {
    // PyTorch (Python) says this when a list sits where a number was expected.
    EMBER_CHECK(data.is_scalar(), ShapeError, "'list' object cannot be interpreted as an integer");
    return;
  }
  EMBER_CHECK(!data.is_scalar(), ShapeError, "not a sequence");
  const auto count = static_cast<std::int64_t>(data.children().size());
  EMBER_CHECK(count == sizes[depth], ShapeError, "expected sequence of length ", sizes[depth], " at dim ", depth,
              " (got ", count, ")");
  for (const NestedData& child : data.children()) check_shape(child, sizes, depth + 1);
}

// PyTorch's inference: any floating number makes the default float dtype, else any integer
// makes int64, else (only bools) bool. An empty list is float32, like torch.tensor([]).
struct LeafKinds {
  bool any_floating = false, any_integral = false, any_bool = false;
};
void collect_kinds(const NestedData& data, LeafKinds& kinds) {
  if (data.is_scalar()) {
    kinds.any_floating |= data.scalar().is_floating_point();
    kinds.any_integral |= data.scalar().is_integral();
    kinds.any_bool |= data.scalar().is_bool();
    return;
  }
  for (const NestedData& child : data.children()) collect_kinds(child, kinds);
}

template <class T>
void write_leaves(const NestedData& data, T*& out) {
  if (data.is_scalar()) {
    if constexpr (std::is_same_v<T, bool>) *out++ = data.scalar().to_double() != 0.0;
    else *out++ = data.scalar().to<T>();
    return;
  }
  for (const NestedData& child : data.children()) write_leaves(child, out);
}

}  // namespace

Tensor tensor(const NestedData& data, TensorOptions options) {
  Shape sizes;
  infer_shape(data, sizes);
  check_shape(data, sizes, 0);
  LeafKinds kinds;
  collect_kinds(data, kinds);
  DType inferred = kinds.any_floating ? default_float_dtype()
                   : kinds.any_integral ? DType::Int64
                   : kinds.any_bool     ? DType::Bool
                                        : default_float_dtype();
  DType dtype = options.dtype_or(inferred);
  Tensor result = empty(sizes, TensorOptions().dtype(dtype));
  EMBER_DISPATCH_ALL_AND_REDUCED(dtype, {
    auto* out = static_cast<scalar_t*>(result.data_ptr());
    if (out != nullptr) write_leaves(data, out);
  });
  return finish(result, options);
}

// ----------------------------------------------------------------------- filled

Tensor zeros(IntArrayRef sizes, TensorOptions options) { return full(sizes, 0, options.dtype(options.dtype_or(default_float_dtype()))); }
Tensor ones(IntArrayRef sizes, TensorOptions options) { return full(sizes, 1, options.dtype(options.dtype_or(default_float_dtype()))); }

Tensor full(IntArrayRef sizes, Scalar value, TensorOptions options) {
  // torch.full infers the dtype from the fill value: 3 -> int64, True -> bool, 3.5 -> float32.
  DType inferred = value.is_floating_point() ? default_float_dtype() : value.is_bool() ? DType::Bool : DType::Int64;
  Tensor result = empty(sizes, TensorOptions().dtype(options.dtype_or(inferred)).device(options.device()));
  native::fill_(result, value);
  return finish(result, options);
}

// *_like: other's sizes, dtype and device unless options say otherwise.
Tensor empty_like(const Tensor& other, std::optional<TensorOptions> options) {
  TensorOptions chosen = options.value_or(other.options());
  const Device device = chosen.device_opt().value_or(other.device());
  Tensor result = empty(other.sizes(), TensorOptions().dtype(chosen.dtype_or(other.dtype())).device(device));
  if (chosen.requires_grad()) result.requires_grad_(true);
  return result;
}

Tensor zeros_like(const Tensor& other, std::optional<TensorOptions> options) { return full_like(other, 0, options); }
Tensor ones_like(const Tensor& other, std::optional<TensorOptions> options) { return full_like(other, 1, options); }

Tensor full_like(const Tensor& other, Scalar value, std::optional<TensorOptions> options) {
  std::optional<TensorOptions> without_grad = options;
  if (without_grad) without_grad = without_grad->requires_grad(false);
  Tensor result = empty_like(other, without_grad);
  native::fill_(result, value);  // before requires_grad: filling a leaf that requires grad is an error
  if (options && options->requires_grad()) result.requires_grad_(true);
  return result;
}

// ----------------------------------------------------------------------- ranges

namespace {

// PyTorch's CPU arange kernel runs a vectorised loop over blocks of 16 floats (two AVX2
// vectors of 8; float64: blocks of 8, vectors of 4). Each vector computes its first lane
// like a single element and the other lanes as first + k·step; the elements after the last
// full block use the scalar formula. `element(i)` is the scalar formula and
// `lane(first, k)` the in-vector one (linspace has no such loop: fill_linspace below).
template <class T, class Element, class Lane>
void fill_range(T* out, std::int64_t size, Element element, Lane lane) {
  constexpr std::int64_t kLanes = 32 / sizeof(T);
  std::int64_t i = 0;
  for (; i + 2 * kLanes <= size; i += 2 * kLanes) {
    for (std::int64_t start = i; start < i + 2 * kLanes; start += kLanes) {
      const T first = static_cast<T>(element(start));
      out[start] = first;
      for (std::int64_t k = 1; k < kLanes; ++k) out[start + k] = static_cast<T>(lane(first, k));
    }
  }
  for (; i < size; ++i) out[i] = static_cast<T>(element(i));
}

bool is_integral_scalar(const Scalar& value) { return !value.is_floating_point(); }

// arange's elements: start + step·i. Floating outputs compute it in double (PyTorch's
// accumulate type on the CPU); in a vector, lane k is first + k·step, step still in double.
// bfloat16 and float16 compute in float (their accumulate type on the CPU), start and step
// rounded to float, each value rounded once to 16 bits; a vector holds 16 of them, so a
// block is 32 (fill_range's 32 bytes per vector). Measured against PyTorch 2.15: an element
// is fma(step, i, start) in float, and lane k of a vector is float(first) + k·step — fused
// for float16 (fma(k, step, first)), not fused for bfloat16 (k·step rounded to float, then
// added), as PyTorch's two vector types happen to compile. (Above 32768 elements PyTorch
// splits a range between its threads and each part starts its own vector loop, so its bits
// depend on the thread count; ember's are PyTorch's with one thread, for every dtype.)
template <class T>
void fill_arange(T* out, std::int64_t size, Scalar start, Scalar step) {
  if constexpr (is_reduced_float_v<T>) {
    const auto first = start.to<float>(), stride = step.to<float>();
    fill_range<T>(
        out, size, [&](std::int64_t i) { return std::fma(stride, static_cast<float>(i), first); },
        [&](T lane_first, std::int64_t k) -> float {
          if constexpr (std::is_same_v<T, Half>) {
            return std::fma(static_cast<float>(k), stride, static_cast<float>(lane_first));
          } else {
            const float offset = static_cast<float>(k) * stride;  // its own statement: never fused
            return static_cast<float>(lane_first) + offset;
          }
        });
  } else if constexpr (std::is_floating_point_v<T>) {
    const double first = start.to_double(), stride = step.to_double();
    fill_range<T>(
        out, size, [&](std::int64_t i) { return std::fma(stride, static_cast<double>(i), first); },
        [&](T lane_first, std::int64_t k) { return std::fma(static_cast<double>(k), stride, static_cast<double>(lane_first)); });
  } else if constexpr (std::is_same_v<T, bool>) {
    for (std::int64_t i = 0; i < size; ++i) out[i] = (start.to_double() + step.to_double() * static_cast<double>(i)) != 0.0;
  } else {
    const std::int64_t first = start.to_int64(), stride = step.to_int64();
    for (std::int64_t i = 0; i < size; ++i) out[i] = static_cast<T>(first + stride * i);
  }
}

// linspace walks from both ends so both endpoints are exact: the first half counts up from
// start, the second half down from end, each element one fused multiply-add in the element
// type (double for integer outputs). PyTorch 2.15 shows no vector-lane rule here, for any
// dtype (measured on float32 and float64 against exact arithmetic; PyTorch 1.13's AVX2 loop
// built lanes k > 0 as first + k·step, rounded twice).
//
// bfloat16 and float16 compute in float (their accumulate type on the CPU), and unlike
// arange no vector-lane rule shows: measured against PyTorch 2.15 (one thread and two, up
// to 2^26 elements), every element is the scalar formula in float, rounded once to 16 bits.
// start and end are rounded to the 16-bit dtype first (through float, as c10 converts a
// double); step = (last − first) / float(steps − 1), the difference and the quotient each
// rounded to float (not to 16 bits); element i is first + step·i below steps / 2 and
// last − step·(steps − 1 − i) from there, i as a float (it rounds above 2^24) — fused for
// bfloat16 (std::fma), not fused for float16 (step·i rounded to float, then added), the
// opposite of arange's lanes, as PyTorch's kernels happen to compile. Since no element
// depends on its neighbours, PyTorch's split of a long range between threads changes
// nothing. The witnesses in tests/reference/gen_reduced_float_random.py are ranges where
// each other candidate (the other fusing, 16-bit or double arithmetic for the step, the
// split at (steps + 1) / 2, lanes of 8, 16 or 32 built from their first element) changes a
// value.
template <class T>
void fill_linspace_reduced(T* out, double start, double end, std::int64_t steps) {
  const auto first = static_cast<float>(static_cast<T>(start));
  const auto last = static_cast<float>(static_cast<T>(end));
  const float step = (last - first) / static_cast<float>(steps - 1);
  const std::int64_t halfway = steps / 2;
  for (std::int64_t i = 0; i < steps; ++i) {
    const bool from_start = i < halfway;
    const auto k = static_cast<float>(from_start ? i : steps - 1 - i);
    float value;
    if constexpr (std::is_same_v<T, BFloat16>) {
      value = from_start ? std::fma(step, k, first) : std::fma(-step, k, last);
    } else {
      const float offset = step * k;  // its own statement: never fused
      value = from_start ? first + offset : last - offset;
    }
    out[i] = static_cast<T>(value);
  }
}

template <class T>
void fill_linspace(T* out, double start, double end, std::int64_t steps) {
  if (steps == 1) out[0] = static_cast<T>(start);
  if (steps <= 1) return;
  if constexpr (is_reduced_float_v<T>) {
    fill_linspace_reduced(out, start, end, steps);
  } else {
    using step_t = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    const auto first = static_cast<step_t>(static_cast<T>(start));
    const auto last = static_cast<step_t>(static_cast<T>(end));
    const step_t step = (last - first) / static_cast<step_t>(steps - 1);
    const std::int64_t halfway = steps / 2;
    auto element = [&](std::int64_t i) -> step_t {
      if (i < halfway) return std::fma(step, static_cast<step_t>(i), first);
      return std::fma(-step, static_cast<step_t>(steps - i - 1), last);
    };
    for (std::int64_t i = 0; i < steps; ++i) out[i] = static_cast<T>(element(i));
  }
}

}  // namespace

Tensor arange(Scalar end, TensorOptions options) { return arange(0, end, 1, options); }

Tensor arange(Scalar start, Scalar end, Scalar step, TensorOptions options) {
  // torch.arange's dtype: int64 when start, end and step are all integers, else float32.
  DType inferred = is_integral_scalar(start) && is_integral_scalar(end) && is_integral_scalar(step)
                       ? DType::Int64
                       : default_float_dtype();
  DType dtype = options.dtype_or(inferred);
  const double start_value = start.to_double(), end_value = end.to_double(), step_value = step.to_double();
  EMBER_CHECK(std::isfinite(start_value) && std::isfinite(end_value), ValueError, "unsupported range: ",
              start_value, " -> ", end_value);
  EMBER_CHECK(step_value != 0.0, ValueError, "step must be nonzero");
  EMBER_CHECK((step_value > 0 && end_value >= start_value) || (step_value < 0 && end_value <= start_value),
              ValueError, "upper bound and lower bound inconsistent with step sign");
  // size = ceil((end - start) / step), in int64 arithmetic for integer ranges.
  double size_double;
  if (dtype == DType::Int64 && is_integral_scalar(start) && is_integral_scalar(end) && is_integral_scalar(step)) {
    size_double = std::ceil(static_cast<double>(end.to_int64() - start.to_int64()) / static_cast<double>(step.to_int64()));
  } else {
    size_double = std::ceil((end_value - start_value) / step_value);
  }
  EMBER_CHECK(size_double >= 0 && size_double <= static_cast<double>(std::numeric_limits<std::int64_t>::max()),
              ValueError, "invalid size, possible overflow?");
  // A 16-bit range computes in float: start and step must fit one (PyTorch's checked
  // conversion, after the checks above; `end` only sizes the range, in double, so
  // arange(0, 1e39, 1e30) is fine).
  if (is_reduced_floating_point(dtype)) {
    check_scalar_fits(start, DType::Float32);
    check_scalar_fits(step, DType::Float32);
  }
  const auto size = static_cast<std::int64_t>(size_double);
  Tensor result = empty({size}, TensorOptions().dtype(dtype));
  EMBER_DISPATCH_ALL_AND_REDUCED(dtype, fill_arange(static_cast<scalar_t*>(result.data_ptr()), size, start, step));
  return finish(result, options);
}

Tensor linspace(double start, double end, std::int64_t steps, TensorOptions options) {
  EMBER_CHECK(steps >= 0, ValueError, "number of steps must be non-negative");
  DType dtype = options.dtype_or(default_float_dtype());
  // A 16-bit range of two or more steps converts start and end to the dtype with PyTorch's
  // checked conversion (float16: linspace(0, 1e5, 2) is refused); one step is a plain fill,
  // unchecked (linspace(1e5, 0, 1, kFloat16) is [inf]).
  if (is_reduced_floating_point(dtype) && steps > 1) {
    check_scalar_fits(start, dtype);
    check_scalar_fits(end, dtype);
  }
  Tensor result = empty({steps}, TensorOptions().dtype(dtype));
  EMBER_DISPATCH_ALL_AND_REDUCED(dtype, fill_linspace(static_cast<scalar_t*>(result.data_ptr()), start, end, steps));
  return finish(result, options);
}

Tensor eye(std::int64_t n, std::optional<std::int64_t> m, TensorOptions options) {
  EMBER_CHECK(n >= 0, ValueError, "n must be greater or equal to 0, got ", n);
  const std::int64_t columns = m.value_or(n);
  EMBER_CHECK(columns >= 0, ValueError, "m must be greater or equal to 0, got ", columns);
  DType dtype = options.dtype_or(default_float_dtype());
  // PyTorch's first check: n · m itself ("numel: integer multiplication overflow" for
  // eye(2^32)); empty then checks the bytes ("Storage size calculation overflowed ...").
  (void)compute_numel({n, columns});
  Tensor result = empty({n, columns}, TensorOptions().dtype(dtype));
  EMBER_DISPATCH_ALL_AND_REDUCED(dtype, {
    auto* out = static_cast<scalar_t*>(result.data_ptr());
    for (std::int64_t i = 0; i < n * columns; ++i) out[i] = static_cast<scalar_t>(0);
    for (std::int64_t i = 0; i < std::min(n, columns); ++i) out[i * columns + i] = static_cast<scalar_t>(1);
  });
  return finish(result, options);
}

// ----------------------------------------------------------------------- strided memory

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  EMBER_CHECK(sizes.size() == strides.size(), ShapeError, "dimensionality of sizes (", sizes.size(),
              ") must match dimensionality of strides (", strides.size(), ")");
  check_no_negative_sizes(sizes);
  const DType dtype = options.dtype_or(default_float_dtype());
  // Before anything is allocated: an overflowing sum would ask for a few bytes.
  const std::int64_t nbytes = compute_storage_nbytes(sizes, strides, itemsize(dtype));
  // What is left negative sits on a dim of at most one element (or the tensor is empty):
  // filled in from the dims after it, as c10's set_sizes_and_strides does.
  // An empty tensor skips the size check, so the product is checked here (PyTorch's message).
  Shape filled = to_shape(strides);
  for (std::size_t d = filled.size(); d-- > 0;) {
    if (filled[d] >= 0) continue;
    filled[d] = 1;
    if (d + 1 < filled.size()) {
      EMBER_CHECK(!__builtin_mul_overflow(filled[d + 1], std::max<std::int64_t>(sizes[d + 1], 1), &filled[d]),
                  ShapeError, "Stride calculation overflowed");
    }
  }
  Tensor result = make_tensor(make_storage(static_cast<std::size_t>(nbytes), options.device()), to_shape(sizes),
                              std::move(filled), 0, dtype);
  if (options.requires_grad()) result.requires_grad_(true);
  return result;
}

// ----------------------------------------------------------------------- borrowed memory

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options, std::function<void(void*)> deleter) {
  return from_blob(data, sizes, contiguous_strides(sizes), options, std::move(deleter));
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options,
                 std::function<void(void*)> deleter) {
  EMBER_CHECK(sizes.size() == strides.size(), ShapeError, "mismatch in length of strides and shape");
  check_no_negative_sizes(sizes);
  // A negative stride would reach memory before `data`, which the storage below does not
  // cover (as_strided refuses them for the same reason).
  for (std::int64_t stride : strides) {
    EMBER_CHECK(stride >= 0, ValueError, "from_blob: Negative strides are not supported at the moment, got strides: ",
                shape_to_string(strides));
  }
  // The storage must reach the farthest element: (1 + sum (size - 1) · stride) · itemsize,
  // overflow-checked ("Storage size calculation overflowed with sizes=... and strides=...").
  DType dtype = options.dtype_or(default_float_dtype());
  const std::int64_t nbytes = compute_storage_nbytes(sizes, strides, itemsize(dtype));
  auto storage = std::make_shared<StorageImpl>(data, static_cast<std::size_t>(nbytes), options.device(),
                                               std::move(deleter));
  Tensor result = make_tensor(std::move(storage), to_shape(sizes), to_shape(strides), 0, dtype);
  if (options.requires_grad()) result.requires_grad_(true);
  return result;
}

}  // namespace ember
