// core/random_tensors.cpp — tensors drawn from PyTorch's CPU generator (core/random.cpp),
// bit for bit: the distributions (uniform, normal, integers in a range), the in-place
// samplers (uniform_, normal_, random_, bernoulli_) and the random factories (rand, randn,
// randint, randperm). core/random.cpp's header lists the rules measured against PyTorch.
#include <ember/core/random.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <numeric>

#include <ember/core/backend.h>
#include <ember/core/box_muller.h>
#include <ember/core/factories.h>
#include <ember/core/tensor_iterator.h>
#include <ember/core/native.h>
#include <ember/core/value_range.h>

// The bits below depend on exactly which multiply-adds are fused (written out with std::fma)
// and which are not: forbid the compiler from fusing others on its own (-march=native
// would otherwise allow it).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace ember {

// ====================================================================== distributions

namespace {

Generator& resolve(Generator* generator) { return generator != nullptr ? *generator : default_generator(); }

// Uniform in [0, 1): float32 from 24 random bits, float64 from 53.
double uniform_unit_double(Generator& gen) {
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 53) - 1;
  return static_cast<double>(gen.random64() & kMask) * std::ldexp(1.0, -53);
}
float uniform_unit_float(Generator& gen) {
  constexpr std::uint32_t kMask = (std::uint32_t{1} << 24) - 1;
  return static_cast<float>(gen.random() & kMask) * std::ldexp(1.0f, -24);
}

// A float32 uniform in [low, low + width): the unit uniform scaled in double (fused) and
// rounded once to float, as PyTorch's float32 uniform_ does.
float uniform_float(Generator& gen, float low, double width) {
  return static_cast<float>(std::fma(static_cast<double>(uniform_unit_float(gen)), width, low));
}

// One normal sample by Box–Muller, PyTorch's scalar path: two double uniforms give two
// normals; the second (r·sin θ) is kept in the generator for the next call.
double normal_scalar(Generator& gen, double mean, double std) {
  // (PyTorch's build fuses the final scale-and-shift into one multiply-add.)
  if (std::optional<double> cached = gen.take_cached_normal()) return std::fma(*cached, std, mean);
  double u1 = uniform_unit_double(gen);
  double u2 = uniform_unit_double(gen);
  // log1p(-u2), as PyTorch 2.x writes it (1.13: log(1 - u2), which differs in the last bit
  // for some u2).
  double radius = std::sqrt(-2.0 * std::log1p(-u2));
  double theta = 2.0 * std::numbers::pi * u1;
  gen.cache_normal(radius * std::sin(theta));
  return std::fma(radius * std::cos(theta), std, mean);
}

// PyTorch's fast path for a contiguous tensor of at least 16 elements: fill everything
// with uniforms, transform blocks of 16; when the size is not a multiple of 16, draw 16
// fresh uniforms for the last 16 slots and transform them again (overlapping the block
// before, which is why the stream differs from the scalar path).
template <class T>
void normal_fill(T* data, std::int64_t size, T mean, T std, Generator& gen) {
  auto uniform = [&gen]() -> T {
    if constexpr (std::is_same_v<T, float>) return uniform_unit_float(gen);
    else return static_cast<T>(uniform_unit_double(gen));
  };
  for (std::int64_t i = 0; i < size; ++i) data[i] = uniform();
  for (std::int64_t i = 0; i + 16 <= size; i += 16) detail::box_muller_16(data + i, mean, std);
  if (size % 16 != 0) {
    T* tail = data + size - 16;
    for (int i = 0; i < 16; ++i) tail[i] = uniform();
    detail::box_muller_16(tail, mean, std);
  }
}

