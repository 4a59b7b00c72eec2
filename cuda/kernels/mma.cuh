// cuda/kernels/mma.cuh — one tensor-core instruction, for the GPU and for the emulator.
//
// Issue 22 (mixed precision). A tensor core multiplies small 16-bit matrices with float
// accumulation in one warp-wide instruction. The one used here is PTX's
//
//   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32  d, a, b, c   (and .f16.f16)
//
// D (16x8 floats) = A (16x16) · B (16x8) + C (16x8 floats). No lane holds a whole matrix:
// each of the 32 lanes holds a fragment, in this layout (lane l: group g = l / 4, t = l % 4;
// a register holds two 16-bit values, the lower index in the low half):
//
//   A  a[0] = A[g][2t, 2t+1]     a[1] = A[g+8][2t, 2t+1]     (columns 0..7)
//      a[2] = A[g][2t+8, 2t+9]   a[3] = A[g+8][2t+8, 2t+9]   (columns 8..15)
//   B  b[0] = B[2t, 2t+1][g]     b[1] = B[2t+8, 2t+9][g]     (a column of B: "col")
//   C  c[0] = C[g][2t]  c[1] = C[g][2t+1]  c[2] = C[g+8][2t]  c[3] = C[g+8][2t+1]  (D alike)
//
// So four lanes (one group) share a row of A and of C, and a group's lanes split its 16 k
// into pairs. On the GPU (sm_80 and later) mma_m16n8k16 is that instruction; in the tests
// it is the emulator's warp collective (cuda/emulate/warp_collectives.cpp), which rebuilds
// A, B and C from the 32 fragments, so a kernel that puts a value in the wrong lane computes
// a wrong product there too.
#pragma once

#include <cstdint>
#include <type_traits>

#include <ember/core/reduced_float.h>
#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

// Two 16-bit values as one fragment register: `low` (the lower index) in the low half.
EMBER_HOST_DEVICE inline std::uint32_t pack_pair(std::uint16_t low, std::uint16_t high) {
  return static_cast<std::uint32_t>(low) | (static_cast<std::uint32_t>(high) << 16);
}

// d = a · b + c for one warp; T is BFloat16 or Half (the operands' format). Every lane of
// the warp must call it together (it is a warp collective, like a shuffle).
template <class T>
EMBER_DEVICE void mma_m16n8k16(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                               const float (&c)[4]) {
  static_assert(std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>, "mma_m16n8k16: bfloat16 or float16");
#if defined(__CUDACC__)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, BFloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
          "f"(c[3]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
          "f"(c[3]));
  }
#else
  __trap();  // no bfloat16 mma before sm_80: the host never launches this kernel there
#endif
#else
  ::ember::emulate::warp_mma_m16n8k16(a, b, c, d, std::is_same_v<T, Half>);
#endif
}

EMBER_KERNELS_END
