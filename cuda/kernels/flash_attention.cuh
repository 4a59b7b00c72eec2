// cuda/kernels/flash_attention.cuh — fused attention (FlashAttention) on the GPU, forward and
// backward (plans and definitions: core/flash_attention_plan.h; the CPU's twin:
// core/cpu/flash_attention_kernels.cpp).
//
// Tiling. A block owns one tile: T query rows (forward, dQ) or T keys (dK/dV) of one batch
// entry, and walks the other side of the L×S score matrix T at a time, so no block ever holds
// more than a T×T tile of scores and nothing of size L×S is ever written to global memory.
// T (64, 32, 16, ... rows) is the largest that fits the block's shared-memory arena
// (kFlashArenaBytes, under the 48 KiB of static shared memory) for the head dims E, Ev and
// the dtype: 32 for float32 and E = 64 in the forward, 16 in the backward.
//
//   forward, one block per (batch entry, query tile):
//     shared  Q tile T×E (loaded once), O accumulator T×Ev, K tile T×(E+1), V tile T×Ev,
//             scores T×(T+1), the rows' rescale factors T
//     for each key tile (up to the tile's last row, when causal):
//       stage K, V | s = scale·q·k per (row, key), one element per thread, masked -inf
//       | thread r < T owns row r: running max m_r and sum l_r in its registers, p = exp(s - m'),
//       corr_r = exp(m_r - m') | O = O·corr + P·V, one (row, column) per thread
//     out = O / l, lse = m + log l
//   backward: D_i = dO_i · O_i (one thread per row), then two kernels that recompute
//     p = exp(scale·q·k - lse_i) and dS = p·(dO_i·v_j - D_i) per tile and split the sums so
//     that every gradient element is owned by one block — no atomics, the same bits every run:
//     dK/dV, one block per key tile: shared K, V (and their accumulators dK, dV) stay while
//       the query tiles stream through (Q, dO, lse, D, then P and dS, T×T each);
//     dQ, one block per query tile: shared Q, dO and the dQ accumulator stay while the key
//       tiles stream through.
//     This recomputes q·k and dO·v twice (7 tile products instead of 5) to avoid float
//     atomics on dQ.
// Rows of K and V are padded by one element in shared memory (E+1) where threads of a warp
// read different rows, so those reads fall in different banks; rows read by the whole warp
// at once (Q, dO: one row per warp) are broadcasts. Every loop bound is uniform across the
// block, so every thread reaches every barrier.
//
// Bound: without tensor cores the products run on the FMA units out of shared memory — two
// shared loads per FMA, so shared-memory bandwidth bounds it — at T = 16…32 a K/V tile is
// reused by T query rows. Global traffic is Q, O once and K, V once per query tile
// ((L/T)·S·(E+Ev) values), against the composite's L×S scores written and read several
// times. A register-blocked (several outputs per thread) or tensor-core (mma) version is the
// next step, as in gemm_fast.cuh.
#pragma once

#include <cstdint>
#include <limits>

#include <ember/core/element_math.h>
#include <ember/core/flash_attention_plan.h>
#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

using ::ember::AttentionShape;
using ::ember::AttentionStrides;
using ::ember::FlashAttentionBackwardPlan;
using ::ember::FlashAttentionPlan;

constexpr int kFlashThreads = 128;
constexpr std::int64_t kFlashArenaBytes = 40 * 1024;

// The arena's elements each kernel needs for tile size t (its layout is in the kernel).
EMBER_HOST_DEVICE constexpr std::int64_t flash_forward_arena(std::int64_t t, std::int64_t e, std::int64_t ev) {
  return t * e + t * (e + 1) + t * ev + t * (t + 1) + t * ev + t;
}
EMBER_HOST_DEVICE constexpr std::int64_t flash_dkdv_arena(std::int64_t t, std::int64_t e, std::int64_t ev) {
  return t * (e + 1) + t * (ev + 1) + t * e + t * ev + t * e + t * ev + 2 * t * t + 2 * t;
}
EMBER_HOST_DEVICE constexpr std::int64_t flash_dq_arena(std::int64_t t, std::int64_t e, std::int64_t ev) {
  return t * e + t * ev + t * e + t * (e + 1) + t * (ev + 1) + t * t + 2 * t;
}
template <class T>
constexpr std::int64_t flash_arena_elements() {
  return kFlashArenaBytes / static_cast<std::int64_t>(sizeof(T));
}
// The largest head dims must fit with tiles of one row, in double.
static_assert(flash_forward_arena(1, ::ember::kFlashAttentionCudaMaxHeadDim, ::ember::kFlashAttentionCudaMaxHeadDim) <=
                  flash_arena_elements<double>() &&
              flash_dkdv_arena(1, ::ember::kFlashAttentionCudaMaxHeadDim, ::ember::kFlashAttentionCudaMaxHeadDim) <=
                  flash_arena_elements<double>() &&
              flash_dq_arena(1, ::ember::kFlashAttentionCudaMaxHeadDim, ::ember::kFlashAttentionCudaMaxHeadDim) <=
                  flash_arena_elements<double>(),
              "kFlashAttentionCudaMaxHeadDim does not fit the shared arena");

