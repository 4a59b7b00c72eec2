// tests/core/test_reduced_float.cpp — bfloat16 and float16 against PyTorch (issue 22).
//
// The values come from tests/reference/gen_reduced_float.py: the rounding of float32,
// float64 and int64 values to 16 bits (bit for bit), type promotion, elementwise ops,
// reductions and matrix products on 16-bit tensors, printing and errors. Every op runs on
// the fast loops and on the reference loops (EMBER_KERNELS=reference) alike.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/element_functions.h>
#include <ember/core/factories.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/layer_norm.h>
#include <ember/core/native.h>
#include <ember/core/print.h>
#include <ember/core/random.h>
#include <ember/core/reduced_float.h>
#include <ember/core/sampling.h>
#include <ember/core/type_promotion.h>

#include "reduced_float_cases.h"
#include "test_support.h"

using namespace ember;
using nlohmann::json;
using testing::expected_elementwise;
using testing::elementwise_ulps;
using testing::on_both_paths;
using testing::require_matches;
using testing::run_elementwise;

namespace {

const json& reference() { return testing::reduced_float_reference(); }

std::uint16_t bits_of(BFloat16 value) { return value.bits; }
std::uint16_t bits_of(Half value) { return value.bits; }

// The bits of a 16-bit tensor's elements, in row-major order.
std::vector<std::uint16_t> bits16(const Tensor& tensor) {
  const Tensor dense = native::contiguous(tensor);
  const auto* data = static_cast<const std::uint16_t*>(dense.data_ptr());
  return {data, data + dense.numel()};
}

}  // namespace

TEST_CASE("16-bit floats: the dtype table", "[reduced_float]") {
  CHECK(itemsize(kBFloat16) == 2);
  CHECK(itemsize(kFloat16) == 2);
  CHECK(dtype_name(kBFloat16) == "bfloat16");
  CHECK(dtype_name(kHalf) == "float16");
  CHECK(scalar_type_name(kFloat16) == "Half");
  CHECK(scalar_type_name(kBFloat16) == "BFloat16");
  CHECK(is_floating_point(kBFloat16));
  CHECK(is_reduced_floating_point(kFloat16));
  CHECK_FALSE(is_reduced_floating_point(kFloat32));
  CHECK_FALSE(is_integral(kBFloat16));
  CHECK(dtype_of_v<BFloat16> == kBFloat16);
  CHECK(dtype_of_v<Half> == kFloat16);
}

TEST_CASE("16-bit floats: float32 rounds to nearest even, as PyTorch rounds it", "[reduced_float]") {
  const json& conversions = reference()["conversions"];
  const auto inputs = conversions["float32_bits"].get<std::vector<std::uint32_t>>();
  const auto bfloat16 = conversions["bfloat16"].get<std::vector<std::uint16_t>>();
  const auto float16 = conversions["float16"].get<std::vector<std::uint16_t>>();
  REQUIRE(inputs.size() > 300);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const float value = reduced_float::float_from_bits(inputs[i]);
    INFO("float32 bits 0x" << std::hex << inputs[i]);
    CHECK(bits_of(BFloat16(value)) == bfloat16[i]);
    CHECK(bits_of(Half(value)) == float16[i]);
  }
  // The same through a tensor cast, on both paths.
  Tensor source = empty({static_cast<std::int64_t>(inputs.size())}, kFloat32);
  for (std::size_t i = 0; i < inputs.size(); ++i) source.data_ptr<float>()[i] = reduced_float::float_from_bits(inputs[i]);
  on_both_paths([&] {
    CHECK(bits16(native::to_dtype(source, kBFloat16)) == bfloat16);
    CHECK(bits16(native::to_dtype(source, kFloat16)) == float16);
  });
}

