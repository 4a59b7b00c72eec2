// core/host_device.h — EMBER_HOST_DEVICE marks functions compiled for both CPU and GPU.
//
// Index math (core/strided_index.h) is shared by the CPU loops and the CUDA kernels, so it
// is unit-tested on the CPU. Under nvcc the macro expands to __host__ __device__.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#define EMBER_INLINE __forceinline__
#else
#define EMBER_HOST_DEVICE
#define EMBER_INLINE inline
#endif
