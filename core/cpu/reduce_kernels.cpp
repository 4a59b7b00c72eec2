// core/cpu/reduce_kernels.cpp — the CPU loops for reductions and softmax.
//
// Tutorial §2.3 (sum, mean, max) and §5 (softmax / cross-entropy). The native layer
// (core/reduce.cpp) hands over a contiguous input seen as [outer, reduce, inner]:
//     out[o, i] = fold over r of input[o, r, i]
// The outputs (o, i) are independent, so threads split them (core/parallel.h). For one o,
// a run of consecutive i's is handled together: the loop over r is outside and the loop
// over i inside, so memory is read in order and the inner loop vectorises.
//
// Accuracy: float32 sums (and means, and softmax's normaliser) accumulate in double (after
// runs of 16 values in float, see sum_contiguous), so a sum of a million floats matches
// PyTorch to float32 precision; bfloat16 and float16 accumulate the same way (runs in float,
// then double) and round once at the end; integers accumulate modulo 2^64 (accumulate_t).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/sixteen_bit_words.h>
#include <ember/core/cpu/wide_clones.h>
#include <ember/core/element_math.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>
#include <ember/core/reduce_dispatch.h>

namespace ember::cpu {

namespace {

// The type a sum or product is accumulated in. Integers use uint64: its arithmetic wraps
// modulo 2^64 by definition, and the result converted back to int64 is exactly the two's-
// complement wrap-around PyTorch's int64 sums and products show (in int64 itself an overflow
// would be undefined behaviour).
template <class T>
using accumulate_t = std::conditional_t<is_floating_v<T>, double, std::uint64_t>;  // bfloat16/float16 too

// Calls block(o, i_begin, i_end) for every output (o, i), split across threads; within a
// block o is fixed and i runs over [i_begin, i_end).
template <class Block>
void for_each_output_block(std::int64_t outer, std::int64_t reduce, std::int64_t inner, const Block& block) {
  // Each output costs `reduce` element reads: scale the grain so a thread gets enough work.
  const std::int64_t grain = std::max<std::int64_t>(1, kDefaultGrainSize / std::max<std::int64_t>(reduce, 1));
  parallel_for(0, outer * inner, grain, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t index = begin;
    while (index < end) {
      std::int64_t o = index / inner, i_begin = index % inner;
      std::int64_t i_end = std::min(inner, i_begin + (end - index));
      block(o, i_begin, i_end);
      index += i_end - i_begin;
    }
  });
}

// A long contiguous row is summed in blocks of this many elements: the blocks of one row are
// the unit the threads share when there are fewer rows than threads (a full reduction is
// one row), and their partial sums are added in block order, so the result does not depend
// on the thread count.
constexpr std::int64_t kSumBlock = 32768;
// Independent accumulators per row. One running total is a chain of dependent additions
// (4 cycles each, ~2.5 GB/s of floats); kSumLanes separate ones are independent, which the
// compiler turns into vector additions (float -> double conversion included), so the loop
// runs at memory speed.
constexpr int kSumLanes = 16;

// sum of x[0 .. n), accumulated in accumulate_t<T> over kSumLanes lanes, the lanes then
// added in order (a fixed order: the same bits on every run and thread count).
// Floats first go through float lanes for kFloatRun elements (each lane adds only
// kFloatRun / kSumLanes = 16 values, so its rounding error stays near float epsilon), and only
// those short sums are converted to double: a conversion per element would cost more than
// the memory traffic (measured: 16 GB/s against 27 for PyTorch on 64M floats).
constexpr std::int64_t kFloatRun = 256;

// The float-lane part of sum_contiguous for a bfloat16 row (the same additions in the same
// lanes, so the same bits), compiled also for AVX-512 and AVX2: the library's plain x86-64
// build widened and added the values a few at a time. Widening a bfloat16 is a shift. Adds
// whole runs of kFloatRun values, then the whole kSumLanes groups left, into `lanes`, and
// returns how many values it took.
EMBER_WIDE_CLONES std::int64_t bfloat16_float_runs(const std::uint16_t* x, std::int64_t n, double* lanes) {
  // kSumLanes values widened at once (written so that GCC loads them with one widening move;
  // a bit_cast per value became one 16-bit insert per value).
  const auto add_widened = [](const std::uint16_t* values, float* run) {
    std::uint32_t words[kSumLanes];
    for (int j = 0; j < kSumLanes; ++j) words[j] = std::uint32_t{values[j]} << 16;
    float widened[kSumLanes];
    std::memcpy(widened, words, sizeof widened);
    for (int j = 0; j < kSumLanes; ++j) run[j] += widened[j];
  };
  std::int64_t r = 0;
  for (; r + kFloatRun <= n; r += kFloatRun) {
    float run[kSumLanes] = {};
    for (std::int64_t q = r; q < r + kFloatRun; q += kSumLanes) add_widened(x + q, run);
    for (int j = 0; j < kSumLanes; ++j) lanes[j] += static_cast<double>(run[j]);
  }
  float run[kSumLanes] = {};
  for (; r + kSumLanes <= n; r += kSumLanes) add_widened(x + r, run);
  for (int j = 0; j < kSumLanes; ++j) lanes[j] += static_cast<double>(run[j]);
  return r;
}

template <class T>
accumulate_t<T> sum_contiguous(const T* x, std::int64_t n) {
  using acc_t = accumulate_t<T>;
  acc_t lanes[kSumLanes] = {};
  std::int64_t r = 0;
  if constexpr (std::is_same_v<T, BFloat16>) {
    r = bfloat16_float_runs(bits_of(x), n, lanes);
  } else if constexpr (std::is_same_v<T, float> || is_reduced_float_v<T>) {
    // (16-bit values widen into the float lanes: a run of 16 of them per lane stays near
    // float's precision, far below the 16-bit result's unit.)
    for (; r + kFloatRun <= n; r += kFloatRun) {
      float run[kSumLanes] = {};
      for (std::int64_t q = r; q < r + kFloatRun; q += kSumLanes)
        for (int j = 0; j < kSumLanes; ++j) run[j] += static_cast<float>(x[q + j]);
      for (int j = 0; j < kSumLanes; ++j) lanes[j] += static_cast<acc_t>(run[j]);
    }
    if constexpr (is_reduced_float_v<T>) {
      // A 16-bit row's last partial run in float lanes too (fewer than 16 values per lane: far
      // below the result's unit), not one double conversion per value: the staged sums of
      // core/reduce.cpp read rows of a few hundred values (a convolution's H x W).
      float run[kSumLanes] = {};
      for (; r + kSumLanes <= n; r += kSumLanes)
        for (int j = 0; j < kSumLanes; ++j) run[j] += static_cast<float>(x[r + j]);
      for (int j = 0; j < kSumLanes; ++j) lanes[j] += static_cast<acc_t>(run[j]);
    }
  }
  for (; r + kSumLanes <= n; r += kSumLanes)
    for (int j = 0; j < kSumLanes; ++j) lanes[j] += static_cast<acc_t>(x[r + j]);
  for (; r < n; ++r) lanes[0] += static_cast<acc_t>(x[r]);
  acc_t total = 0;
  for (int j = 0; j < kSumLanes; ++j) total += lanes[j];
  return total;
}

// totals[j] = Σ_r x[r * stride + j] in double, for j < count: a sum over a dim that is not
// the last one (a Linear's bias gradient sums a [batch, features] gradient over the batch).
// A block of kColumnBlock columns keeps its totals in registers while it walks down every
// row, so each value is read once and no total goes back to memory between rows. Each column
// adds its rows in order in double, as the plain loop did, so the bits are the same; compiled
// also for AVX-512 and AVX2 (core/cpu/wide_clones.h), where a conversion and an addition take
// eight values at a time.
//
// The columns left after the last whole block (a layer narrower than a block, as most of a
// small model's are) go in blocks of 16, 8, 4, 2 and 1, each also held in registers: a loop
// over them that added into `totals` row after row waited on its own stores, one dependent
// load and store per value (the [128, 2] bias gradient's sum took as long as [128, 30]'s;
// docs/performance.md). Walking the rows once for all of them together was slower still:
// the compiler no longer kept the parts in registers.
constexpr std::int64_t kColumnBlock = 32;

// Columns [first, first + Width). x is stepped only inside the row loop: an empty input
// (rows == 0) may have no storage at all, and a null pointer plus an offset is undefined
// behaviour even when nothing is read (the API fuzzer).
template <std::int64_t Width, class T>
[[gnu::always_inline]] inline void sum_column_block(const T* x, std::int64_t stride, std::int64_t rows,
                                                    std::int64_t first, double* totals) {
  double block[Width] = {};
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * stride + first;
#pragma GCC unroll 32
    for (std::int64_t j = 0; j < Width; ++j) block[j] += static_cast<double>(row[j]);
  }
  for (std::int64_t j = 0; j < Width; ++j) totals[first + j] = block[j];
}

