// tests/core/test_reduced_float_random.cpp — random fills, arange and linspace in bfloat16 and float16
// against PyTorch 2.15 (issue 22), bit for bit.
//
// The values come from tests/reference/gen_reduced_float_random.py: uniform_ / rand (the
// float32 draw rounded, a value that rounds to `to` replaced by `from`), normal_ / randn (the
// double sample rounded below 16 elements and for strided tensors, fresh float32 blocks of 16
// above), bernoulli_, F::dropout with its gradient, arange (float arithmetic in PyTorch's
// vector loop) and linspace (float arithmetic, every element its own formula). Every
// element's 16 bits must equal PyTorch's (a NaN of linspace's need only be a NaN), and where
// a case records the float32 uniform drawn after a fill, ember's next draw must equal it: a
// fill that used one draw more or fewer than PyTorch's fails there even when its own values
// agree.
// The fills themselves are the same code on both kernel paths; dropout's scaling and
// product are kernels, so everything runs on the fast and the reference loops alike.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/random.h>
#include <ember/core/reduced_float.h>
#include <ember/nn/functional.h>

#include "reduced_float_cases.h"
#include "test_support.h"

using namespace ember;
using nlohmann::json;
using testing::on_both_paths;

namespace {

const json& reference() {
  static const json data = testing::load_reference("reduced_float_random.json");
  return data;
}

DType dtype_of_case(const json& c) { return testing::dtype_from_name(c["dtype"].get<std::string>()); }

std::vector<std::uint16_t> bits16(const Tensor& tensor) {
  REQUIRE(itemsize(tensor.dtype()) == 2);
  const Tensor dense = native::contiguous(tensor);
  const auto* data = static_cast<const std::uint16_t*>(dense.data_ptr());
  return {data, data + dense.numel()};
}

Tensor from_bits(const std::vector<std::uint16_t>& bits, DType dtype) {
  Tensor result = empty({static_cast<std::int64_t>(bits.size())}, dtype);
  std::memcpy(result.data_ptr(), bits.data(), bits.size() * sizeof(std::uint16_t));
  return result;
}

// A case without its arrays, for the failure message.
std::string describe(const json& c) {
  json shown = c;
  for (const char* key : {"bits", "x", "upstream", "y", "x_grad"}) shown.erase(key);
  return shown.dump();
}

std::vector<std::uint16_t> expected_bits(const json& c, const char* key = "bits") {
  return c[key].get<std::vector<std::uint16_t>>();
}

// The float32 uniform ember draws next equals the one PyTorch drew after the same fill.
void require_next_draw(const json& c) {
  INFO("the float32 draw after the fill (how many draws it used)");
  REQUIRE(ember::rand({1}).item<double>() == c["next"].get<double>());
}

// A JSON number as PyTorch's Python number was: an int stays an integer Scalar; "inf" and
// "-inf" are the infinities (reflib's encoding).
Scalar scalar_of(const json& value) {
  if (value.is_string()) {
    const double inf = std::numeric_limits<double>::infinity();
    REQUIRE((value == "inf" || value == "-inf"));
    return Scalar(value == "inf" ? inf : -inf);
  }
  if (value.is_number_integer()) return Scalar(value.get<std::int64_t>());
  return Scalar(value.get<double>());
}

// Bits for which the float32 draw rounded to the dtype differs from the reference: the
// elements where uniform_'s "never `to`" rule acted.
std::size_t differences(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b) {
  REQUIRE(a.size() == b.size());
  std::size_t count = 0;
  for (std::size_t i = 0; i < a.size(); ++i) count += a[i] != b[i] ? 1 : 0;
  return count;
}

}  // namespace