TEST_CASE("16-bit floats: NaN stays NaN (quiet), with float16 keeping its sign", "[reduced_float]") {
  const float nan = std::nanf(""), negative_nan = -std::nanf("");
  CHECK(bits_of(BFloat16(nan)) == 0x7FC0);
  CHECK(bits_of(Half(nan)) == 0x7E00);
  CHECK(bits_of(Half(negative_nan)) == 0xFE00);
  CHECK(std::isnan(static_cast<float>(BFloat16::from_bits(0xFF81))));
  // A signalling float16 NaN widens to a quiet float NaN with its payload.
  CHECK(reduced_float::bits_of(static_cast<float>(Half::from_bits(0x7C01))) == 0x7FC02000u);
}

TEST_CASE("16-bit floats: copies and fills keep the bits, NaN payloads included, as PyTorch's copy_", "[reduced_float]") {
  // A same-dtype copy moves bits (PyTorch's copy kernel returns the element unchanged); a
  // trip through float would turn every NaN into the canonical one. Strided copies and the
  // contiguous fast path alike, on both kernel paths.
  on_both_paths([&] {
    for (DType dtype : {kBFloat16, kFloat16}) {
      INFO(dtype_name(dtype));
      const std::vector<std::uint16_t> patterns = {0x7FC1, 0xFFFF, 0x7C01, 0x8000, 0x3F80, 0x7E55};
      Tensor source = empty({2, 3}, dtype);
      std::memcpy(source.data_ptr(), patterns.data(), patterns.size() * sizeof(std::uint16_t));
      const Tensor transposed = native::contiguous(native::transpose(source, 0, 1));  // a strided copy
      const Tensor back = native::contiguous(native::transpose(transposed, 0, 1));
      CHECK(bits16(back) == patterns);
      Tensor filled = empty({37}, dtype);
      native::fill_(filled, -0.0);
      CHECK(bits16(filled) == std::vector<std::uint16_t>(37, 0x8000));
      native::fill_(filled, 1.5);
      CHECK(bits16(filled) == std::vector<std::uint16_t>(37, dtype == kBFloat16 ? 0x3FC0 : 0x3E00));
    }
  });
}

TEST_CASE("16-bit floats: every 16-bit value survives the round trip through float", "[reduced_float]") {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto pattern = static_cast<std::uint16_t>(bits);
    const float wide_bfloat16 = BFloat16::from_bits(pattern), wide_half = Half::from_bits(pattern);
    if (!std::isnan(wide_bfloat16)) REQUIRE(bits_of(BFloat16(wide_bfloat16)) == pattern);
    if (!std::isnan(wide_half)) REQUIRE(bits_of(Half(wide_half)) == pattern);
  }
  // float16's extremes: the largest finite value, the smallest normal and subnormal.
  CHECK(static_cast<float>(Half::from_bits(0x7BFF)) == 65504.0f);
  CHECK(static_cast<float>(Half::from_bits(0x0400)) == std::ldexp(1.0f, -14));
  CHECK(static_cast<float>(Half::from_bits(0x0001)) == std::ldexp(1.0f, -24));
}

TEST_CASE("16-bit floats: tensor casts (the F16C runs) give the element function's bits", "[reduced_float]") {
  // Every float16 pattern widened, and a million random float32 patterns (NaNs with payloads,
  // subnormals, overflow among them) narrowed, through the fast loops' vectorised runs
  // (core/cpu/half_conversions_f16c.cpp where the CPU has F16C), against the scalar conversion.
  Tensor halves = empty({65536}, kFloat16);
  for (std::uint32_t bits = 0; bits < 65536; ++bits)
    static_cast<std::uint16_t*>(halves.data_ptr())[bits] = static_cast<std::uint16_t>(bits);
  const Tensor widened = native::to_dtype(halves, kFloat32);
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    INFO("float16 bits 0x" << std::hex << bits);
    REQUIRE(reduced_float::bits_of(widened.data_ptr<float>()[bits]) ==
            reduced_float::bits_of(static_cast<float>(Half::from_bits(static_cast<std::uint16_t>(bits)))));
  }
  constexpr std::int64_t kCount = 1 << 20;
  Tensor floats = empty({kCount}, kFloat32);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (std::int64_t i = 0; i < kCount; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    auto bits = static_cast<std::uint32_t>(state >> 32);
    // Every eighth value lands near float16's range (exponents 100..150), where rounding,
    // subnormals and overflow happen.
    if (i % 8 == 0) bits = (bits & 0x807FFFFFu) | ((100u + (bits >> 23) % 51u) << 23);
    floats.data_ptr<float>()[i] = reduced_float::float_from_bits(bits);
  }
  const std::vector<std::uint16_t> narrowed = bits16(native::to_dtype(floats, kFloat16));
  std::int64_t differ = 0;
  for (std::int64_t i = 0; i < kCount; ++i)
    differ += narrowed[static_cast<std::size_t>(i)] != bits_of(Half(floats.data_ptr<float>()[i])) ? 1 : 0;
  CHECK(differ == 0);
}

