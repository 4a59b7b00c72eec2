// tests/conformance/conformance_case.h — one case of the conformance sweep, read from
// tests/reference/conformance.json (written by tests/reference/gen_conformance.py), and the
// bit-for-bit comparison of two results.
//
// A case: {"op", "dtype", "layout", "params", "inputs": [{"storage", "size", "stride",
// "offset"}], then "expected" (PyTorch's result) or "error" (PyTorch's message), and "ulps"
// where a finite float result may be that many units in the last place from PyTorch's}.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/core/tensor.h>

namespace ember::conformance {

using nlohmann::json;

// The whole reference file, parsed once.
const json& reference();

// "add float32 transposed {"alpha":2.5}": names a case in messages and in the known-failure list.
std::string case_key(const json& c);

// The case's inputs on `device`, each in its layout: a fresh storage holding the JSON values,
// viewed with the recorded sizes, strides and offset (native::as_strided, the one way to
// name a layout exactly). Float64 inputs require grad when `requires_grad`.
std::vector<Tensor> make_inputs(const json& c, Device device, bool requires_grad = false);

// Whether `actual` equals `expected`: the same dtype and shape; for integers and bools the
// same values; for floats the same bits (so -0.0 differs from +0.0), NaN where expected has
// NaN, and finite nonzero values of one sign within `ulps` units in the last place. On a
// difference, `why` says where ("element 3: got -0, want 0").
bool same_bits(const Tensor& actual, const Tensor& expected, int ulps, std::string* why);

// The case's inputs as stored in the JSON (cut to a few hundred characters), for messages.
std::string describe_inputs(const json& c);

}  // namespace ember::conformance
