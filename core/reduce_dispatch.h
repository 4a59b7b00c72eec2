// core/reduce_dispatch.h — which instantiation of its loops a sum, mean or prod plan asks for
// (ReducePlan, core/strided_index.h). Input and output share a dtype, except a bfloat16 or
// float16 input accumulated into a float32 output: the partial sums of a sum over scattered
// dims, kept unrounded between its stages (core/reduce.cpp). The CPU kernels and the reference
// loops both dispatch through it.
#pragma once

#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/core/reduced_float.h>
#include <ember/core/strided_index.h>

namespace ember {

// Calls body.template operator()<In, Out>() with the plan's element types.
template <class Body>
void dispatch_accumulate(const ReducePlan& plan, const Body& body) {
  if (plan.output_dtype == DType::Float32 && plan.input_dtype == DType::BFloat16) {
    body.template operator()<BFloat16, float>();
  } else if (plan.output_dtype == DType::Float32 && plan.input_dtype == DType::Float16) {
    body.template operator()<Half, float>();
  } else {
    EMBER_CHECK(plan.output_dtype == plan.input_dtype, DTypeError, "reduce: a ", plan.input_dtype,
                " input accumulates into ", plan.output_dtype);
    EMBER_DISPATCH_ALL_AND_REDUCED(plan.input_dtype, body.template operator()<scalar_t, scalar_t>());
  }
}

}  // namespace ember
