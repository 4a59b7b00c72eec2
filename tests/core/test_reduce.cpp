// tests/core/test_reduce.cpp — native reductions, softmax, allclose and equal vs PyTorch.
//
// Reference values: tests/reference/gen_reduce.py -> reduce.json. Each case gives an op,
// its input (possibly a transposed view), arguments and PyTorch's result(s).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include <ember/core/native.h>
#include <ember/core/parallel.h>

#include "test_support.h"

using namespace ember;
using nlohmann::json;

namespace {

const json& reference() {
  static const json data = testing::load_reference("reduce.json");
  return data;
}

DType dtype_named(const std::string& name) {
  for (DType dtype : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64}) {
    if (dtype_name(dtype) == name) return dtype;
  }
  throw std::runtime_error("unknown dtype " + name);
}

Tensor input_from_json(const json& input) {
  Tensor stored = testing::tensor_from_json(input);
  if (!input.contains("layout")) return stored;
  return make_tensor(stored.storage(), {stored.sizes()[1], stored.sizes()[0]}, {stored.strides()[1], stored.strides()[0]},
                     stored.storage_offset(), stored.dtype());
}

void check_matches(const Tensor& actual, const json& expected_json) {
  Tensor expected = testing::tensor_from_json(expected_json);
  REQUIRE(actual.sizes() == expected.sizes());
  REQUIRE(dtype_name(actual.dtype()) == dtype_name(expected.dtype()));
  std::vector<double> got = testing::to_vector(actual), want = testing::to_vector(expected);
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(want[i])) {
      CHECK(got[i] == want[i]);
    } else {
      CHECK(std::abs(got[i] - want[i]) <= 1e-5 + 2e-6 * std::abs(want[i]));
    }
  }
}

std::vector<Tensor> run_case(const json& c) {
  const std::string op = c["op"];
  const json& args = c["args"];
  Tensor x = input_from_json(c["input"]);
  std::optional<DType> dtype;
  if (args.contains("dtype")) dtype = dtype_named(args["dtype"]);
  bool keepdim = args.value("keepdim", false);
  if (op == "sum" || op == "mean" || op == "prod" || op == "amax" || op == "amin") {
    Shape dims = args["dims"].get<Shape>();
    if (op == "sum") return {native::sum(x, dims, keepdim, dtype)};
    if (op == "mean") return {native::mean(x, dims, keepdim, dtype)};
    if (op == "prod") return {native::prod(x, dims, keepdim, dtype)};
    if (op == "amax") return {native::amax(x, dims, keepdim)};
    return {native::amin(x, dims, keepdim)};
  }
  if (op == "max" || op == "min") {
    auto [values, indices] = op == "max" ? native::max(x, args["dim"], keepdim) : native::min(x, args["dim"], keepdim);
    return {values, indices};
  }
  if (op == "argmax" || op == "argmin") {
    std::optional<std::int64_t> dim;
    if (!args["dim"].is_null()) dim = args["dim"].get<std::int64_t>();
    return {op == "argmax" ? native::argmax(x, dim, keepdim) : native::argmin(x, dim, keepdim)};
  }
  if (op == "softmax") return {native::softmax(x, args["dim"])};
  if (op == "log_softmax") return {native::log_softmax(x, args["dim"])};
  FAIL("unknown op " << op);
  return {};
}

void run_reference_cases(const std::vector<std::string>& ops) {
  int count = 0;
  for (std::size_t i = 0; i < reference()["cases"].size(); ++i) {
    const json& c = reference()["cases"][i];
    if (std::find(ops.begin(), ops.end(), c["op"].get<std::string>()) == ops.end()) continue;
    INFO("case " << i << ": " << c["op"].get<std::string>() << " " << c["args"].dump());
    std::vector<Tensor> results = run_case(c);
    REQUIRE(results.size() == c["results"].size());
    for (std::size_t r = 0; r < results.size(); ++r) check_matches(results[r], c["results"][r]);
    ++count;
  }
  REQUIRE(count > 0);
}

Tensor floats(std::initializer_list<std::int64_t> sizes) {
  Tensor t = empty(sizes, kFloat32);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data_ptr<float>()[i] = static_cast<float>(i);
  return t;
}

}  // namespace

TEST_CASE("reduce: sum, mean and prod match PyTorch", "[reduce]") { run_reference_cases({"sum", "mean", "prod"}); }

TEST_CASE("reduce: amax and amin match PyTorch", "[reduce]") { run_reference_cases({"amax", "amin"}); }