TEST_CASE("16-bit floats: bfloat16 relu and its backward on every bit pattern give the element functions' bits",
          "[reduced_float]") {
  // The fast loops select bfloat16 bits without widening (core/cpu/elementwise_16_bit_runs.h):
  // every pattern (NaN payloads, -0.0, subnormals, ±inf) against the float function rounded.
  Tensor every = empty({65536}, kBFloat16);
  for (std::uint32_t bits = 0; bits < 65536; ++bits)
    static_cast<std::uint16_t*>(every.data_ptr())[bits] = static_cast<std::uint16_t>(bits);
  const auto rounded = [](float value) { return bits_of(BFloat16(value)); };
  // A few grads against every result, and every grad against a few results.
  const std::vector<std::uint16_t> probes = {0x0000, 0x8000, 0x3F80, 0xBF80, 0x0001, 0x8001, 0x7F80, 0xFF80, 0x7FC1, 0xFFC0};
  on_both_paths([&] {
    const std::vector<std::uint16_t> relu = bits16(native::relu(every));
    for (std::uint32_t bits = 0; bits < 65536; ++bits) {
      INFO("relu of 0x" << std::hex << bits);
      REQUIRE(relu[bits] == rounded(element::Relu<float>{}(BFloat16::from_bits(static_cast<std::uint16_t>(bits)))));
    }
    for (std::uint16_t probe : probes) {
      const Tensor constant = native::contiguous(native::expand(native::reshape(every.slice(0, probe, probe + 1), {1}), {65536}));
      const std::vector<std::uint16_t> by_result = bits16(native::relu_backward(constant, every));
      const std::vector<std::uint16_t> by_grad = bits16(native::relu_backward(every, constant));
      for (std::uint32_t bits = 0; bits < 65536; ++bits) {
        INFO("relu_backward, probe 0x" << std::hex << probe << ", pattern 0x" << bits);
        const float pattern = BFloat16::from_bits(static_cast<std::uint16_t>(bits)), other = BFloat16::from_bits(probe);
        REQUIRE(by_result[bits] == rounded(element::ReluBackward<float>{}(other, pattern)));
        REQUIRE(by_grad[bits] == rounded(element::ReluBackward<float>{}(pattern, other)));
      }
    }
  });
}

TEST_CASE("16-bit floats: float64 and int64 round through float32, as c10 does", "[reduced_float]") {
  const json& from_float64 = reference()["from_float64"];
  const json& from_int64 = reference()["from_int64"];
  const Tensor doubles = testing::tensor_from_json({{"shape", {from_float64["values"].size()}},
                                                    {"dtype", "float64"}, {"data", from_float64["values"]}});
  const Tensor integers = testing::tensor_from_json({{"shape", {from_int64["values"].size()}},
                                                     {"dtype", "int64"}, {"data", from_int64["values"]}});
  on_both_paths([&] {
    for (const char* name : {"bfloat16", "float16"}) {
      INFO(name);
      const DType dtype = testing::dtype_from_name(name);
      CHECK(bits16(native::to_dtype(doubles, dtype)) == from_float64[name].get<std::vector<std::uint16_t>>());
      CHECK(bits16(native::to_dtype(integers, dtype)) == from_int64[name].get<std::vector<std::uint16_t>>());
    }
  });
  // 1 + 2^-8 + 2^-30 is nearer 1 + 2^-7 than 1, but float32 drops the 2^-30 first and the
  // tie then goes to even: PyTorch's 1.0, which a direct rounding would miss.
  CHECK(bits16(native::to_dtype(doubles, kBFloat16))[0] == 0x3F80);
}

