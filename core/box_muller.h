// core/box_muller.h — the 16-lane Box–Muller transform behind randn for 16+ elements.
//
// PyTorch's x86 CPU build turns 16 uniforms into 16 normals at a time with AVX2 and
// polynomial approximations of log, sin and cos. core/random_tensors.cpp's normal_fill calls this
// to reproduce those bits exactly (core/box_muller.cpp explains how).
#pragma once

namespace ember::detail {

// Pairs (j, j + 8), j < 8, of uniforms in [0, 1) become normals with the given mean/std.
void box_muller_16(float* data, float mean, float std);
void box_muller_16(double* data, double mean, double std);

}  // namespace ember::detail