// The block path for bfloat16 and float16 (PyTorch 2.15, measured: it is neither the float32
// stream rounded nor c10's 16-bit arithmetic). Each block of 16 draws its own 16 float32
// uniforms and goes through the float32 transform above, mean and std as float32 (not
// rounded to 16 bits); the 16 results are rounded once. A size that is not a multiple of 16
// ends with one more block written over the last 16 slots — so, unlike float32, nothing is
// drawn for the slots it overwrites: 16·ceil(size/16) draws in all, and the tail block's
// uniforms are draws 16·floor(size/16) onwards.
template <class T>
void normal_fill_reduced(T* data, std::int64_t size, float mean, float std, Generator& gen) {
  std::array<float, 16> block{};
  auto fill_block = [&](T* out) {
    for (float& u : block) u = uniform_unit_float(gen);
    detail::box_muller_16(block.data(), mean, std);
    for (std::size_t i = 0; i < block.size(); ++i) out[i] = static_cast<T>(block[i]);
  };
  for (std::int64_t i = 0; i + 16 <= size; i += 16) fill_block(data + i);
  if (size % 16 != 0) fill_block(data + size - 16);
}

// Calls body(pointer) for every element of a CPU tensor in *memory* order: dims sorted by
// decreasing stride. PyTorch's TensorIterator visits a non-contiguous tensor that way, so
// the n-th draw lands in the same element as in PyTorch.
template <class T, class Body>
void for_each_in_memory_order(const Tensor& self, Body body) {
  if (self.numel() == 0) return;
  // The dims, outermost (largest stride) first; a stable sort keeps ties in logical order.
  Shape order;
  for (std::int64_t d = 0; d < self.dim(); ++d) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return self.stride(a) > self.stride(b); });
  Shape sizes, strides;
  for (std::int64_t d : order) {
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  T* base = static_cast<T*>(self.data_ptr());
  Shape counter(sizes.size(), 0);
  const std::int64_t total = self.numel();
  for (std::int64_t n = 0; n < total; ++n) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < sizes.size(); ++d) offset += counter[d] * strides[d];
    body(base + offset);
    for (std::size_t d = sizes.size(); d-- > 0;) {  // odometer step, innermost dim first
      if (++counter[d] < sizes[d]) break;
      counter[d] = 0;
    }
  }
}

// Runs `sample(cpu_tensor)` on self, or on a CPU stand-in that is then copied to self's
// device (random_ and randint on a GPU tensor: their integer streams stay on the CPU).
// Bumps the version counter.
template <class Sample>
void sample_into(const Tensor& self, Generator* generator, Sample sample) {
  Generator& gen = resolve(generator);
  if (self.is_cpu()) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    sample(self, gen);
  } else {
    Tensor host = empty(self.sizes(), TensorOptions().dtype(self.dtype()));
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      sample(host, gen);
    }
    native::copy_(self, host);
  }
  self.bump_version();
}

// A random fill of a device tensor, generated where it lives: the device backend's Philox
// kernel (core/backend.h) under key = the generator's seed, starting at a counter offset
// reserved from the generator, so manual_seed(s) followed by the same calls replays the same
// numbers and no host buffer or copy is involved. The mt19937 stream is left alone.
// Element e in plan order (the tensor's memory order, as on the CPU) gets counter
// offset + e / 2, so the values do not depend on the launch shape.
void fill_on_device(const Tensor& self, Generator* generator, RandomDistribution distribution, double a, double b) {
  // The Philox kernels write float32, float64 and (Bernoulli) integers: a 16-bit tensor gets
  // the float32 fill of its shape (the same counters), rounded once. A uniform value that
  // rounds up to `to` becomes `from`, keeping the range [from, to) as the CPU fill and
  // PyTorch's CUDA kernels do; a Bernoulli mask is exactly 0 and 1 either way.
  if (is_reduced_floating_point(self.dtype())) {
    const TensorOptions options = TensorOptions().dtype(self.dtype()).device(self.device());
    Tensor wide = empty(self.sizes(), TensorOptions().dtype(DType::Float32).device(self.device()));
    fill_on_device(wide, generator, distribution, static_cast<float>(a), static_cast<float>(b));
    Tensor narrow = native::to_dtype(wide, self.dtype());
    if (distribution == RandomDistribution::Uniform)
      narrow = native::masked_fill(narrow, native::eq(narrow, full({}, b, options)), full({}, a, options));
    native::copy_(self, narrow);  // bumps the version
    return;
  }
  if (self.numel() > 0) {
    Generator& gen = resolve(generator);
    PhiloxFill fill;
    fill.distribution = distribution;
    fill.a = a;
    fill.b = b;
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      fill.seed = gen.initial_seed();
      fill.offset = gen.reserve_philox_counters(philox_counters(self.numel()));
    }
    random_fill_kernel(self.device(), make_strided_plan(self, {}), fill);
  }
  self.bump_version();
}

