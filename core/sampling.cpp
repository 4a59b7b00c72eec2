// core/sampling.cpp — exponential_ and multinomial (core/sampling.h), PyTorch's CPU algorithms
// on ember's mt19937 Generator (core/random.h).
//
// Issue 21. What was checked against torch 2.15's CPU output (tests/reference/gen_sampling.py):
//   * exponential_ does not use MKL's generator in PyTorch's pip builds; it draws one double
//     per element, serially, in the tensor's memory order: u from random64()'s low 53 bits
//     times 2^-53, then (-1/lambda) · log1p(-u) in double, rounded to the dtype. (u = 0 gives
//     0, probability 2^-53, as in PyTorch; lambda = inf gives zeros.)
//   * multinomial's two paths (core/sampling.h) and its checks, including which messages the
//     replacement path words differently;
//   * bfloat16 and float16 (issue 22): exponential_ rounds each double through float32;
//     multinomial's ratios p / q are 16-bit (q drawn in the dtype), its replacement path sums
//     in float32 (tests/reference/gen_sampling.py discriminates float32 from float64 sums).
// The draws share the generator's lock with core/random.cpp's samplers, so a stream is never
// interleaved between threads mid-tensor.
#include <ember/core/sampling.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <type_traits>
#include <vector>

#include <ember/core/factories.h>
#include <ember/core/native.h>

namespace ember {

namespace {

Generator& resolve(Generator* generator) { return generator != nullptr ? *generator : default_generator(); }

// A uniform double in [0, 1): the low 53 bits of one random64(), PyTorch's
// uniform_real_distribution<double> (core/random.cpp's float64 uniform).
double uniform_double(Generator& gen) {
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 53) - 1;
  return static_cast<double>(gen.random64() & kMask) * 0x1p-53;
}

// The dims from outermost (largest stride) to innermost, ties kept in logical order: the
// order in which PyTorch's serial CPU kernels (and core/random.cpp) visit memory.
std::vector<std::int64_t> memory_order(const Tensor& self) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(self.dim()));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return self.stride(a) > self.stride(b); });
  return order;
}

// (A 16-bit dtype gets the double through float32, as c10 converts one.)
template <class T>
void fill_exponential(T* out, std::int64_t count, double lambda, Generator& gen) {
  for (std::int64_t i = 0; i < count; ++i) {
    const double value = -1.0 / lambda * std::log1p(-uniform_double(gen));
    if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) out[i] = static_cast<T>(static_cast<float>(value));
    else out[i] = static_cast<T>(value);
  }
}

// Whether the elements tile one block of memory exactly once (any dim order; size-1 dims
// ignored), PyTorch's is_non_overlapping_and_dense.
bool is_non_overlapping_and_dense(const Tensor& self) {
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 0; d < self.dim(); ++d)
    if (self.size(d) != 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](std::int64_t a, std::int64_t b) { return self.stride(a) < self.stride(b); });
  std::int64_t expected = 1;
  for (std::int64_t d : dims) {
    if (self.stride(d) != expected) return false;
    expected *= self.size(d);
  }
  return true;
}

