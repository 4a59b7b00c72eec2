// tests/autograd/test_gradient_layout.cpp — gradients that become .grad without a copy.
//
// AccumulateGrad keeps an incoming gradient as the leaf's .grad() when nothing else can see
// it (autograd/accumulate_grad.cpp), and mm/addmm compute an operand's gradient in that
// operand's layout (autograd/linalg_ops.cpp), so nn::Linear's weight gradient arrives
// contiguous and is kept. These tests check both that the copy is skipped only when it is
// safe (a hook that keeps the gradient forces a copy) and that the values are unchanged.
#include <catch2/catch.hpp>

#include <ember/ember.h>

#include "test_support.h"

using ember::Tensor;
using ember::testing::to_vector;

namespace {

void require_close(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.sizes() == expected.sizes());
  std::vector<double> a = to_vector(actual), e = to_vector(expected);
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(a[i] == Approx(e[i]).epsilon(1e-5).margin(1e-6));
}

}  // namespace

TEST_CASE("Linear: the weight gradient nobody else holds becomes weight.grad without a copy", "[autograd][layout]") {
  ember::manual_seed(0);
  ember::nn::Linear linear(4, 3);
  Tensor x = ember::randn({5, 4});
  const void* arrived = nullptr;
  linear.weight.register_hook([&arrived](const Tensor& grad) {
    arrived = grad.data_ptr();
    return Tensor();
  });
  linear.forward(x).sum().backward();
  const Tensor& grad = linear.weight.grad();
  REQUIRE(grad.defined());
  CHECK(grad.is_contiguous());
  CHECK(grad.data_ptr() == arrived);  // kept, not copied
  // d sum(x Wᵀ + b) / dW = onesᵀ x: every row is the column sums of x.
  ember::NoGradGuard no_grad;
  require_close(grad, ember::ones({5, 3}).t().matmul(x));
  require_close(linear.bias.grad(), ember::full({3}, 5.0));
}

TEST_CASE("a gradient a hook keeps is copied into .grad, and later accumulation leaves it alone", "[autograd][layout]") {
  Tensor w = ember::tensor({1.0, 2.0, 3.0}, ember::requires_grad());
  Tensor kept;
  w.register_hook([&kept](const Tensor& grad) {
    kept = grad;  // a second handle: .grad must not share it
    return Tensor();
  });
  (w * w).sum().backward();
  REQUIRE(w.grad().defined());
  CHECK(w.grad().data_ptr() != kept.data_ptr());
  const std::vector<double> first = to_vector(kept);
  (w * w).sum().backward();  // accumulates in place into .grad
  CHECK(to_vector(kept) == first);
  require_close(w.grad(), ember::tensor({4.0, 8.0, 12.0}));
}

TEST_CASE("a kept gradient accumulates correctly over several backward calls", "[autograd][layout]") {
  ember::manual_seed(1);
  ember::nn::Linear linear(3, 2);
  Tensor x = ember::randn({4, 3});
  linear.forward(x).sum().backward();
  Tensor first = linear.weight.grad().clone();
  linear.forward(x).sum().backward();
  ember::NoGradGuard no_grad;
  require_close(linear.weight.grad(), first * 2);
}

TEST_CASE("mm: operands stored transposed get gradients in their own layout", "[autograd][layout]") {
  ember::manual_seed(2);
  // a = A0ᵀ and b = B0ᵀ are column-major views of contiguous leaves.
  Tensor a0 = ember::randn({5, 3}, ember::requires_grad()), b0 = ember::randn({4, 5}, ember::requires_grad());
  const void* a_arrived = nullptr;
  a0.register_hook([&a_arrived](const Tensor& grad) {
    a_arrived = grad.data_ptr();
    return Tensor();
  });
  Tensor g = ember::randn({3, 4});
  ember::mm(a0.t(), b0.t()).backward(g);
  CHECK(a0.grad().is_contiguous());
  CHECK(a0.grad().data_ptr() == a_arrived);
  ember::NoGradGuard no_grad;
  // dA = g Bᵀ = g B0, so dA0 = (g B0)ᵀ; dB = Aᵀ g = A0 g, so dB0 = (A0 g)ᵀ.
  require_close(a0.grad(), g.matmul(b0).t());
  require_close(b0.grad(), a0.matmul(g).t());
}

TEST_CASE("addmm's gradients keep their values with transposed and plain operands", "[autograd][layout]") {
  ember::manual_seed(3);
  Tensor bias = ember::randn({4}, ember::requires_grad());
  Tensor a = ember::randn({3, 5}, ember::requires_grad());
  Tensor w = ember::randn({4, 5}, ember::requires_grad());
  Tensor g = ember::randn({3, 4});
  ember::addmm(bias, a, w.t()).backward(g);
  ember::NoGradGuard no_grad;
  require_close(a.grad(), g.matmul(w));
  require_close(w.grad(), g.t().matmul(a));
  require_close(bias.grad(), g.sum({0}));
}

TEST_CASE("mm and addmm gradients: the same bits by strides (backward) as through recorded transposes (create_graph)",
          "[autograd][layout]") {
  // A plain backward multiplies the stored matrices with their transposes given as strides
  // (native::mm_transposed); create_graph records t and mm instead, so that the gradient can
  // be differentiated again. Both must give the same bits, in the same layouts.
  struct Gradient {
    std::vector<double> values;
    ember::Shape strides;
    bool requires_grad;
  };
  auto gradients = [](bool create_graph) {
    ember::manual_seed(5);
    Tensor bias = ember::randn({4}, ember::requires_grad());
    Tensor x = ember::randn({7, 5}, ember::requires_grad());
    Tensor w = ember::randn({4, 5}, ember::requires_grad());
    Tensor a0 = ember::randn({6, 3}, ember::requires_grad()), b0 = ember::randn({2, 6}, ember::requires_grad());
    ember::addmm(bias, x, w.t()).backward(ember::randn({7, 4}), false, create_graph);
    ember::mm(a0.t(), b0.t()).backward(ember::randn({3, 2}), false, create_graph);  // both operands column-major
    ember::mm(x, w.t()).backward(ember::randn({7, 4}), false, create_graph);         // accumulates into x, w
    std::vector<Gradient> found;
    for (Tensor* leaf : {&bias, &x, &w, &a0, &b0}) {
      const Tensor& grad = leaf->grad();
      found.push_back({to_vector(grad), grad.strides(), grad.requires_grad()});
      // A .grad with a graph saves its own leaf: the cycle PyTorch documents for
      // backward(create_graph=True). Resetting .grad breaks it.
      leaf->mutable_grad() = Tensor();
    }
    return found;
  };
  const std::vector<Gradient> by_strides = gradients(false), recorded = gradients(true);
  for (std::size_t i = 0; i < by_strides.size(); ++i) {
    CAPTURE(i);
    CHECK_FALSE(by_strides[i].requires_grad);
    CHECK(recorded[i].requires_grad == (i != 0));  // create_graph kept the graphs (bias's sums only g)
    CHECK(by_strides[i].strides == recorded[i].strides);
    CHECK(by_strides[i].values == recorded[i].values);
  }
}
