// core/cpu/elementwise_kernels.cpp — the CPU loops for fill, copy, unary, binary and where.
//
// Tutorial §2 (tensor operations). Every function here receives a StridedPlan built by the
// TensorIterator (core/tensor_iterator.h): operands already broadcast, dims reordered and
// coalesced, and all inputs already of one dtype (core/type_promotion.h did the casts).
// So a kernel is just "walk the plan, apply a function of one element". The functions of
// one element are core/element_functions.h's functors, the same ones the CUDA kernels
// instantiate; this file only supplies the loops. Two pieces:
//
//   for_each_run(plan, run)  splits the plan's linear index range across threads
//                            (core/parallel.h) and hands `run` maximal *runs* along the
//                            innermost dim: a start offset per operand plus a length.
//   *_loop<T>(plan, f)       applies f along each run. When every operand's inner stride is
//                            1 the loop is a plain `out[i] = f(x[i])` over raw pointers,
//                            which GCC auto-vectorises at -O2/-O3.
//
// A large new output (streamed_store, below) is written with non-temporal stores. The few
// functions bound by arithmetic, not memory (GELU), run their contiguous runs in
// elementwise_wide_runs.cpp, built for AVX-512 and AVX2 as well, and so do the bfloat16 and
// float16 runs (elementwise_16_bit_runs.h).
//
// Then one switch per entry point turns the runtime op + dtype into a loop over a functor.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/elementwise_16_bit_runs.h>
#include <ember/core/cpu/elementwise_wide_runs.h>
#include <ember/core/element_functions.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

using Offsets = std::array<std::int64_t, kMaxOperands>;  // element offsets, one per operand

// Calls run(offsets, count) for consecutive runs of `count` elements along plan dim 0,
// covering every element once. Runs never cross a row, so inside a run operand k simply
// advances by plan.strides[k][0] per element. Only a chunk's first run finds its offsets by
// division (operand_offset); each next row's offsets are stepped from the previous row's,
// an odometer over dims 1..ndim-1, because short rows (a bias of 2 broadcast over a batch of
// 32) made the divisions most of the cost of the loop (docs/performance.md).
template <class Run>
void for_each_run(const StridedPlan& plan, const Run& run) {
  if (plan.numel == 0) return;
  const std::int64_t row_length = plan.ndim > 0 ? plan.sizes[0] : 1;
  const int operands = plan.num_operands;
  if (plan.ndim == 2 && plan.numel <= kDefaultGrainSize) {
    // A small matrix (one thread's work anyway): row by row, no chunking, no odometer.
    Offsets offsets{};
    for (std::int64_t row = 0; row < plan.sizes[1]; ++row) {
      for (int k = 0; k < operands; ++k) offsets[k] = row * plan.strides[k][1];
      run(offsets, row_length);
    }
    return;
  }
  parallel_for(0, plan.numel, kDefaultGrainSize, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t linear = begin;
    Offsets offsets{};
    for (int k = 0; k < operands; ++k) offsets[k] = operand_offset(plan, k, linear);
    std::int64_t column = linear % row_length;  // the chunk may start mid-row
    std::array<std::int64_t, kMaxDims> index{};  // position along dims 1..ndim-1
    for (std::int64_t d = 1, rest = linear / row_length; d < plan.ndim; ++d) {
      index[d] = rest % plan.sizes[d];
      rest /= plan.sizes[d];
    }
    while (true) {
      // The run stops at the row's end or the chunk's end.
      const std::int64_t count = std::min(row_length - column, end - linear);
      run(offsets, count);
      linear += count;
      if (linear >= end) break;
      // On to the start of the next row.
      for (int k = 0; k < operands; ++k) offsets[k] -= column * plan.strides[k][0];
      column = 0;
      for (int d = 1; d < plan.ndim; ++d) {
        for (int k = 0; k < operands; ++k) offsets[k] += plan.strides[k][d];
        if (++index[d] < plan.sizes[d]) break;
        for (int k = 0; k < operands; ++k) offsets[k] -= plan.strides[k][d] * plan.sizes[d];
        index[d] = 0;
      }
    }
  });
}

template <class T>
T* operand(const StridedPlan& plan, int k) { return static_cast<T*>(plan.data[k]); }

// Outputs of at least this many bytes, written to memory that no input shares, are written
// with non-temporal stores. A normal store first reads its cache line from memory ("read
// for ownership"), so `c = a + b` over tensors far larger than the caches moves four
// streams for three; a non-temporal store writes the line without reading it, as memcpy
// does for large copies. Below this size the output may still be in cache when the next op
// reads it, which non-temporal stores would prevent. Measured (ember-bench, 2 threads): add
// over 64M floats 31.7 -> 39.7 GB/s, over 256M 31.4 -> 37.6 GB/s (69 % -> 82 % of memcpy's);
// relu 28.4 -> 39.9 GB/s at 256M (docs/performance.md).
constexpr std::int64_t kStreamingMinBytes = std::int64_t{32} << 20;

