// tests/core/test_factories.cpp — ember::tensor, zeros/ones/full, arange, linspace, eye, *_like,
// empty_strided, from_blob. Dtype inference and error texts follow PyTorch; arange/linspace
// values are compared bit for bit with tests/reference/factories.json (gen_factories.py).
#include <catch2/catch.hpp>

#include <cstring>

#include <ember/core/cuda_hooks.h>
#include <ember/core/factories.h>
#include <test_support.h>

using namespace ember;
using nlohmann::json;

namespace {

template <class T>
std::vector<T> values_of(const Tensor& t) {
  REQUIRE(t.is_contiguous());
  const T* data = t.numel() == 0 ? nullptr : t.data_ptr<T>();
  return std::vector<T>(data, data + t.numel());
}

// Bit-exact comparison of a contiguous tensor with a reference tensor from JSON.
void require_same_bits(const Tensor& actual, const json& expected) {
  REQUIRE(dtype_name(actual.dtype()) == expected["dtype"].get<std::string>());
  REQUIRE(actual.sizes() == expected["shape"].get<Shape>());
  const auto& data = expected["data"];
  for (std::size_t i = 0; i < data.size(); ++i) {
    INFO("element " << i);
    EMBER_DISPATCH_ALL(actual.dtype(), {
      scalar_t got = actual.data_ptr<scalar_t>()[i];
      scalar_t want;
      if constexpr (std::is_floating_point_v<scalar_t>) want = static_cast<scalar_t>(data[i].get<double>());
      else if constexpr (std::is_same_v<scalar_t, bool>) want = data[i].get<bool>();
      else want = static_cast<scalar_t>(data[i].get<std::int64_t>());
      REQUIRE(std::memcmp(&got, &want, sizeof got) == 0);
    });
  }
}

const json& reference() {
  static const json data = testing::load_reference("factories.json");
  return data;
}

}  // namespace

TEST_CASE("tensor() infers shape and dtype like torch.tensor", "[factories]") {
  Tensor t0 = tensor(1);
  REQUIRE(t0.dim() == 0);
  REQUIRE(t0.dtype() == kInt64);
  REQUIRE(t0.item<std::int64_t>() == 1);

  Tensor t1 = tensor({1, 2, 3});
  REQUIRE(t1.sizes() == Shape{3});
  REQUIRE(t1.dtype() == kInt64);
  REQUIRE(values_of<std::int64_t>(t1) == std::vector<std::int64_t>{1, 2, 3});

  Tensor t2 = tensor({{1, 2}, {3, 4}});
  REQUIRE(t2.sizes() == Shape{2, 2});
  REQUIRE(t2.strides() == Shape{2, 1});

  Tensor t3 = tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}});
  REQUIRE(t3.sizes() == Shape{2, 2, 2});
  REQUIRE(values_of<std::int64_t>(t3) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8});

  Tensor t4 = tensor({{{{1.5}}}});
  REQUIRE(t4.sizes() == Shape{1, 1, 1, 1});
  REQUIRE(t4.dtype() == kFloat32);

  REQUIRE(tensor({1.0, 2.0, 3.0}).dtype() == kFloat32);
  REQUIRE(tensor(2.5).dtype() == kFloat32);
  REQUIRE(tensor({true, false}).dtype() == kBool);
  REQUIRE(values_of<bool>(tensor({true, false})) == std::vector<bool>{true, false});
  // Mixed categories: torch.tensor([True, 1]) is int64, [1, 2.5] and [True, 1.5] float32.
  REQUIRE(tensor({true, 1}).dtype() == kInt64);
  REQUIRE(tensor({1, 2.5}).dtype() == kFloat32);
  REQUIRE(values_of<float>(tensor({1, 2.5})) == std::vector<float>{1.0f, 2.5f});
  REQUIRE(tensor({true, 1.5}).dtype() == kFloat32);
}

