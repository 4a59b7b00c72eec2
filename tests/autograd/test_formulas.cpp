// tests/autograd/test_formulas.cpp — every backward formula against PyTorch's gradients.
//
// tests/reference/autograd.json (gen_autograd.py) holds, per case: inputs, which of them
// require grad, the op's keyword arguments, PyTorch's output, grad_fn name, an upstream
// gradient and the resulting input gradients. Each case runs here twice: on contiguous
// inputs and on non-contiguous copies (every other element of a wider buffer).
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <set>
#include <string>

#include <ember/ember.h>

#include "test_support.h"

using ember::Reduction;
using ember::Tensor;
using ember::autograd::TensorList;
using ember::testing::load_reference;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;
using Json = nlohmann::json;

namespace {

std::vector<std::int64_t> ints(const Json& value) { return value.get<std::vector<std::int64_t>>(); }

Reduction reduction(const Json& kwargs) {
  std::string name = kwargs.at("reduction");
  return name == "mean" ? Reduction::Mean : name == "sum" ? Reduction::Sum : Reduction::None;
}

// A Python number as the generator wrote it: int stays integral, float stays floating.
ember::Scalar number(const Json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return value.get<double>();
}

Tensor index_tensor(const Json& value) {
  Json wrapped = {{"shape", Json::array()}, {"dtype", "int64"}, {"data", Json::array()}};
  // Nested lists of ints -> flat data + shape.
  std::function<void(const Json&, std::size_t)> walk = [&](const Json& node, std::size_t depth) {
    if (!node.is_array()) {
      wrapped["data"].push_back(node);
      return;
    }
    if (wrapped["shape"].size() <= depth) wrapped["shape"].push_back(node.size());
    for (const Json& child : node) walk(child, depth + 1);
  };
  walk(value, 0);
  return tensor_from_json(wrapped);
}

using Op = std::function<Tensor(const TensorList&, const Json&)>;

const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> table = {
      {"add", [](const TensorList& x, const Json& k) { return ember::add(x[0], x[1], k.value("alpha", 1.0)); }},
      {"sub", [](const TensorList& x, const Json& k) { return ember::sub(x[0], x[1], k.value("alpha", 1.0)); }},
      {"mul", [](const TensorList& x, const Json&) { return x[0] * x[1]; }},
      {"div", [](const TensorList& x, const Json&) { return x[0] / x[1]; }},
      {"neg", [](const TensorList& x, const Json&) { return -x[0]; }},
      {"exp", [](const TensorList& x, const Json&) { return x[0].exp(); }},
      {"log", [](const TensorList& x, const Json&) { return x[0].log(); }},
      {"sqrt", [](const TensorList& x, const Json&) { return x[0].sqrt(); }},
      {"abs_", [](const TensorList& x, const Json&) { return x[0].abs(); }},
      {"pow_scalar", [](const TensorList& x, const Json& k) {
         const Json& e = k.at("exponent");
         return e.is_number_integer() ? x[0].pow(e.get<std::int64_t>()) : x[0].pow(e.get<double>());
       }},
      {"pow_tensor", [](const TensorList& x, const Json&) { return x[0].pow(x[1]); }},
      {"sigmoid", [](const TensorList& x, const Json&) { return x[0].sigmoid(); }},
      {"tanh", [](const TensorList& x, const Json&) { return x[0].tanh(); }},
      {"relu", [](const TensorList& x, const Json&) { return x[0].relu(); }},
      {"clamp", [](const TensorList& x, const Json& k) {
         std::optional<ember::Scalar> low, high;
         if (k.contains("min") && !k["min"].is_null()) low = k["min"].get<double>();
         if (k.contains("max") && !k["max"].is_null()) high = k["max"].get<double>();
         return x[0].clamp(low, high);
       }},
      {"where", [](const TensorList& x, const Json&) { return ember::where(x[0] > 0, x[1], x[2]); }},
      {"maximum", [](const TensorList& x, const Json&) { return ember::maximum(x[0], x[1]); }},
      {"minimum", [](const TensorList& x, const Json&) { return ember::minimum(x[0], x[1]); }},
      {"view", [](const TensorList& x, const Json& k) { return x[0].contiguous().view(ints(k["sizes"])); }},
      {"reshape", [](const TensorList& x, const Json& k) { return x[0].reshape(ints(k["sizes"])); }},
      {"transpose", [](const TensorList& x, const Json& k) { return x[0].transpose(k["dim0"], k["dim1"]); }},
      {"t", [](const TensorList& x, const Json&) { return x[0].t(); }},
      {"permute", [](const TensorList& x, const Json& k) { return x[0].permute(ints(k["dims"])); }},
      {"squeeze", [](const TensorList& x, const Json&) { return x[0].squeeze(); }},
      {"squeeze_dim", [](const TensorList& x, const Json& k) { return x[0].squeeze(k["dim"].get<std::int64_t>()); }},
      {"unsqueeze", [](const TensorList& x, const Json& k) { return x[0].unsqueeze(k["dim"]); }},
      {"flatten", [](const TensorList& x, const Json&) { return x[0].flatten(); }},
      {"expand", [](const TensorList& x, const Json& k) { return x[0].expand(ints(k["sizes"])); }},
      {"select", [](const TensorList& x, const Json& k) { return x[0].select(k["dim"], k["index"]); }},
      {"narrow", [](const TensorList& x, const Json& k) { return x[0].narrow(k["dim"], k["start"], k["length"]); }},
      {"slice_", [](const TensorList& x, const Json& k) {
         return x[0].slice(k["dim"], k["start"].get<std::int64_t>(), k["end"].get<std::int64_t>(), k["step"]);
       }},
      {"clone", [](const TensorList& x, const Json&) { return x[0].clone(); }},
      {"sum_all", [](const TensorList& x, const Json&) { return x[0].sum(); }},
      {"sum_dims", [](const TensorList& x, const Json& k) { return x[0].sum(ints(k["dims"]), k["keepdim"]); }},
      {"mean_all", [](const TensorList& x, const Json&) { return x[0].mean(); }},
      {"mean_dims", [](const TensorList& x, const Json& k) { return x[0].mean(ints(k["dims"]), k["keepdim"]); }},
      {"prod_all", [](const TensorList& x, const Json&) { return x[0].prod(); }},
      {"prod_dim", [](const TensorList& x, const Json& k) { return x[0].prod(k["dim"].get<std::int64_t>(), k["keepdim"]); }},
      {"amax", [](const TensorList& x, const Json& k) { return x[0].amax(ints(k["dims"]), k["keepdim"]); }},
      {"amin", [](const TensorList& x, const Json& k) { return x[0].amin(ints(k["dims"]), k["keepdim"]); }},
      {"max_all", [](const TensorList& x, const Json&) { return x[0].max(); }},
      {"min_all", [](const TensorList& x, const Json&) { return x[0].min(); }},
      {"max_dim", [](const TensorList& x, const Json& k) { return std::get<0>(x[0].max(k["dim"], k["keepdim"])); }},
      {"min_dim", [](const TensorList& x, const Json& k) { return std::get<0>(x[0].min(k["dim"], k["keepdim"])); }},
      {"softmax", [](const TensorList& x, const Json& k) { return x[0].softmax(k["dim"]); }},
      {"log_softmax", [](const TensorList& x, const Json& k) { return x[0].log_softmax(k["dim"]); }},
      {"mm", [](const TensorList& x, const Json&) { return x[0].mm(x[1]); }},
      {"bmm", [](const TensorList& x, const Json&) { return ember::bmm(x[0], x[1]); }},
      {"addmm", [](const TensorList& x, const Json& k) {
         return ember::addmm(x[0], x[1], x[2], k["beta"].get<double>(), k["alpha"].get<double>());
       }},
      {"matmul", [](const TensorList& x, const Json&) { return x[0].matmul(x[1]); }},
      {"matmul_permuted", [](const TensorList& x, const Json&) { return x[0].permute({0, 2, 1}).matmul(x[1]); }},
      {"cat", [](const TensorList& x, const Json& k) { return ember::cat({x[0], x[1]}, k["dim"]); }},
      {"stack", [](const TensorList& x, const Json& k) { return ember::stack({x[0], x[1]}, k["dim"]); }},
      {"index_select", [](const TensorList& x, const Json& k) { return x[0].index_select(k["dim"], index_tensor(k["index"])); }},
      {"gather", [](const TensorList& x, const Json& k) { return x[0].gather(k["dim"], index_tensor(k["index"])); }},
      {"bce", [](const TensorList& x, const Json& k) { return ember::binary_cross_entropy(x[0], x[1], reduction(k)); }},
      {"bce_logits", [](const TensorList& x, const Json& k) {
         return ember::binary_cross_entropy_with_logits(x[0], x[1], reduction(k));
       }},
      {"nll", [](const TensorList& x, const Json& k) {
         return ember::nll_loss(x[0], index_tensor(k["target"]), reduction(k), k.value("ignore_index", -100));
       }},
      {"cross_entropy", [](const TensorList& x, const Json& k) {
         return ember::cross_entropy(x[0], index_tensor(k["target"]), reduction(k), k.value("ignore_index", -100),
                                     k.value("label_smoothing", 0.0));
       }},
      {"mse", [](const TensorList& x, const Json& k) { return ember::mse_loss(x[0], x[1], reduction(k)); }},
      {"to_dtype", [](const TensorList& x, const Json& k) {
         for (ember::DType dtype : {ember::kInt64, ember::kFloat32, ember::kFloat64}) {
           if (ember::dtype_name(dtype) == k["dtype"].get<std::string>()) return x[0].to(dtype);
         }
         throw std::runtime_error("unknown dtype " + k["dtype"].dump());
       }},
      {"fill_", [](const TensorList& x, const Json& k) {
         Tensor y = x[0] * 2;
         y.fill_(k["value"].get<double>());
         return y;
       }},
      {"zero_", [](const TensorList& x, const Json&) {
         Tensor y = x[0] * 2;
         y.zero_();
         return y;
       }},
      {"zero_then_add", [](const TensorList& x, const Json&) {
         Tensor y = x[0] * x[1];
         y.zero_();
         return y + x[0] * x[1];
       }},
      // Numbers on either side, through the free functions and (for tensor-first) the methods.
      {"add_scalar", [](const TensorList& x, const Json& k) {
         Tensor by_method = x[0].add(number(k["other"]), number(k.value("alpha", Json(1))));
         Tensor by_function = ember::add(x[0], number(k["other"]), number(k.value("alpha", Json(1))));
         REQUIRE(by_method.equal(by_function));
         return by_function;
       }},
      {"sub_scalar", [](const TensorList& x, const Json& k) {
         Tensor by_method = x[0].sub(number(k["other"]), number(k.value("alpha", Json(1))));
         Tensor by_function = ember::sub(x[0], number(k["other"]), number(k.value("alpha", Json(1))));
         REQUIRE(by_method.equal(by_function));
         return by_function;
       }},
      {"mul_scalar", [](const TensorList& x, const Json& k) {
         REQUIRE(x[0].mul(number(k["other"])).equal(ember::mul(x[0], number(k["other"]))));
         return ember::mul(x[0], number(k["other"]));
       }},
      {"div_scalar", [](const TensorList& x, const Json& k) {
         REQUIRE(x[0].div(number(k["other"])).equal(ember::div(x[0], number(k["other"]))));
         return ember::div(x[0], number(k["other"]));
       }},
      {"scalar_sub", [](const TensorList& x, const Json& k) {
         return ember::sub(number(k["other"]), x[0], number(k.value("alpha", Json(1))));
       }},
      {"scalar_div", [](const TensorList& x, const Json& k) { return ember::div(number(k["other"]), x[0]); }},
      {"<lambda>", [](const TensorList& x, const Json&) {
         return ember::binary_cross_entropy(ember::sigmoid(ember::tensor({1.1}) * x[0] + x[1]), ember::tensor({1.0}));
       }},
  };
  return table;
}

