// tests/core/test_sampling.cpp — exponential_, multinomial and native topk against PyTorch.
//
// tests/reference/gen_sampling.py recorded torch 2.15's CPU results (sampling.json). Each
// case is replayed after the same manual_seed: samples are compared bit for bit, indices
// exactly, and the generator's next draws too (a sampler that used one draw too many or too
// few would shift them). topk's cases include many ties, NaNs and both selection strategies,
// so its order of equal values is checked, on the fast kernel and the reference loop.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>

#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>
#include <ember/core/random.h>
#include <ember/core/sampling.h>
#include <test_support.h>

using namespace ember;
using nlohmann::json;

namespace {

const json& reference() {
  static const json data = testing::load_reference("sampling.json");
  return data;
}

Tensor input(const json& index) { return testing::tensor_from_json(reference()["inputs"][index.get<std::size_t>()]); }

// A tensor with the values of `values` laid out as the case's layout says (the generator's
// views): "transposed" (column-major), "step2" (every other element of a 1-d tensor twice as
// long) and "rows step2 transposed" (every other row of a [2C, R] tensor, transposed: [R, C]
// with strides (1, 2R), not dense).
Tensor with_layout(const Tensor& values, const std::string& layout) {
  if (layout == "transposed") return native::t(native::contiguous(native::t(values)));
  if (layout == "step2") {
    Tensor wide = zeros({2 * values.size(0)}, TensorOptions().dtype(values.dtype()));
    Tensor view = native::slice(wide, 0, 0, std::nullopt, 2);
    native::copy_(view, values);
    return view;
  }
  if (layout == "rows step2 transposed") {
    Tensor wide = zeros({2 * values.size(1), values.size(0)}, TensorOptions().dtype(values.dtype()));
    Tensor rows = native::slice(wide, 0, 0, std::nullopt, 2);
    native::copy_(rows, native::t(values));
    return native::t(rows);
  }
  REQUIRE(layout == "contiguous");
  return values;
}

double number(const json& value) {
  if (value.is_string()) return value.get<std::string>() == "inf" ? INFINITY : NAN;
  return value.get<double>();
}

// Same shape and dtype; floats equal bit for bit (NaN matching NaN), integers equal.
void require_same(const Tensor& actual, const json& expected) {
  Tensor want = testing::tensor_from_json(expected);
  REQUIRE(actual.sizes() == want.sizes());
  REQUIRE(actual.dtype() == want.dtype());
  const std::vector<double> got = testing::to_vector(actual), wanted = testing::to_vector(want);
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << wanted[i]);
    if (std::isnan(wanted[i])) {
      REQUIRE(std::isnan(got[i]));
    } else if (actual.dtype() == DType::Float32) {
      const auto a = static_cast<float>(got[i]), b = static_cast<float>(wanted[i]);
      REQUIRE(std::memcmp(&a, &b, sizeof(float)) == 0);
    } else {
      REQUIRE(std::memcmp(&got[i], &wanted[i], sizeof(double)) == 0);
    }
  }
}

void require_stream_continues(const json& after) { require_same(rand({3}, kFloat64), after); }

void run_topk_cases() {
  int count = 0;
  for (const auto& c : reference()["topk"]) {
    INFO(c["name"].get<std::string>() << " k=" << c["k"] << " dim=" << c["dim"] << " largest=" << c["largest"]
                                      << " sorted=" << c["sorted"]);
    const Tensor x = with_layout(input(c["input"]), c["layout"]);
    auto [values, indices] = native::topk(x, c["k"], c["dim"], c["largest"], c["sorted"]);
    require_same(values, c["values"]);
    require_same(indices, c["indices"]);
    ++count;
  }
  REQUIRE(count == 217);
}

void run_multinomial_cases() {
  int count = 0;
  for (const auto& c : reference()["multinomial"]) {
    INFO(c["name"].get<std::string>() << " n=" << c["num_samples"] << " replacement=" << c["replacement"]
                                      << " seed=" << c["seed"]);
    const Tensor probs = with_layout(input(c["probs"]), c["layout"]);
    manual_seed(c["seed"].get<std::uint64_t>());
    require_same(multinomial(probs, c["num_samples"], c["replacement"]), c["result"]);
    require_stream_continues(c["after"]);
    ++count;
  }
  REQUIRE(count == 162);  // 52 of them bfloat16 and float16
}

}  // namespace