void check_floating(const Tensor& self, const char* kernel_name) {
  EMBER_CHECK(self.is_floating_point(), DTypeError, "\"", kernel_name, "\" not implemented for '",
              scalar_type_name(self.dtype()), "'");
}

// The largest value random_() produces + 1 for a dtype: 2^digits for floats (every integer
// up to it is exact), max + 1 for integers.
std::uint64_t random_range_for(DType dtype) {
  switch (dtype) {
    case DType::Bool: return 2;
    case DType::UInt8: return 256;
    case DType::Int32: return std::uint64_t{1} << 31;
    case DType::Int64: return std::uint64_t{1} << 63;
    case DType::Float32: return (std::uint64_t{1} << 24) + 1;
    case DType::Float64: return (std::uint64_t{1} << 53) + 1;
    case DType::Float16: return (std::uint64_t{1} << 11) + 1;
    case DType::BFloat16: return (std::uint64_t{1} << 8) + 1;
  }
  return 2;
}

// An integer as a floating dtype holds it (rounded through the dtype), back as an integer.
// (A value that rounds up to 2^63 or more, past int64, is INT64_MAX: still past any `to`.)
std::int64_t held_by(DType dtype, std::int64_t value) {
  double held = static_cast<double>(value);
  switch (dtype) {
    case DType::Float32: held = static_cast<float>(value); break;
    case DType::BFloat16: held = static_cast<float>(static_cast<BFloat16>(static_cast<float>(value))); break;
    case DType::Float16: held = static_cast<float>(static_cast<Half>(static_cast<float>(value))); break;
    default: break;
  }
  if (held >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(held);
}

// PyTorch's update_from / update_to (random_ on a floating dtype): when from + 1 (or to - 1)
// does not survive the trip through the dtype — it rounds past from (or to) — the bound moves
// inwards by one unit of the dtype at that magnitude, so every integer drawn in between
// rounds to a value inside [from, to).
int float_digits(DType dtype) {
  return dtype == DType::Float64 ? 53 : dtype == DType::Float32 ? 24 : dtype == DType::BFloat16 ? 8 : 11;
}
int floor_log2(std::uint64_t value) {
  int n = 0;
  while (value >>= 1) ++n;
  return n;
}
std::int64_t from_held_by(DType dtype, std::int64_t from) {
  if (from == std::numeric_limits<std::int64_t>::max()) return from;  // refused below ("from < to")
  const std::int64_t from_plus_1 = held_by(dtype, from + 1);
  if (from_plus_1 >= from) return from;
  const int n = floor_log2(static_cast<std::uint64_t>(std::llabs(from + 1)));
  return from_plus_1 + (std::int64_t{1} << (n - float_digits(dtype) + 1));
}
std::int64_t to_held_by(DType dtype, std::int64_t to) {
  const std::int64_t to_minus_1 = held_by(dtype, to - 1);
  if (to_minus_1 < to) return to;
  const int n = floor_log2(static_cast<std::uint64_t>(std::llabs(to - 1)));
  return to_minus_1 - (std::int64_t{1} << (n - float_digits(dtype) + 1));
}

}  // namespace

