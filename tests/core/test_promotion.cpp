// tests/core/test_promotion.cpp — ember::result_type and can_cast against torch.result_type.
//
// The table in elementwise.json (tests/reference/gen_elementwise.py) covers every pair of
// dtypes for each pairing of operand kinds: dimensioned tensor, 0-d tensor, Python number.
#include <catch2/catch.hpp>

#include <ember/core/type_promotion.h>

#include "test_support.h"

using namespace ember;
using nlohmann::json;

namespace {

// An operand of the given kind; "number" becomes a wrapped number like Python's 2 / 2.5 / True.
Tensor make_operand(const std::string& kind, DType dtype) {
  if (kind == "number") {
    if (dtype == kBool) return scalar_to_tensor(true);
    return is_floating_point(dtype) ? scalar_to_tensor(2.5) : scalar_to_tensor(2);
  }
  return empty(kind == "tensor" ? Shape{2} : Shape{}, dtype);
}

}  // namespace

TEST_CASE("promotion: result_type matches torch.result_type for every pairing", "[promotion]") {
  const json reference = testing::load_reference("elementwise.json");
  REQUIRE(reference["promotion"].size() > 100);
  for (const json& row : reference["promotion"]) {
    const std::string kind_a = row["kind_a"], kind_b = row["kind_b"];
    const DType a = testing::dtype_from_name(row["dtype_a"]), b = testing::dtype_from_name(row["dtype_b"]);
    INFO(kind_a << " " << dtype_name(a) << " with " << kind_b << " " << dtype_name(b));
    CHECK(dtype_name(result_type(make_operand(kind_a, a), make_operand(kind_b, b))) == row["result"].get<std::string>());
    if (kind_b == "number") {
      // The Scalar overload must agree with the wrapped-number tensor.
      Scalar number = b == kBool ? Scalar(true) : is_floating_point(b) ? Scalar(2.5) : Scalar(2);
      CHECK(dtype_name(result_type(make_operand(kind_a, a), number)) == row["result"].get<std::string>());
    }
  }
}

TEST_CASE("promotion: can_cast matches torch.can_cast", "[promotion]") {
  const json reference = testing::load_reference("elementwise.json");
  int checked = 0;
  for (const json& row : reference["promotion"]) {
    if (row["kind_a"] != "tensor" || row["kind_b"] != "tensor") continue;
    const DType a = testing::dtype_from_name(row["dtype_a"]), b = testing::dtype_from_name(row["dtype_b"]);
    INFO(dtype_name(a) << " -> " << dtype_name(b));
    CHECK(can_cast(a, b) == row["can_cast"].get<bool>());
    ++checked;
  }
  REQUIRE(checked == 36);
}

TEST_CASE("promotion: more than two operands and promote_operands", "[promotion]") {
  // int32 tensor, int64 0-d, 2.5 number -> the number raises the category: float32.
  std::vector<Tensor> operands{empty({2}, kInt32), empty({}, kInt64), scalar_to_tensor(2.5)};
  CHECK(result_type(operands) == kFloat32);
  PromotedOperands promoted = promote_operands(operands);
  CHECK(promoted.dtype == kFloat32);
  for (const Tensor& t : promoted.tensors) CHECK(t.dtype() == kFloat32);
  // A tensor that already has the dtype is passed through, not copied.
  Tensor floats = empty({3}, kFloat32);
  PromotedOperands same = promote_operands({floats, scalar_to_tensor(1)});
  CHECK(same.tensors[0].is_same(floats));
  REQUIRE_THROWS_AS(result_type(std::vector<Tensor>{}), ValueError);
}