template <class T>
[[gnu::always_inline]] inline void sum_columns_body(const T* x, std::int64_t stride, std::int64_t rows,
                                                    std::int64_t count, double* totals) {
  std::int64_t j0 = 0;
  for (; j0 + kColumnBlock <= count; j0 += kColumnBlock) sum_column_block<kColumnBlock>(x, stride, rows, j0, totals);
  auto narrower = [&]<std::int64_t Width>(std::integral_constant<std::int64_t, Width>) {
    if (count - j0 < Width) return;
    sum_column_block<Width>(x, stride, rows, j0, totals);
    j0 += Width;
  };
  narrower(std::integral_constant<std::int64_t, 16>{});
  narrower(std::integral_constant<std::int64_t, 8>{});
  narrower(std::integral_constant<std::int64_t, 4>{});
  narrower(std::integral_constant<std::int64_t, 2>{});
  narrower(std::integral_constant<std::int64_t, 1>{});
}
EMBER_WIDE_CLONES void sum_columns(const float* x, std::int64_t stride, std::int64_t rows, std::int64_t count,
                                   double* totals) {
  sum_columns_body(x, stride, rows, count, totals);
}
EMBER_WIDE_CLONES void sum_columns(const double* x, std::int64_t stride, std::int64_t rows, std::int64_t count,
                                   double* totals) {
  sum_columns_body(x, stride, rows, count, totals);
}