// Does plan's output get streamed (see kStreamingMinBytes)? Inputs are operands 1..n-1.
template <class Out>
bool streams_output(const StridedPlan& plan) {
  if (plan.numel * static_cast<std::int64_t>(sizeof(Out)) < kStreamingMinBytes) return false;
  for (int k = 1; k < plan.num_operands; ++k)
    if (plan.data[k] == plan.data[0]) return false;  // in place: the lines are read anyway
  return true;
}

// out[i] = value(i) for i < count, with non-temporal stores: each block of values is
// computed into an L1-resident buffer by the same vectorisable loop as everywhere else,
// then copied out 16 bytes at a time (SSE2, which every x86-64 CPU has). Elsewhere, a
// plain loop.
template <class Out, class Value>
void streamed_store(Out* out, std::int64_t count, const Value& value) {
  std::int64_t i = 0;
#if defined(__SSE2__)
  constexpr std::int64_t kBlockBytes = 4096;
  constexpr std::int64_t kBlock = kBlockBytes / static_cast<std::int64_t>(sizeof(Out));
  static_assert(16 % sizeof(Out) == 0, "a 16-byte store holds whole elements");
  alignas(64) Out block[kBlock];
  for (; i < count && reinterpret_cast<std::uintptr_t>(out + i) % 16 != 0; ++i) out[i] = value(i);
  for (; i + kBlock <= count; i += kBlock) {
    for (std::int64_t j = 0; j < kBlock; ++j) block[j] = value(i + j);
    const auto* source = reinterpret_cast<const __m128i*>(block);
    auto* target = reinterpret_cast<__m128i*>(out + i);
    for (std::int64_t v = 0; v < kBlockBytes / 16; ++v) _mm_stream_si128(target + v, _mm_load_si128(source + v));
  }
  for (; i < count; ++i) out[i] = value(i);
  // Non-temporal stores are weakly ordered: fence them before this thread reports its chunk
  // done (core/parallel.cpp), so that whoever reads the output next sees them.
  _mm_sfence();
#else
  for (; i < count; ++i) out[i] = value(i);
#endif
}

// out[i] = value(i) for i < count, a contiguous run: streamed when `stream`, else the plain
// loop GCC auto-vectorises.
template <class Out, class Value>
void write_run(Out* out, std::int64_t count, bool stream, const Value& value) {
  if (stream) {
    streamed_store(out, count, value);
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) out[i] = value(i);
}

// out = f(in). Out and In may differ (copy casts; everything else has Out == In).
template <class Out, class In, class F>
void unary_loop(const StridedPlan& plan, F f) {
  Out* out = operand<Out>(plan, 0);
  const In* in = operand<In>(plan, 1);
  const std::int64_t out_step = plan.strides[0][0], in_step = plan.strides[1][0];
  const bool stream = streams_output<Out>(plan);
  for_each_run(plan, [&](const Offsets& base, std::int64_t count) {
    Out* o = out + base[0];
    const In* x = in + base[1];
    if (out_step == 1 && in_step == 1) {
      if constexpr (sixteen_bit::runs<Out, F, float>()) {  // bfloat16/float16: elementwise_16_bit_runs.h
        return sixteen_bit::unary_run(x, o, count, f);
      }
      if constexpr (wide::has_wide_run<F>) {
        if (!stream) return wide::run(f, o, x, count);  // built for AVX-512 / AVX2 too
      }
      write_run(o, count, stream, [&](std::int64_t i) { return f(x[i]); });  // the vectorisable case
    } else {
      for (std::int64_t i = 0; i < count; ++i) o[i * out_step] = f(x[i * in_step]);
    }
  });
}

