// tests/core/test_indexing.cpp — cat, stack, index_select, index_add, gather, scatter_add
// and one_hot (core/indexing.cpp, core/cpu/index_kernels.cpp) against PyTorch
// (tests/reference/indexing.json, from gen_indexing.py), including every error message.
#include <catch2/catch.hpp>

#include <sstream>

#include <ember/core/native.h>

#include "test_support.h"

namespace {

using namespace ember;
using nlohmann::json;

// Values of a CPU tensor of any strides, row-major, as doubles (reads memory directly).
std::vector<double> strided_values(const Tensor& t) {
  std::vector<double> values;
  for (std::int64_t linear = 0; linear < t.numel(); ++linear) {
    std::int64_t rest = linear, offset = 0;
    for (std::int64_t d = t.dim() - 1; d >= 0; --d) {
      offset += (rest % t.sizes()[d]) * t.strides()[d];
      rest /= t.sizes()[d];
    }
    EMBER_DISPATCH_ALL(t.dtype(), {
      values.push_back(static_cast<double>(static_cast<const scalar_t*>(t.data_ptr())[offset]));
    });
  }
  return values;
}

// The inputs of a case; "t" ones are transposed views, as in gen_indexing.py.
std::vector<Tensor> inputs_of(const json& c) {
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < c["inputs"].size(); ++i) {
    Tensor t = testing::tensor_from_json(c["inputs"][i]);
    bool transposed = c.contains("layouts") && c["layouts"][i] == "t";
    inputs.push_back(transposed ? native::transpose(t, -1, -2) : t);
  }
  return inputs;
}

Tensor run(const std::string& op, const json& args, const std::vector<Tensor>& in) {
  std::int64_t arg = args[0];
  if (op == "cat") return native::cat(in, arg);
  if (op == "stack") return native::stack(in, arg);
  if (op == "index_select") return native::index_select(in[0], arg, in[1]);
  if (op == "index_add") return native::index_add(in[0], arg, in[1], in[2]);
  if (op == "gather") return native::gather(in[0], arg, in[1]);
  if (op == "scatter_add") return native::scatter_add(in[0], arg, in[1], in[2]);
  if (op == "one_hot") return native::one_hot(in[0], arg);
  throw std::runtime_error("unknown op " + op);
}

std::string describe(const json& c) {
  std::ostringstream text;
  text << c["op"].get<std::string>() << c["args"].dump() << " on";
  for (const json& input : c["inputs"]) text << ' ' << input["dtype"].get<std::string>() << input["shape"].dump();
  return text.str();
}

}  // namespace

TEST_CASE("cat, stack and the index ops match PyTorch", "[indexing]") {
  const json reference = testing::load_reference("indexing.json");
  REQUIRE(reference["cases"].size() > 40);
  for (const json& c : reference["cases"]) {
    INFO(describe(c));
    std::vector<Tensor> inputs = inputs_of(c);
    std::vector<std::vector<double>> before;
    for (const Tensor& t : inputs) before.push_back(strided_values(t));
    Tensor out = run(c["op"], c["args"], inputs);
    CHECK(out.sizes() == c["output"]["shape"].get<Shape>());
    CHECK(dtype_name(out.dtype()) == c["output"]["dtype"].get<std::string>());
    // Sums of two float32 numbers: index_add / scatter_add agree to rounding.
    std::vector<double> actual = strided_values(out), expected = c["output"]["data"].get<std::vector<double>>();
    REQUIRE(actual.size() == expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) CHECK(actual[i] == Approx(expected[i]).epsilon(1e-6));
    // The out-of-place forms leave every input untouched.
    for (std::size_t i = 0; i < inputs.size(); ++i) CHECK(strided_values(inputs[i]) == before[i]);
  }
}

TEST_CASE("indexing errors use PyTorch's messages", "[indexing]") {
  const json reference = testing::load_reference("indexing.json");
  REQUIRE(reference["errors"].size() > 40);
  for (const json& c : reference["errors"]) {
    INFO(describe(c));
    std::vector<Tensor> inputs = inputs_of(c);
    REQUIRE_THROWS_WITH(run(c["op"], c["args"], inputs), c["message"].get<std::string>());
    REQUIRE_THROWS_AS(run(c["op"], c["args"], inputs), ember::Error);
  }
}

TEST_CASE("indexing errors are the precise ember subclasses", "[indexing]") {
  Tensor x = empty({3, 4});
  Tensor bad_index = empty({1}, kInt64);
  bad_index.data_ptr<std::int64_t>()[0] = 3;
  REQUIRE_THROWS_AS(native::index_select(x, 0, bad_index), IndexError);
  REQUIRE_THROWS_AS(native::index_select(x, 0, empty({1})), DTypeError);
  REQUIRE_THROWS_AS(native::cat({x, empty({3, 5})}, 0), ShapeError);
  REQUIRE_THROWS_AS(native::one_hot(native::unsqueeze(bad_index, 0), 2), ValueError);
}

TEST_CASE("cat and stack write fresh memory", "[indexing]") {
  Tensor a = empty({2});
  a.data_ptr<float>()[0] = 1.0f;
  a.data_ptr<float>()[1] = 2.0f;
  Tensor joined = native::cat({a, a}, 0);
  Tensor stacked = native::stack({a, a}, 0);
  CHECK(joined.storage() != a.storage());
  CHECK(stacked.storage() != a.storage());
  a.data_ptr<float>()[0] = 9.0f;
  CHECK(strided_values(joined) == std::vector<double>{1, 2, 1, 2});
  CHECK(strided_values(stacked) == std::vector<double>{1, 2, 1, 2});
}