TEST_CASE("exponential_ draws PyTorch's samples bit for bit", "[sampling][exponential]") {
  int count = 0;
  for (const auto& c : reference()["exponential"]) {
    INFO("seed " << c["seed"] << " " << c["dtype"] << " lambda " << c["lambda"] << " " << c["layout"]);
    const DType dtype = testing::dtype_from_name(c["dtype"]);
    const Shape sizes = c["sizes"].get<Shape>();
    Tensor t;
    const std::string layout = c["layout"];
    if (layout == "transposed") {
      t = native::t(empty({sizes[1], sizes[0]}, dtype));
    } else if (layout == "step2") {
      t = native::slice(empty({2 * sizes[0]}, dtype), 0, 0, std::nullopt, 2);
    } else if (layout == "rows step2 transposed") {  // [R, C] from a [2C, R] tensor: strides (1, 2R)
      t = native::t(native::slice(empty({2 * sizes[1], sizes[0]}, dtype), 0, 0, std::nullopt, 2));
    } else if (layout == "columns step2") {  // [R, C] from columns 1, 3, ... of [R, 2C]: strides (2C, 2), offset 1
      t = native::slice(empty({sizes[0], 2 * sizes[1]}, dtype), 1, 1, std::nullopt, 2);
    } else {
      REQUIRE(layout == "contiguous");
      t = empty(sizes, dtype);
    }
    manual_seed(c["seed"].get<std::uint64_t>());
    const std::uint64_t version = t.version();
    exponential_(t, number(c["lambda"]));
    CHECK(t.version() > version);
    require_same(t, c["result"]);
    require_stream_continues(c["after"]);
    ++count;
  }
  REQUIRE(count == 55);  // 10 of them bfloat16 and float16
}

TEST_CASE("exponential_ with its own generator, and empty tensors", "[sampling][exponential]") {
  Generator a(123), b(123);
  Tensor x = empty({40}, kFloat64), y = empty({40}, kFloat64);
  exponential_(x, 2.0, &a);
  exponential_(y, 2.0, &b);
  REQUIRE(native::equal(x, y));
  const std::vector<double> values = testing::to_vector(x);
  for (double v : values) CHECK(v >= 0.0);
  Tensor none = empty({0, 3});
  exponential_(none, 1.0, &a);  // draws nothing
  Tensor z = empty({1}, kFloat64);
  exponential_(z, 2.0, &a);
  exponential_(y.narrow(0, 0, 1), 2.0, &b);
  REQUIRE(native::equal(z, y.narrow(0, 0, 1)));
}

TEST_CASE("exponential_ refuses bad lambdas and integer tensors with PyTorch's messages", "[sampling][exponential]") {
  for (const auto& c : reference()["exponential_errors"]) {
    Tensor t = empty({2}, testing::dtype_from_name(c["dtype"]));
    const std::string message = c["message"];
    if (c["dtype"] == "int64") REQUIRE_THROWS_AS(exponential_(t, number(c["lambda"])), DTypeError);
    else REQUIRE_THROWS_AS(exponential_(t, number(c["lambda"])), ValueError);
    REQUIRE_THROWS_WITH(exponential_(t, number(c["lambda"])), message);
  }
}

TEST_CASE("multinomial draws PyTorch's indices for the same seed", "[sampling][multinomial]") { run_multinomial_cases(); }

TEST_CASE("multinomial gives the same indices on the reference kernels", "[sampling][multinomial][reference]") {
  KernelModeGuard guard(KernelMode::Reference);
  run_multinomial_cases();
}

TEST_CASE("multinomial never draws a zero-weight category while others remain", "[sampling][multinomial]") {
  Generator gen(7);
  Tensor probs = tensor({0.0, 0.3, 0.0, 0.7, 0.0});
  for (bool replacement : {false, true}) {
    Tensor drawn = multinomial(probs, 2, replacement, &gen);
    for (double index : testing::to_vector(drawn)) CHECK((index == 1.0 || index == 3.0));
  }
  Tensor single = multinomial(probs, 1, false, &gen);
  REQUIRE(single.sizes() == Shape{1});
  REQUIRE(single.dtype() == kInt64);
}

