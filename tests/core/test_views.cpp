// tests/core/test_views.cpp — views (core/views.cpp) against PyTorch's sizes, strides,
// offsets and values (tests/reference/views.json, from gen_views.py), plus storage sharing
// and every error message.
#include <catch2/catch.hpp>

#include <optional>
#include <sstream>

#include <ember/core/native.h>

#include "test_support.h"

namespace {

using namespace ember;
using nlohmann::json;

// A float32 base holding 0, 1, 2, ... in row-major order, optionally permuted: the same
// base gen_views.py builds. Filled by hand so the test needs no factory.
Tensor make_base(const Shape& shape, const json& permute) {
  Tensor base = empty(shape, kFloat32);
  auto* data = base.data_ptr<float>();
  for (std::int64_t i = 0; i < base.numel(); ++i) data[i] = static_cast<float>(i);
  if (!permute.is_null()) base = native::permute(base, permute.get<Shape>());
  return base;
}

// The values of a CPU tensor of any strides, in row-major order (reads memory directly).
std::vector<double> strided_values(const Tensor& t) {
  std::vector<double> values;
  const std::int64_t numel = t.numel();
  const auto* data = static_cast<const float*>(t.data_ptr());
  for (std::int64_t linear = 0; linear < numel; ++linear) {
    std::int64_t rest = linear, offset = 0;
    for (std::int64_t d = t.dim() - 1; d >= 0; --d) {
      offset += (rest % t.sizes()[d]) * t.strides()[d];
      rest /= t.sizes()[d];
    }
    values.push_back(data[offset]);
  }
  return values;
}

std::optional<std::int64_t> optional_int(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::int64_t>();
}

// Runs the view op named in a reference case (the names of gen_views.py's apply()).
Tensor apply(const Tensor& x, const std::string& op, const json& args) {
  if (op == "view") return native::view(x, args.get<Shape>());
  if (op == "reshape") return native::reshape(x, args.get<Shape>());
  if (op == "transpose") return native::transpose(x, args[0], args[1]);
  if (op == "t") return native::t(x);
  if (op == "permute") return native::permute(x, args.get<Shape>());
  if (op == "T") {  // Tensor::T(): a permute with the dims backwards
    Shape backwards(static_cast<std::size_t>(x.dim()));
    for (std::int64_t d = 0; d < x.dim(); ++d) backwards[static_cast<std::size_t>(d)] = x.dim() - 1 - d;
    return native::permute(x, backwards);
  }
  if (op == "squeeze") return args.empty() ? native::squeeze(x) : native::squeeze(x, args[0].get<std::int64_t>());
  if (op == "unsqueeze") return native::unsqueeze(x, args[0]);
  if (op == "flatten") {
    std::int64_t start = args.size() > 0 ? args[0].get<std::int64_t>() : 0;
    std::int64_t end = args.size() > 1 ? args[1].get<std::int64_t>() : -1;
    return native::flatten(x, start, end);
  }
  if (op == "expand") return native::expand(x, args.get<Shape>());
  if (op == "select") return native::select(x, args[0], args[1]);
  if (op == "narrow") return native::narrow(x, args[0], args[1], args[2]);
  if (op == "slice") return native::slice(x, args[0], optional_int(args[1]), optional_int(args[2]), args[3]);
  if (op == "as_strided") return native::as_strided(x, args[0].get<Shape>(), args[1].get<Shape>(), args[2]);
  if (op == "alias") return native::alias(x);
  throw std::runtime_error("unknown op in views.json: " + op);
}

std::string describe(const json& c) {
  std::ostringstream text;
  text << c["op"].get<std::string>() << c["args"].dump() << " on " << c["base_shape"].dump() << " permuted "
       << c["base_permute"].dump();
  return text.str();
}

}  // namespace

TEST_CASE("views match PyTorch's sizes, strides, offsets and values", "[views]") {
  const json reference = testing::load_reference("views.json");
  REQUIRE(reference["cases"].size() > 50);
  for (const json& c : reference["cases"]) {
    INFO(describe(c));
    Tensor base = make_base(c["base_shape"].get<Shape>(), c["base_permute"]);
    Tensor out = apply(base, c["op"], c["args"]);
    CHECK(out.sizes() == c["shape"].get<Shape>());
    CHECK(out.dtype() == kFloat32);
    CHECK_FALSE(out.is_wrapped_number());
    CHECK(out.autograd_meta() == nullptr);
    CHECK(strided_values(out) == c["values"]["data"].get<std::vector<double>>());
    const bool shares = out.storage() == base.storage();
    CHECK(shares == c["shares_storage"].get<bool>());
    // A copy (reshape of an incompatible layout) has its own fresh strides; views must
    // have exactly PyTorch's strides and offset.
    if (shares) {
      CHECK(out.strides() == c["stride"].get<Shape>());
      CHECK(out.storage_offset() == c["storage_offset"].get<std::int64_t>());
    }
  }
}