TEST_CASE("tensor() honours options and handles empty lists", "[factories]") {
  Tensor as_double = tensor({1, 2}, kFloat64);
  REQUIRE(as_double.dtype() == kFloat64);
  REQUIRE(values_of<double>(as_double) == std::vector<double>{1.0, 2.0});
  // Floating values converted to an integer dtype truncate toward zero, as in PyTorch.
  REQUIRE(values_of<std::int32_t>(tensor({1.7, -1.7}, kInt32)) == std::vector<std::int32_t>{1, -1});
  REQUIRE(values_of<bool>(tensor({0, 2}, kBool)) == std::vector<bool>{false, true});

  Tensor with_grad = tensor({1.0, 2.0}, requires_grad());
  REQUIRE(with_grad.requires_grad());
  REQUIRE(with_grad.is_leaf());

  // torch.tensor([]) is a float32 tensor of shape [0]; [[], []] has shape [2, 0].
  Tensor empty_list = tensor({});
  REQUIRE(empty_list.sizes() == Shape{0});
  REQUIRE(empty_list.dtype() == kFloat32);
  Tensor empty_rows = tensor({{}, {}});
  REQUIRE(empty_rows.sizes() == Shape{2, 0});
  REQUIRE(empty_rows.numel() == 0);
}

TEST_CASE("tensor() rejects ragged nesting with PyTorch's messages", "[factories]") {
  REQUIRE_THROWS_WITH(tensor({{1, 2}, {3, 4, 5}}), "expected sequence of length 2 at dim 1 (got 3)");
  REQUIRE_THROWS_AS(tensor({{1, 2}, {3, 4, 5}}), ShapeError);
  REQUIRE_THROWS_WITH(tensor({{{1}, {2}}, {{3}, {4}, {5}}}), "expected sequence of length 2 at dim 1 (got 3)");
  REQUIRE_THROWS_WITH(tensor({{{1, 2}}, {{3}}}), "expected sequence of length 2 at dim 2 (got 1)");
  REQUIRE_THROWS_WITH(tensor({{1, 2}, 3}), "not a sequence");
  REQUIRE_THROWS_WITH(tensor({1, {2, 3}}), "'list' object cannot be interpreted as an integer");
  REQUIRE_THROWS_AS(tensor({1, {2, 3}}), ShapeError);
}

TEST_CASE("zeros, ones and full: values and dtype inference", "[factories]") {
  Tensor z = zeros({2, 3});
  REQUIRE(z.dtype() == kFloat32);
  REQUIRE(values_of<float>(z) == std::vector<float>(6, 0.0f));
  Tensor o = ones({4}, kInt64);
  REQUIRE(values_of<std::int64_t>(o) == std::vector<std::int64_t>(4, 1));
  // torch.full((2,), 3) is int64, (2,), True is bool, (2,), 3.5 is float32.
  REQUIRE(full({2}, 3).dtype() == kInt64);
  REQUIRE(full({2}, true).dtype() == kBool);
  REQUIRE(full({2}, 3.5).dtype() == kFloat32);
  REQUIRE(values_of<double>(full({3}, 3.5, kFloat64)) == std::vector<double>(3, 3.5));
  REQUIRE(zeros({}).dim() == 0);
  REQUIRE(zeros({}).item<double>() == 0.0);
  REQUIRE(ones({0, 4}).numel() == 0);
  REQUIRE(ones({2}, requires_grad()).requires_grad());
  REQUIRE_THROWS_WITH(zeros({-1, 2}), "Trying to create tensor with negative dimension -1: [-1, 2]");
  REQUIRE_THROWS_AS(zeros({-1, 2}), ShapeError);
}

TEST_CASE("*_like copy sizes, dtype and device unless told otherwise", "[factories]") {
  Tensor base = ones({2, 3}, kFloat64);
  Tensor z = zeros_like(base);
  REQUIRE(z.sizes() == Shape{2, 3});
  REQUIRE(z.dtype() == kFloat64);
  REQUIRE(values_of<double>(z) == std::vector<double>(6, 0.0));
  REQUIRE(values_of<double>(ones_like(base)) == std::vector<double>(6, 1.0));
  Tensor as_int = full_like(base, 7, kInt64);
  REQUIRE(as_int.dtype() == kInt64);
  REQUIRE(values_of<std::int64_t>(as_int) == std::vector<std::int64_t>(6, 7));
  Tensor e = empty_like(base);
  REQUIRE(e.sizes() == base.sizes());
  REQUIRE_FALSE(e.storage() == base.storage());
  REQUIRE(zeros_like(base, TensorOptions().dtype(kFloat32).requires_grad(true)).requires_grad());
  REQUIRE(zeros_like(zeros({0})).numel() == 0);
}