// Same values, other layout: every other element of a buffer twice as wide.
Tensor non_contiguous_copy(const Tensor& t) {
  if (t.dim() == 0) return t.clone();
  ember::Shape wide = t.sizes();
  wide.back() *= 2;
  Tensor buffer = ember::zeros(wide, t.options());
  Tensor view = buffer.slice(-1, 0, std::nullopt, 2);
  view.copy_(t);
  return view;
}

void require_close(const Tensor& actual, const Json& expected, const std::string& what) {
  INFO(what);
  Tensor reference = tensor_from_json(expected);
  REQUIRE(actual.sizes() == reference.sizes());
  REQUIRE(actual.dtype() == reference.dtype());
  std::vector<double> a = to_vector(actual), e = to_vector(reference);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": ember " << a[i] << ", PyTorch " << e[i]);
    REQUIRE(a[i] == Approx(e[i]).epsilon(1e-4).margin(1e-5));
  }
}

void run_case(const Json& c, bool non_contiguous) {
  const std::string name = c["name"];
  INFO("case " << name << (non_contiguous ? " (non-contiguous inputs)" : ""));
  TensorList inputs;
  for (std::size_t i = 0; i < c["inputs"].size(); ++i) {
    Tensor input = tensor_from_json(c["inputs"][i]);
    if (non_contiguous) input = non_contiguous_copy(input);
    if (c["requires"][i].get<bool>()) input.requires_grad_(true);
    inputs.push_back(input);
  }
  const Op& op = ops().at(c["op"].get<std::string>());
  Tensor out = op(inputs, c["kwargs"]);
  require_close(out, c["output"], "forward value");
  if (!c.contains("upstream")) {
    REQUIRE_FALSE(out.requires_grad());  // e.g. a cast to an integer dtype
    return;
  }
  REQUIRE(out.grad_fn() != nullptr);
  REQUIRE(out.grad_fn()->name() == c["grad_fn"].get<std::string>());
  TensorList wrt;
  for (const Tensor& input : inputs) {
    if (input.requires_grad()) wrt.push_back(input);
  }
  Tensor upstream = tensor_from_json(c["upstream"]);
  TensorList grads = ember::autograd::grad({out}, wrt, {upstream}, std::nullopt, false, /*allow_unused=*/true);
  std::size_t next = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    const Tensor& g = grads[next++];
    const Json& expected = c["grads"][i];
    if (expected.is_null()) {
      REQUIRE_FALSE(g.defined());
    } else {
      REQUIRE(g.defined());
      require_close(g, expected, "gradient of input " + std::to_string(i));
    }
  }
}

