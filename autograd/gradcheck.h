// autograd/gradcheck.h — checking backward formulas against finite differences.
//
// Tutorial §4. gradcheck compares two Jacobians of fn at `inputs`:
//   numerical:  central differences (f(x + eps e_j) - f(x - eps e_j)) / 2 eps, and
//   analytical: rows from autograd::grad with one-hot output gradients,
// and accepts when |analytical - numerical| <= atol + rtol * |numerical| everywhere.
// Inputs must be float64 tensors (float32's rounding swamps eps = 1e-6), on the CPU or on a
// GPU (then every backward formula runs on CUDA tensors); only inputs with requires_grad
// are checked. A mismatch names the output, the input and the entries.
// gradgradcheck does the same for the gradient function itself (second derivatives):
// it gradchecks  (inputs, v) -> grad(fn(inputs), inputs, v, create_graph=true).
#pragma once

#include <functional>

#include <ember/autograd/node.h>
#include <ember/core/error.h>

namespace ember::autograd {

class GradcheckError : public AutogradError {
  using AutogradError::AutogradError;
};

using MultiOutputFunction = std::function<TensorList(const TensorList&)>;
using SingleOutputFunction = std::function<Tensor(const TensorList&)>;

// Returns true when the Jacobians match; otherwise throws GradcheckError with the report
// (or returns false when raise_exception is false).
bool gradcheck(const MultiOutputFunction& fn, const TensorList& inputs, double eps = 1e-6, double atol = 1e-5,
               double rtol = 1e-3, bool raise_exception = true);
bool gradcheck(const SingleOutputFunction& fn, const TensorList& inputs, double eps = 1e-6, double atol = 1e-5,
               double rtol = 1e-3, bool raise_exception = true);

// grad_outputs: the vectors v (one per output); empty = fixed, deterministic values.
bool gradgradcheck(const MultiOutputFunction& fn, const TensorList& inputs, const TensorList& grad_outputs = {},
                   double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3, bool raise_exception = true);
bool gradgradcheck(const SingleOutputFunction& fn, const TensorList& inputs, const TensorList& grad_outputs = {},
                   double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3, bool raise_exception = true);

}  // namespace ember::autograd
