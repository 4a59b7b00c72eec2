// cuda/kernels/foreach_norm.cuh — the p-norm of each tensor of a list in one backend call
// (torch._foreach_norm; ForeachNormPlan in core/fused_plans.h): what clip_grad_norm_ needs
// from a model's gradients without a launch chain per parameter.
//
// Strategy: every tensor is cut into chunks of kNormChunk elements, and the chunks of all
// the tensors are numbered one after another (first_chunk[i] is tensor i's first):
//   pass 1  block b folds chunk b (threads stride through it; block_reduce) into partials[b];
//   pass 2  block i folds tensor i's partials in order and writes the root (norm_math.h).
// Two launches for the whole list, whatever its length (up to 48 tensors a call), instead of
// x·x, sum and sqrt per parameter; the summation order is fixed by the chunking, so the
// result is deterministic. Accumulators: float for float32 (PyTorch's CUDA accumulate type),
// double for float64. Bound: memory bandwidth, each element read once.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <ember/core/fused_plans.h>
#include <ember/core/norm_math.h>
#include <ember/cuda/kernels/block_reduce.cuh>
#include <ember/cuda/kernels/reduce.cuh>

EMBER_KERNELS_BEGIN

using ::ember::ForeachNormPlan;

constexpr std::int64_t kNormChunk = 16384;

// The plan and where each tensor's chunks start: the kernels' one argument (by value).
struct ForeachNormLaunch {
  ForeachNormPlan plan;
  std::int64_t first_chunk[ForeachNormPlan::kMaxTensors + 1] = {};
  bool max_norm = false;  // p is +inf
};

template <class Acc>
struct NormPartial {
  Acc value;
  EMBER_DEVICE NormPartial shuffle_down(unsigned delta) const { return NormPartial{warp_shfl_down(value, delta)}; }
};

template <class Acc>
struct NormCombine {
  bool max_norm;
  EMBER_DEVICE NormPartial<Acc> operator()(NormPartial<Acc> a, NormPartial<Acc> b) const {
    return NormPartial<Acc>{norm::combine(a.value, b.value, max_norm)};
  }
};

// Pass 1: partials[b] = chunk b's terms, folded (grid-stride over chunks).
template <class T, class Acc>
EMBER_GLOBAL void norm_chunks_kernel(ForeachNormLaunch launch, Acc* partials) {
  EMBER_SHARED_ARRAY(NormPartial<Acc>, scratch, kMaxBlockReduceWarps + 1);
  const ForeachNormPlan& plan = launch.plan;
  const bool max_norm = launch.max_norm;
  const Acc p = static_cast<Acc>(plan.p);
  const NormCombine<Acc> combine{max_norm};
  const std::int64_t chunks = launch.first_chunk[plan.count];
  for (std::int64_t b = blockIdx.x; b < chunks; b += gridDim.x) {  // uniform: barriers are safe
    int tensor = 0;
    while (launch.first_chunk[tensor + 1] <= b) ++tensor;
    const T* x = static_cast<const T*>(plan.data[tensor]);
    const std::int64_t begin = (b - launch.first_chunk[tensor]) * kNormChunk;
    const std::int64_t end = begin + kNormChunk < plan.numel[tensor] ? begin + kNormChunk : plan.numel[tensor];
    NormPartial<Acc> partial{Acc(0)};
    for (std::int64_t j = begin + threadIdx.x; j < end; j += blockDim.x)
      partial = combine(partial, NormPartial<Acc>{norm::term(static_cast<Acc>(x[j]), p, max_norm)});
    partial = block_reduce(partial, combine, NormPartial<Acc>{Acc(0)}, scratch);
    if (threadIdx.x == 0) partials[b] = partial.value;
  }
}

// Pass 2: block i folds tensor i's partials in order and writes its norm.
template <class T, class Acc>
EMBER_GLOBAL void norm_finish_kernel(ForeachNormLaunch launch, const Acc* partials) {
  EMBER_SHARED_ARRAY(NormPartial<Acc>, scratch, kMaxBlockReduceWarps + 1);
  const ForeachNormPlan& plan = launch.plan;
  const bool max_norm = launch.max_norm;
  const NormCombine<Acc> combine{max_norm};
  for (int tensor = static_cast<int>(blockIdx.x); tensor < plan.count; tensor += static_cast<int>(gridDim.x)) {
    NormPartial<Acc> partial{Acc(0)};
    for (std::int64_t c = launch.first_chunk[tensor] + threadIdx.x; c < launch.first_chunk[tensor + 1]; c += blockDim.x)
      partial = combine(partial, NormPartial<Acc>{partials[c]});
    partial = block_reduce(partial, combine, NormPartial<Acc>{Acc(0)}, scratch);
    if (threadIdx.x == 0)
      static_cast<T*>(plan.output)[tensor] = static_cast<T>(norm::finish(partial.value, static_cast<Acc>(plan.p), max_norm));
  }
}

template <class T, class Acc>
void launch_foreach_norm(const ForeachNormLaunch& launch, cudaStream_t stream, ScratchAllocator* scratch) {
  const std::int64_t chunks = launch.first_chunk[launch.plan.count];
  Acc* partials = nullptr;
  const std::size_t bytes = sizeof(Acc) * static_cast<std::size_t>(chunks > 0 ? chunks : 1);
  partials = static_cast<Acc*>(scratch->allocate(bytes));
  if (chunks > 0) {
    auto first = &norm_chunks_kernel<T, Acc>;
    EMBER_LAUNCH(first, dim3(blocks_for(chunks, 1)), dim3(256), stream, launch, partials);
  }
  auto second = &norm_finish_kernel<T, Acc>;
  EMBER_LAUNCH(second, dim3(static_cast<unsigned>(launch.plan.count)), dim3(256), stream, launch,
               static_cast<const Acc*>(partials));
  scratch->release(partials, bytes);
}

inline void dispatch_foreach_norm(const ForeachNormPlan& plan, cudaStream_t stream, ScratchAllocator* scratch) {
  if (plan.count == 0) return;
  ForeachNormLaunch launch;
  launch.plan = plan;
  launch.max_norm = std::isinf(plan.p);
  for (int i = 0; i < plan.count; ++i)
    launch.first_chunk[i + 1] = launch.first_chunk[i] + (plan.numel[i] + kNormChunk - 1) / kNormChunk;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    if constexpr (std::is_same_v<scalar_t, double>) launch_foreach_norm<double, double>(launch, stream, scratch);
    else launch_foreach_norm<scalar_t, float>(launch, stream, scratch);
  });
}

EMBER_KERNELS_END