// One output of Sum, Mean or Prod from its accumulated total. reduce == 0 gives 0 / 0 = NaN for a mean, as
// torch.mean of an empty dim does.
template <class T, class Acc>
T accumulated_value(ReduceOp op, Acc total, std::int64_t reduce) {
  if (op == ReduceOp::Mean) return static_cast<T>(static_cast<double>(total) / static_cast<double>(reduce));
  return static_cast<T>(total);
}

// Sum or Mean of rows too few to keep every thread busy (outer < threads): each row is cut
// into kSumBlock blocks, the threads share the blocks, and each row's partial sums are then
// added in block order.
template <class T, class Out>
void sum_long_rows(ReduceOp op, const ReducePlan& plan) {
  using acc_t = accumulate_t<T>;
  const T* input = static_cast<const T*>(plan.input);
  Out* output = static_cast<Out*>(plan.output);
  const std::int64_t reduce = plan.reduce;
  const std::int64_t blocks = (reduce + kSumBlock - 1) / kSumBlock;
  std::vector<acc_t> partial(static_cast<std::size_t>(plan.outer * blocks));
  parallel_for(0, plan.outer * blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t index = begin; index < end; ++index) {
      const std::int64_t o = index / blocks, first = index % blocks * kSumBlock;
      partial[index] = sum_contiguous(input + o * reduce + first, std::min(kSumBlock, reduce - first));
    }
  });
  for (std::int64_t o = 0; o < plan.outer; ++o) {
    acc_t total = 0;
    for (std::int64_t block = 0; block < blocks; ++block) total += partial[o * blocks + block];
    output[o] = accumulated_value<Out>(op, total, reduce);
  }
}

template <class T>
bool is_nan(T x) {
  return math::isnan(x);
}