// The largest tile size from 64, 32, ..., 1 whose arena fits (host side).
template <class T, class Need>
int flash_tile(const Need& need) {
  for (int t = 64; t > 1; t /= 2)
    if (need(t) <= flash_arena_elements<T>()) return t;
  return 1;
}

// Row r of batch entry `entry` of an operand.
template <class T>
EMBER_DEVICE T* flash_row(T* data, const AttentionStrides& s, const AttentionShape& shape, std::int64_t entry,
                          std::int64_t r) {
  return data + (entry / shape.inner) * s.outer + (entry % shape.inner) * s.inner + r * s.row;
}

// Copies `count` rows of `width` values (row r from `rows_of(r)`) into shared rows of stride
// `pitch`; rows count..tile-1 become 0. All threads take part.
template <class T, class RowOf>
EMBER_DEVICE void flash_stage(SharedPointer<T> dst, std::int64_t pitch, std::int64_t tile, std::int64_t count,
                              std::int64_t width, const RowOf& row_of) {
  for (std::int64_t idx = threadIdx.x; idx < tile * width; idx += blockDim.x) {
    const std::int64_t r = idx / width, c = idx % width;
    dst[r * pitch + c] = r < count ? row_of(r)[c] : T(0);
  }
}

template <class T>
EMBER_DEVICE void flash_zero(SharedPointer<T> dst, std::int64_t count) {
  for (std::int64_t idx = threadIdx.x; idx < count; idx += blockDim.x) dst[idx] = T(0);
}

// The keys a query tile [row0, row0 + rows) meets, and how many of key tile [key0, key0 + cols)
// row `row` sees (as core/cpu/flash_attention_kernels.cpp).
EMBER_DEVICE std::int64_t flash_key_end(std::int64_t row0, std::int64_t rows, std::int64_t key_len, bool is_causal) {
  return ::ember::attention_visible_keys(row0 + rows - 1, key_len, is_causal);
}
EMBER_DEVICE std::int64_t flash_visible(std::int64_t row, std::int64_t key0, std::int64_t cols, std::int64_t key_len,
                                        bool is_causal) {
  const std::int64_t v = ::ember::attention_visible_keys(row, key_len, is_causal) - key0;
  return v < 0 ? 0 : (v > cols ? cols : v);
}

