// apps/tutorial/tutorial_02_tensors.cpp — tutorial §2 "Understanding tensors", step by step.
//
// Creating tensors of 0 to 3 dimensions (§2.1), their dtypes and .to() (§2.2), and the
// everyday operations .shape, .reshape, .view, .T and matrix multiplication (§2.3). Where
// the tutorial shows a notebook cell's value, this program prints it. The output matches
// tests/apps/expected/tutorial_02_tensors.txt, produced by the same steps in PyTorch
// (tests/reference/tutorial_02_tensors.py); tests/apps/test_tutorial_02.cpp compares them.
//
// Step comments (every program in apps/tutorial/): §N "the English original" 「the Chinese
// seed's wording」, so a reader holding either text can search for the step. A quote of the
// tutorial's code or of its code comments stands alone: it reads the same in both.
#include <iostream>

#include <ember/ember.h>

int main() {
  // ---------------------------------------------------------------- §2.1 「标量、向量、矩阵与张量」
  // §2.1 "create a 0D tensor (scalar) from a Python integer": tensor0d = torch.tensor(1)
  ember::Tensor tensor0d = ember::tensor(1);
  // §2.1 "create a 1D tensor (vector) from a Python list": torch.tensor([1, 2, 3])
  ember::Tensor tensor1d = ember::tensor({1, 2, 3});
  // §2.1 "create a 2D tensor from a nested Python list": torch.tensor([[1, 2], [3, 4]])
  ember::Tensor tensor2d = ember::tensor({{1, 2}, {3, 4}});
  // §2.1 "create a 3D tensor from a nested Python list" — C++ braces nest just like the lists.
  ember::Tensor tensor3d = ember::tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}});
  std::cout << tensor0d << "\n" << tensor1d << "\n" << tensor2d << "\n" << tensor3d << "\n";

  // ---------------------------------------------------------------- §2.2 「张量数据类型」
  // §2.2 "PyTorch adopts the default 64-bit integer data type from Python": print(tensor1d.dtype)
  //   「PyTorch 采用 Python 默认的 64 位整数数据类型」
  tensor1d = ember::tensor({1, 2, 3});
  std::cout << tensor1d.dtype() << "\n";  // torch.int64

  // §2.2 "If we create tensors from Python floats, PyTorch creates tensors with 32-bit precision"
  //   「如果我们用 Python 浮点数创建张量，PyTorch 默认会创建 32 位精度的张量」
  ember::Tensor floatvec = ember::tensor({1.0, 2.0, 3.0});
  std::cout << floatvec.dtype() << "\n";  // torch.float32

  // §2.2 "it is possible to change the precision using a tensor's .to method"
  //   「使用张量的 .to 方法可以随时更改精度」
  floatvec = tensor1d.to(ember::kFloat32);
  std::cout << floatvec.dtype() << "\n";  // torch.float32

  // ---------------------------------------------------------------- §2.3 「常见 PyTorch 张量运算」
  // §2.3 "We already introduced the torch.tensor() function to create new tensors."
  //   「我们已经介绍过用于创建新张量的 torch.tensor() 函数」
  tensor2d = ember::tensor({{1, 2, 3},
                            {4, 5, 6}});
  std::cout << tensor2d << "\n";

  // §2.3 "the .shape attribute allows us to access the shape of a tensor": torch.Size([2, 3])
  //   「.shape 属性让我们可以访问张量的形状」
  std::cout << ember::size_string(tensor2d.shape()) << "\n";

  // §2.3 "To reshape the tensor into a 3 × 2 tensor, we can use the .reshape method"
  //   「要把张量重塑成 3 × 2 的张量，可以使用 .reshape 方法」
  std::cout << tensor2d.reshape(3, 2) << "\n";

  // §2.3 "the more common command for reshaping tensors in PyTorch is .view()"
  //   「PyTorch 中更常见的重塑张量的命令是 .view()」
  std::cout << tensor2d.view(3, 2) << "\n";

  // §2.3 "we can use .T to transpose a tensor, which means flipping it across its diagonal"
  //   「我们可以使用 .T 转置张量，也就是沿对角线翻转张量」
  std::cout << tensor2d.T() << "\n";

  // §2.3 "the common way to multiply two matrices in PyTorch is the .matmul method"
  //   「在 PyTorch 中两个矩阵相乘的常用方法是 .matmul 方法」
  std::cout << tensor2d.matmul(tensor2d.T()) << "\n";

  // §2.3 "we can also adopt the @ operator" 「我们也可以采用 @ 运算符」 — C++ has no @, so it
  // is the free function matmul.
  std::cout << ember::matmul(tensor2d, tensor2d.T()) << "\n";
  return 0;
}