// Sum, Mean and Prod: input of dtype T, output of dtype Out (T, or float32 for a 16-bit T:
// the partial sums of a staged sum, core/reduce.cpp).
template <class T, class Out = T>
void accumulate_kernel(ReduceOp op, const ReducePlan& plan) {
  using acc_t = accumulate_t<T>;
  const T* input = static_cast<const T*>(plan.input);
  Out* output = static_cast<Out*>(plan.output);
  const std::int64_t reduce = plan.reduce, inner = plan.inner;
  const acc_t start = op == ReduceOp::Prod ? acc_t(1) : acc_t(0);
  if (op != ReduceOp::Prod && inner == 1 && reduce > kSumBlock && plan.outer < get_num_threads()) {
    sum_long_rows<T, Out>(op, plan);
    return;
  }
  for_each_output_block(plan.outer, reduce, inner, [&](std::int64_t o, std::int64_t i_begin, std::int64_t i_end) {
    const std::int64_t count = i_end - i_begin;
    if (inner == 1) {
      // The common case (a full reduction, or the last dim): one contiguous row, one scalar.
      const T* row = input + o * reduce;
      acc_t total = start;
      if (op == ReduceOp::Prod) {
        for (std::int64_t r = 0; r < reduce; ++r) total *= static_cast<acc_t>(row[r]);
      } else {
        // In kSumBlock blocks, as sum_long_rows adds them: a row gives the same bits
        // whichever path summed it.
        for (std::int64_t first = 0; first < reduce; first += kSumBlock)
          total += sum_contiguous(row + first, std::min(kSumBlock, reduce - first));
      }
      output[o] = accumulated_value<Out>(op, total, reduce);
      return;
    }
    // The running totals: on the stack for the usual widths (a layer's bias gradient), which
    // spares a heap block per call of a small step; a heap vector beyond.
    constexpr std::int64_t kStackTotals = 256;
    acc_t stack_totals[kStackTotals];
    std::vector<acc_t> heap_totals;
    acc_t* acc = stack_totals;
    if (count > kStackTotals) {
      heap_totals.resize(static_cast<std::size_t>(count));
      acc = heap_totals.data();
    }
    std::fill(acc, acc + count, start);
    const T* first_row = input + o * reduce * inner + i_begin;
    bool summed = false;  // a float32 or float64 sum: the column blocks above
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (op != ReduceOp::Prod) {
        sum_columns(first_row, inner, reduce, count, acc);
        summed = true;
      }
    }
    for (std::int64_t r = 0; !summed && r < reduce; ++r) {
      const T* row = first_row + r * inner;
      if (op == ReduceOp::Prod) {
        for (std::int64_t j = 0; j < count; ++j) acc[j] *= static_cast<acc_t>(row[j]);
      } else {
        for (std::int64_t j = 0; j < count; ++j) acc[j] += static_cast<acc_t>(row[j]);
      }
    }
    Out* out = output + o * inner + i_begin;
    for (std::int64_t j = 0; j < count; ++j) out[j] = accumulated_value<Out>(op, acc[j], reduce);
  });
}

// Max, Min (values, and indices when plan.indices is set), ArgMax, ArgMin (indices only).
// NaN beats every number, and the first of equal candidates wins, as in PyTorch.
template <class T>
void extremum_kernel(ReduceOp op, const ReducePlan& plan) {
  if (plan.reduce == 0) return;  // the native layer refuses this with PyTorch's message
  const bool want_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
  const bool arg_only = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  const T* input = static_cast<const T*>(plan.input);
  T* values = arg_only ? nullptr : static_cast<T*>(plan.output);
  auto* indices = static_cast<std::int64_t*>(arg_only ? plan.output : plan.indices);
  const std::int64_t reduce = plan.reduce, inner = plan.inner;
  // Does candidate x replace the current best? Strict comparisons keep the first on ties.
  auto better = [want_max](T x, T best) {
    if (is_nan(best)) return false;
    if (is_nan(x)) return true;
    return want_max ? x > best : x < best;
  };
  for_each_output_block(plan.outer, reduce, inner, [&](std::int64_t o, std::int64_t i_begin, std::int64_t i_end) {
    const std::int64_t count = i_end - i_begin;
    if (inner == 1) {  // one contiguous row: scalars, no buffers
      const T* row = input + o * reduce;
      T best = row[0];
      std::int64_t best_index = 0;
      for (std::int64_t r = 1; r < reduce; ++r) {
        if (better(row[r], best)) {
          best = row[r];
          best_index = r;
        }
      }
      if (values != nullptr) values[o] = best;
      if (indices != nullptr) indices[o] = best_index;
      return;
    }
    const T* first_row = input + o * reduce * inner + i_begin;
    std::vector<T> best(first_row, first_row + count);
    std::vector<std::int64_t> best_index(static_cast<std::size_t>(count), 0);
    for (std::int64_t r = 1; r < reduce; ++r) {
      const T* row = input + (o * reduce + r) * inner + i_begin;
      for (std::int64_t j = 0; j < count; ++j) {
        if (better(row[j], best[j])) {
          best[j] = row[j];
          best_index[j] = r;
        }
      }
    }
    const std::int64_t out_offset = o * inner + i_begin;
    if (values != nullptr) std::copy(best.begin(), best.end(), values + out_offset);
    if (indices != nullptr) std::copy(best_index.begin(), best_index.end(), indices + out_offset);
  });
}