TEST_CASE("16-bit floats: back to integers and bool", "[reduced_float]") {
  const json& cases = reference()["to_integers"];
  for (const char* name : {"bfloat16", "float16"}) {
    INFO(name);
    const DType dtype = testing::dtype_from_name(name);
    std::vector<double> values;
    for (const json& text : cases["values"]) values.push_back(std::stod(text.get<std::string>()));
    Tensor source = empty({static_cast<std::int64_t>(values.size())}, dtype);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (dtype == kBFloat16) source.data_ptr<BFloat16>()[i] = BFloat16(static_cast<float>(values[i]));
      else source.data_ptr<Half>()[i] = Half(static_cast<float>(values[i]));
    }
    const std::vector<double> as_bool = testing::to_vector(native::to_dtype(source, kBool));
    const std::vector<double> as_int64 = testing::to_vector(native::to_dtype(source, kInt64));
    for (std::size_t i = 0; i < values.size(); ++i) {
      CHECK(as_bool[i] == (cases[name]["bool"][i].get<bool>() ? 1.0 : 0.0));
      if (std::isfinite(values[i])) CHECK(as_int64[i] == cases[name]["int64"][i].get<double>());
    }
  }
}

TEST_CASE("16-bit floats: type promotion is torch.promote_types", "[reduced_float]") {
  for (const json& row : reference()["promotion"]) {
    const DType a = testing::dtype_from_name(row[0]), b = testing::dtype_from_name(row[1]);
    INFO(row[0] << " with " << row[1]);
    CHECK(dtype_name(promote_types(a, b)) == row[2].get<std::string>());
  }
  for (const char* name : {"bfloat16", "float16"}) {
    const DType dtype = testing::dtype_from_name(name);
    const json& expected = reference()["scalar_promotion"][name];
    const Tensor half_tensor = ones({2}, dtype);
    CHECK("torch." + dtype_name(result_type(half_tensor, Scalar(2.5))) == expected[0].get<std::string>());
    CHECK("torch." + dtype_name(result_type(half_tensor, Scalar(3))) == expected[1].get<std::string>());
    CHECK("torch." + dtype_name(result_type(ones({2}, kInt64), full({}, 2.5, dtype))) ==
          expected[2].get<std::string>());
    CHECK("torch." + dtype_name(result_type(half_tensor, full({}, 2.5, kFloat64))) ==
          expected[3].get<std::string>());
  }
}

TEST_CASE("16-bit floats: elementwise ops compute in float32 and round once", "[reduced_float]") {
  on_both_paths([&] {
    for (const json& c : reference()["elementwise"]) {
      const std::string op = c["op"];
      std::vector<Tensor> args;
      for (const json& a : c["args"]) args.push_back(testing::tensor_from_json(a));
      INFO(op << " on " << dtype_name(args[0].dtype()) << (args.size() > 1 ? " and " + dtype_name(args[1].dtype()) : ""));
      require_matches(run_elementwise(op, args), expected_elementwise(c, args), elementwise_ulps(op));
    }
  });
}

TEST_CASE("16-bit floats: non-contiguous and broadcast operands", "[reduced_float]") {
  on_both_paths([&] {
    const Tensor wide = native::to_dtype(native::reshape(arange(0, 12, 1, kFloat32), {3, 4}), kBFloat16);
    const Tensor transposed = native::transpose(wide, 0, 1);  // [4, 3], strides (1, 4)
    const Tensor row = native::to_dtype(full({3}, 0.5, kFloat32), kBFloat16);
    const Tensor sum = native::add(transposed, row);
    const Tensor expected = native::to_dtype(native::add(native::to_dtype(transposed, kFloat32), full({3}, 0.5, kFloat32)), kBFloat16);
    require_matches(sum, expected);
    // An empty and a 0-d tensor.
    CHECK(native::add(empty({0, 3}, kFloat16), empty({3}, kFloat16)).sizes() == Shape{0, 3});
    const Tensor scalar = native::mul(full({}, 1.5, kFloat16), full({}, 3.0, kFloat16));
    CHECK(scalar.dim() == 0);
    CHECK(scalar.item().to_double() == 4.5);
  });
}

