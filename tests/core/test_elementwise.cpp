// tests/core/test_elementwise.cpp — native elementwise ops against PyTorch (elementwise.json).
//
// The reference cases come from tests/reference/gen_elementwise.py: each names an op, its
// operands (possibly a transposed or strided view, or a wrapped number) and PyTorch's result,
// whose shape, dtype and values must all match. Error cases check PyTorch's wording.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <ember/autograd/ops.h>
#include <ember/core/native.h>
#include <ember/core/parallel.h>
#include <ember/core/type_promotion.h>

#include "test_support.h"

using namespace ember;
using nlohmann::json;

namespace {

Scalar scalar_from_json(const json& value) {
  if (value.is_boolean()) return Scalar(value.get<bool>());
  if (value.is_number_integer()) return Scalar(value.get<std::int64_t>());
  return Scalar(value.get<double>());
}

// The stored tensor seen through the layout the generator describes (a view, no copy).
Tensor apply_layout(const Tensor& stored, const json& operand) {
  if (!operand.contains("layout")) return stored;
  const std::string layout = operand["layout"];
  if (layout == "expand") return native::expand(stored, operand["expand"].get<Shape>());  // stride 0
  Shape sizes = stored.sizes(), strides = stored.strides();
  if (layout == "t") {
    std::swap(sizes[0], sizes[1]);
    std::swap(strides[0], strides[1]);
  } else {  // "step2": every second element of the last dim
    sizes.back() /= 2;
    strides.back() *= 2;
  }
  return make_tensor(stored.storage(), sizes, strides, stored.storage_offset(), stored.dtype());
}

Tensor operand_from_json(const json& operand) {
  if (operand.contains("scalar")) return scalar_to_tensor(scalar_from_json(operand["scalar"]));
  return apply_layout(testing::tensor_from_json(operand), operand);
}

// Same shape, same dtype, same values (NaN matches NaN; floats to a few float32 ulps).
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
      CHECK(std::abs(got[i] - want[i]) <= 1e-6 + 2e-6 * std::abs(want[i]));
    }
  }
}

std::optional<Scalar> optional_scalar(const json& value) {
  if (value.is_null()) return std::nullopt;
  return scalar_from_json(value);
}

// add/sub/mul/div with a plain C++ number ("add_scalar_fn": tensor first, through the free
// function and the method, which must agree; "radd_scalar_fn": the number first).
Tensor run_number_case(const json& c, const std::string& name, Scalar alpha) {
  const bool number_first = name[0] == 'r';
  const std::string op = number_first ? name.substr(1) : name;
  const json& tensor_operand = c["args"][number_first ? 1 : 0];
  const Scalar number = scalar_from_json(c["args"][number_first ? 0 : 1]["scalar"]);
  Tensor t = operand_from_json(tensor_operand);
  if (number_first) {
    if (op == "add") return ember::add(number, t, alpha);
    if (op == "sub") return ember::sub(number, t, alpha);
    if (op == "mul") return ember::mul(number, t);
    return ember::div(number, t);
  }
  Tensor by_function, by_method;
  if (op == "add") {
    by_function = ember::add(t, number, alpha);
    by_method = t.add(number, alpha);
  } else if (op == "sub") {
    by_function = ember::sub(t, number, alpha);
    by_method = t.sub(number, alpha);
  } else if (op == "mul") {
    by_function = ember::mul(t, number);
    by_method = t.mul(number);
  } else {
    by_function = ember::div(t, number);
    by_method = t.div(number);
  }
  REQUIRE(by_method.dtype() == by_function.dtype());
  REQUIRE(native::equal(by_method, by_function));
  return by_function;
}