TEST_CASE("16-bit random: uniform_ and rand round float32's draw and never return `to`", "[reduced_float][random]") {
  const json& cases = reference()["uniform"];
  REQUIRE(cases.size() == 16);
  std::size_t replaced = 0;
  on_both_paths([&] {
    for (const json& c : cases) {
      const DType dtype = dtype_of_case(c);
      INFO("case " << describe(c));
      if (c.contains("rand")) {
        manual_seed(123);
        REQUIRE(bits16(ember::rand({c["size"].get<std::int64_t>()}, dtype)) == expected_bits(c));
        continue;
      }
      const double low = c["low"].get<double>(), high = c["high"].get<double>();
      if (c.contains("transposed")) {
        manual_seed(5);
        Tensor t = empty({c["transposed"][0].get<std::int64_t>(), c["transposed"][1].get<std::int64_t>()}, dtype).t();
        ember::uniform_(t, low, high);
        REQUIRE(bits16(t) == expected_bits(c));
        continue;
      }
      const std::int64_t size = c["size"].get<std::int64_t>();
      manual_seed(0);
      Tensor t = empty({size}, dtype);
      ember::uniform_(t, low, high);
      REQUIRE(bits16(t) == expected_bits(c));
      require_next_draw(c);
      // The same draws in float32, merely rounded: they differ from PyTorch exactly where a
      // value rounded up to `to` (which PyTorch replaces by `from`).
      manual_seed(0);
      Tensor wide = empty({size}, kFloat32);
      ember::uniform_(wide, low, high);
      replaced += differences(bits16(native::to_dtype(wide, dtype)), expected_bits(c));
    }
  });
  // Seed 0's 1000 draws hold 7 values that round up to `to` in bfloat16 and 2 in float16,
  // for every bound but the degenerate (0.3, 0.30001); (0.1, 0.7) in bfloat16 holds 14.
  CHECK(replaced > 0);
}

TEST_CASE("16-bit random: uniform_ checks its bounds against the 16-bit range", "[reduced_float][random]") {
  for (const json& c : reference()["uniform_errors"]) {
    const DType dtype = dtype_of_case(c);
    const double low = c["low"].get<double>(), high = c["high"].get<double>();
    INFO(c.dump());
    Tensor t = empty({3}, dtype);
    if (c["error"].is_null()) {
      REQUIRE_NOTHROW(ember::uniform_(t, low, high));
    } else {
      REQUIRE_THROWS_WITH(ember::uniform_(t, low, high), c["error"].get<std::string>());
    }
  }
}

TEST_CASE("16-bit random: normal_ and randn take PyTorch's two paths", "[reduced_float][random]") {
  const json& cases = reference()["normal"];
  REQUIRE(cases.size() == 2 * (10 * 3 + 2 * 3 + 2));
  on_both_paths([&] {
    for (const json& c : cases) {
      const DType dtype = dtype_of_case(c);
      INFO("case " << describe(c));
      manual_seed(c["seed"].get<std::uint64_t>());
      if (c.contains("sequence")) {
        // The cached second Box–Muller value survives the block path in between.
        for (std::size_t i = 0; i < c["sequence"].size(); ++i) {
          INFO("draw " << i);
          REQUIRE(bits16(ember::randn({c["sequence"][i].get<std::int64_t>()}, dtype)) ==
                  c["bits"][i].get<std::vector<std::uint16_t>>());
        }
        continue;
      }
      Tensor t = c.contains("transposed")
                     ? empty({c["transposed"][0].get<std::int64_t>(), c["transposed"][1].get<std::int64_t>()}, dtype).t()
                     : empty({c["size"].get<std::int64_t>()}, dtype);
      ember::normal_(t, c["mean"].get<double>(), c["std"].get<double>());
      REQUIRE(bits16(t) == expected_bits(c));
      require_next_draw(c);
    }
  });
}

TEST_CASE("16-bit random: randn of 16+ elements is not float32's randn rounded", "[reduced_float][random]") {
  // The block path draws fresh uniforms for the tail block, float32 does not: for 17
  // elements only the first agrees. (A check that the rule tested above is the one that
  // matters: rounding float32's randn would pass sizes that are multiples of 16.)
  for (DType dtype : {kBFloat16, kFloat16}) {
    manual_seed(0);
    const std::vector<std::uint16_t> narrow = bits16(ember::randn({17}, dtype));
    manual_seed(0);
    const std::vector<std::uint16_t> rounded = bits16(native::to_dtype(ember::randn({17}), dtype));
    CHECK(narrow[0] == rounded[0]);
    CHECK(differences(narrow, rounded) >= 15);
  }
}

