// apps/tutorial/tutorial_03_graph.cpp — tutorial §3 "Seeing models as computation graphs".
//
// The logistic-regression forward pass (z = x1 * w1 + b, a = sigmoid(z), binary
// cross-entropy) first with plain tensors, then with w1 and b requiring grad, where every
// op leaves a node of the computation graph behind; the program walks that graph from the
// loss. The output matches tests/apps/expected/tutorial_03_graph.txt, produced by the same
// steps in PyTorch (tests/reference/tutorial_03_graph.py).
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp); quotes of the tutorial's code read the same in both.
#include <iostream>
#include <memory>
#include <string>

#include <ember/ember.h>

namespace {

// Prints a node, the nodes its gradients flow to ("None" for an input that needs none),
// and then, indented, each of those — PyTorch's grad_fn.next_functions, walked by hand.
void walk(const std::shared_ptr<ember::autograd::Node>& node, int depth) {
  std::string line(static_cast<std::size_t>(2 * depth), ' ');
  line += node->name() + " -> [";
  const auto& edges = node->next_edges();
  for (std::size_t i = 0; i < edges.size(); ++i) {
    line += (i > 0 ? ", " : "") + (edges[i].is_valid() ? edges[i].node->name() : std::string("None"));
  }
  std::cout << line << "]\n";
  for (const auto& edge : edges) {
    if (edge.is_valid()) walk(edge.node, depth + 1);
  }
}

}  // namespace

int main() {
  // §3 "the following code implements the forward pass (prediction step) of a simple
  // logistic regression classifier" 「下面的代码实现了一个简单逻辑回归分类器的前向传播」
  ember::Tensor y = ember::tensor({1.0});   // true label
  ember::Tensor x1 = ember::tensor({1.1});  // input feature
  ember::Tensor w1 = ember::tensor({2.2});  // weight parameter
  ember::Tensor b = ember::tensor({0.0});   // bias unit

  ember::Tensor z = x1 * w1 + b;          // net input
  ember::Tensor a = ember::sigmoid(z);    // activation & output

  // §3 "loss = F.binary_cross_entropy(a, y)": ember::nn::functional forwards to this same op.
  ember::Tensor loss = ember::binary_cross_entropy(a, y);
  std::cout << loss << "\n";  // §3 "print(loss)": tensor(0.0852)

  // §4 opens: "PyTorch will build such a graph internally by default if one of its terminal
  // nodes has the requires_grad attribute set to True." 「只要计算图中某个末端节点的
  // requires_grad 属性被设为 True，PyTorch 默认就会在内部构建这样的图」 The same forward with
  // w1 and b requiring grad: now every op records a node, and the printed tensors show grad_fn.
  w1 = ember::tensor({2.2}, ember::requires_grad());
  b = ember::tensor({0.0}, ember::requires_grad());
  z = x1 * w1 + b;
  a = ember::sigmoid(z);
  loss = ember::binary_cross_entropy(a, y);
  std::cout << z << "\n" << a << "\n" << loss << "\n";

  // §3, figure 7: "a sequence of computations as a computation graph" 「把一系列计算看作一张
  // 计算图，如图 7 所示」 — walked from the loss.
  walk(std::static_pointer_cast<ember::autograd::Node>(loss.grad_fn()), 0);
  auto python_bool = [](bool value) { return value ? "True" : "False"; };
  std::cout << "is_leaf: " << python_bool(w1.is_leaf()) << " " << python_bool(z.is_leaf()) << " "
            << python_bool(loss.is_leaf()) << "\n";
  return 0;
}