template <class T>
EMBER_GLOBAL void flash_attention_forward_kernel(FlashAttentionPlan plan, int tile) {
  EMBER_SHARED_ARRAY(T, arena, flash_arena_elements<T>());
  const AttentionShape shape = plan.shape;
  const std::int64_t L = shape.query_len, S = shape.key_len, E = shape.head_dim, Ev = shape.value_dim;
  const std::int64_t t = tile, k_pitch = E + 1, s_pitch = t + 1;
  const SharedPointer<T> q_s = arena, k_s = q_s + t * E, v_s = k_s + t * k_pitch, s_s = v_s + t * Ev,
                         o_s = s_s + t * s_pitch, corr_s = o_s + t * Ev;
  const T* q = static_cast<const T*>(plan.query);
  const T* k = static_cast<const T*>(plan.key);
  const T* v = static_cast<const T*>(plan.value);
  const T scale = static_cast<T>(plan.scale), minus_infinity = -std::numeric_limits<T>::infinity();
  const std::int64_t query_tiles = (L + t - 1) / t, blocks = shape.outer * shape.inner * query_tiles;
  const std::int64_t me = threadIdx.x;
  for (std::int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
    const std::int64_t entry = block / query_tiles, row0 = (block % query_tiles) * t;
    const std::int64_t rows = L - row0 < t ? L - row0 : t;
    flash_stage(q_s, E, t, rows, E, [&](std::int64_t r) { return flash_row(q, plan.query_strides, shape, entry, row0 + r); });
    flash_zero(o_s, t * Ev);
    T row_max = minus_infinity, row_sum = T(0);  // row `me`'s, for me < t
    const std::int64_t key_end = flash_key_end(row0, rows, S, plan.is_causal);
    for (std::int64_t key0 = 0; key0 < key_end; key0 += t) {
      const std::int64_t cols = key_end - key0 < t ? key_end - key0 : t;
      EMBER_SYNCTHREADS();  // the last tile's readers of K, V and the scores are done
      flash_stage(k_s, k_pitch, t, cols, E, [&](std::int64_t j) { return flash_row(k, plan.key_strides, shape, entry, key0 + j); });
      flash_stage(v_s, Ev, t, cols, Ev, [&](std::int64_t j) { return flash_row(v, plan.value_strides, shape, entry, key0 + j); });
      EMBER_SYNCTHREADS();
      for (std::int64_t idx = me; idx < t * t; idx += blockDim.x) {
        const std::int64_t r = idx / t, j = idx % t;
        T dot = T(0);
        for (std::int64_t e = 0; e < E; ++e) dot += q_s[r * E + e] * k_s[j * k_pitch + e];
        const bool seen = r < rows && j < flash_visible(row0 + r, key0, cols, S, plan.is_causal);
        s_s[r * s_pitch + j] = seen ? dot * scale : minus_infinity;
      }
      EMBER_SYNCTHREADS();
      if (me < t) {  // the online softmax of row `me`: its max and sum never leave this thread
        T tile_max = minus_infinity;
        for (std::int64_t j = 0; j < t; ++j) {
          const T s = s_s[me * s_pitch + j];
          tile_max = s > tile_max ? s : tile_max;
        }
        const T new_max = tile_max > row_max ? tile_max : row_max;
        T correction = T(1), tile_sum = T(0);
        for (std::int64_t j = 0; j < t; ++j) {
          const T s = s_s[me * s_pitch + j];
          const T p = s == minus_infinity ? T(0) : math::exp(s - new_max);
          s_s[me * s_pitch + j] = p;
          tile_sum += p;
        }
        if (new_max != minus_infinity) {
          correction = row_max == minus_infinity ? T(0) : math::exp(row_max - new_max);
          row_sum = row_sum * correction + tile_sum;
          row_max = new_max;
        }
        corr_s[me] = correction;
      }
      EMBER_SYNCTHREADS();
      for (std::int64_t idx = me; idx < t * Ev; idx += blockDim.x) {
        const std::int64_t r = idx / Ev, d = idx % Ev;
        T acc = o_s[idx] * corr_s[r];
        for (std::int64_t j = 0; j < cols; ++j) acc += s_s[r * s_pitch + j] * v_s[j * Ev + d];
        o_s[idx] = acc;
      }
    }
    EMBER_SYNCTHREADS();  // O complete
    if (me < t) corr_s[me] = row_sum;  // the rows' sums, for every thread's division below
    if (me < rows) {
      T* lse = static_cast<T*>(plan.logsumexp) + entry * L + row0 + me;
      *lse = row_max + math::log(row_sum);
    }
    EMBER_SYNCTHREADS();
    for (std::int64_t idx = me; idx < rows * Ev; idx += blockDim.x) {
      const std::int64_t r = idx / Ev, d = idx % Ev;
      flash_row(static_cast<T*>(plan.output), plan.output_strides, shape, entry, row0 + r)[d] = o_s[idx] / corr_s[r];
    }
    EMBER_SYNCTHREADS();  // the next tile overwrites Q, O and the sums
  }
}

// D_i = dO_i · O_i, one thread per query row.
template <class T>
EMBER_GLOBAL void flash_attention_delta_kernel(FlashAttentionBackwardPlan plan) {
  const AttentionShape shape = plan.shape;
  const std::int64_t L = shape.query_len, rows = shape.outer * shape.inner * L;
  for (std::int64_t g = global_thread_index(); g < rows; g += grid_thread_count()) {
    const std::int64_t entry = g / L, i = g % L;
    const T* dout = flash_row(static_cast<const T*>(plan.grad_output), plan.grad_output_strides, shape, entry, i);
    const T* out = flash_row(static_cast<const T*>(plan.output), plan.output_strides, shape, entry, i);
    T sum = T(0);
    for (std::int64_t d = 0; d < shape.value_dim; ++d) sum += dout[d] * out[d];
    static_cast<T*>(plan.delta)[g] = sum;
  }
}

