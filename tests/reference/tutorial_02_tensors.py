"""tests/reference/tutorial_02_tensors.py — tutorial §2 (understanding tensors) run in PyTorch.
Its standard output is the transcript tests/apps/expected/tutorial_02_tensors.txt that
apps/tutorial/tutorial_02_tensors.cpp must reproduce character for character.
Run with PyTorch 2.x: python3 tests/reference/tutorial_02_tensors.py > tests/apps/expected/tutorial_02_tensors.txt
Where the tutorial shows a bare expression (a notebook cell's value), this script prints it.
"""
import torch

# §2.1 Scalars, vectors, matrices, and tensors
# create a 0D tensor (scalar) from a Python integer
tensor0d = torch.tensor(1)
# create a 1D tensor (vector) from a Python list
tensor1d = torch.tensor([1, 2, 3])
# create a 2D tensor from a nested Python list
tensor2d = torch.tensor([[1, 2], [3, 4]])
# create a 3D tensor from a nested Python list
tensor3d = torch.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
print(tensor0d)
print(tensor1d)
print(tensor2d)
print(tensor3d)

# §2.2 Tensor data types
tensor1d = torch.tensor([1, 2, 3])
print(tensor1d.dtype)

floatvec = torch.tensor([1.0, 2.0, 3.0])
print(floatvec.dtype)

floatvec = tensor1d.to(torch.float32)
print(floatvec.dtype)

# §2.3 Common PyTorch tensor operations
tensor2d = torch.tensor([[1, 2, 3],
                         [4, 5, 6]])
print(tensor2d)

print(tensor2d.shape)

print(tensor2d.reshape(3, 2))

print(tensor2d.view(3, 2))

print(tensor2d.T)

print(tensor2d.matmul(tensor2d.T))

print(tensor2d @ tensor2d.T)
