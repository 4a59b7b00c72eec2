// tests/docs/gdb_printer_target.cpp — the program tests/docs/check_gdb_printer.sh runs in gdb
// to check scripts/gdb/ember_printers.py (the recipes of docs/debugging.md).
//
// It makes the tensors the printers must get right: a plain matrix, a transposed view
// (strides [1, 3]: printed in logical order, not storage order), a slice (non-zero storage
// offset), an nn::Parameter (a class derived from Tensor), an undefined tensor, two Shapes
// (DimVectors: one held inline, one on the heap), and a loss
// with a small tape behind it (after a backward that kept it: weight has a .grad for
// ember-grad), then stops in stop_here() with all of them alive. Built
// with -O0 -g whatever the build type, so gdb can read main's locals.
#include <ember/autograd/node.h>
#include <ember/ember.h>

// gdb breaks here; `up` is main. noinline: the call must stay a call at any -O.
[[gnu::noinline]] void stop_here() { asm volatile(""); }

int main() {
  ember::Tensor matrix = ember::tensor({{1, 2, 3}, {4, 5, 6}});
  ember::Tensor transposed = matrix.T();
  ember::Tensor row = matrix[1];
  ember::nn::Parameter weight(ember::tensor({0.5, -1.25}));
  weight.set_name("weight");
  ember::Tensor undefined;
  ember::Shape sizes = matrix.sizes();                 // held inside the DimVector
  ember::Shape long_sizes = {1, 2, 3, 4, 5, 6, 7};      // past the 5 inline dims: on the heap
  ember::Tensor x = ember::tensor({2.0, 3.0});
  ember::Tensor loss = (weight * x).sum();
  loss.backward({}, /*retain_graph=*/true);  // weight.grad = x; the tape keeps its saved tensors
  stop_here();
  return loss.item<double>() == -2.75 ? 0 : 1;
}