// ====================================================================== in-place samplers

void uniform_(const Tensor& self, double from, double to, Generator* generator) {
  check_floating(self, "check_uniform_bounds");
  check_uniform_bounds(self.dtype(), from, to);  // PyTorch's checks and messages
  if (!self.is_cpu()) {
    // float32 (and 16-bit) bounds are rounded to float32 first, as on the CPU.
    const bool single = self.dtype() != DType::Float64;
    fill_on_device(self, generator, RandomDistribution::Uniform, single ? static_cast<float>(from) : from,
                   single ? static_cast<float>(to) : to);
    return;
  }
  sample_into(self, generator, [&](const Tensor& out, Generator& gen) {
    // The bounds are float32; the affine map runs in double (fused) and is rounded once.
    const auto low = static_cast<float>(from), high = static_cast<float>(to);
    const double width = static_cast<double>(high - low);
    if (out.dtype() == DType::Float32) {
      for_each_in_memory_order<float>(out, [&](float* p) { *p = uniform_float(gen, low, width); });
    } else if (is_reduced_floating_point(out.dtype())) {
      // bfloat16 and float16: the float32 value above, rounded once to 16 bits — except that
      // a value which rounds to `to` (itself rounded to 16 bits) is replaced by `from`
      // (rounded), so the range stays [from, to) as PyTorch 2.15 keeps it. (A float32
      // uniform in [0, 1) rounds to 1.0 in bfloat16 from 1 - 2^-10 up: 1 draw in 1024.)
      auto fill = [&](auto tag) {
        using T = decltype(tag);
        const T low16 = static_cast<T>(low), high16 = static_cast<T>(high);
        for_each_in_memory_order<T>(out, [&](T* p) {
          const T value = static_cast<T>(uniform_float(gen, low, width));
          *p = static_cast<float>(value) == static_cast<float>(high16) ? low16 : value;
        });
      };
      if (out.dtype() == DType::BFloat16) fill(BFloat16{});
      else fill(Half{});
    } else {
      const double width = to - from;
      for_each_in_memory_order<double>(out, [&](double* p) { *p = std::fma(uniform_unit_double(gen), width, from); });
    }
  });
}

// Two paths, as in PyTorch: a contiguous tensor of 16 or more elements is filled in blocks
// of 16 (normal_fill above: float32 uses the polynomial log/sin/cos, float64 libm;
// bfloat16/float16 normal_fill_reduced, the float32 transform per fresh block); anything
// smaller or strided draws one Box–Muller sample at a time in double (normal_scalar), which
// also uses and refills the generator's cached second value, and rounds it to the dtype
// (a 16-bit one through float32, as c10 converts a double).
void normal_(const Tensor& self, double mean, double std, Generator* generator) {
  check_floating(self, "normal_kernel_cpu");
  EMBER_CHECK(std >= 0.0, ValueError, "normal expects std >= 0.0, but found std ", std);
  if (!self.is_cpu()) {
    fill_on_device(self, generator, RandomDistribution::Normal, mean, std);
    return;
  }
  sample_into(self, generator, [&](const Tensor& out, Generator& gen) {
    const std::int64_t size = out.numel();
    if (size >= 16 && out.is_contiguous() && out.dtype() == DType::BFloat16) {
      normal_fill_reduced(out.data_ptr<BFloat16>(), size, static_cast<float>(mean), static_cast<float>(std), gen);
    } else if (size >= 16 && out.is_contiguous() && out.dtype() == DType::Float16) {
      normal_fill_reduced(out.data_ptr<Half>(), size, static_cast<float>(mean), static_cast<float>(std), gen);
    } else if (size >= 16 && out.is_contiguous()) {
      EMBER_DISPATCH_FLOATING(out.dtype(), normal_fill<scalar_t>(out.data_ptr<scalar_t>(), size,
                                                                 static_cast<scalar_t>(mean),
                                                                 static_cast<scalar_t>(std), gen));
    } else {
      EMBER_DISPATCH_FLOATING_AND_REDUCED(out.dtype(), for_each_in_memory_order<scalar_t>(out, [&](scalar_t* p) {
        *p = static_cast<scalar_t>(normal_scalar(gen, mean, std));
      }));
    }
  });
}

