// nn/dropout.cpp — nn::Dropout (see dropout.h) and F::dropout, which it calls.
#include <ember/nn/dropout.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <ember/nn/functional.h>
#include <ember/nn/python_format.h>

namespace ember::nn {

Dropout::Dropout(double p) : p(p) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0, ValueError, "dropout probability has to be between 0 and 1, but got ", python_float(p));
}

Tensor functional::dropout(const Tensor& input, double p, bool training) {
  EMBER_CHECK(p >= 0.0 && p <= 1.0, ValueError, "dropout probability has to be between 0 and 1, but got ", python_float(p));
  if (!training || p == 0.0) return input;
  // p = 1 drops everything; PyTorch returns zeros without drawing.
  if (p == 1.0) return input * ember::zeros_like(input);
  Tensor mask = ember::empty_like(input);
  ember::bernoulli_(mask, 1.0 - p);
  mask.div_(1.0 - p);  // a 16-bit mask: 1 / float(1 - p), rounded once (core/elementwise.cpp)
  return input * mask;  // the tape sees a multiplication by a constant mask
}

Tensor Dropout::forward(const Tensor& input) { return functional::dropout(input, p, is_training()); }

std::string Dropout::extra_repr() const { return "p=" + python_float(p) + ", inplace=False"; }

}  // namespace ember::nn