void run_family(const std::set<std::string>& op_names) {
  const Json reference = load_reference("autograd.json");
  int count = 0;
  for (const Json& c : reference["cases"]) {
    if (!op_names.count(c["op"].get<std::string>())) continue;
    ++count;
    run_case(c, false);
    run_case(c, true);
  }
  REQUIRE(count > 0);
}

}  // namespace

TEST_CASE("elementwise backward formulas match PyTorch", "[autograd][formulas]") {
  run_family({"add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "abs_", "pow_scalar", "pow_tensor", "sigmoid",
              "tanh", "relu", "clamp", "where", "maximum", "minimum"});
}

TEST_CASE("view backward formulas match PyTorch", "[autograd][formulas]") {
  run_family({"view", "reshape", "transpose", "t", "permute", "squeeze", "squeeze_dim", "unsqueeze", "flatten",
              "expand", "select", "narrow", "slice_", "clone"});
}

TEST_CASE("reduction backward formulas match PyTorch", "[autograd][formulas]") {
  run_family({"sum_all", "sum_dims", "mean_all", "mean_dims", "prod_all", "prod_dim", "amax", "amin", "max_all",
              "min_all", "max_dim", "min_dim", "softmax", "log_softmax"});
}

TEST_CASE("linear algebra backward formulas match PyTorch", "[autograd][formulas]") {
  run_family({"mm", "bmm", "addmm", "matmul", "matmul_permuted"});
}

