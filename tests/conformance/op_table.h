// tests/conformance/op_table.h — the C++ side of the conformance sweep's op table: each op
// name of tests/reference/gen_conformance.py's OPS mapped to the ember call that runs it.
//
// Adding an op to the sweep = a row in OPS (Python) and, unless an existing entry already
// calls it, one entry here (docs/adding-an-op.md, "The conformance sweep: add a row").
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/core/tensor.h>

namespace ember::conformance {

// inputs: the case's tensors in order; params: the case's "params" object.
using OpCall = std::function<Tensor(const std::vector<Tensor>& inputs, const nlohmann::json& params)>;

const std::map<std::string, OpCall>& op_table();

}  // namespace ember::conformance