TEST_CASE("16-bit floats: a number multiplies and divides unrounded, and is added rounded, as in PyTorch",
          "[reduced_float]") {
  on_both_paths([&] {
    for (const json& c : reference()["scalar_ops"]) {
      const Tensor x = testing::tensor_from_json(c["x"]);
      const double number = c["number"].get<double>();
      const Tensor zero_dim = full({}, number, kFloat32);
      INFO(dtype_name(x.dtype()) << " and " << number);
      auto check = [&](const Tensor& actual, const char* name) {
        INFO(name);
        require_matches(actual, testing::tensor_from_json(c[name]));  // bit for bit
      };
      check(x * number, "mul");
      check(number * x, "mul");  // x.mul(number), as libtorch's operator*
      check(x / number, "div");
      check(x + number, "add");
      check(x - number, "sub");
      Tensor scaled = x.clone();
      scaled.mul_(number);
      check(scaled, "mul_");
      Tensor divided = x.clone();
      divided.div_(number);
      check(divided, "div_");
      check(native::mul(x, zero_dim), "mul_float32");
      check(native::mul(zero_dim, x), "float32_mul");  // the number first: rounded
      check(native::div(x, zero_dim), "div_float32");
    }
  });
}

TEST_CASE("16-bit floats: reductions and softmax accumulate in float and round once", "[reduced_float]") {
  on_both_paths([&] {
    for (const json& c : reference()["reductions"]) {
      const Tensor x = testing::tensor_from_json(c["input"]);
      INFO(dtype_name(x.dtype()));
      // Sums may round differently by a unit when the partial sums are added in another order.
      require_matches(native::sum(x, {}, false), testing::tensor_from_json(c["sum"]), 1.0);
      require_matches(native::mean(x, {}, false), testing::tensor_from_json(c["mean"]), 1.0);
      require_matches(native::sum(x, {0}, false), testing::tensor_from_json(c["sum_dim0"]), 1.0);
      require_matches(native::mean(x, {1}, false), testing::tensor_from_json(c["mean_dim1"]), 1.0);
      require_matches(std::get<0>(native::max(x, 1, false)), testing::tensor_from_json(c["max_dim1"]));
      require_matches(native::argmin(x, 0, false), testing::tensor_from_json(c["argmin_dim0"]));
      require_matches(native::amax(x, {}, false), testing::tensor_from_json(c["amax"]));
      // softmax's exp is the C library's here and SLEEF's in PyTorch: one unit apart at most.
      require_matches(native::softmax(x, 1), testing::tensor_from_json(c["softmax_dim1"]), 1.0);
      require_matches(native::log_softmax(x, 0), testing::tensor_from_json(c["log_softmax_dim0"]), 1.0);
    }
  });
}

// A sum over scattered dims ({0, 2, 3} of [N, C, H, W]: a convolution's bias gradient) runs in
// stages, each reading its input in place (core/reduce.cpp); for 16-bit inputs the stages' partial
// sums stay float32, so the result is the exact sum rounded once, as a one-pass sum gives. Rounded
// to 16 bits between stages, the 99-value partials would lose their low bits first.
TEST_CASE("16-bit floats: a sum over scattered dims keeps float32 partial sums and rounds once", "[reduced_float]") {
  on_both_paths([&] {
    for (const DType dtype : {kBFloat16, kFloat16}) {
      INFO(dtype_name(dtype));
      manual_seed(11);
      const Tensor x = native::to_dtype(randn({6, 5, 9, 11}), dtype);
      const Tensor expected = native::to_dtype(native::sum(native::to_dtype(x, kFloat64), {0, 2, 3}, false), dtype);
      const Tensor staged = native::sum(x, {0, 2, 3}, false);
      REQUIRE(staged.dtype() == dtype);
      CHECK(testing::to_vector(staged) == testing::to_vector(expected));
      // keepdim, and a transposed input.
      CHECK(testing::to_vector(native::sum(x, {0, 2, 3}, true)) == testing::to_vector(expected));
      const Tensor transposed = x.transpose(1, 3);  // [6, 11, 9, 5]: one run of reduced dims, in one pass
      CHECK(testing::to_vector(native::sum(transposed, {0, 1, 2}, false)) ==
            testing::to_vector(native::to_dtype(native::sum(native::to_dtype(transposed, kFloat64), {0, 1, 2}, false), dtype)));
    }
  });
}

