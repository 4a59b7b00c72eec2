// cuda/cuda_random.h — random tensors generated on the GPU with Philox (a backend extension).
//
// core/random.h's uniform_ / normal_ / bernoulli_ (and rand, randn, dropout) already fill
// CUDA tensors on the device with the counter-based Philox4x32-10 generator
// (cuda/kernels/philox.cuh) instead of drawing on the CPU and copying. These two names
// predate that and stay as the explicit, GPU-only spelling. Reproducible under
// ember::manual_seed: the Philox key is the generator's seed and each fill reserves its
// counters from the generator's Philox offset (PyTorch's seed + offset scheme; docs/cuda.md).
// Not bit-identical to PyTorch's CUDA generator. Tutorial appendix (GPU) + §5 (seeding).
#pragma once

#include <ember/core/tensor.h>

namespace ember::cuda {

// self must be a float32/float64 CUDA tensor (any layout).
void philox_uniform_(const Tensor& self, double low = 0.0, double high = 1.0);
void philox_normal_(const Tensor& self, double mean = 0.0, double std = 1.0);

}  // namespace ember::cuda