TEST_CASE("*_like keeps the other tensor's device unless the options name one", "[factories]") {
  // TensorOptions().dtype(kBool) names no device: ones_like(x, it) is on x's device (PyTorch).
  // It was CPU once, and clamp's backward on a GPU then mixed devices (found on an H200).
  REQUIRE_FALSE(TensorOptions().dtype(kBool).device_opt().has_value());
  REQUIRE(TensorOptions().dtype(kBool).device() == kCPU);
  REQUIRE(TensorOptions(Device("cuda:1")).device_opt() == Device("cuda:1"));
  REQUIRE(ones_like(zeros({2}), TensorOptions().dtype(kBool)).device() == kCPU);
  if (cuda::is_available()) {
    Tensor on_gpu = zeros({2}, Device("cuda"));
    REQUIRE(ones_like(on_gpu, TensorOptions().dtype(kBool)).device() == on_gpu.device());
    REQUIRE(empty_like(on_gpu, kInt64).device() == on_gpu.device());
    REQUIRE(zeros_like(on_gpu, TensorOptions().device(kCPU)).device() == kCPU);
  }
}

TEST_CASE("arange matches torch.arange bit for bit, dtype inference included", "[factories]") {
  int count = 0;
  for (const auto& item : reference()["arange"]) {
    INFO("arange" << item["args"].dump() << " dtype " << item["dtype"].dump());
    std::vector<Scalar> args;
    for (std::size_t i = 0; i < item["args"].size(); ++i) {
      if (item["int_args"][i].get<bool>()) args.emplace_back(item["args"][i].get<std::int64_t>());
      else args.emplace_back(item["args"][i].get<double>());
    }
    TensorOptions options;
    if (!item["dtype"].is_null()) options = options.dtype(testing::dtype_from_name(item["dtype"]));
    Tensor t = args.size() == 1   ? arange(args[0], options)
               : args.size() == 2 ? arange(args[0], args[1], 1, options)
                                  : arange(args[0], args[1], args[2], options);
    require_same_bits(t, item["result"]);
    ++count;
  }
  REQUIRE(count == 16);
}

TEST_CASE("arange errors use PyTorch's messages", "[factories]") {
  REQUIRE_THROWS_WITH(arange(0, 5, 0), "step must be nonzero");
  REQUIRE_THROWS_WITH(arange(0, 5, -1), "upper bound and lower bound inconsistent with step sign");
  REQUIRE_THROWS_WITH(arange(5, 0, 1), "upper bound and lower bound inconsistent with step sign");
  REQUIRE_THROWS_AS(arange(5, 0, 1), ValueError);
}

TEST_CASE("linspace matches torch.linspace bit for bit", "[factories]") {
  int count = 0;
  for (const auto& item : reference()["linspace"]) {
    INFO("linspace" << item["args"].dump() << " dtype " << item["dtype"].dump());
    TensorOptions options;
    if (!item["dtype"].is_null()) options = options.dtype(testing::dtype_from_name(item["dtype"]));
    Tensor t = linspace(item["args"][0].get<double>(), item["args"][1].get<double>(),
                        item["args"][2].get<std::int64_t>(), options);
    require_same_bits(t, item["result"]);
    ++count;
  }
  REQUIRE(count == 11);
  REQUIRE_THROWS_WITH(linspace(0, 1, -1), "number of steps must be non-negative");
}