TEST_CASE("reduce: max and min with a dim give PyTorch's values and first indices", "[reduce]") {
  run_reference_cases({"max", "min"});
}

TEST_CASE("reduce: argmax and argmin match PyTorch (ties, NaN, flattened)", "[reduce]") {
  run_reference_cases({"argmax", "argmin"});
}

TEST_CASE("reduce: softmax and log_softmax match PyTorch and stay finite", "[reduce][softmax]") {
  run_reference_cases({"softmax", "log_softmax"});
}

TEST_CASE("reduce: a long float32 sum is as accurate as PyTorch's", "[reduce][parallel]") {
  const json& info = reference()["long_sum"];
  const std::int64_t n = info["n"];
  Tensor values = empty({n}, kFloat32);
  float* data = values.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<float>((i * 37) % 101) / 64.0f;  // exact in float32
  const double torch_sum = info["sum"];
  const double sum = native::sum(values, {}, false).item<double>();
  CHECK(std::abs(sum - torch_sum) <= 1e-6 * std::abs(torch_sum));
  CHECK(std::abs(native::mean(values, {}, false).item<double>() - info["mean"].get<double>()) <= 1e-6);
  // Summing the columns of a [1000, 1000] view takes the [outer, reduce, inner] path.
  Tensor grid = make_tensor(values.storage(), {1000, 1000}, {1000, 1}, 0, kFloat32);
  Tensor column_sums = native::sum(grid, {0}, false);
  CHECK(std::abs(native::sum(column_sums, {}, false).item<double>() - torch_sum) <= 1e-6 * torch_sum);
}

// A row longer than one sum block (core/cpu/reduce_kernels.cpp, kSumBlock) is shared by the
// threads block by block; the blocks are added in order, so the bits must not depend on the
// thread count, and several rows (the per-row path) must give each row's own sum exactly.
TEST_CASE("reduce: a long sum gives the same bits on one thread and on several", "[reduce][parallel]") {
  const std::int64_t n = 100003;  // several blocks and a ragged tail
  Tensor values = empty({n}, kFloat32);
  float* data = values.data_ptr<float>();
  double exact = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    data[i] = static_cast<float>((i * 7919) % 1000 - 500) / 256.0f;  // exact in float32 and in double
    exact += data[i];
  }
  const int threads = get_num_threads();
  set_num_threads(1);
  const float serial = native::sum(values, {}, false).item<float>();
  const float serial_mean = native::mean(values, {}, false).item<float>();
  set_num_threads(std::max(threads, 2));
  const float parallel = native::sum(values, {}, false).item<float>();
  const float parallel_mean = native::mean(values, {}, false).item<float>();
  set_num_threads(threads);
  CHECK(serial == parallel);
  CHECK(serial_mean == parallel_mean);
  CHECK(serial == static_cast<float>(exact));  // every partial sum here is exact
  // Three copies of the row as a [3, n] tensor: each row's sum equals the one-row sum.
  Tensor rows = native::contiguous(native::expand(values.view({1, n}), {3, n}));
  Tensor row_sums = native::sum(rows, {1}, false);
  for (std::int64_t row = 0; row < 3; ++row) CHECK(row_sums.data_ptr<float>()[row] == serial);
}

// A sum over a leading dim (a Linear's bias gradient: [batch, features] summed over the
// batch) adds whole rows into double totals (core/cpu/reduce_kernels.cpp, add_widened_row,
// built also for AVX-512 and AVX2). Each column must be its values added in double, in row
// order, then rounded once: the values mix 2^24 with small odd ones, so float accumulation,
// a different order, or a wrong vector tail (every width 1..41 is tried) changes the bits.
TEST_CASE("reduce: a sum over the leading dim adds each column in double and in row order", "[reduce]") {
  for (std::int64_t width = 1; width <= 41; ++width) {
    const std::int64_t rows = 67;
    Tensor values = empty({rows, width}, kFloat32);
    Tensor doubles = empty({rows, width}, kFloat64);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < width; ++c) {
        const float value = (r + c) % 5 == 0 ? 16777216.0f : static_cast<float>((r * 31 + c * 17) % 13) * 0.375f - 2.0f;
        values.data_ptr<float>()[r * width + c] = value;
        doubles.data_ptr<double>()[r * width + c] = value;
      }
    Tensor sums = native::sum(values, {0}, false), means = native::mean(values, {0}, false);
    Tensor double_sums = native::sum(doubles, {0}, false);
    for (std::int64_t c = 0; c < width; ++c) {
      double exact = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) exact += values.data_ptr<float>()[r * width + c];
      INFO("width " << width << ", column " << c);
      CHECK(sums.data_ptr<float>()[c] == static_cast<float>(exact));
      CHECK(means.data_ptr<float>()[c] == static_cast<float>(exact / static_cast<double>(rows)));
      CHECK(double_sums.data_ptr<double>()[c] == exact);
    }
  }
}