// out = f(a, b); Out is T, or bool for comparisons.
template <class Out, class T, class F>
void binary_loop(const StridedPlan& plan, F f) {
  Out* out = operand<Out>(plan, 0);
  const T* a = operand<T>(plan, 1);
  const T* b = operand<T>(plan, 2);
  const std::int64_t out_step = plan.strides[0][0], a_step = plan.strides[1][0], b_step = plan.strides[2][0];
  const bool stream = streams_output<Out>(plan);
  for_each_run(plan, [&](const Offsets& base, std::int64_t count) {
    Out* o = out + base[0];
    const T* x = a + base[1];
    const T* y = b + base[2];
    if constexpr (sixteen_bit::runs<Out, F, float, float>()) {
      if (out_step == 1 && (a_step == 1 || a_step == 0) && (b_step == 1 || b_step == 0) && a_step + b_step > 0)
        return sixteen_bit::binary_run(x, a_step, y, b_step, o, count, f);
    }
    if (out_step == 1 && a_step == 1 && b_step == 1) {
      if constexpr (wide::has_wide_run<F>) {
        if (!stream) return wide::run(f, o, x, y, count);
      }
      write_run(o, count, stream, [&](std::int64_t i) { return f(x[i], y[i]); });
    } else if (out_step == 1 && a_step == 1 && b_step == 0) {
      const T scalar = y[0];  // tensor (op) scalar: the second operand is broadcast
      for (std::int64_t i = 0; i < count; ++i) o[i] = f(x[i], scalar);
    } else {
      for (std::int64_t i = 0; i < count; ++i) o[i * out_step] = f(x[i * a_step], y[i * b_step]);
    }
  });
}

// ------------------------------------------------------------------ typed entry points

// One case per row of core/op_list.h: the row's functor, for the dtypes the row accepts
// (native:: has refused or promoted the others already).
template <class T>
void unary_typed(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) {
  switch (op) {
#define EMBER_UNARY_KERNEL(Functor, inputs)                                                      \
  case UnaryOp::Functor:                                                                      \
    if constexpr (op_accepts<OpInputs::inputs, T>) return unary_loop<T, T>(plan, element::in_opmath<T>(element::Functor<opmath_t<T>>{})); \
    break;
    EMBER_UNARY_KERNELS
#undef EMBER_UNARY_KERNEL
    case UnaryOp::Clamp:
      return unary_loop<T, T>(plan, element::in_opmath<T>(element::Clamp<opmath_t<T>>{params.low_as<opmath_t<T>>(), params.high_as<opmath_t<T>>(), params.has_low,
                                                     params.has_high}));
    case UnaryOp::PowScalar:
      return element::with_pow_scalar<opmath_t<T>>(params.exponent, [&](auto power) { unary_loop<T, T>(plan, element::in_opmath<T>(power)); });
  }
  throw DTypeError(make_message("cpu::unary: op ", static_cast<int>(op), " not implemented for '",
                                scalar_type_name(dtype_of_v<T>), "'"));
}

template <class T>
void binary_typed(BinaryOp op, const StridedPlan& plan, Scalar alpha_scalar) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      // Sub is Add with -alpha. `alpha == 1` gets its own loop: plain a + b vectorises best.
      const bool negate = op == BinaryOp::Sub;
      const double alpha_value = negate ? -alpha_scalar.to_double() : alpha_scalar.to_double();
      if (alpha_value == 1.0) {
        binary_loop<T, T>(plan, element::in_opmath<T>(element::Add<opmath_t<T>>{}));
      } else if constexpr (!std::is_same_v<T, bool>) {
        if (alpha_value == -1.0) {
          binary_loop<T, T>(plan, element::in_opmath<T>(element::Sub<opmath_t<T>>{}));
        } else {
          // A 16-bit alpha is rounded to T, then computed with in float, as PyTorch does.
          const auto alpha = static_cast<opmath_t<T>>(alpha_scalar.to<T>());
          binary_loop<T, T>(plan, element::in_opmath<T>(element::AddScaled<opmath_t<T>>{negate ? math::neg(alpha) : alpha}));
        }
      } else {
        binary_loop<T, T>(plan, element::AddScaled<T>{alpha_scalar.to<T>()});
      }
      return;
    }
#define EMBER_BINARY_KERNEL(Functor, result, types)                                               \
  case BinaryOp::Functor:                                                                     \
    if constexpr (op_accepts<OpInputs::types, T>) return binary_loop<op_output_t<OpResult::result, T>, T>(plan, element::in_opmath<T>(element::Functor<opmath_t<T>>{})); \
    break;
    EMBER_BINARY_KERNELS
#undef EMBER_BINARY_KERNEL
  }
  throw DTypeError(make_message("cpu::binary: op ", static_cast<int>(op), " not implemented for '",
                                scalar_type_name(dtype_of_v<T>), "'"));
}

}  // namespace

// ------------------------------------------------------------------ backend entry points

namespace {

// out[0 .. count) = value. std::fill of a 2-byte struct (bfloat16, float16) stays a scalar
// loop; a loop over its bits vectorises.
template <class T>
void fill_run(T* out, std::int64_t count, T value) {
  if constexpr (is_reduced_float_v<T>) {
    for (std::int64_t i = 0; i < count; ++i) out[i].bits = value.bits;
  } else {
    std::fill(out, out + count, value);
  }
}

}  // namespace