TEST_CASE("16-bit random: bernoulli_ draws float32's mask", "[reduced_float][random]") {
  for (const json& c : reference()["bernoulli"]) {
    INFO(c["dtype"].get<std::string>());
    manual_seed(3);
    Tensor t = empty({c["size"].get<std::int64_t>()}, dtype_of_case(c));
    ember::bernoulli_(t, c["p"].get<double>());
    REQUIRE(bits16(t) == expected_bits(c));
  }
}

TEST_CASE("16-bit random: random_ draws float32's integers, up to 2^digits, rounded to the dtype",
          "[reduced_float][random]") {
  REQUIRE(reference()["random_"].size() == 8);
  for (const json& c : reference()["random_"]) {
    INFO(describe(c));
    manual_seed(11);
    Tensor t = empty({c["size"].get<std::int64_t>()}, dtype_of_case(c));
    const std::vector<std::int64_t> args = c["args"].get<std::vector<std::int64_t>>();
    if (args.empty()) ember::random_(t);
    else if (args.size() == 1) ember::random_(t, args[0], std::nullopt);
    else ember::random_(t, args[0], args[1]);
    REQUIRE(bits16(t) == expected_bits(c));
    require_next_draw(c);
  }
  // A `from` past every value the dtype draws is refused (and moving it inwards never
  // overflows: from + 1 is not computed for INT64_MAX).
  Tensor t = empty({2}, kBFloat16);
  REQUIRE_THROWS_AS(ember::random_(t, std::numeric_limits<std::int64_t>::max(), std::nullopt), ValueError);
  REQUIRE_THROWS_AS(ember::random_(t, 300, std::nullopt), ValueError);
}

TEST_CASE("16-bit random: dropout scales by 1/(1-p) rounded to the dtype, gradient too", "[reduced_float][random]") {
  const json& cases = reference()["dropout"];
  REQUIRE(cases.size() == 8);
  on_both_paths([&] {
    for (const json& c : cases) {
      const DType dtype = dtype_of_case(c);
      const double p = c["p"].get<double>();
      INFO(c["dtype"].get<std::string>() << " p=" << p);
      Tensor x = from_bits(expected_bits(c, "x"), dtype).requires_grad_();
      Tensor upstream = from_bits(expected_bits(c, "upstream"), dtype);
      manual_seed(c["seed"].get<std::uint64_t>());
      Tensor y = nn::functional::dropout(x, p, /*training=*/true);
      REQUIRE(y.dtype() == dtype);
      REQUIRE(bits16(y) == expected_bits(c, "y"));
      y.backward(upstream);
      REQUIRE(x.grad().dtype() == dtype);
      REQUIRE(bits16(x.grad()) == expected_bits(c, "x_grad"));
    }
  });
}

TEST_CASE("16-bit arange: float arithmetic in PyTorch's vector loop", "[reduced_float][random]") {
  const json& cases = reference()["arange"];
  REQUIRE(cases.size() == 2 * 14 + 5 + 6);
  for (const json& c : cases) {
    const DType dtype = dtype_of_case(c);
    INFO(c["dtype"].get<std::string>() << " arange(" << c["start"].dump() << ", " << c["end"].dump() << ", "
                                       << c["step"].dump() << ")");
    Tensor t = ember::arange(scalar_of(c["start"]), scalar_of(c["end"]), scalar_of(c["step"]), dtype);
    REQUIRE(t.dtype() == dtype);
    REQUIRE(bits16(t) == expected_bits(c));
  }
}

TEST_CASE("16-bit arange: PyTorch's errors, in PyTorch's order", "[reduced_float][random]") {
  for (const json& c : reference()["arange_errors"]) {
    const DType dtype = dtype_of_case(c);
    INFO(c.dump());
    REQUIRE_THROWS_WITH(ember::arange(scalar_of(c["start"]), scalar_of(c["end"]), scalar_of(c["step"]), dtype),
                        c["error"].get<std::string>());
  }
}