void random_(const Tensor& self, Generator* generator) {
  // Uniform over [0, range): 64-bit draws where the range needs them (int64, float64).
  const std::uint64_t range = random_range_for(self.dtype());
  const bool wide = self.dtype() == DType::Int64 || self.dtype() == DType::Float64;
  sample_into(self, generator, [&](const Tensor& out, Generator& gen) {
    // (bfloat16/float16: range is 2^digits + 1, as for float32; the integer rounds into the
    // dtype through float, as c10 converts it.)
    EMBER_DISPATCH_ALL_AND_REDUCED(out.dtype(), for_each_in_memory_order<scalar_t>(out, [&](scalar_t* p) {
      std::uint64_t draw = wide ? gen.random64() : gen.random();
      *p = static_cast<scalar_t>(out.dtype() == DType::Bool ? (draw & 1U) : draw % range);
    }));
  });
}

void random_(const Tensor& self, std::int64_t from, std::optional<std::int64_t> to, Generator* generator) {
  // The width of [from, to) as an unsigned number (it may exceed INT64_MAX). Without `to`
  // the range runs to the end of random_()'s range for the dtype; 0 means all 2^64 values
  // (int64 from INT64_MIN), drawn with random64() directly.
  if (to.has_value()) {
    EMBER_CHECK(from < *to, ValueError, "random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
    if (self.is_floating_point()) {
      // Bounds the dtype cannot hold move inwards (PyTorch's update_from / update_to), so no
      // drawn integer rounds to a value outside [from, to).
      from = from_held_by(self.dtype(), from);
      *to = to_held_by(self.dtype(), *to);
      EMBER_CHECK(from < *to, ValueError,
                  "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from=", from,
                  " >= to=", *to);
    }
  } else if (self.is_floating_point()) {
    from = from_held_by(self.dtype(), from);
  }
  const auto from_bits = static_cast<std::uint64_t>(from);
  std::uint64_t range;
  if (to.has_value()) {
    range = static_cast<std::uint64_t>(*to) - from_bits;
  } else {
    const std::uint64_t end = random_range_for(self.dtype());
    EMBER_CHECK(from < 0 || from_bits < end, ValueError, "random_ expects 'from' to be less than 'to', but got from=",
                from, " >= to=", end);
    range = end - from_bits;
  }
  // Every value drawn must be one the dtype holds: randint(0, 1000) into uint8 would wrap.
  // (PyTorch only warns for floating dtypes, whose integers are exact up to 2^mantissa.)
  if (is_integral(self.dtype(), /*include_bool=*/true))
    check_random_range(self.dtype(), from, static_cast<std::int64_t>(from_bits + (range == 0 ? 0 : range - 1)));
  // From 2^28 on, PyTorch (2.x) draws random64() for every dtype, so that `draw % range`
  // favours low values by at most about 5 %: an int32 random_(5) takes 64-bit draws.
  // (PyTorch 1.13 switched at 2^32, and only for int64 and floating dtypes.)
  const bool wide = range == 0 || range >= (std::uint64_t{1} << 28);
  sample_into(self, generator, [&](const Tensor& out, Generator& gen) {
    EMBER_DISPATCH_ALL_AND_REDUCED(out.dtype(), for_each_in_memory_order<scalar_t>(out, [&](scalar_t* p) {
      const std::uint64_t draw = wide ? gen.random64() : gen.random();
      const std::uint64_t value = range == 0 ? draw : draw % range + from_bits;
      *p = static_cast<scalar_t>(static_cast<std::int64_t>(value));
    }));
  });
}

void bernoulli_(const Tensor& self, double p, Generator* generator) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0, ValueError, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  if (!self.is_cpu()) {
    fill_on_device(self, generator, RandomDistribution::Bernoulli, p, 0.0);
    return;
  }
  // Every dtype draws the same double uniform per element, so a 16-bit mask is the float32
  // mask exactly (0 and 1 are exact): dropout on bfloat16 drops the same elements.
  sample_into(self, generator, [&](const Tensor& out, Generator& gen) {
    EMBER_DISPATCH_ALL_AND_REDUCED(out.dtype(), for_each_in_memory_order<scalar_t>(out, [&](scalar_t* ptr) {
      *ptr = static_cast<scalar_t>(uniform_unit_double(gen) < p ? 1 : 0);
    }));
  });
}