TEST_CASE("16-bit floats: matrix products accumulate in float32", "[reduced_float]") {
  on_both_paths([&] {
    for (const json& c : reference()["products"]) {
      const Tensor a = testing::tensor_from_json(c["a"]), b = testing::tensor_from_json(c["b"]);
      const Tensor bias = testing::tensor_from_json(c["bias"]);
      INFO(dtype_name(a.dtype()));
      require_matches(native::mm(a, b), testing::tensor_from_json(c["mm"]), 1.0);
      require_matches(native::addmm(bias, a, b, 1, 1), testing::tensor_from_json(c["addmm"]), 1.0);
      require_matches(native::matmul(a, b), testing::tensor_from_json(c["mm"]), 1.0);
      // Batched: [2, 7, 33] @ [33, 5] broadcasts b; each batch is the 2-D product.
      const Tensor batched = native::matmul(native::stack({a, a}, 0), b);
      require_matches(native::select(batched, 0, 1), testing::tensor_from_json(c["mm"]), 1.0);
      require_matches(native::matmul(native::stack({a, a}, 0), native::stack({b, b}, 0)), batched);
      // A transposed operand reads the same values.
      require_matches(native::mm(a, native::transpose(native::contiguous(native::transpose(b, 0, 1)), 0, 1)),
                      testing::tensor_from_json(c["mm"]), 1.0);
    }
  });
}

TEST_CASE("16-bit floats: indexing copies exactly, and its adds round after every addition as PyTorch's",
          "[reduced_float]") {
  on_both_paths([&] {
    for (const json& c : reference()["indexing"]) {
      const Tensor x = testing::tensor_from_json(c["x"]), index = testing::tensor_from_json(c["index"]);
      const Tensor source = testing::tensor_from_json(c["source"]);
      INFO(dtype_name(x.dtype()));
      // Bit for bit: copies are exact, and the adds round in PyTorch's order (index order).
      CHECK(bits16(native::index_select(x, 0, index)) == bits16(testing::tensor_from_json(c["index_select"])));
      CHECK(bits16(native::gather(x, 1, testing::tensor_from_json(c["gather_index"]))) ==
            bits16(testing::tensor_from_json(c["gather"])));
      CHECK(bits16(native::index_add(x, 0, index, source)) == bits16(testing::tensor_from_json(c["index_add"])));
      CHECK(bits16(native::scatter_add(zeros({3, 4}, x.options()), 0, testing::tensor_from_json(c["scatter_index"]),
                                       source)) == bits16(testing::tensor_from_json(c["scatter_add"])));
      const auto [values, positions] = native::topk(x, 2, 1, true, true);
      CHECK(bits16(values) == bits16(testing::tensor_from_json(c["topk_values"])));
      CHECK(native::equal(positions, testing::tensor_from_json(c["topk_indices"])));
    }
  });
}

TEST_CASE("16-bit floats: printed as PyTorch prints them", "[reduced_float]") {
  for (const json& c : reference()["printing"]) {
    const Tensor t = testing::tensor_from_json(c["tensor"]);
    CHECK(to_string(t) == c["text"].get<std::string>());
  }
}