TEST_CASE("eye builds identity matrices", "[factories]") {
  Tensor square = eye(3);
  REQUIRE(square.sizes() == Shape{3, 3});
  REQUIRE(values_of<float>(square) == std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  Tensor wide = eye(2, 4, kInt64);
  REQUIRE(values_of<std::int64_t>(wide) == std::vector<std::int64_t>{1, 0, 0, 0, 0, 1, 0, 0});
  REQUIRE(eye(0).numel() == 0);
  REQUIRE_THROWS_WITH(eye(-1), "n must be greater or equal to 0, got -1");
  REQUIRE_THROWS_WITH(eye(2, -1), "m must be greater or equal to 0, got -1");
}

TEST_CASE("empty_strided gives PyTorch's strides and storage size", "[factories]") {
  int count = 0;
  for (const auto& item : reference()["empty_strided"]) {
    INFO("empty_strided(" << item["sizes"].dump() << ", " << item["strides"].dump() << ") dtype " << item["dtype"].dump());
    const Shape sizes = item["sizes"].get<Shape>(), strides = item["strides"].get<Shape>();
    TensorOptions options;
    if (!item["dtype"].is_null()) options = options.dtype(testing::dtype_from_name(item["dtype"]));
    const Tensor t = empty_strided(sizes, strides, options);
    CHECK(t.sizes() == sizes);
    CHECK(t.strides() == item["result_strides"].get<Shape>());
    CHECK(static_cast<std::int64_t>(t.storage()->nbytes()) == item["nbytes"].get<std::int64_t>());
    CHECK(t.is_contiguous() == item["contiguous"].get<bool>());
    CHECK(dtype_name(t.dtype()) == item["dtype_out"].get<std::string>());
    CHECK(t.storage_offset() == 0);
    CHECK_FALSE(t.requires_grad());
    ++count;
  }
  REQUIRE(count == 15);
}

TEST_CASE("empty_strided: every element is addressable and the layout is the one asked for", "[factories]") {
  // A transposed layout: element (i, j) at i + 2 j, so filling it row by row and reading the
  // storage in order gives the column-major sequence.
  Tensor t = empty_strided({2, 3}, {1, 2});
  t.copy_(arange(6, kFloat32).view({2, 3}));
  const float* storage = t.data_ptr<float>();
  CHECK(std::vector<float>(storage, storage + 6) == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(values_of<float>(t.contiguous()) == std::vector<float>{0, 1, 2, 3, 4, 5});
  // Rows with a gap: the padding is storage, never an element (the last row ends the storage).
  Tensor padded = empty_strided({3, 2}, {5, 1}, kFloat64);
  CHECK(padded.storage()->nbytes() == (2 * 5 + 2) * sizeof(double));
  padded.fill_(1.5);
  CHECK(padded.sum().item<double>() == 9.0);
  // Options: dtype, requires_grad (a leaf, as torch.empty_strided(..., requires_grad=True)).
  Tensor leaf = empty_strided({2}, {3}, TensorOptions().dtype(kFloat64).requires_grad(true));
  CHECK(leaf.requires_grad());
  CHECK(leaf.is_leaf());
  CHECK(leaf.dtype() == kFloat64);
}

TEST_CASE("empty_strided errors use PyTorch's messages", "[factories]") {
  int count = 0;
  for (const auto& item : reference()["empty_strided_errors"]) {
    const Shape sizes = item["sizes"].get<Shape>(), strides = item["strides"].get<Shape>();
    INFO("empty_strided(" << item["sizes"].dump() << ", " << item["strides"].dump() << ")");
    CHECK_THROWS_WITH(empty_strided(sizes, strides), item["message"].get<std::string>());
    CHECK_THROWS_AS(empty_strided(sizes, strides), ShapeError);
    ++count;
  }
  REQUIRE(count == 7);
}

TEST_CASE("from_blob wraps caller memory without copying", "[factories]") {
  std::vector<float> buffer{1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(buffer.data(), {2, 3});
  REQUIRE(t.data_ptr() == buffer.data());
  buffer[4] = 50.0f;
  REQUIRE(t.data_ptr<float>()[4] == 50.0f);

  // Strided: a column-major 3x2 view of the same six floats.
  Tensor columns = from_blob(buffer.data(), {3, 2}, {1, 3});
  REQUIRE_FALSE(columns.is_contiguous());
  REQUIRE(columns.stride(1) == 3);

  bool deleted = false;
  {
    Tensor owned = from_blob(buffer.data(), {6}, kFloat32, [&deleted](void*) { deleted = true; });
    Tensor copy_of_handle = owned;
  }
  REQUIRE(deleted);

  std::int64_t longs[2] = {7, 8};
  REQUIRE(from_blob(longs, {2}, kInt64).data_ptr<std::int64_t>()[1] == 8);
  REQUIRE_THROWS_WITH(from_blob(buffer.data(), {2, 3}, {1}), "mismatch in length of strides and shape");
}