TEST_CASE("view errors use PyTorch's messages", "[views]") {
  const json reference = testing::load_reference("views.json");
  REQUIRE(reference["errors"].size() > 20);
  for (const json& c : reference["errors"]) {
    INFO(describe(c));
    Tensor base = make_base(c["base_shape"].get<Shape>(), c["base_permute"]);
    REQUIRE_THROWS_WITH(apply(base, c["op"], c["args"]), c["message"].get<std::string>());
    REQUIRE_THROWS_AS(apply(base, c["op"], c["args"]), ember::Error);
  }
}

TEST_CASE("view errors are the precise ember subclasses", "[views]") {
  Tensor x = make_base({2, 3}, nullptr);
  REQUIRE_THROWS_AS(native::view(native::t(x), {6}), ShapeError);
  REQUIRE_THROWS_AS(native::expand(x, {2, 4}), ShapeError);
  REQUIRE_THROWS_AS(native::select(x, 0, 5), IndexError);
  REQUIRE_THROWS_AS(native::transpose(x, 0, 2), IndexError);
  REQUIRE_THROWS_AS(native::slice(x, 0, 0, 1, 0), ValueError);
  REQUIRE_THROWS_AS(native::permute(x, {0, 0}), ValueError);
}

TEST_CASE("writing through a view changes the base and the other way round", "[views]") {
  Tensor base = make_base({3, 4}, nullptr);
  Tensor row = native::select(base, 0, 1);                     // base[1]
  Tensor column = native::select(native::t(base), 0, 2);       // base[:, 2]
  Tensor strided = native::slice(base, 1, 1, std::nullopt, 2); // base[:, 1::2]
  row.data_ptr<float>()[0] = 100.0f;                           // base[1, 0]
  CHECK(base.data_ptr<float>()[4] == 100.0f);
  // column[2] is base[2, 2] = element 10; strided[2, 1] is base[2, 3] = element 11.
  base.data_ptr<float>()[10] = -1.0f;
  CHECK(strided_values(column)[2] == -1.0);
  base.data_ptr<float>()[11] = -2.0f;
  CHECK(strided_values(strided)[5] == -2.0);
  // Chains of views keep pointing at the same storage.
  Tensor chain = native::unsqueeze(native::view(native::squeeze(native::unsqueeze(base, 0)), {2, 6}), 1);
  CHECK(chain.storage() == base.storage());
  CHECK(chain.sizes() == Shape{2, 1, 6});
}

TEST_CASE("expand broadcasts with stride 0 and shares memory", "[views]") {
  Tensor v = make_base({3}, nullptr);
  Tensor wide = native::expand(v, {4, 3});
  CHECK(wide.strides() == Shape{0, 1});
  v.data_ptr<float>()[1] = 42.0f;
  std::vector<double> values = strided_values(wide);
  for (int r = 0; r < 4; ++r) CHECK(values[r * 3 + 1] == 42.0);
}

TEST_CASE("reshape returns a view when it can and an independent copy when it must", "[views]") {
  Tensor base = make_base({4, 6}, nullptr);
  Tensor as_view = native::reshape(base, {2, 12});
  CHECK(as_view.storage() == base.storage());
  Tensor transposed = native::t(base);
  Tensor copied = native::reshape(transposed, {24});
  CHECK(copied.storage() != base.storage());
  CHECK(copied.is_contiguous());
  base.data_ptr<float>()[0] = 7.0f;  // the copy does not follow later writes
  CHECK(copied.data_ptr<float>()[0] == 0.0f);
  // torch: torch.arange(24.).reshape(4, 6).t().reshape(24)[:4] == [0, 6, 12, 18]
  CHECK(copied.data_ptr<float>()[1] == 6.0f);
  CHECK(copied.data_ptr<float>()[3] == 18.0f);
}

TEST_CASE("views keep the dtype of any element type", "[views]") {
  Tensor ints = empty({2, 3}, kInt64);
  for (std::int64_t i = 0; i < 6; ++i) ints.data_ptr<std::int64_t>()[i] = i;
  Tensor tr = native::t(ints);
  CHECK(tr.dtype() == kInt64);
  CHECK(tr.sizes() == Shape{3, 2});
  Tensor column = native::select(tr, 0, 2);  // ints[:, 2] = [2, 5]
  CHECK(column.data_ptr<std::int64_t>()[0] == 2);
  CHECK(column.data_ptr<std::int64_t>()[column.stride(0)] == 5);
}
