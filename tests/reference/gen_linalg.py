"""tests/reference/gen_linalg.py — reference results and errors of mm, bmm, addmm, matmul.

Run with PyTorch 2.x (pip's torch; generated with 2.15):  python3 tests/reference/gen_linalg.py
Writes linalg.json, read by tests/core/test_linalg.cpp. Each case lists its operands as
contiguous JSON tensors plus a flag per operand: "t" means the stored tensor holds the
operand with its last two dims swapped, and the test transposes it back (a
non-contiguous operand, as PyTorch receives it here).
"""
import torch

from reflib import tensor_json, write

torch.manual_seed(0)


def operand(shape, transposed=False, dtype=torch.float32, empty_ok=True):
    """Returns (the operand as used, its JSON form, the layout flag)."""
    if transposed:
        stored_shape = list(shape[:-2]) + [shape[-1], shape[-2]]
        stored = make(stored_shape, dtype)
        return stored.transpose(-1, -2), tensor_json(stored), "t"
    stored = make(shape, dtype)
    return stored, tensor_json(stored), "c"


def make(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    return torch.randint(-5, 6, shape, dtype=dtype)


def run(op, tensors, beta=1, alpha=1):
    if op == "mm":
        return torch.mm(*tensors)
    if op == "bmm":
        return torch.bmm(*tensors)
    if op == "matmul":
        return torch.matmul(*tensors)
    if op == "addmm":
        return torch.addmm(*tensors, beta=beta, alpha=alpha)
    raise ValueError(op)


CASES = [
    # (op, [(shape, transposed, dtype)...], beta, alpha)
    ("mm", [([2, 3], False), ([3, 4], False)]),
    ("mm", [([7, 5], True), ([5, 9], False)]),
    ("mm", [([7, 5], False), ([5, 9], True)]),
    ("mm", [([33, 31], True), ([31, 65], True)]),
    ("mm", [([1, 1], False), ([1, 1], False)]),
    ("mm", [([2, 0], False), ([0, 3], False)]),     # k = 0: zeros
    ("mm", [([0, 3], False), ([3, 4], False)]),     # m = 0: empty
    ("mm", [([2, 3], False), ([3, 4], False)], torch.float64),
    ("mm", [([3, 4], False), ([4, 2], True)], torch.int64),
    ("mm", [([3, 4], False), ([4, 2], False)], torch.int32),
    ("bmm", [([3, 2, 5], False), ([3, 5, 4], False)]),
    ("bmm", [([2, 7, 31], True), ([2, 31, 33], True)]),
    ("bmm", [([0, 2, 3], False), ([0, 3, 4], False)]),
    ("addmm", [([4], False), ([3, 5], False), ([5, 4], False)], None, 1, 1),
    ("addmm", [([3, 4], False), ([3, 5], True), ([5, 4], False)], None, 0.5, 2.0),
    ("addmm", [([3, 1], False), ([3, 5], False), ([5, 4], True)], None, -1, 0.25),
    ("addmm", [([4], False), ([3, 0], False), ([0, 4], False)], None, 2, 1),
    ("matmul", [([3], False), ([3], False)]),
    ("matmul", [([0], False), ([0], False)]),
    ("matmul", [([2, 3], False), ([3], False)]),
    ("matmul", [([2, 3], True), ([3], False)]),
    ("matmul", [([3], False), ([3, 4], False)]),
    ("matmul", [([2, 3], False), ([3, 4], True)]),
    ("matmul", [([2, 2, 3], False), ([3], False)]),
    ("matmul", [([2, 2, 3], False), ([3, 4], False)]),
    ("matmul", [([2, 2, 3], True), ([3, 4], False)]),
    ("matmul", [([3], False), ([2, 3, 4], False)]),
    ("matmul", [([5, 3], False), ([2, 3, 4], True)]),
    ("matmul", [([2, 1, 2, 3], False), ([3, 3, 4], False)]),   # batch dims broadcast
    ("matmul", [([1, 2, 3], False), ([4, 3, 2], True)]),
    ("matmul", [([4, 2, 3], False), ([3, 4], False)], torch.float64),
    ("matmul", [([2, 0, 3], False), ([3, 4], False)]),
    ("matmul", [([2, 2, 0], False), ([2, 0, 4], False)]),
    ("matmul", [([2, 3], False), ([3], False)], torch.int64),
]

ERROR_CASES = [
    ("mm", [[2, 3], [2, 3]]),
    ("mm", [[2, 3, 1], [2, 3]]),
    ("mm", [[2, 3], [3]]),
    ("mm", [[2, 3], [3, 2]], [torch.float32, torch.float64]),
    ("mm", [[2, 3], [3, 2]], [torch.bool, torch.bool]),
    ("bmm", [[2, 3, 4], [2, 3, 4]]),
    ("bmm", [[2, 3, 4], [3, 4, 4]]),
    ("bmm", [[2, 3], [3, 4, 4]]),
    ("bmm", [[2, 3, 4], [4, 4]]),
    ("bmm", [[2, 3, 4], [2, 4, 5]], [torch.float32, torch.float64]),
    ("bmm", [[2, 3, 4], [2, 4, 5]], [torch.bool, torch.bool]),
    ("addmm", [[3], [2, 3], [2, 3]]),
    ("addmm", [[3], [2, 3], [3, 4]]),
    ("addmm", [[4], [2, 3], [3, 4]], [torch.float64, torch.float32, torch.float32]),
    ("addmm", [[2, 4], [2, 3], [3, 4]], [torch.float32, torch.float32, torch.float64]),
    ("addmm", [[4], [2, 3, 1], [3, 4]]),
    ("addmm", [[2, 4], [2, 3], [3, 4, 4]]),
    ("matmul", [[], [3]]),
    ("matmul", [[3], []]),
    ("matmul", [[3], [4]]),
    ("matmul", [[3], [3]], [torch.float64, torch.float32]),
    ("matmul", [[3], [3]], [torch.bool, torch.bool]),
    ("matmul", [[2, 3], [4]]),
    ("matmul", [[2, 3], [3]], [torch.float64, torch.float32]),
    ("matmul", [[2, 3], [3]], [torch.bool, torch.bool]),
    ("matmul", [[3], [4, 2]]),
    ("matmul", [[2, 3], [4, 5]]),
    ("matmul", [[2, 3], [3, 2]], [torch.float64, torch.float32]),
    ("matmul", [[2, 2, 3], [4, 5]]),
    ("matmul", [[2, 2, 3], [4]]),
    ("matmul", [[2, 2, 3], [3, 3, 4]]),
    ("matmul", [[2, 2, 3], [2, 4, 5]]),
    ("matmul", [[2, 2, 3], [2, 3, 5]], [torch.float32, torch.float64]),
    ("matmul", [[2, 2, 3], [2, 3, 5]], [torch.bool, torch.bool]),
    ("matmul", [[3], [2, 4, 5]]),
    ("matmul", [[2, 3], [2, 4, 5]]),
]


def main():
    cases = []
    for entry in CASES:
        op, specs = entry[0], entry[1]
        dtype = entry[2] if len(entry) > 2 and entry[2] is not None else torch.float32
        beta = entry[3] if len(entry) > 3 else 1
        alpha = entry[4] if len(entry) > 4 else 1
        used, stored, layouts = [], [], []
        for shape, transposed in specs:
            t, js, layout = operand(shape, transposed and len(shape) >= 2, dtype)
            used.append(t)
            stored.append(js)
            layouts.append(layout)
        out = run(op, used, beta, alpha)
        cases.append({"op": op, "inputs": stored, "layouts": layouts, "beta": beta, "alpha": alpha,
                      "output": tensor_json(out)})
    errors = []
    for entry in ERROR_CASES:
        op, shapes = entry[0], entry[1]
        dtypes = entry[2] if len(entry) > 2 else [torch.float32] * len(shapes)
        tensors = [torch.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)]
        try:
            run(op, tensors)
        except RuntimeError as error:
            errors.append({"op": op, "shapes": shapes,
                           "dtypes": [str(d).replace("torch.", "") for d in dtypes], "message": str(error)})
        else:
            raise AssertionError(f"{op}{shapes} did not fail")
    # Tutorial §2: tensor2d = torch.tensor([[1, 2, 3], [4, 5, 6]]); tensor2d @ tensor2d.T
    tensor2d = torch.tensor([[1, 2, 3], [4, 5, 6]])
    tutorial = {"input": tensor_json(tensor2d), "output": tensor_json(tensor2d @ tensor2d.T)}
    write("linalg.json", {"cases": cases, "errors": errors, "tutorial": tutorial})


if __name__ == "__main__":
    main()