// p and dS of one T×T tile, one (row, key) per thread: q_s, do_s rows r; k_s, v_s rows j.
// kStoreP: also keep p (the dK/dV kernel needs it; the dQ kernel only dS).
template <class T, bool kStoreP>
EMBER_DEVICE void flash_probabilities_and_grads(const FlashAttentionBackwardPlan& plan, std::int64_t t,
                                                std::int64_t row0, std::int64_t rows, std::int64_t key0,
                                                std::int64_t cols, SharedPointer<T> q_s, SharedPointer<T> do_s,
                                                SharedPointer<T> k_s, SharedPointer<T> v_s, SharedPointer<T> lse_s,
                                                SharedPointer<T> delta_s, SharedPointer<T> p_s, SharedPointer<T> ds_s) {
  const std::int64_t E = plan.shape.head_dim, Ev = plan.shape.value_dim;
  const T scale = static_cast<T>(plan.scale);
  for (std::int64_t idx = threadIdx.x; idx < t * t; idx += blockDim.x) {
    const std::int64_t r = idx / t, j = idx % t;
    T p = T(0), ds = T(0);
    if (r < rows && j < flash_visible(row0 + r, key0, cols, plan.shape.key_len, plan.is_causal)) {
      T qk = T(0), dp = T(0);
      for (std::int64_t e = 0; e < E; ++e) qk += q_s[r * E + e] * k_s[j * (E + 1) + e];
      for (std::int64_t d = 0; d < Ev; ++d) dp += do_s[r * Ev + d] * v_s[j * (Ev + 1) + d];
      p = math::exp(qk * scale - lse_s[r]);
      ds = p * (dp - delta_s[r]);
    }
    if constexpr (kStoreP) p_s[idx] = p;
    ds_s[idx] = ds;
  }
}

template <class T>
EMBER_GLOBAL void flash_attention_dkdv_kernel(FlashAttentionBackwardPlan plan, int tile) {
  EMBER_SHARED_ARRAY(T, arena, flash_arena_elements<T>());
  const AttentionShape shape = plan.shape;
  const std::int64_t L = shape.query_len, S = shape.key_len, E = shape.head_dim, Ev = shape.value_dim;
  const std::int64_t t = tile;
  const SharedPointer<T> k_s = arena, v_s = k_s + t * (E + 1), dk_s = v_s + t * (Ev + 1), dv_s = dk_s + t * E,
                         q_s = dv_s + t * Ev, do_s = q_s + t * E, p_s = do_s + t * Ev, ds_s = p_s + t * t,
                         lse_s = ds_s + t * t, delta_s = lse_s + t;
  const T* lse = static_cast<const T*>(plan.logsumexp);
  const T* delta = static_cast<const T*>(plan.delta);
  const std::int64_t key_tiles = (S + t - 1) / t, blocks = shape.outer * shape.inner * key_tiles;
  const std::int64_t me = threadIdx.x;
  for (std::int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
    const std::int64_t entry = block / key_tiles, key0 = (block % key_tiles) * t;
    const std::int64_t cols = S - key0 < t ? S - key0 : t;
    flash_stage(k_s, E + 1, t, cols, E, [&](std::int64_t j) {
      return flash_row(static_cast<const T*>(plan.key), plan.key_strides, shape, entry, key0 + j);
    });
    flash_stage(v_s, Ev + 1, t, cols, Ev, [&](std::int64_t j) {
      return flash_row(static_cast<const T*>(plan.value), plan.value_strides, shape, entry, key0 + j);
    });
    flash_zero(dk_s, t * E);
    flash_zero(dv_s, t * Ev);
    // Query i sees key j only when j <= i (causal): rows before key0 see none of this tile.
    for (std::int64_t row0 = plan.is_causal ? key0 : 0; row0 < L; row0 += t) {
      const std::int64_t rows = L - row0 < t ? L - row0 : t;
      EMBER_SYNCTHREADS();  // the last query tile's readers are done (first time: K, V staged)
      flash_stage(q_s, E, t, rows, E, [&](std::int64_t r) {
        return flash_row(static_cast<const T*>(plan.query), plan.query_strides, shape, entry, row0 + r);
      });
      flash_stage(do_s, Ev, t, rows, Ev, [&](std::int64_t r) {
        return flash_row(static_cast<const T*>(plan.grad_output), plan.grad_output_strides, shape, entry, row0 + r);
      });
      for (std::int64_t r = me; r < t; r += blockDim.x) {
        lse_s[r] = r < rows ? lse[entry * L + row0 + r] : T(0);
        delta_s[r] = r < rows ? delta[entry * L + row0 + r] : T(0);
      }
      EMBER_SYNCTHREADS();
      flash_probabilities_and_grads<T, true>(plan, t, row0, rows, key0, cols, q_s, do_s, k_s, v_s, lse_s, delta_s, p_s, ds_s);
      EMBER_SYNCTHREADS();
      for (std::int64_t idx = me; idx < t * Ev; idx += blockDim.x) {  // dV_j += Σ_i p_ij dO_i
        const std::int64_t j = idx / Ev, d = idx % Ev;
        T acc = dv_s[idx];
        for (std::int64_t r = 0; r < rows; ++r) acc += p_s[r * t + j] * do_s[r * Ev + d];
        dv_s[idx] = acc;
      }
      for (std::int64_t idx = me; idx < t * E; idx += blockDim.x) {  // dK_j += Σ_i dS_ij q_i
        const std::int64_t j = idx / E, e = idx % E;
        T acc = dk_s[idx];
        for (std::int64_t r = 0; r < rows; ++r) acc += ds_s[r * t + j] * q_s[r * E + e];
        dk_s[idx] = acc;
      }
    }
    EMBER_SYNCTHREADS();
    const T scale = static_cast<T>(plan.scale);
    for (std::int64_t idx = me; idx < cols * E; idx += blockDim.x)
      flash_row(static_cast<T*>(plan.grad_key), plan.grad_key_strides, shape, entry, key0 + idx / E)[idx % E] =
          dk_s[idx] * scale;
    for (std::int64_t idx = me; idx < cols * Ev; idx += blockDim.x)
      flash_row(static_cast<T*>(plan.grad_value), plan.grad_value_strides, shape, entry, key0 + idx / Ev)[idx % Ev] =
          dv_s[idx];
    EMBER_SYNCTHREADS();  // the next key tile overwrites K, V and the accumulators
  }
}