void fill(const StridedPlan& plan, Scalar value) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[0], {
    const scalar_t v = value.to<scalar_t>();
    scalar_t* out = operand<scalar_t>(plan, 0);
    const std::int64_t step = plan.strides[0][0];
    for_each_run(plan, [&](const Offsets& base, std::int64_t count) {
      scalar_t* o = out + base[0];
      if (step == 1) {
        fill_run(o, count, v);
      } else {
        for (std::int64_t i = 0; i < count; ++i) o[i * step] = v;
      }
    });
  });
}

void copy(const StridedPlan& plan) {
  const DType dst = plan.dtypes[0], src = plan.dtypes[1];
  if (dst == src && plan.contiguous) {
    // Same dtype, both dense: bytes are bytes.
    const std::size_t size = itemsize(dst);
    auto* out = static_cast<char*>(plan.data[0]);
    const auto* in = static_cast<const char*>(plan.data[1]);
    parallel_for(0, plan.numel, kDefaultGrainSize, [&](std::int64_t begin, std::int64_t end) {
      std::memcpy(out + begin * size, in + begin * size, static_cast<std::size_t>(end - begin) * size);
    });
    return;
  }
  const bool large = plan.numel * static_cast<std::int64_t>(itemsize(dst)) >= kStreamingMinBytes;
  if (dst == src && !large && plan.ndim > 0 && plan.strides[0][0] == 1 && plan.strides[1][0] == 1) {
    // Same dtype, rows of unit stride (a bias broadcast over a batch, a block of rows): each
    // row is one byte copy, not an element loop. (A large output keeps the loop below, which
    // streams it past the cache.)
    const std::size_t size = itemsize(dst);
    auto* out = static_cast<char*>(plan.data[0]);
    const auto* in = static_cast<const char*>(plan.data[1]);
    for_each_run(plan, [&](const Offsets& base, std::int64_t count) {
      std::memmove(out + base[0] * static_cast<std::int64_t>(size), in + base[1] * static_cast<std::int64_t>(size),
                   static_cast<std::size_t>(count) * size);
    });
    return;
  }
  // Two dispatches: the destination type, then the source type (float -> int truncates
  // toward zero, nonzero -> true, as PyTorch's copy).
  EMBER_DISPATCH_ALL_AND_REDUCED(dst, {
    using dst_t = scalar_t;
    EMBER_DISPATCH_ALL_AND_REDUCED(src, {
      unary_loop<dst_t, scalar_t>(plan, element::Cast<dst_t, scalar_t>{});
    });
  });
}

void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[1], unary_typed<scalar_t>(op, plan, params));
}

void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[1], binary_typed<scalar_t>(op, plan, alpha));
}

void where(const StridedPlan& plan) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[0], {
    scalar_t* out = operand<scalar_t>(plan, 0);
    const bool* condition = operand<bool>(plan, 1);
    const scalar_t* a = operand<scalar_t>(plan, 2);
    const scalar_t* b = operand<scalar_t>(plan, 3);
    const std::int64_t so = plan.strides[0][0], sc = plan.strides[1][0];
    const std::int64_t sa = plan.strides[2][0], sb = plan.strides[3][0];
    for_each_run(plan, [&](const Offsets& base, std::int64_t count) {
      scalar_t* o = out + base[0];
      const bool* c = condition + base[1];
      const scalar_t* x = a + base[2];
      const scalar_t* y = b + base[3];
      const element::Where<scalar_t> where_element{};
      for (std::int64_t i = 0; i < count; ++i) o[i * so] = where_element(c[i * sc], x[i * sa], y[i * sb]);
    });
  });
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) {
  EMBER_CHECK(dst_device.is_cpu() && src_device.is_cpu(), DeviceError, "CPU kernel asked to copy between ",
              src_device, " and ", dst_device);
  if (nbytes > 0) std::memcpy(dst, src, nbytes);
}

EMBER_REGISTER_KERNEL(::ember::fill_kernel, CPU, fill);
EMBER_REGISTER_KERNEL(::ember::copy_kernel, CPU, copy);
EMBER_REGISTER_KERNEL(::ember::copy_bytes_kernel, CPU, copy_bytes);
EMBER_REGISTER_KERNEL(::ember::unary_kernel, CPU, unary);
EMBER_REGISTER_KERNEL(::ember::binary_kernel, CPU, binary);
EMBER_REGISTER_KERNEL(::ember::where_kernel, CPU, where);

}  // namespace ember::cpu