TEST_CASE("reduce: allclose and equal match PyTorch", "[reduce][compare]") {
  for (const json& c : reference()["allclose"]) {
    INFO(c.dump());
    CHECK(native::allclose(testing::tensor_from_json(c["a"]), testing::tensor_from_json(c["b"]), c["rtol"], c["atol"],
                           c["equal_nan"]) == c["result"].get<bool>());
  }
  for (const json& c : reference()["equal"]) {
    INFO(c.dump());
    CHECK(native::equal(testing::tensor_from_json(c["a"]), testing::tensor_from_json(c["b"])) == c["result"].get<bool>());
  }
}

TEST_CASE("reduce: dtype errors use PyTorch's messages", "[reduce][errors]") {
  Tensor longs = native::to_dtype(floats({3}), kInt64);
  REQUIRE_THROWS_WITH(native::mean(longs, {}, false),
                      "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                      "dtype. Got: Long");
  REQUIRE_THROWS_AS(native::mean(longs, {}, false), DTypeError);
  REQUIRE_THROWS_WITH(native::mean(floats({3}), {}, false, kInt64),
                      "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
                      "dtype. Got: Long");
  REQUIRE_THROWS_WITH(native::softmax(longs, 0), "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  REQUIRE_THROWS_WITH(native::log_softmax(longs, 0), "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  Tensor flags = native::gt(floats({3}), scalar_to_tensor(0));
  REQUIRE_THROWS_WITH(native::argmin(flags, std::nullopt, false), "argmin(): does not support bool input");
  REQUIRE_THROWS_WITH(native::allclose(floats({2}), native::to_dtype(floats({2}), kFloat64), 1e-5, 1e-8, false),
                      "Float did not match Double");
  REQUIRE_THROWS_AS(native::allclose(floats({2}), longs, 1e-5, 1e-8, false), DTypeError);
  REQUIRE_THROWS_WITH(native::allclose(floats({2}), floats({3}), 1e-5, 1e-8, false),
                      "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
}

TEST_CASE("reduce: empty and dim errors use PyTorch's messages", "[reduce][errors]") {
  Tensor nothing = empty({0});
  Tensor empty_rows = empty({0, 3});
  REQUIRE_THROWS_WITH(native::amax(nothing, {}, false),
                      "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                      "dim with the 'dim' argument.");
  REQUIRE_THROWS_WITH(native::amin(nothing, {}, false),
                      "amin(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                      "dim with the 'dim' argument.");
  REQUIRE_THROWS_WITH(native::amax(empty_rows, {0}, false), "amax(): Expected reduction dim 0 to have non-zero size.");
  REQUIRE_THROWS_AS(native::amax(empty_rows, {0}, false), IndexError);
  REQUIRE_THROWS_WITH(native::max(empty_rows, 0, false), "max(): Expected reduction dim 0 to have non-zero size.");
  REQUIRE_THROWS_WITH(native::min(empty_rows, -2, true), "min(): Expected reduction dim 0 to have non-zero size.");
  REQUIRE_THROWS_WITH(native::argmax(empty_rows, std::nullopt, false),
                      "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  REQUIRE_THROWS_AS(native::argmax(empty_rows, std::nullopt, false), IndexError);
  REQUIRE_THROWS_WITH(native::argmax(empty_rows, 0, false), "argmax(): Expected reduction dim 0 to have non-zero size.");
  REQUIRE_THROWS_WITH(native::sum(floats({2, 3}), {0, 0}, false), "dim 0 appears multiple times in the list of dims");
  REQUIRE_THROWS_WITH(native::sum(floats({2, 3}), {0, -2}, false), "dim 0 appears multiple times in the list of dims");
  REQUIRE_THROWS_WITH(native::sum(floats({2, 3}), {2}, false),
                      "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  REQUIRE_THROWS_AS(native::argmax(floats({2, 3}), 5, false), IndexError);
  REQUIRE_THROWS_WITH(native::softmax(floats({2, 3}), 3),
                      "Dimension out of range (expected to be in range of [-2, 1], but got 3)");
}