// softmax over the middle dim of [outer, dim, inner]: exp(x - max) / sum exp(x - max).
// Subtracting the max first keeps exp() from overflowing; it cancels in the ratio.
template <class T>
void softmax_kernel(const SoftmaxPlan& plan, bool log) {
  const T* input = static_cast<const T*>(plan.input);
  T* output = static_cast<T*>(plan.output);
  const std::int64_t size = plan.dim, inner = plan.inner;
  if (inner == 1) {
    // The usual case (softmax over the last dim): each row is contiguous, so the loops run
    // over plain pointers, and the max and the normaliser use independent lanes the compiler
    // can vectorise; exp itself stays libm's, one call per element, for PyTorch's digits.
    for_each_output_block(plan.outer, size, 1, [&](std::int64_t o, std::int64_t, std::int64_t) {
      const T* x = input + o * size;
      T* y = output + o * size;
      T lanes_max[kSumLanes];
      std::fill(std::begin(lanes_max), std::end(lanes_max), x[0]);
      std::int64_t d = 0;
      for (; d + kSumLanes <= size; d += kSumLanes)
        for (int j = 0; j < kSumLanes; ++j) lanes_max[j] = x[d + j] > lanes_max[j] ? x[d + j] : lanes_max[j];
      for (; d < size; ++d) lanes_max[0] = x[d] > lanes_max[0] ? x[d] : lanes_max[0];
      T max_value = lanes_max[0];
      for (int j = 1; j < kSumLanes; ++j) max_value = std::max(max_value, lanes_max[j]);
      if (log) {
        double total = 0.0;
        for (d = 0; d < size; ++d) total += std::exp(static_cast<double>(x[d] - max_value));
        const double log_total = std::log(total);
        for (d = 0; d < size; ++d) y[d] = static_cast<T>(static_cast<double>(x[d] - max_value) - log_total);
      } else {
        for (d = 0; d < size; ++d) y[d] = std::exp(x[d] - max_value);
        const T scale = static_cast<T>(1.0 / static_cast<double>(sum_contiguous(y, size)));
        for (d = 0; d < size; ++d) y[d] *= scale;
      }
    });
    return;
  }
  for_each_output_block(plan.outer, size, inner, [&](std::int64_t o, std::int64_t i_begin, std::int64_t i_end) {
    for (std::int64_t i = i_begin; i < i_end; ++i) {
      const T* x = input + o * size * inner + i;  // element d at x[d * inner]
      T* y = output + o * size * inner + i;
      T max_value = x[0];
      for (std::int64_t d = 1; d < size; ++d) max_value = std::max(max_value, x[d * inner]);
      double total = 0.0;  // the normaliser, accumulated in double
      if (log) {
        for (std::int64_t d = 0; d < size; ++d) total += std::exp(static_cast<double>(x[d * inner] - max_value));
        const double log_total = std::log(total);
        for (std::int64_t d = 0; d < size; ++d) {
          y[d * inner] = static_cast<T>(static_cast<double>(x[d * inner] - max_value) - log_total);
        }
      } else {
        // Keep each exp in the output, then divide: one exp per element instead of two.
        for (std::int64_t d = 0; d < size; ++d) {
          const T e = std::exp(x[d * inner] - max_value);
          y[d * inner] = e;
          total += static_cast<double>(e);
        }
        const T scale = static_cast<T>(1.0 / total);
        for (std::int64_t d = 0; d < size; ++d) y[d * inner] *= scale;
      }
    }
  });
}

}  // namespace

void reduce(ReduceOp op, const ReducePlan& plan) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
    case ReduceOp::Prod:
      dispatch_accumulate(plan, [&]<class In, class Out>() { accumulate_kernel<In, Out>(op, plan); });
      return;
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      EMBER_DISPATCH_ALL_AND_REDUCED(plan.input_dtype, extremum_kernel<scalar_t>(op, plan));
      return;
  }
}

void softmax(const SoftmaxPlan& plan, bool log) {
  EMBER_DISPATCH_FLOATING(plan.dtype, softmax_kernel<scalar_t>(plan, log));
}

EMBER_REGISTER_KERNEL(::ember::reduce_kernel, CPU, reduce);
EMBER_REGISTER_KERNEL(::ember::softmax_kernel, CPU, softmax);

}  // namespace ember::cpu