TEST_CASE("multinomial's errors use PyTorch's wording", "[sampling][multinomial]") {
  for (const auto& c : reference()["multinomial_errors"]) {
    INFO(c["name"]);
    json probs_json = {{"dtype", "float32"}, {"data", json::array()}};
    Shape sizes;
    if (c["probs"][0].is_array()) {
      sizes = {static_cast<std::int64_t>(c["probs"].size()), static_cast<std::int64_t>(c["probs"][0].size())};
      for (const auto& row : c["probs"])
        for (const auto& v : row) probs_json["data"].push_back(v);
    } else {
      sizes = {static_cast<std::int64_t>(c["probs"].size())};
      for (const auto& v : c["probs"]) probs_json["data"].push_back(v);
    }
    probs_json["shape"] = sizes;
    const Tensor probs = testing::tensor_from_json(probs_json);
    const std::string message = c["message"];
    REQUIRE_THROWS_AS(multinomial(probs, c["num_samples"], c["replacement"]), ValueError);
    REQUIRE_THROWS_WITH(multinomial(probs, c["num_samples"], c["replacement"]), message);
  }
  const json& messages = reference()["multinomial_messages"];
  REQUIRE_THROWS_AS(multinomial(rand({2, 2, 2}), 1), ShapeError);
  REQUIRE_THROWS_WITH(multinomial(rand({2, 2, 2}), 1), messages["3-d"].get<std::string>());
  REQUIRE_THROWS_WITH(multinomial(tensor(0.5), 1), messages["0-d"].get<std::string>());
  REQUIRE_THROWS_AS(multinomial(tensor({1, 2}), 1), DTypeError);
  REQUIRE_THROWS_WITH(multinomial(tensor({1, 2}), 1), messages["int64"].get<std::string>());
  REQUIRE_THROWS_WITH(multinomial(empty({2, 0}), 1), messages["empty categories"].get<std::string>());
  REQUIRE_THROWS_WITH(multinomial(empty({2, 0}), 1, true), messages["empty categories, replacement"].get<std::string>());
  REQUIRE_THROWS_WITH(multinomial(empty({0}), 2, true), messages["empty 1-d, replacement"].get<std::string>());
  require_same(multinomial(empty({0, 3}), 2), reference()["multinomial_empty_rows"]);
}

TEST_CASE("topk matches PyTorch's values and indices, ties included", "[sampling][topk]") { run_topk_cases(); }

TEST_CASE("topk on the reference loop matches PyTorch too", "[sampling][topk][reference]") {
  KernelModeGuard guard(KernelMode::Reference);
  run_topk_cases();
}

TEST_CASE("topk on strided views equals topk on their contiguous copies", "[sampling][topk]") {
  Tensor base = native::to_dtype(randint(0, 6, {8, 150}), kFloat32);
  Tensor strided = native::slice(base, 1, 1, std::nullopt, 2);  // [8, 75], every other column
  for (std::int64_t dim : {0, 1}) {
    for (std::int64_t k : {1, 3}) {
      auto [v1, i1] = native::topk(strided, k, dim, true, true);
      auto [v2, i2] = native::topk(native::contiguous(strided), k, dim, true, true);
      REQUIRE(native::equal(v1, v2));
      REQUIRE(native::equal(i1, i2));
    }
  }
}

TEST_CASE("topk's threaded kernel gives the reference loop's values and indices", "[sampling][topk][reference]") {
  // 3000 rows of 40 (a task per 819 rows: several threads) and 5 rows of 20000 (one row per
  // task), many ties, both selection strategies (partial sort when k * 64 <= size).
  for (const Shape& shape : {Shape{3000, 40}, Shape{5, 20000}}) {
    const Tensor x = native::to_dtype(randint(0, 7, shape), kFloat32);
    for (std::int64_t k : {1, 5, 40}) {
      for (bool largest : {true, false}) {
        for (bool sorted : {true, false}) {
          INFO(shape[0] << "x" << shape[1] << " k=" << k << " largest=" << largest << " sorted=" << sorted);
          std::tuple<Tensor, Tensor> fast, slow;
          {
            KernelModeGuard guard(KernelMode::Fast);
            fast = native::topk(x, k, -1, largest, sorted);
          }
          {
            KernelModeGuard guard(KernelMode::Reference);
            slow = native::topk(x, k, -1, largest, sorted);
          }
          REQUIRE(native::equal(std::get<0>(fast), std::get<0>(slow)));
          REQUIRE(native::equal(std::get<1>(fast), std::get<1>(slow)));
        }
      }
    }
  }
}

TEST_CASE("topk's errors use PyTorch's wording", "[sampling][topk]") {
  const json& messages = reference()["topk_messages"];
  REQUIRE_THROWS_AS(native::topk(zeros({3}), 4, -1, true, true), IndexError);
  REQUIRE_THROWS_WITH(native::topk(zeros({3}), 4, -1, true, true), messages["k too large"].get<std::string>());
  REQUIRE_THROWS_WITH(native::topk(zeros({3}), -1, -1, true, true), messages["k negative"].get<std::string>());
  REQUIRE_THROWS_WITH(native::topk(tensor(1.0), 2, -1, true, true), messages["0-d k=2"].get<std::string>());
  REQUIRE_THROWS_AS(native::topk(zeros({3}), 1, 1, true, true), IndexError);
  REQUIRE_THROWS_WITH(native::topk(zeros({3}), 1, 1, true, true), messages["dim"].get<std::string>());
  Tensor flags = native::to_dtype(tensor({1, 0}), kBool);
  REQUIRE_THROWS_AS(native::topk(flags, 1, -1, true, true), NotImplementedError);
  REQUIRE_THROWS_WITH(native::topk(flags, 1, -1, true, true), messages["bool"].get<std::string>());
}