TEST_CASE("indexing backward formulas match PyTorch", "[autograd][formulas]") {
  run_family({"cat", "stack", "index_select", "gather"});
}

TEST_CASE("loss values and gradients match PyTorch", "[autograd][formulas][losses]") {
  run_family({"bce", "bce_logits", "nll", "cross_entropy", "mse", "<lambda>"});
}

TEST_CASE("copies and in-place fills match PyTorch (ToCopyBackward0, FillBackward2, ZeroBackward0)",
          "[autograd][formulas]") {
  run_family({"to_dtype", "fill_", "zero_", "zero_then_add"});
  // A cast to the same dtype or device is the tensor itself: no node (PyTorch returns self).
  Tensor x = ember::tensor({1.0, 2.0}, ember::requires_grad());
  REQUIRE(x.to(ember::kFloat32).is_same(x));
  REQUIRE(x.to(ember::kCPU).is_same(x));
  REQUIRE(x.to(ember::kFloat64).grad_fn()->name() == "ToCopyBackward0");
  // fill_/zero_ nodes have one edge (self's old history), as PyTorch's.
  Tensor y = x * 2.0;
  y.zero_();
  auto zero_node = std::static_pointer_cast<ember::autograd::Node>(y.grad_fn());
  REQUIRE(zero_node->name() == "ZeroBackward0");
  REQUIRE(zero_node->next_edges().size() == 1);
  REQUIRE(zero_node->next_edges()[0].node->name() == "MulBackward0");
}

TEST_CASE("add/sub/mul/div with a number match PyTorch", "[autograd][formulas]") {
  run_family({"add_scalar", "sub_scalar", "mul_scalar", "div_scalar", "scalar_sub", "scalar_div"});
}

TEST_CASE("ties and kinks split the gradient as PyTorch does", "[autograd][formulas][ties]") {
  // Each case name ends in "ties", "at_zero" or "at_bound(s)"; run_family would also pick up
  // the tie-free cases of these ops, so select by case name here.
  const Json reference = load_reference("autograd.json");
  int count = 0;
  for (const Json& c : reference["cases"]) {
    const std::string name = c["name"];
    if (name.find("ties") == std::string::npos && name.find("_at_") == std::string::npos) continue;
    ++count;
    run_case(c, false);
    run_case(c, true);
  }
  REQUIRE(count >= 15);
}
