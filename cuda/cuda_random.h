// cuda/cuda_random.h — random tensors generated on the GPU with Philox (a backend extension).
//
// core/random.h draws every stream on the CPU (bit-identical to PyTorch's CPU generator)
// and copies it to the device. For large GPU tensors that round trip costs more than the
// numbers; these functions generate in place on the device instead, with the counter-based
// Philox4x32-10 generator (cuda/kernels/philox.cuh). Reproducible under ember::manual_seed:
// the Philox key is the default generator's seed and each call takes its counter offset
// from one 64-bit draw of that generator, so the same seed replays the same calls.
// Not bit-identical to PyTorch's CUDA generator. Tutorial appendix (GPU) + §5 (seeding).
#pragma once

#include <ember/core/tensor.h>

namespace ember::cuda {

// self must be a contiguous float32/float64 CUDA tensor.
void philox_uniform_(const Tensor& self, double low = 0.0, double high = 1.0);
void philox_normal_(const Tensor& self, double mean = 0.0, double std = 1.0);

}  // namespace ember::cuda