template <class T>
EMBER_GLOBAL void flash_attention_dq_kernel(FlashAttentionBackwardPlan plan, int tile) {
  EMBER_SHARED_ARRAY(T, arena, flash_arena_elements<T>());
  const AttentionShape shape = plan.shape;
  const std::int64_t L = shape.query_len, S = shape.key_len, E = shape.head_dim, Ev = shape.value_dim;
  const std::int64_t t = tile;
  const SharedPointer<T> q_s = arena, do_s = q_s + t * E, dq_s = do_s + t * Ev, k_s = dq_s + t * E,
                         v_s = k_s + t * (E + 1), ds_s = v_s + t * (Ev + 1), lse_s = ds_s + t * t, delta_s = lse_s + t;
  const T* lse = static_cast<const T*>(plan.logsumexp);
  const T* delta = static_cast<const T*>(plan.delta);
  const std::int64_t query_tiles = (L + t - 1) / t, blocks = shape.outer * shape.inner * query_tiles;
  const std::int64_t me = threadIdx.x;
  for (std::int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
    const std::int64_t entry = block / query_tiles, row0 = (block % query_tiles) * t;
    const std::int64_t rows = L - row0 < t ? L - row0 : t;
    flash_stage(q_s, E, t, rows, E, [&](std::int64_t r) {
      return flash_row(static_cast<const T*>(plan.query), plan.query_strides, shape, entry, row0 + r);
    });
    flash_stage(do_s, Ev, t, rows, Ev, [&](std::int64_t r) {
      return flash_row(static_cast<const T*>(plan.grad_output), plan.grad_output_strides, shape, entry, row0 + r);
    });
    flash_zero(dq_s, t * E);
    for (std::int64_t r = me; r < t; r += blockDim.x) {
      lse_s[r] = r < rows ? lse[entry * L + row0 + r] : T(0);
      delta_s[r] = r < rows ? delta[entry * L + row0 + r] : T(0);
    }
    const std::int64_t key_end = flash_key_end(row0, rows, S, plan.is_causal);
    for (std::int64_t key0 = 0; key0 < key_end; key0 += t) {
      const std::int64_t cols = key_end - key0 < t ? key_end - key0 : t;
      EMBER_SYNCTHREADS();  // the last key tile's readers are done (first time: Q, dO staged)
      flash_stage(k_s, E + 1, t, cols, E, [&](std::int64_t j) {
        return flash_row(static_cast<const T*>(plan.key), plan.key_strides, shape, entry, key0 + j);
      });
      flash_stage(v_s, Ev + 1, t, cols, Ev, [&](std::int64_t j) {
        return flash_row(static_cast<const T*>(plan.value), plan.value_strides, shape, entry, key0 + j);
      });
      EMBER_SYNCTHREADS();
      flash_probabilities_and_grads<T, false>(plan, t, row0, rows, key0, cols, q_s, do_s, k_s, v_s, lse_s, delta_s,
                                              ds_s, ds_s);
      EMBER_SYNCTHREADS();
      for (std::int64_t idx = me; idx < t * E; idx += blockDim.x) {  // dQ_i += Σ_j dS_ij k_j
        const std::int64_t r = idx / E, e = idx % E;
        T acc = dq_s[idx];
        for (std::int64_t j = 0; j < cols; ++j) acc += ds_s[r * t + j] * k_s[j * (E + 1) + e];
        dq_s[idx] = acc;
      }
    }
    EMBER_SYNCTHREADS();
    const T scale = static_cast<T>(plan.scale);
    for (std::int64_t idx = me; idx < rows * E; idx += blockDim.x)
      flash_row(static_cast<T*>(plan.grad_query), plan.grad_query_strides, shape, entry, row0 + idx / E)[idx % E] =
          dq_s[idx] * scale;
    EMBER_SYNCTHREADS();  // the next query tile overwrites Q, dO and the accumulator
  }
}

