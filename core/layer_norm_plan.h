// core/layer_norm_plan.h — the plain-data plans of the layer-norm kernels (core/backend.h).
//
// Layer norm (issue 21; PyTorch's native_layer_norm and native_layer_norm_backward)
// normalises every row of an input laid out as [rows, row_size], where row_size is the
// product of normalized_shape (the input's last dims) and rows the product of the dims
// before them:
//   mean_i = Σ_j x_ij / row_size,  var_i = Σ_j (x_ij - mean_i)² / row_size   (biased)
//   rstd_i = 1 / sqrt(var_i + eps)
//   y_ij   = (x_ij - mean_i) · rstd_i · weight[j] + bias[j]
// weight and bias are per element of a row (normalized_shape), not per row. The native
// layer (core/layer_norm.cpp) lays the operands out contiguously and checks every argument;
// kernels (core/cpu/layer_norm_kernels.cpp, core/reference/layer_norm_loops.cpp,
// cuda/kernels/layer_norm.cuh) only compute. Like core/batch_norm_plan.h: POD, raw
// pointers, no ownership, one dtype for all.
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>

namespace ember {

struct LayerNormPlan {
  const void* input = nullptr;   // [rows, row_size], contiguous
  void* output = nullptr;        // [rows, row_size], contiguous
  const void* weight = nullptr;  // [row_size], or nullptr (all ones)
  const void* bias = nullptr;    // [row_size], or nullptr (all zeros)
  void* mean = nullptr;          // [rows], written
  void* rstd = nullptr;          // [rows], written: 1 / sqrt(var + eps)
  std::int64_t rows = 0, row_size = 0;
  double eps = 1e-5;
  DType dtype = DType::Float32;
  int device = -1;  // as StridedPlan::device
};

// The backward of LayerNormPlan (x̂ = (x - mean) · rstd, g = dy · weight, sums over a row's
// row_size values, or over the rows for the parameters):
//   grad_input_ij  = rstd_i · (g_ij - Σ_j g / row_size - x̂_ij · Σ_j (g · x̂) / row_size)
//   grad_weight[j] = Σ_i dy_ij · x̂_ij
//   grad_bias[j]   = Σ_i dy_ij
// Any of the three outputs may be nullptr (not needed).
struct LayerNormBackwardPlan {
  const void* grad_output = nullptr;  // [rows, row_size], contiguous
  const void* input = nullptr;        // [rows, row_size], contiguous
  const void* mean = nullptr;         // [rows], from the forward
  const void* rstd = nullptr;         // [rows], from the forward
  const void* weight = nullptr;       // [row_size], or nullptr (all ones)
  void* grad_input = nullptr;         // [rows, row_size], or nullptr
  void* grad_weight = nullptr;        // [row_size], or nullptr
  void* grad_bias = nullptr;          // [row_size], or nullptr
  std::int64_t rows = 0, row_size = 0;
  DType dtype = DType::Float32;
  int device = -1;
};

}  // namespace ember