// Runs one reference case through ember::native; returns the tensor to compare.
Tensor run_case(const json& c) {
  const std::string op = c["op"];
  const std::string number_suffix = "_scalar_fn";
  if (op.ends_with(number_suffix)) {
    return run_number_case(c, op.substr(0, op.size() - number_suffix.size()),
                           c.contains("alpha") ? scalar_from_json(c["alpha"]) : Scalar(1));
  }
  std::vector<Tensor> args;
  for (const json& a : c["args"]) args.push_back(operand_from_json(a));
  Scalar alpha = c.contains("alpha") ? scalar_from_json(c["alpha"]) : Scalar(1);
  if (op == "add") return native::add(args[0], args[1], alpha);
  if (op == "sub") return native::sub(args[0], args[1], alpha);
  if (op == "mul") return native::mul(args[0], args[1]);
  if (op == "div") return native::div(args[0], args[1]);
  if (op == "pow") return native::pow(args[0], args[1]);
  if (op == "maximum") return native::maximum(args[0], args[1]);
  if (op == "minimum") return native::minimum(args[0], args[1]);
  if (op == "eq") return native::eq(args[0], args[1]);
  if (op == "ne") return native::ne(args[0], args[1]);
  if (op == "lt") return native::lt(args[0], args[1]);
  if (op == "le") return native::le(args[0], args[1]);
  if (op == "gt") return native::gt(args[0], args[1]);
  if (op == "ge") return native::ge(args[0], args[1]);
  if (op == "logical_and") return native::logical_and(args[0], args[1]);
  if (op == "neg") return native::neg(args[0]);
  if (op == "exp") return native::exp(args[0]);
  if (op == "log") return native::log(args[0]);
  if (op == "sqrt") return native::sqrt(args[0]);
  if (op == "abs") return native::abs(args[0]);
  if (op == "sign") return native::sign(args[0]);
  if (op == "sigmoid") return native::sigmoid(args[0]);
  if (op == "tanh") return native::tanh(args[0]);
  if (op == "relu") return native::relu(args[0]);
  if (op == "clamp") return native::clamp(args[0], optional_scalar(c["min"]), optional_scalar(c["max"]));
  if (op == "pow_scalar") return native::pow(args[0], scalar_from_json(c["exponent"]));
  if (op == "where") return native::where(args[0], args[1], args[2]);
  if (op == "to_dtype") return native::to_dtype(args[0], testing::dtype_from_name(c["dtype"]));
  if (op == "contiguous") return native::contiguous(args[0]);
  if (op == "clone") return native::clone(args[0]);
  // In place: the result is self itself.
  if (op == "add_") native::add_(args[0], args[1], alpha);
  else if (op == "sub_") native::sub_(args[0], args[1], alpha);
  else if (op == "mul_") native::mul_(args[0], args[1]);
  else if (op == "div_") native::div_(args[0], args[1]);
  else FAIL("unknown op " << op);
  return args[0];
}

void run_reference_cases(const std::vector<std::string>& ops) {
  static const json reference = testing::load_reference("elementwise.json");
  int count = 0;
  for (std::size_t i = 0; i < reference["cases"].size(); ++i) {
    const json& c = reference["cases"][i];
    if (std::find(ops.begin(), ops.end(), c["op"].get<std::string>()) == ops.end()) continue;
    INFO("case " << i << ": " << c["op"].get<std::string>());
    check_matches(run_case(c), c["result"]);
    ++count;
  }
  REQUIRE(count > 0);
}

Tensor floats(std::initializer_list<std::int64_t> sizes, double start = 0.0) {
  Tensor t = empty(sizes, kFloat32);
  float* data = t.data_ptr<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) data[i] = static_cast<float>(start + static_cast<double>(i));
  return t;
}

}  // namespace

TEST_CASE("elementwise: arithmetic matches PyTorch", "[elementwise]") {
  run_reference_cases({"add", "sub", "mul", "div", "pow", "maximum", "minimum"});
}

TEST_CASE("elementwise: comparisons and logical_and return bool like PyTorch", "[elementwise]") {
  run_reference_cases({"eq", "ne", "lt", "le", "gt", "ge", "logical_and"});
}

TEST_CASE("elementwise: unary math matches PyTorch", "[elementwise]") {
  run_reference_cases({"neg", "exp", "log", "sqrt", "abs", "sign", "sigmoid", "tanh", "relu"});
}

TEST_CASE("elementwise: clamp, pow with a scalar and where match PyTorch", "[elementwise]") {
  run_reference_cases({"clamp", "pow_scalar", "where"});
}

TEST_CASE("elementwise: casts, contiguous copies and clones match PyTorch", "[elementwise][copy]") {
  // to_dtype: every dtype pair's conversion rule (truncation, uint8 wrap-around, NaN -> true),
  // on plain, transposed, 0-d, empty and broadcast (stride-0) sources.
  run_reference_cases({"to_dtype", "contiguous", "clone"});
}

