// apps/tutorial/tutorial_04_autograd.cpp — tutorial §4 "Automatic differentiation made easy".
//
// Gradients of the §3 logistic-regression loss: first with ember::autograd::grad (keeping
// the graph with retain_graph, as the tutorial does), then with loss.backward(), which
// fills w1.grad() and b.grad(). A second backward through the freed graph is refused, and
// under NoGradGuard nothing is recorded. With a path argument it also writes the graph as
// Graphviz DOT (`tutorial_04_autograd graph.dot && dot -Tpng graph.dot -o graph.png`).
// The output matches tests/apps/expected/tutorial_04_autograd.txt, produced by the same
// steps in PyTorch (tests/reference/tutorial_04_autograd.py).
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp); quotes of the tutorial's code read the same in both.
#include <fstream>
#include <iostream>
#include <string>

#include <ember/ember.h>

namespace {

// Python prints a one-element tuple as "(tensor([-0.0898]),)".
void print_tuple(const ember::autograd::TensorList& tensors) {
  std::cout << "(";
  for (const auto& tensor : tensors) std::cout << tensor << ",";
  std::cout << ")\n";
}

}  // namespace

int main(int argc, char** argv) {
  // §4 "we can compute the gradient of the loss with respect to the model parameter w1"
  //   「调用 grad 函数，我们就可以计算损失相对于模型参数 w1 的梯度」
  ember::Tensor y = ember::tensor({1.0});
  ember::Tensor x1 = ember::tensor({1.1});
  ember::Tensor w1 = ember::tensor({2.2}, ember::requires_grad());
  ember::Tensor b = ember::tensor({0.0}, ember::requires_grad());
  w1.set_name("w1");  // names label the leaves in the DOT graph
  b.set_name("b");

  ember::Tensor z = x1 * w1 + b;
  ember::Tensor a = ember::sigmoid(z);

  ember::Tensor loss = ember::binary_cross_entropy(a, y);
  loss.set_name("loss");

  // §4 "By default, PyTorch destroys the computation graph after calculating the gradients to
  // free memory. However, since we will reuse this computation graph shortly, we set
  // retain_graph=True so that it stays in memory." 「设置了 retain_graph=True，让它保留在内存中」
  auto grad_L_w1 = ember::autograd::grad({loss}, {w1}, {}, /*retain_graph=*/true);
  auto grad_L_b = ember::autograd::grad({loss}, {b}, {}, /*retain_graph=*/true);

  // §4 "let's show the resulting values of the loss given the model's parameters"
  //   「我们来展示损失相对于模型参数的计算结果」: print(grad_L_w1), print(grad_L_b)
  print_tuple(grad_L_w1);
  print_tuple(grad_L_b);

  if (argc > 1) {  // the graph, saved tensors still alive (retain_graph above)
    std::ofstream(argv[1]) << ember::autograd::to_dot(loss);
  }

  // §4 "we can call .backward on the loss, and PyTorch will compute the gradients of all the
  // leaf nodes in the graph, which will be stored via the tensors' .grad attributes"
  //   「我们可以对损失调用 .backward，PyTorch 就会计算图中所有叶子节点的梯度」
  loss.backward();

  std::cout << w1.grad() << "\n";  // §4 "print(w1.grad)"
  std::cout << b.grad() << "\n";   // §4 "print(b.grad)"

  // Beyond the tutorial: its §4 "PyTorch destroys the computation graph after calculating the
  // gradients" 「PyTorch 在计算出梯度后会销毁计算图以释放内存」 made visible — the saved tensors were freed by that backward, so a second
  // one is refused with PyTorch's message.
  try {
    loss.backward();
  } catch (const ember::AutogradError& error) {
    std::string message = error.what();
    std::cout << message.substr(0, message.find(" (or")) << "\n";
  }

  // Beyond the tutorial (§5 uses it): "with torch.no_grad():" — inference without recording.
  {
    ember::NoGradGuard no_grad;
    z = x1 * w1 + b;
  }
  std::cout << (z.requires_grad() ? "True" : "False") << "\n";
  return 0;
}
