// tests/conformance/op_table.cpp — see op_table.h. Every call goes through ember's public
// API (autograd/ops.h), so gradcheck runs the same entries.
#include "op_table.h"

#include <optional>

#include <ember/autograd/ops.h>

#include "test_support.h"

namespace ember::conformance {

namespace {

using nlohmann::json;

// A JSON number as the Scalar PyTorch would see: Python int -> integral, float -> double.
Scalar number(const json& value) {
  if (value.is_number_integer()) return Scalar(value.get<std::int64_t>());
  return Scalar(value.get<double>());
}

std::optional<Scalar> optional_number(const json& value) {
  if (value.is_null()) return std::nullopt;
  return number(value);
}

// "dim": null (every dim) or a list of dims.
Shape dims(const json& params) { return params.at("dim").is_null() ? Shape{} : params.at("dim").get<Shape>(); }

std::optional<std::int64_t> optional_dim(const json& params) {
  if (params.at("dim").is_null()) return std::nullopt;
  return params.at("dim").get<std::int64_t>();
}

std::tuple<Tensor, Tensor> topk_of(const Tensor& x, const json& p) {
  return ember::topk(x, p["k"].get<std::int64_t>(), p["dim"].get<std::int64_t>(), p["largest"].get<bool>(),
                     p["sorted"].get<bool>());
}

template <Tensor (*Op)(const Tensor&)>
OpCall unary() {
  return [](const std::vector<Tensor>& x, const json&) { return Op(x[0]); };
}
template <Tensor (*Op)(const Tensor&, const Tensor&)>
OpCall binary() {
  return [](const std::vector<Tensor>& x, const json&) { return Op(x[0], x[1]); };
}

}  // namespace

const std::map<std::string, OpCall>& op_table() {
  using In = const std::vector<Tensor>&;
  static const std::map<std::string, OpCall> table{
      {"neg", unary<&ember::neg>()},
      {"exp", unary<&ember::exp>()},
      {"log", unary<&ember::log>()},
      {"sqrt", unary<&ember::sqrt>()},
      {"abs", unary<&ember::abs>()},
      {"sign", unary<&ember::sign>()},
      {"sigmoid", unary<&ember::sigmoid>()},
      {"tanh", unary<&ember::tanh>()},
      {"relu", unary<&ember::relu>()},
      {"erf", unary<&ember::erf>()},
      {"rsqrt", unary<&ember::rsqrt>()},
      {"silu", unary<&ember::silu>()},
      {"gelu", unary<static_cast<Tensor (*)(const Tensor&)>(&ember::gelu)>()},
      {"gelu_tanh", [](const std::vector<Tensor>& x, const nlohmann::json&) { return ember::gelu(x[0], "tanh"); }},
      {"clamp", [](In x, const json& p) { return ember::clamp(x[0], optional_number(p["min"]), optional_number(p["max"])); }},
      {"pow_scalar", [](In x, const json& p) { return ember::pow(x[0], number(p["exponent"])); }},
      {"add", [](In x, const json& p) { return ember::add(x[0], x[1], number(p["alpha"])); }},
      {"sub", [](In x, const json& p) { return ember::sub(x[0], x[1], number(p["alpha"])); }},
      {"mul", binary<&ember::mul>()},
      {"div", binary<&ember::div>()},
      {"pow", [](In x, const json&) { return ember::pow(x[0], x[1]); }},
      {"maximum", binary<&ember::maximum>()},
      {"minimum", binary<&ember::minimum>()},
      {"eq", binary<&ember::eq>()},
      {"ne", binary<&ember::ne>()},
      {"lt", binary<&ember::lt>()},
      {"le", binary<&ember::le>()},
      {"gt", binary<&ember::gt>()},
      {"ge", binary<&ember::ge>()},
      {"logical_and", binary<&ember::logical_and>()},
      {"where", [](In x, const json&) { return ember::where(x[0], x[1], x[2]); }},
      {"to", [](In x, const json& p) { return ember::to(x[0], testing::dtype_from_name(p["dtype"])); }},
      {"sum", [](In x, const json& p) { return ember::sum(x[0], dims(p), p["keepdim"].get<bool>()); }},
      {"mean", [](In x, const json& p) { return ember::mean(x[0], dims(p), p["keepdim"].get<bool>()); }},
      {"prod", [](In x, const json& p) { return ember::prod(x[0], dims(p), p["keepdim"].get<bool>()); }},
      {"amax", [](In x, const json& p) { return ember::amax(x[0], dims(p), p["keepdim"].get<bool>()); }},
      {"amin", [](In x, const json& p) { return ember::amin(x[0], dims(p), p["keepdim"].get<bool>()); }},
      {"argmax", [](In x, const json& p) { return ember::argmax(x[0], optional_dim(p), p["keepdim"].get<bool>()); }},
      {"argmin", [](In x, const json& p) { return ember::argmin(x[0], optional_dim(p), p["keepdim"].get<bool>()); }},
      {"topk", [](In x, const json& p) { return std::get<0>(topk_of(x[0], p)); }},
      {"topk_indices", [](In x, const json& p) { return std::get<1>(topk_of(x[0], p)); }},
      {"softmax", [](In x, const json& p) { return ember::softmax(x[0], p["dim"].get<std::int64_t>()); }},
      {"log_softmax", [](In x, const json& p) { return ember::log_softmax(x[0], p["dim"].get<std::int64_t>()); }},
      {"mm", binary<&ember::mm>()},
      {"matmul", binary<&ember::matmul>()},
      {"index_select", [](In x, const json& p) { return ember::index_select(x[0], p["dim"].get<std::int64_t>(), x[1]); }},
      {"gather", [](In x, const json& p) { return ember::gather(x[0], p["dim"].get<std::int64_t>(), x[1]); }},
      {"scatter_add",
       [](In x, const json& p) { return ember::scatter_add(x[0], p["dim"].get<std::int64_t>(), x[1], x[2]); }},
      {"index_add",
       [](In x, const json& p) { return ember::index_add(x[0], p["dim"].get<std::int64_t>(), x[1], x[2]); }},
  };
  return table;
}

}  // namespace ember::conformance