// A JSON number, or reflib's "inf", "-inf" and "nan", as a double (linspace's arguments).
double double_of(const json& value) {
  if (value.is_string()) {
    const double inf = std::numeric_limits<double>::infinity();
    if (value == "nan") return std::numeric_limits<double>::quiet_NaN();
    REQUIRE((value == "inf" || value == "-inf"));
    return value == "inf" ? inf : -inf;
  }
  return value.get<double>();
}

// The elements whose bits differ, except that a NaN only has to be a NaN: the sign of a NaN
// made by inf·0 or inf − inf is the CPU's default NaN's (x86: negative, which float16
// keeps), not something linspace decides.
std::vector<std::size_t> mismatches(const std::vector<std::uint16_t>& actual, const std::vector<std::uint16_t>& expected,
                                    DType dtype) {
  REQUIRE(actual.size() == expected.size());
  const auto is_nan = [&](std::uint16_t bits) {
    return dtype == kBFloat16 ? (bits & 0x7FFF) > 0x7F80 : (bits & 0x7FFF) > 0x7C00;
  };
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] != expected[i] && !(is_nan(actual[i]) && is_nan(expected[i]))) positions.push_back(i);
  }
  return positions;
}

TEST_CASE("16-bit linspace: float arithmetic and each element its own formula", "[reduced_float][random]") {
  // Ranges from 0 to 5000 steps, both directions, infinities and NaN, and the witnesses:
  // ranges where fusing the other way, another halfway split, unrounded endpoints, a 16-bit
  // or double-precision step, or vector lanes built from their first element would change
  // a value (gen_reduced_float_random.py).
  const json& cases = reference()["linspace"];
  REQUIRE(cases.size() == 2 * 20 + 2 + 11 + 10);
  for (const json& c : cases) {
    const DType dtype = dtype_of_case(c);
    INFO(c["dtype"].get<std::string>() << " linspace(" << c["start"].dump() << ", " << c["end"].dump() << ", "
                                       << c["steps"].dump() << ")");
    Tensor t = ember::linspace(double_of(c["start"]), double_of(c["end"]), c["steps"].get<std::int64_t>(), dtype);
    REQUIRE(t.dtype() == dtype);
    REQUIRE(mismatches(bits16(t), expected_bits(c), dtype).empty());
  }
}

TEST_CASE("16-bit linspace: 2^24 + 2 steps divide by float(steps - 1)", "[reduced_float][random]") {
  // float(2^24 + 1) is 2^24: the stored elements include those (hundreds) that dividing by
  // the exact count would change.
  for (const json& c : reference()["sparse_linspace"]) {
    const DType dtype = dtype_of_case(c);
    INFO(c["dtype"].get<std::string>() << " linspace(" << c["start"].dump() << ", " << c["end"].dump() << ", "
                                       << c["steps"].dump() << ")");
    REQUIRE(c["exact_count_changes"].get<int>() > 100);
    const Tensor t =
        ember::linspace(c["start"].get<double>(), c["end"].get<double>(), c["steps"].get<std::int64_t>(), dtype);
    const std::vector<std::uint16_t> all = bits16(t);
    std::vector<std::uint16_t> picked;
    for (const json& index : c["indices"]) picked.push_back(all.at(index.get<std::size_t>()));
    REQUIRE(picked == expected_bits(c));
  }
}

TEST_CASE("16-bit linspace: PyTorch's errors", "[reduced_float][random]") {
  // Two or more steps convert start and end with the checked conversion; one step is an
  // unchecked fill (linspace(1e5, 0, 1) in float16 is [inf], among the cases above).
  for (const json& c : reference()["linspace_errors"]) {
    const DType dtype = dtype_of_case(c);
    INFO(c.dump());
    const auto steps = c["steps"].get<std::int64_t>();
    REQUIRE_THROWS_WITH(ember::linspace(c["start"].get<double>(), c["end"].get<double>(), steps, dtype),
                        c["error"].get<std::string>());
  }
}