TEST_CASE("elementwise: in-place ops match PyTorch", "[elementwise]") {
  run_reference_cases({"add_", "sub_", "mul_", "div_"});
}

TEST_CASE("elementwise: add/sub/mul/div with a number, as functions and methods, match PyTorch",
          "[elementwise][scalar]") {
  run_reference_cases({"add_scalar_fn", "sub_scalar_fn", "mul_scalar_fn", "div_scalar_fn", "radd_scalar_fn",
                       "rsub_scalar_fn", "rmul_scalar_fn", "rdiv_scalar_fn"});
}

TEST_CASE("elementwise: a number keeps the tensor's dtype unless its category is higher", "[elementwise][scalar]") {
  Tensor longs = native::to_dtype(floats({3}), kInt64);
  CHECK(ember::mul(longs, 2.5).dtype() == kFloat32);  // int tensor * 2.5 -> default float
  CHECK(ember::mul(longs, 2).dtype() == kInt64);
  CHECK(longs.add(true).dtype() == kInt64);
  CHECK(ember::div(longs, 2).dtype() == kFloat32);     // true division
  Tensor doubles = native::to_dtype(floats({3}), kFloat64);
  CHECK(ember::sub(2.5, doubles).dtype() == kFloat64);
  CHECK(floats({3}).mul(2.5).dtype() == kFloat32);     // the number is float64, the tensor wins
  CHECK_FALSE(ember::add(floats({3}), 1).is_wrapped_number());
}