// The tile sizes the three kernels use for a plan's head dims (host side; tests read them).
struct FlashTiles {
  int forward = 1, dkdv = 1, dq = 1;
};
template <class T>
FlashTiles flash_tiles(std::int64_t e, std::int64_t ev) {
  FlashTiles tiles;
  tiles.forward = flash_tile<T>([&](std::int64_t t) { return flash_forward_arena(t, e, ev); });
  tiles.dkdv = flash_tile<T>([&](std::int64_t t) { return flash_dkdv_arena(t, e, ev); });
  tiles.dq = flash_tile<T>([&](std::int64_t t) { return flash_dq_arena(t, e, ev); });
  return tiles;
}

// Launches run on `stream` in order (the backward's three kernels read each other's results).
inline void dispatch_flash_attention(const FlashAttentionPlan& plan, cudaStream_t stream) {
  const AttentionShape& s = plan.shape;
  if (s.outer * s.inner == 0 || s.query_len == 0 || s.key_len == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    const int tile = flash_tiles<scalar_t>(s.head_dim, s.value_dim).forward;
    const std::int64_t blocks = s.outer * s.inner * ((s.query_len + tile - 1) / tile);
    auto kernel = &flash_attention_forward_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(blocks, 1)), dim3(kFlashThreads), stream, plan, tile);
  });
}

inline void dispatch_flash_attention_backward(const FlashAttentionBackwardPlan& plan, cudaStream_t stream) {
  const AttentionShape& s = plan.shape;
  if (s.outer * s.inner == 0 || s.query_len == 0 || s.key_len == 0) return;
  constexpr int kDeltaThreads = 256;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    const FlashTiles tiles = flash_tiles<scalar_t>(s.head_dim, s.value_dim);
    const std::int64_t entries = s.outer * s.inner;
    auto delta = &flash_attention_delta_kernel<scalar_t>;
    EMBER_LAUNCH(delta, dim3(blocks_for(entries * s.query_len, kDeltaThreads)), dim3(kDeltaThreads), stream, plan);
    auto dkdv = &flash_attention_dkdv_kernel<scalar_t>;
    const std::int64_t key_blocks = entries * ((s.key_len + tiles.dkdv - 1) / tiles.dkdv);
    EMBER_LAUNCH(dkdv, dim3(blocks_for(key_blocks, 1)), dim3(kFlashThreads), stream, plan, tiles.dkdv);
    auto dq = &flash_attention_dq_kernel<scalar_t>;
    const std::int64_t query_blocks = entries * ((s.query_len + tiles.dq - 1) / tiles.dq);
    EMBER_LAUNCH(dq, dim3(blocks_for(query_blocks, 1)), dim3(kFlashThreads), stream, plan, tiles.dq);
  });
}

EMBER_KERNELS_END
