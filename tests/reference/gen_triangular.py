"""tests/reference/gen_triangular.py — PyTorch reference values for torch.tril / torch.triu.

Writes triangular.json, read by tests/autograd/test_triangular.cpp: each case is an input,
a diagonal, the tril and triu of it, and (floating inputs) the gradient of
sum(tril(x) * grad) / sum(triu(x) * grad) with respect to x.
Run: /work/venv/bin/python tests/reference/gen_triangular.py
"""
import torch

from reflib import tensor_json, write

gen = torch.Generator().manual_seed(0)
cases = []
for shape in ([3, 4], [4, 2], [2, 3, 5], [2, 1, 3, 3], [0, 3], [3, 0]):
    for diagonal in (-5, -1, 0, 1, 2, 10):
        for dtype in (torch.float32, torch.float64, torch.int64, torch.bool):
            if dtype == torch.bool:
                x = torch.rand(shape, generator=gen) > 0.3
            elif dtype == torch.int64:
                x = torch.randint(-9, 10, shape, generator=gen)
            else:
                x = torch.randn(shape, generator=gen, dtype=dtype)
            case = {"x": tensor_json(x), "diagonal": diagonal, "tril": tensor_json(torch.tril(x, diagonal)),
                    "triu": tensor_json(torch.triu(x, diagonal))}
            if dtype.is_floating_point:
                grad = torch.randn(shape, generator=gen, dtype=dtype)
                for name, op in (("tril", torch.tril), ("triu", torch.triu)):
                    leaf = x.clone().requires_grad_()
                    (op(leaf, diagonal) * grad).sum().backward()
                    case["grad_" + name] = tensor_json(leaf.grad)
                case["grad"] = tensor_json(grad)
            cases.append(case)
errors = {}
for name, op in (("tril", torch.tril), ("triu", torch.triu)):
    try:
        op(torch.ones(3))
    except RuntimeError as error:
        errors[name] = str(error)
write("triangular.json", {"cases": cases, "errors": errors})