// PyTorch's infer_dense_strides: dense strides that keep self's order of dims in memory.
// The dims are insertion-sorted innermost first (starting from the last dim) by stride, a
// stride of 0 comparing as "ambiguous" (the dim stays where it is) and equal strides putting
// the smaller size inside: the order TensorIterator uses too.
Shape infer_dense_strides(const Tensor& self) {
  const auto ndim = static_cast<std::size_t>(self.dim());
  std::vector<std::int64_t> perm(ndim);
  std::iota(perm.rbegin(), perm.rend(), std::int64_t{0});  // n-1, ..., 1, 0
  auto should_swap = [&](std::int64_t dim0, std::int64_t dim1) {  // 1: dim0 goes after dim1
    const std::int64_t stride0 = self.stride(dim0), stride1 = self.stride(dim1);
    if (stride0 == 0 || stride1 == 0) return 0;
    if (stride0 < stride1) return -1;
    if (stride0 > stride1) return 1;
    return self.size(dim0) > self.size(dim1) ? 1 : 0;
  };
  for (std::size_t i = 1; i < ndim; ++i) {
    std::size_t dim1 = i;
    for (std::size_t j = 1; j <= i; ++j) {
      const std::size_t dim0 = i - j;
      const int comparison = should_swap(perm[dim0], perm[dim1]);
      if (comparison > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (comparison < 0) {
        break;
      }
    }
  }
  Shape strides(ndim);
  std::int64_t current = 1;
  for (std::int64_t d : perm) {
    strides[static_cast<std::size_t>(d)] = current;
    if (self.size(d) > 1) current *= self.size(d);
  }
  return strides;
}

// empty_like(self) with PyTorch's preserve_format: the same strides when they are dense,
// else dense strides in the same memory order of dims (infer_dense_strides). Multinomial's q
// must be laid out as PyTorch's, since exponential_ fills memory in order and the i-th draw
// must land on the element PyTorch gives it (a transposed probs, or a strided view of one).
Tensor empty_preserving_strides(const Tensor& self) {
  const TensorOptions options = TensorOptions().dtype(self.dtype());
  const Shape strides = is_non_overlapping_and_dense(self) ? self.strides() : infer_dense_strides(self);
  return native::as_strided(empty({self.numel()}, options), self.sizes(), strides, 0);
}

// The checks of the argmax/topk path, in PyTorch's order: first every element of the tensor
// (max < inf and min >= 0, so NaN fails too), then every row's sum.
template <class T>
void check_probabilities(const T* probs, std::int64_t rows, std::int64_t categories) {
  for (std::int64_t i = 0; i < rows * categories; ++i) {
    EMBER_CHECK(probs[i] >= 0 && probs[i] < INFINITY, ValueError,
                "probability tensor contains either `inf`, `nan` or element < 0");
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    // (Non-negative finite weights sum to 0 exactly when all are 0.)
    const T* row = probs + r * categories;
    EMBER_CHECK(std::any_of(row, row + categories, [](T value) { return value > 0; }), ValueError,
                "invalid multinomial distribution (sum of probabilities <= 0)");
  }
}

// The replacement path: a binary search of one uniform double per sample in the row's
// normalised running sum, which is kept in the probabilities' own dtype, as PyTorch does
// (float32 for the 16-bit dtypes, whose values multinomial widens first: PyTorch's opmath).
template <class T>
void draw_with_replacement(const T* probs, std::int64_t rows, std::int64_t categories, std::int64_t samples,
                           std::int64_t* out, Generator& gen) {
  std::vector<T> cumulative(static_cast<std::size_t>(categories));
  for (std::int64_t r = 0; r < rows; ++r) {
    T total = 0;
    for (std::int64_t j = 0; j < categories; ++j) {
      const T value = probs[r * categories + j];
      EMBER_CHECK(value >= 0, ValueError, "invalid multinomial distribution (encountering probability entry < 0)");
      EMBER_CHECK(std::isfinite(value), ValueError,
                  "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
      total += value;
      cumulative[static_cast<std::size_t>(j)] = total;
    }
    EMBER_CHECK(total > 0, ValueError, "invalid multinomial distribution (sum of probabilities <= 0)");
    for (T& entry : cumulative) entry /= total;
    cumulative.back() = 1;  // rounding must not leave a gap above the last category
    for (std::int64_t s = 0; s < samples; ++s) {
      const double u = uniform_double(gen);
      // The first category whose cumulative probability is >= u.
      std::int64_t left = 0, right = categories;
      while (left < right) {
        const std::int64_t middle = left + (right - left) / 2;
        if (static_cast<double>(cumulative[static_cast<std::size_t>(middle)]) < u) left = middle + 1;
        else right = middle;
      }
      out[r * samples + s] = left;
    }
  }
}

}  // namespace

void exponential_(const Tensor& self, double lambda, Generator* generator) {
  EMBER_CHECK(lambda > 0.0, ValueError, "exponential_ expects lambda > 0.0, but found lambda=", lambda);
  EMBER_CHECK(self.is_floating_point(), DTypeError,
              "Exponential distribution is a continuous probability distribution. dtype must be a floating point "
              "but you specified ",
              scalar_type_name(self.dtype()));
  if (self.numel() > 0) {
    // Draws go in memory order: straight into a contiguous CPU tensor, otherwise into a
    // contiguous buffer laid out as self's memory (its dims permuted outermost first) that is
    // then copied into the permuted view (and so onto a GPU, for device tensors).
    const bool in_place = self.is_cpu() && self.is_contiguous();
    const Tensor target = in_place ? self : native::permute(self, memory_order(self));
    const Tensor buffer = in_place ? self : empty(target.sizes(), TensorOptions().dtype(self.dtype()));
    Generator& gen = resolve(generator);
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      EMBER_DISPATCH_FLOATING_AND_REDUCED(
          self.dtype(), fill_exponential<scalar_t>(buffer.data_ptr<scalar_t>(), buffer.numel(), lambda, gen));
    }
    if (!in_place) native::copy_(target, buffer);
  }
  self.bump_version();
}

Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement, Generator* generator) {
  EMBER_CHECK(probs.dim() == 1 || probs.dim() == 2, ShapeError, "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(probs.is_floating_point(), DTypeError, "multinomial only supports floating-point dtypes for input, got: ",
              scalar_type_name(probs.dtype()));
  EMBER_CHECK(num_samples > 0, ValueError, "cannot sample n_sample <= 0 samples");
  const std::int64_t categories = probs.size(-1);
  EMBER_CHECK(replacement || num_samples <= categories, ValueError,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  // PyTorch's bound: the indices must stay exact in float32.
  EMBER_CHECK(categories <= (std::int64_t{1} << 24), ValueError, "number of categories cannot exceed 2^24");
  if (!probs.is_cpu()) {
    Tensor host = multinomial(native::to_device(probs, kCPU), num_samples, replacement, generator);
    return native::to_device(host, probs.device());
  }
  const std::int64_t rows = probs.dim() == 2 ? probs.size(0) : 1;
  const Shape out_sizes = probs.dim() == 2 ? Shape{rows, num_samples} : Shape{num_samples};
  Tensor result = empty(out_sizes, TensorOptions().dtype(DType::Int64));
  if (result.numel() == 0) return result;
  const Tensor dense = native::contiguous(probs);

  if (!replacement || num_samples == 1) {
    // (Only [R, 0] with replacement gets here without categories; PyTorch's max/min says so.)
    EMBER_CHECK(probs.numel() > 0, ValueError,
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
    EMBER_DISPATCH_FLOATING_AND_REDUCED(probs.dtype(),
                                        check_probabilities(dense.data_ptr<scalar_t>(), rows, categories));
    // The exponential race: with q_i ~ Exp(1), argmax_i p_i / q_i is category i with
    // probability p_i / sum(p), and the k largest ratios are k draws without replacement.
    Tensor q = empty_preserving_strides(probs);
    exponential_(q, 1.0, generator);
    Tensor ratio = native::div(probs, q);
    if (num_samples == 1) return native::argmax(ratio, -1, /*keepdim=*/true);
    return std::get<1>(native::topk(ratio, num_samples, -1, /*largest=*/true, /*sorted=*/true));
  }
  const Tensor summed = is_reduced_floating_point(probs.dtype()) ? native::to_dtype(dense, DType::Float32) : dense;
  Generator& gen = resolve(generator);
  std::lock_guard<std::mutex> lock(gen.mutex());
  EMBER_DISPATCH_FLOATING(summed.dtype(), draw_with_replacement(summed.data_ptr<scalar_t>(), rows, categories,
                                                                num_samples, result.data_ptr<std::int64_t>(), gen));
  return result;
}

}  // namespace ember
