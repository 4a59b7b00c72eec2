// tests/cuda/test_flash_attention_kernels.cpp — the fused attention kernels
// (cuda/kernels/flash_attention.cuh) through the emulator, against the CPU backend's kernels
// (core/cpu/flash_attention_kernels.cpp, themselves tested against PyTorch and the composite in
// tests/nn/test_flash_attention.cpp): the output, the logsumexp and the three gradients, under
// every emulator schedule (its racecheck and initcheck watch every shared-memory access
// between barriers). Shapes cross the kernels' tiles (64 rows for small heads, 32 and 16 for
// E = 64) with odd L and S, L != S both ways, causal and not, head dims 1, 16, 64 and 80, Ev
// != E, two folded batch dims, and the heads of a packed projection (strided rows, interleaved
// heads), in float32 and float64.
#include <vector>

#include "cuda_test_support.h"
#include "emulator_schedules.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/flash_attention.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, double rtol, double atol, const char* what) {
  REQUIRE(got.size() == want.size());
  const std::int64_t bad = first_mismatch(got.data(), want.data(), static_cast<std::int64_t>(got.size()), rtol, atol);
  INFO(what << ": first mismatch at " << bad
            << (bad >= 0 ? ": " + std::to_string(got[bad]) + " vs " + std::to_string(want[bad]) : ""));
  REQUIRE(bad == -1);
}

struct Case {
  std::int64_t outer, inner, queries, keys, head_dim, value_dim;
  bool causal;
  bool packed;  // q, k, v interleaved in one [outer, L, 3, inner, E] buffer (needs L == S, E == Ev)
};

// Contiguous [outer, inner, rows, width] strides, or the packed layout's.
AttentionStrides dense(const Case& c, std::int64_t rows, std::int64_t width) {
  return {c.inner * rows * width, rows * width, width};
}
AttentionStrides packed(const Case& c) {
  const std::int64_t row = 3 * c.inner * c.head_dim;
  return {c.queries * row, c.head_dim, row};
}

template <class T>
void compare_with_cpu(const Case& c, double rtol, double atol) {
  const std::int64_t entries = c.outer * c.inner, L = c.queries, S = c.keys, E = c.head_dim, Ev = c.value_dim;
  AttentionShape shape{c.outer, c.inner, L, S, E, Ev};
  std::vector<T> packed_buffer, q, k, v;
  AttentionStrides qs = dense(c, L, E), ks = dense(c, S, E), vs = dense(c, S, Ev);
  const T *q_data, *k_data, *v_data;
  if (c.packed) {
    packed_buffer = random_values<T>(c.outer * L * 3 * c.inner * E, -2, 2, 31);
    qs = ks = vs = packed(c);
    q_data = packed_buffer.data();
    k_data = packed_buffer.data() + c.inner * E;
    v_data = packed_buffer.data() + 2 * c.inner * E;
  } else {
    q = random_values<T>(entries * L * E, -2, 2, 32);
    k = random_values<T>(entries * S * E, -2, 2, 33);
    v = random_values<T>(entries * S * Ev, -2, 2, 34);
    q_data = q.data();
    k_data = k.data();
    v_data = v.data();
  }
  const auto dout = random_values<T>(entries * L * Ev, -1, 1, 35);
  const AttentionStrides os = dense(c, L, Ev);
  struct Outputs {
    std::vector<T> out, lse, delta, dq, dk, dv;
  };
  auto run = [&](bool on_gpu) {
    Outputs o;
    o.out.assign(entries * L * Ev, T(-7));
    o.lse.assign(entries * L, T(-7));
    FlashAttentionPlan plan;
    plan.shape = shape;
    plan.query = q_data;
    plan.key = k_data;
    plan.value = v_data;
    plan.output = o.out.data();
    plan.logsumexp = o.lse.data();
    plan.query_strides = qs;
    plan.key_strides = ks;
    plan.value_strides = vs;
    plan.output_strides = os;
    plan.is_causal = c.causal;
    plan.scale = 0.37;
    plan.dtype = dtype_of<T>::value;
    on_gpu ? gpu::dispatch_flash_attention(plan, nullptr) : cpu::flash_attention(plan);

    o.delta.assign(entries * L, T(-7));
    o.dq.assign(entries * L * E, T(-7));
    o.dk.assign(entries * S * E, T(-7));
    o.dv.assign(entries * S * Ev, T(-7));
    FlashAttentionBackwardPlan back;
    back.shape = shape;
    back.grad_output = dout.data();
    back.query = q_data;
    back.key = k_data;
    back.value = v_data;
    back.output = o.out.data();
    back.logsumexp = o.lse.data();
    back.delta = o.delta.data();
    back.grad_query = o.dq.data();
    back.grad_key = o.dk.data();
    back.grad_value = o.dv.data();
    back.grad_output_strides = os;
    back.query_strides = qs;
    back.key_strides = ks;
    back.value_strides = vs;
    back.output_strides = os;
    back.grad_query_strides = dense(c, L, E);
    back.grad_key_strides = dense(c, S, E);
    back.grad_value_strides = dense(c, S, Ev);
    back.is_causal = c.causal;
    back.scale = 0.37;
    back.dtype = dtype_of<T>::value;
    on_gpu ? gpu::dispatch_flash_attention_backward(back, nullptr) : cpu::flash_attention_backward(back);
    return o;
  };
  const Outputs want = run(false), got = run(true);
  check_close(got.out, want.out, rtol, atol, "output");
  check_close(got.lse, want.lse, rtol, atol, "logsumexp");
  check_close(got.delta, want.delta, rtol, atol, "D");
  check_close(got.dq, want.dq, rtol, atol, "dq");
  check_close(got.dk, want.dk, rtol, atol, "dk");
  check_close(got.dv, want.dv, rtol, atol, "dv");
}

}  // namespace