TEST_CASE("elementwise: number overloads use PyTorch's messages", "[elementwise][scalar][errors]") {
  Tensor longs = native::to_dtype(floats({3}), kInt64);
  Tensor flags = native::gt(floats({3}), scalar_to_tensor(0.5));
  REQUIRE_THROWS_WITH(ember::add(longs, 2, 2.5),
                      "For integral input tensors, argument alpha must not be a floating point number.");
  REQUIRE_THROWS_WITH(ember::sub(2, longs, 0.5),
                      "For integral input tensors, argument alpha must not be a floating point number.");
  REQUIRE_THROWS_WITH(floats({3}).add(1, true), "Boolean alpha only supported for Boolean results.");
  REQUIRE_THROWS_AS(ember::sub(longs, 1, true), DTypeError);
  REQUIRE_NOTHROW(ember::add(flags, true, true));  // bool + bool with a bool alpha is allowed
  REQUIRE_THROWS_WITH(flags.sub(true),
                      "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                      "`logical_xor()` operator instead.");
}

TEST_CASE("elementwise: in-place ops on a 0-d self keep its shape", "[elementwise][errors]") {
  Tensor zero_d = scalar_to_tensor(1.5);
  Tensor self = native::to_dtype(zero_d, kFloat32);
  REQUIRE_THROWS_WITH(native::add_(self, floats({1})), "output with shape [] doesn't match the broadcast shape [1]");
  REQUIRE_THROWS_AS(native::mul_(self, floats({2})), ShapeError);
  Tensor integer = scalar_to_tensor(3);
  REQUIRE_THROWS_WITH(native::div_(integer, scalar_to_tensor(2)),
                      "result type Float can't be cast to the desired output type Long");
  native::add_(self, scalar_to_tensor(2));
  CHECK(self.dim() == 0);
  CHECK(self.item<double>() == 3.5);
}

TEST_CASE("elementwise: in-place ops write into self and bump its version", "[elementwise]") {
  Tensor self = floats({2, 3});
  const void* data = self.data_ptr();
  std::uint64_t before = self.version();
  native::add_(self, floats({3}));
  CHECK(self.data_ptr() == data);
  CHECK(self.version() > before);
  before = self.version();
  native::mul_(self, scalar_to_tensor(2));
  CHECK(self.version() > before);
}

TEST_CASE("elementwise: dtype errors use PyTorch's messages", "[elementwise][errors]") {
  Tensor b = native::gt(floats({3}), scalar_to_tensor(0.5));  // bool [F, T, T]
  Tensor longs = native::to_dtype(floats({3}), kInt64);
  REQUIRE_THROWS_WITH(native::neg(b),
                      "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                      "mask, use the `~` or `logical_not()` operator instead.");
  REQUIRE_THROWS_AS(native::neg(b), DTypeError);
  REQUIRE_THROWS_WITH(native::sub(b, b),
                      "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                      "`logical_xor()` operator instead.");
  REQUIRE_THROWS_WITH(native::sub(floats({3}), b),
                      "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                      "invert a mask, use the `~` or `logical_not()` operator instead.");
  REQUIRE_THROWS_WITH(native::abs(b), "\"abs_cpu\" not implemented for 'Bool'");
  REQUIRE_THROWS_WITH(native::relu(b), "Boolean inputs not supported for relu");
  REQUIRE_THROWS_WITH(native::add(longs, longs, 0.5),
                      "For integral input tensors, argument alpha must not be a floating point number.");
  REQUIRE_THROWS_WITH(native::pow(longs, -1), "Integers to negative integer powers are not allowed.");
  REQUIRE_THROWS_AS(native::pow(longs, -1), ValueError);
  REQUIRE_THROWS_WITH(native::clamp(floats({3}), std::optional<Scalar>(), std::optional<Scalar>()),
                      "torch.clamp: At least one of 'min' or 'max' must not be None");
  REQUIRE_THROWS_WITH(native::where(floats({3}), floats({3}), floats({3})),
                      "where expected condition to be a boolean tensor, but got a tensor with dtype Float");
  REQUIRE_THROWS_AS(native::where(longs, floats({3}), floats({3})), DTypeError);
}

TEST_CASE("elementwise: in-place errors use PyTorch's messages", "[elementwise][errors]") {
  Tensor longs = native::to_dtype(floats({2}), kInt64);
  REQUIRE_THROWS_WITH(native::add_(longs, floats({2})), "result type Float can't be cast to the desired output type Long");
  REQUIRE_THROWS_WITH(native::div_(longs, longs), "result type Float can't be cast to the desired output type Long");
  Tensor flags = native::gt(floats({2}), scalar_to_tensor(0));
  REQUIRE_THROWS_WITH(native::mul_(flags, longs), "result type Long can't be cast to the desired output type Bool");
  REQUIRE_THROWS_AS(native::mul_(flags, longs), DTypeError);
  REQUIRE_THROWS_WITH(native::add_(floats({3}), floats({2, 3})), "output with shape [3] doesn't match the broadcast shape [2, 3]");
  REQUIRE_THROWS_AS(native::sub_(floats({3}), floats({2, 3})), ShapeError);
  std::uint64_t version = longs.version();
  CHECK_THROWS(native::add_(longs, floats({2})));
  CHECK(longs.version() == version);  // a refused op writes nothing
}

TEST_CASE("elementwise: in-place ops refuse self-overlapping outputs", "[elementwise][errors]") {
  Tensor row = floats({3});
  Tensor expanded = make_tensor(row.storage(), {2, 3}, {0, 1}, 0, kFloat32);  // row.expand({2, 3})
  const char* message =
      "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
      "Please clone() the tensor before performing the operation.";
  REQUIRE_THROWS_WITH(native::add_(expanded, scalar_to_tensor(1)), message);
  REQUIRE_THROWS_WITH(native::copy_(expanded, floats({2, 3})), message);
  REQUIRE_THROWS_AS(native::mul_(expanded, floats({2, 3})), ValueError);
  REQUIRE_NOTHROW(native::fill_(expanded, 4.0));  // one value everywhere: PyTorch allows it
  CHECK(testing::to_vector(row) == std::vector<double>{4, 4, 4});
  Tensor single = make_tensor(row.storage(), {1, 1}, {0, 0}, 0, kFloat32);  // size-1 dims never overlap
  REQUIRE_NOTHROW(native::add_(single, scalar_to_tensor(1)));
}

TEST_CASE("elementwise: broadcasting errors use PyTorch's messages", "[elementwise][errors]") {
  REQUIRE_THROWS_WITH(native::add(floats({2, 3}), floats({2})),
                      "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1");
  REQUIRE_THROWS_AS(native::mul(floats({4}), floats({3})), ShapeError);
  REQUIRE_THROWS_AS(native::where(native::gt(floats({4}), scalar_to_tensor(1)), floats({3}), floats({4})), ShapeError);
}

TEST_CASE("elementwise: mixed devices are refused, CPU scalars are allowed", "[elementwise][device]") {
  // A tensor that *claims* to live on cuda:0 (its storage is really host memory we own). Only
  // the device check runs here: it throws before any kernel could touch the memory.
  static float host_memory[3] = {1, 2, 3};
  auto storage = std::make_shared<StorageImpl>(host_memory, sizeof(host_memory), Device(DeviceType::CUDA, 0),
                                               std::function<void(void*)>());
  Tensor on_cuda = make_tensor(storage, {3}, {1}, 0, kFloat32);
  const char* message = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!";
  REQUIRE_THROWS_WITH(native::check_same_device(on_cuda, floats({3})), message);
  REQUIRE_THROWS_WITH(native::check_same_device(floats({3}), on_cuda), message);
  REQUIRE_THROWS_AS(native::add(floats({3}), on_cuda), DeviceError);
  REQUIRE_THROWS_AS(native::add_(floats({3}), on_cuda), DeviceError);
  REQUIRE_NOTHROW(native::check_same_device(on_cuda, scalar_to_tensor(2.0)));
  REQUIRE_NOTHROW(native::check_same_device(on_cuda, on_cuda));
  REQUIRE_NOTHROW(native::check_same_device(floats({3}), floats({2})));
}

TEST_CASE("elementwise: large tensors give the same result on one thread and many", "[elementwise][parallel]") {
  // 300000 elements (several grains) through a transposed, broadcasting, casting op.
  Tensor a = floats({600, 500}, -1000.0);
  Tensor a_t = make_tensor(a.storage(), {500, 600}, {1, 500}, 0, kFloat32);
  Tensor b = native::to_dtype(floats({600}, 1.0), kInt64);
  Tensor parallel_result = native::sigmoid(native::div(a_t, b));
  int threads = get_num_threads();
  set_num_threads(1);
  Tensor serial_result = native::sigmoid(native::div(a_t, b));
  set_num_threads(threads);
  REQUIRE(native::equal(parallel_result, serial_result));
  CHECK(parallel_result.dtype() == kFloat32);
}

TEST_CASE("elementwise: outputs too large for the caches are streamed and exact", "[elementwise][parallel]") {
  // A new output of at least 32 MiB is written with non-temporal stores through a staging
  // block (core/cpu/elementwise_kernels.cpp). 9000003 floats over 3 threads: the chunks start
  // off a 16-byte boundary (element 3000001), so the unaligned head, whole blocks and the
  // tail all run; binary, unary and casting loops; in place is written the ordinary way.
  const int threads = get_num_threads();
  set_num_threads(3);
  const std::int64_t n = 9000003;
  Tensor a = empty({n}, kFloat32), b = empty({n}, kFloat32), whole = empty({n}, kInt32);
  float* a_data = a.data_ptr<float>();
  float* b_data = b.data_ptr<float>();
  std::int32_t* whole_data = whole.data_ptr<std::int32_t>();
  for (std::int64_t i = 0; i < n; ++i) {
    a_data[i] = static_cast<float>(i % 1000) * 0.5f - 200.0f;
    b_data[i] = static_cast<float>(i % 7) - 3.0f;
    whole_data[i] = static_cast<std::int32_t>(i % 100003) - 50000;
  }
  const Tensor sum = native::add(a, b), rectified = native::relu(a), converted = native::to_dtype(whole, kFloat32);
  const float* sum_data = sum.data_ptr<float>();
  const float* rectified_data = rectified.data_ptr<float>();
  const float* converted_data = converted.data_ptr<float>();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    wrong += sum_data[i] != a_data[i] + b_data[i];
    wrong += rectified_data[i] != std::max(a_data[i], 0.0f);
    wrong += converted_data[i] != static_cast<float>(whole_data[i]);
  }
  CHECK(wrong == 0);
  // In place (an input is the output): not streamed, same values.
  Tensor in_place = native::clone(a);
  native::add_(in_place, b);
  CHECK(native::equal(in_place, sum));
  set_num_threads(threads);
}