// ====================================================================== factories

namespace {
Tensor finish(Tensor result, const TensorOptions& options) {
  if (options.requires_grad()) result.requires_grad_(true);
  return result;
}
}  // namespace

Tensor rand(IntArrayRef sizes, TensorOptions options, Generator* generator) {
  Tensor result = empty(sizes, options.requires_grad(false));
  uniform_(result, 0.0, 1.0, generator);
  return finish(result, options);
}

Tensor randn(IntArrayRef sizes, TensorOptions options, Generator* generator) {
  Tensor result = empty(sizes, options.requires_grad(false));
  normal_(result, 0.0, 1.0, generator);
  return finish(result, options);
}

Tensor randint(std::int64_t low, std::int64_t high, IntArrayRef sizes, TensorOptions options, Generator* generator) {
  Tensor result = empty(sizes, options.dtype(options.dtype_or(DType::Int64)).requires_grad(false));
  random_(result, low, high, generator);
  return finish(result, options);
}

Tensor randperm(std::int64_t n, TensorOptions options, Generator* generator) {
  EMBER_CHECK(n >= 0, ShapeError, "Trying to create tensor with negative dimension ", n, ": [", n, "]");
  const DType dtype = options.dtype_or(DType::Int64);
  // Every number 0 .. n-1 must be exact in the dtype, or the "permutation" has duplicates
  // (300 in uint8 would wrap to 44). PyTorch's messages for each case.
  EMBER_CHECK(dtype != DType::Bool, NotImplementedError, "\"randperm\" not implemented for 'Bool'");
  EMBER_CHECK(dtype != DType::Float32 || n <= (std::int64_t{1} << 24) + 1, ValueError,
              "n cannot be greater than 2^24+1 for Float type.");
  if (n > 0 && is_integral(dtype)) check_scalar_fits(n - 1, dtype);
  // The permutation is built in an int64 tensor: its allocation is size-checked like any
  // tensor's (a std::vector here threw std::length_error for n = 2^62).
  Tensor order = empty({n}, TensorOptions().dtype(DType::Int64));
  auto* values = order.data_ptr<std::int64_t>();
  std::iota(values, values + n, std::int64_t{0});
  {
    // Fisher–Yates from the front, PyTorch's CPU order: swap slot i with slot i + (draw % (n - i)).
    Generator& gen = resolve(generator);
    std::lock_guard<std::mutex> lock(gen.mutex());
    for (std::int64_t i = 0; i + 1 < n; ++i) {
      auto pick = static_cast<std::int64_t>(gen.random() % static_cast<std::uint64_t>(n - i));
      std::swap(values[i], values[i + pick]);
    }
  }
  Tensor host = native::to_dtype(order, dtype);
  Tensor result = options.device().is_cpu() ? host : native::to_device(host, options.device());
  return finish(result, options);
}

Tensor rand_like(const Tensor& other, Generator* generator) { return rand(other.sizes(), other.options(), generator); }
Tensor randn_like(const Tensor& other, Generator* generator) { return randn(other.sizes(), other.options(), generator); }

}  // namespace ember