TEST_CASE("cuda kernels (emulated): flash attention forward and backward match the CPU kernels",
          "[cuda][flash_attention]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  const std::vector<Case> cases{
      {1, 1, 1, 1, 1, 1, false, false},   {2, 1, 5, 7, 16, 16, true, false},  {1, 2, 70, 67, 16, 16, true, false},
      {1, 1, 33, 40, 64, 64, false, false}, {1, 1, 20, 9, 64, 64, true, false},  {1, 1, 17, 17, 80, 80, true, false},
      {1, 2, 9, 12, 8, 5, false, false},   {2, 2, 19, 19, 8, 8, true, true},
  };
  for (const Case& c : cases) {
    INFO("outer " << c.outer << " inner " << c.inner << " L " << c.queries << " S " << c.keys << " E " << c.head_dim
                  << " Ev " << c.value_dim << (c.causal ? " causal" : "") << (c.packed ? " packed" : ""));
    // float: tile-order sums on both sides, in float.
    compare_with_cpu<float>(c, 2e-4, 2e-5);
    compare_with_cpu<double>(c, 1e-11, 1e-12);
  }
}

TEST_CASE("cuda kernels (emulated): flash attention tiles fit the shared arena", "[cuda][flash_attention]") {
  for (std::int64_t e : {1, 16, 64, 80, 128, 256}) {
    const gpu::FlashTiles f32 = gpu::flash_tiles<float>(e, e), f64 = gpu::flash_tiles<double>(e, e);
    INFO("head dim " << e);
    REQUIRE(gpu::flash_forward_arena(f32.forward, e, e) <= gpu::flash_arena_elements<float>());
    REQUIRE(gpu::flash_dkdv_arena(f64.dkdv, e, e) <= gpu::flash_arena_elements<double>());
    REQUIRE(gpu::flash_dq_arena(f64.dq, e, e) <= gpu::flash_arena_elements<double>());
    REQUIRE(f32.forward >= 1);
  }
  // The sizes the header comment states for float32 at E = 64.
  REQUIRE(gpu::flash_tiles<float>(64, 64).forward == 32);
  REQUIRE(gpu::flash_tiles<float>(64, 64).dkdv == 16);
  REQUIRE(gpu::flash_tiles<float>(64, 64).dq == 16);
}
