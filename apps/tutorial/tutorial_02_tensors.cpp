// apps/tutorial/tutorial_02_tensors.cpp — tutorial §2 "Understanding tensors", step by step.
//
// Creating tensors of 0 to 3 dimensions (§2.1), their dtypes and .to() (§2.2), and the
// everyday operations .shape, .reshape, .view, .T and matrix multiplication (§2.3). Where
// the tutorial shows a notebook cell's value, this program prints it. The output matches
// tests/apps/expected/tutorial_02_tensors.txt, produced by the same steps in PyTorch
// (tests/reference/tutorial_02_tensors.py); tests/apps/test_tutorial_02.cpp compares them.
#include <iostream>

#include <ember/ember.h>

int main() {
  // ---------------------------------------------------------------- §2.1
  // "create a 0D tensor (scalar) from a Python integer": tensor0d = torch.tensor(1)
  ember::Tensor tensor0d = ember::tensor(1);
  // "create a 1D tensor (vector) from a Python list": torch.tensor([1, 2, 3])
  ember::Tensor tensor1d = ember::tensor({1, 2, 3});
  // "create a 2D tensor from a nested Python list": torch.tensor([[1, 2], [3, 4]])
  ember::Tensor tensor2d = ember::tensor({{1, 2}, {3, 4}});
  // "create a 3D tensor from a nested Python list" — C++ braces nest just like the lists.
  ember::Tensor tensor3d = ember::tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}});
  std::cout << tensor0d << "\n" << tensor1d << "\n" << tensor2d << "\n" << tensor3d << "\n";

  // ---------------------------------------------------------------- §2.2
  // "PyTorch adopts the default 64-bit integer data type from Python": print(tensor1d.dtype)
  tensor1d = ember::tensor({1, 2, 3});
  std::cout << tensor1d.dtype() << "\n";  // torch.int64

  // "If we create tensors from Python floats, PyTorch creates tensors with 32-bit precision"
  ember::Tensor floatvec = ember::tensor({1.0, 2.0, 3.0});
  std::cout << floatvec.dtype() << "\n";  // torch.float32

  // "it is possible to change the precision using a tensor's .to method"
  floatvec = tensor1d.to(ember::kFloat32);
  std::cout << floatvec.dtype() << "\n";  // torch.float32

  // ---------------------------------------------------------------- §2.3
  // "We already introduced the torch.tensor() function to create new tensors."
  tensor2d = ember::tensor({{1, 2, 3},
                            {4, 5, 6}});
  std::cout << tensor2d << "\n";

  // "the .shape attribute allows us to access the shape of a tensor": torch.Size([2, 3])
  std::cout << ember::size_string(tensor2d.shape()) << "\n";

  // "To reshape the tensor into a 3 × 2 tensor, we can use the .reshape method"
  std::cout << tensor2d.reshape(3, 2) << "\n";

  // "the more common command for reshaping tensors in PyTorch is .view()"
  std::cout << tensor2d.view(3, 2) << "\n";

  // "we can use .T to transpose a tensor, which means flipping it across its diagonal"
  std::cout << tensor2d.T() << "\n";

  // "the common way to multiply two matrices in PyTorch is the .matmul method"
  std::cout << tensor2d.matmul(tensor2d.T()) << "\n";

  // "we can also adopt the @ operator" — C++ has no @, so it is the free function matmul.
  std::cout << ember::matmul(tensor2d, tensor2d.T()) << "\n";
  return 0;
}
