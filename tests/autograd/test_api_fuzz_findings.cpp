// tests/autograd/test_api_fuzz_findings.cpp — regression tests for what the C++ API fuzzer
// (tests/fuzz/api_fuzzer.cpp) found in core and autograd (docs/reliability.md, "Fuzzing").
// PyTorch 2.15, for t = torch.tensor(1., requires_grad=True):
//   t.mean((0,))                         -> tensor(1.), backward gives t.grad = 1
//   t.sum((0, -1))                       -> RuntimeError: dim 0 appears multiple times in the list of dims
//   t.index_select(0, torch.tensor([0, 0, 0]))
//                                        -> RuntimeError: index_select(): Index to scalar can have only 1 value, got 3 value(s)
// Before the fixes, the first crashed in backward's bookkeeping (an out-of-range index into
// the 0-d tensor's empty sizes), the second was accepted, and the third wrote past its output.
#include <cmath>
#include <catch2/catch.hpp>

#include <ember/ember.h>

#include "test_support.h"

using ember::Tensor;

TEST_CASE("a reduction over dim 0 of a 0-d tensor that requires grad runs backward", "[autograd][fuzz]") {
  Tensor t = ember::tensor(1.0).requires_grad_();
  Tensor m = ember::mean(t, {0});
  CHECK(m.dim() == 0);
  CHECK(m.item<float>() == 1.0f);
  m.backward();
  REQUIRE(t.grad().defined());
  CHECK(t.grad().dim() == 0);
  CHECK(t.grad().item<float>() == 1.0f);
  Tensor s = ember::sum(t, {-1}, /*keepdim=*/true);
  CHECK(s.dim() == 0);
}

TEST_CASE("a 0-d tensor's dim named twice in a reduction is refused", "[autograd][fuzz]") {
  Tensor t = ember::tensor(1.0).requires_grad_();
  REQUIRE_THROWS_AS(ember::sum(t, {0, -1}), ember::ValueError);
  REQUIRE_THROWS_WITH(ember::mean(t, {0, 0}), "dim 0 appears multiple times in the list of dims");
}

TEST_CASE("index_select on a 0-d tensor takes exactly one index", "[autograd][fuzz]") {
  Tensor t = ember::tensor(1.0);
  REQUIRE_THROWS_AS(ember::index_select(t, 0, ember::tensor({0, 0, 0})), ember::IndexError);
  REQUIRE_THROWS_WITH(ember::index_select(t, 0, ember::tensor({0, 0, 0})),
                      "index_select(): Index to scalar can have only 1 value, got 3 value(s)");
  CHECK(ember::index_select(t, 0, ember::tensor({0})).item<float>() == 1.0f);
}

// PyTorch: torch.addmm(torch.empty(0, 3).t(), torch.ones(3, 4), torch.ones(4, 0)) -> tensor of size [3, 0].
// The fuzzer found addmm's bias copy stepping a null pointer (an empty bias has no storage) by its
// row stride, undefined behaviour under UBSan even though nothing was read.
TEST_CASE("addmm with an empty strided bias gives an empty result", "[autograd][fuzz]") {
  Tensor bias = ember::empty({0, 3}).t();  // sizes [3, 0], strides [1, 3]: no storage, nonzero row stride
  Tensor a = ember::ones({3, 4});
  Tensor b = ember::ones({4, 0});
  Tensor out = ember::addmm(bias, a, b);
  CHECK(out.sizes() == std::vector<std::int64_t>{3, 0});
  Tensor row_bias = ember::empty({0});
  CHECK(ember::addmm(row_bias, a, b).numel() == 0);
  Tensor out_k0 = ember::addmm(ember::full({2, 3}, 1.5f), ember::ones({2, 0}), ember::ones({0, 3}));
  CHECK(out_k0.sizes() == std::vector<std::int64_t>{2, 3});
  CHECK(ember::sum(out_k0).item<float>() == 9.0f);
}

// PyTorch: torch.linspace(-2, 3, 0, dtype=torch.float64).reshape(5, 0, 1, 1).T.sum(-2, keepdim=True)
// -> zeros of size [1, 1, 1, 5]. The fuzzer found the column sum over the empty dim stepping the
// input's null pointer (an empty tensor has no storage) to a later block of columns: undefined
// behaviour under clang's UBSan (the fuzz build) even though no row was read.
TEST_CASE("a sum over an empty dim gives zeros for every column", "[autograd][fuzz]") {
  for (ember::DType dtype : {ember::kFloat32, ember::kFloat64}) {
    for (std::int64_t columns : {5, 7, 40}) {  // blocks of 4 + 1, 4 + 2 + 1, 32 + 8
      Tensor empty = ember::linspace(-2.0, 3.0, 0, dtype).reshape({columns, 0, 1, 1}).T();
      Tensor sums = ember::to(ember::sum(empty, {-2}, true), ember::kFloat64);
      Tensor means = ember::to(ember::mean(empty, {-2}, true), ember::kFloat64);
      REQUIRE(sums.sizes() == std::vector<std::int64_t>{1, 1, 1, columns});
      REQUIRE(means.sizes() == std::vector<std::int64_t>{1, 1, 1, columns});
      for (std::int64_t column = 0; column < columns; ++column) {
        CHECK(sums.data_ptr<double>()[column] == 0.0);
        CHECK(std::isnan(means.data_ptr<double>()[column]));  // 0 / 0, as torch.mean
      }
    }
  }
}
