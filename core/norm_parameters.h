// core/norm_parameters.h — which dtype a normalisation's parameters may have: PyTorch's
// "mixed dtype" rule, shared by layer_norm (core/layer_norm.cpp) and batch_norm
// (core/batch_norm.cpp).
//
// A normalisation's parameters (weight, bias, and batch norm's running statistics) normally
// share the input's dtype. Mixed precision adds one more case: a bfloat16 or float16 input
// (a 16-bit activation under autocast) with float32 parameters (the master weights). PyTorch's
// CPU kernels call it "mixed": the output keeps the input's dtype, the statistics and the
// gradients of the parameters are float32. The first defined parameter decides which case
// applies; every message below is PyTorch 2.15's.
#pragma once

#include <initializer_list>

#include <ember/core/error.h>
#include <ember/core/tensor.h>

namespace ember::native {

// The dtype of the parameters (and of the statistics a kernel saves): the input's, or float32
// for a 16-bit input with float32 parameters. A parameter of another dtype than the first
// one's throws "expected scalar type X but found Y" in the plain case; in the mixed case every
// parameter must be float32.
inline DType normalization_parameter_dtype(const Tensor& input, std::initializer_list<const Tensor*> parameters) {
  const Tensor* first = nullptr;
  for (const Tensor* parameter : parameters)
    if (parameter->defined()) {
      first = parameter;
      break;
    }
  const bool mixed = first != nullptr && first->dtype() != input.dtype();
  if (mixed) {
    EMBER_CHECK(input.dtype() == kFloat32 || is_reduced_floating_point(input.dtype()), DTypeError,
                "mixed dtype (CPU): all inputs must share same datatype.");
    for (const Tensor* parameter : parameters)
      EMBER_CHECK(!parameter->defined() || parameter->dtype() == kFloat32, DTypeError,
                  "mixed dtype (CPU): expect parameter to have scalar type of Float");
    return kFloat32;
  }
  for (const Tensor* parameter : parameters)
    EMBER_CHECK(!parameter->defined() || parameter->dtype() == input.dtype(), DTypeError, "expected scalar type ",
                scalar_type_name(input.dtype()), " but found ", scalar_type_name(parameter->dtype()));
  return input.dtype();
}

}  // namespace ember::native