TEST_CASE("16-bit floats: a number that overflows the format is an error, as in PyTorch", "[reduced_float]") {
  const json& errors = reference()["errors"];
  REQUIRE_THROWS_WITH(full({2}, 1e10, kFloat16), errors["fill_float16"].get<std::string>());
  REQUIRE_THROWS_WITH(full({2}, 1e39, kBFloat16), errors["fill_bfloat16"].get<std::string>());
  // In range, or inf and NaN themselves, is fine.
  CHECK(full({1}, 65504.0, kFloat16).item().to_double() == 65504.0);
  CHECK(std::isinf(full({1}, INFINITY, kFloat16).item().to_double()));
}

TEST_CASE("16-bit floats: a kernel without a 16-bit case throws instead of computing garbage", "[reduced_float]") {
  // Every op ember offers computes in 16 bits (the ops without a 16-bit loop widen first:
  // SGD's fused kernel, flash attention, layer and batch norm). The dispatch macros' default
  // is what stops one that forgets to: the fused SGD kernel itself, called with a bfloat16
  // plan, throws and leaves the parameter untouched.
  for (DType dtype : {kFloat16, kBFloat16}) {
    INFO(dtype_name(dtype));
    const Tensor param = full({4}, 1.0, dtype), grad = full({4}, 0.5, dtype);
    SgdPlan plan;
    plan.param = param.data_ptr();
    plan.grad = grad.data_ptr();
    plan.numel = 4;
    plan.options.lr = 0.1;
    plan.dtype = dtype;
    REQUIRE_THROWS_AS(sgd_step_kernel(Device(kCPU), plan), DTypeError);
    REQUIRE_THROWS_WITH(sgd_step_kernel(Device(kCPU), plan),
                        Catch::Contains("not implemented for '" + scalar_type_name(dtype) + "'"));
    REQUIRE(param.equal(full({4}, 1.0, dtype)));
  }
}

TEST_CASE("16-bit floats: add and sub with an alpha round PyTorch's scalar tail twice", "[reduced_float]") {
  // Whole blocks of 32: a + alpha·b in float, rounded once; the numel % 32 left: alpha·b
  // rounded, then the sum (tests/reference/gen_reduced_float_updates.py, sizes 37 to 1000).
  const json reference = testing::load_reference("reduced_float_updates.json");
  int count = 0;
  for (const json& c : reference["adds"]) {
    const Tensor a = testing::tensor_from_json(c["a"]), b = testing::tensor_from_json(c["b"]);
    const double alpha = c["alpha"].get<double>();
    INFO(dtype_name(a.dtype()) << " numel " << a.numel() << " alpha " << alpha);
    require_matches(native::add(a, b, alpha), testing::tensor_from_json(c["add"]));
    require_matches(native::sub(a, b, alpha), testing::tensor_from_json(c["sub"]));
    const Tensor in_place = native::clone(a);
    native::add_(in_place, b, alpha);
    require_matches(in_place, testing::tensor_from_json(c["add_"]));
    ++count;
  }
  REQUIRE(count == 24);
}

TEST_CASE("16-bit floats: foreach_norm is each norm in float32, rounded once, as torch._foreach_norm", "[reduced_float]") {
  int count = 0;
  for (const json& c : reference()["foreach_norms"]) {
    std::vector<Tensor> tensors;
    for (const json& t : c["tensors"]) tensors.push_back(testing::tensor_from_json(t));
    const double p = c["p"].is_string() ? INFINITY : c["p"].get<double>();
    INFO(dtype_name(tensors.front().dtype()) << " p = " << p);
    require_matches(native::foreach_norm(tensors, p), testing::tensor_from_json(c["norms"]));
    // Every other element of a wider tensor: the same norms (the widening reads any layout).
    std::vector<Tensor> strided;
    for (const Tensor& t : tensors) {
      Tensor every_other = native::slice(full({2 * t.numel()}, 7.0, t.dtype()), 0, 0, std::nullopt, 2);
      native::copy_(every_other, t);
      strided.push_back(every_other);
    }
    require_matches(native::foreach_norm(strided, p), testing::tensor_from_json(c["norms"]));
    ++count;
  }
  REQUIRE(count == 8);
}
