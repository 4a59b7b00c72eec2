"""tests/reference/gen_print.py — PyTorch's repr() of many tensors, for ember's printer.

Run with PyTorch 2.x: python3 tests/reference/gen_print.py   (writes print.json)
Each case stores the input tensor, how to view it (transposed or not), autograd flags,
print options, and the exact string repr() gives; tests/core/test_print.cpp rebuilds the
tensor in ember and compares ember::to_string with it character for character.
"""
import math

import torch

from reflib import tensor_json, write

cases = []


def add(name, t, *, transpose=False, requires_grad=False, grad_fn=None, options=None):
    base = t
    shown = base.t() if transpose else base
    if requires_grad:
        shown = shown.detach().requires_grad_(True)
    text = None
    if options:
        torch.set_printoptions(**options)
    try:
        if grad_fn is not None:
            # A real graph node: x * 1 keeps the values; its grad_fn name is what repr shows.
            leaf = shown.detach().requires_grad_(True)
            made = {"MulBackward0": lambda: leaf * 1, "AddBackward0": lambda: leaf + 0}[grad_fn]()
            assert type(made.grad_fn).__name__ == grad_fn
            text = repr(made)
        else:
            text = repr(shown)
    finally:
        torch.set_printoptions(profile="default")
    cases.append({"name": name, "input": tensor_json(base), "transpose": transpose,
                  "requires_grad": requires_grad, "grad_fn": grad_fn, "options": options or {}, "repr": text})


g = torch.Generator().manual_seed(0)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g, dtype=dtype)


# --- integers and bools
add("int 0-d", torch.tensor(1))
add("int 1-d", torch.tensor([1, 2, 3]))
add("int 2-d", torch.tensor([[1, 2], [3, 4]]))
add("int 2x3", torch.tensor([[1, 2, 3], [4, 5, 6]]))
add("int 3-d", torch.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]))
add("int negative widths", torch.tensor([-1, 100, 3]))
add("int32 suffix", torch.tensor([1, 2], dtype=torch.int32))
add("uint8 suffix", torch.tensor([0, 255, 7], dtype=torch.uint8))
add("int64 large", torch.tensor([2 ** 40, -5]))
add("int matmul", torch.tensor([[14, 32], [32, 77]]))
add("int 0-d negative", torch.tensor(-42))
add("int long row wraps", torch.arange(100))
add("int 4-d", torch.arange(24).reshape(2, 3, 2, 2))
add("bool 1-d", torch.tensor([True, False]))
add("bool 2-d", torch.tensor([[True], [False]]))
add("bool 0-d", torch.tensor(True))
add("bool all true", torch.tensor([True, True]))

# --- floats: fixed, integer-valued, scientific
add("float 0-d", torch.tensor(0.0852))
add("float 0-d int valued", torch.tensor(3.0))
add("float 0-d zero", torch.tensor(0.0))
add("float 1-d", torch.tensor([0.3113, 0.3934, 0.2952]))
add("float int valued", torch.tensor([1.0, 2.0, 3.0]))
add("float mixed signs", torch.tensor([1.5, -2.25]))
add("float 2-d signs", torch.tensor([[2.3, -1.1], [-0.9, 2.9]]))
add("float tiny sci", torch.tensor([1e-5, 1.0]))
add("float huge sci", torch.tensor([1e8, 1.0]))
add("float huge only", torch.tensor([1e9]))
add("float tiny only", torch.tensor([1e-5]))
add("float 1e-4 edge", torch.tensor([1e-4, 0.5]))
add("float ratio 1000", torch.tensor([1000.0, 1.0]))
add("float ratio 1001 int mode", torch.tensor([1001.0, 1.0]))
add("float ratio 1001 frac", torch.tensor([1001.5, 1.0]))
add("float big fixed", torch.tensor([123456.789, 0.5]))
add("float nonfinite", torch.tensor([math.nan, 1.5, math.inf, -math.inf]))
add("float nonfinite int", torch.tensor([math.nan, 2.0, -math.inf]))
add("float only nan", torch.tensor([math.nan]))
add("float zeros", torch.zeros(3))
add("float negative zero", torch.tensor([-0.0, 1.5]))
add("float 0-d nan", torch.tensor(math.nan))
add("float 0-d inf", torch.tensor(-math.inf))
add("float rounding", torch.tensor([0.00005, 0.12345, 0.99995]))
add("float negative sci", torch.tensor([-1e-7, 3.0]))
add("float sci exponents", torch.tensor([1e-12, 1e12, -3.5e20]))
add("float64 suffix", torch.tensor([1.5, 2.0], dtype=torch.float64))
add("float64 0-d", torch.tensor(0.1, dtype=torch.float64))
add("float64 many digits", torch.tensor([1 / 3, 2 / 3], dtype=torch.float64))
add("float softmax like", torch.tensor([[0.9991, 0.0009], [0.0317, 0.9683]]))
add("float softmax like sci off", torch.tensor([[0.9991, 0.0009], [0.0317, 0.9683]]), options={"sci_mode": False})
add("float sci forced", torch.tensor([0.5, 1.5]), options={"sci_mode": True})
add("float int valued sci forced", torch.tensor([1.0, 2.0]), options={"sci_mode": True})
add("float precision 2", torch.tensor([0.3113, 0.3934, 12.5]), options={"precision": 2})
add("float precision 6", torch.tensor([1 / 3, 2.0]), options={"precision": 6})
add("float linewidth 40", torch.arange(20.0) / 3, options={"linewidth": 40})
add("float randn row", randn(40))
add("float randn 2-d", randn(5, 7))
add("float randn 3-d", randn(2, 3, 4))
add("float randn 4-d", randn(2, 2, 2, 3))
add("float arange wraps", torch.arange(30.0))
add("float linspace", torch.linspace(0, 1, 25))
add("float64 randn", randn(6, dtype=torch.float64))
add("float column", randn(4, 1))
add("float row in 2-d", randn(1, 12))

# --- empty tensors
add("empty 1-d float", torch.tensor([]))
add("empty 0x3", torch.zeros(0, 3))
add("empty int64", torch.zeros(0, dtype=torch.int64))
add("empty 2x0x3", torch.zeros(2, 0, 3))
add("empty float64", torch.zeros(0, dtype=torch.float64))
add("empty bool 3x0", torch.zeros(3, 0, dtype=torch.bool))
add("empty int32 2-d", torch.zeros(0, 2, dtype=torch.int32))

# --- summarisation ("..." above 1000 elements, 3 edge items)
add("summarize int 1-d", torch.arange(2000))
add("summarize float 1-d", randn(2000))
add("summarize 30x50", randn(30, 50) * 0.1)
add("summarize 3-d", randn(10, 10, 20))
add("summarize wide rows", randn(4, 400))
add("summarize tall", randn(400, 4))
add("summarize sci", torch.cat([randn(1100), torch.tensor([1e-6])]))
add("summarize threshold 5", torch.arange(10), options={"threshold": 5})
add("summarize edgeitems 2", torch.arange(20).reshape(4, 5), options={"threshold": 5, "edgeitems": 2})
add("summarize edgeitems 0", torch.arange(20.0), options={"threshold": 5, "edgeitems": 0})
add("summarize int valued", torch.arange(1500.0).reshape(30, 50))

# --- non-contiguous inputs (printed through strides)
add("transposed int", torch.tensor([[1, 2, 3], [4, 5, 6]]), transpose=True)
add("transposed float", randn(3, 5), transpose=True)
add("transposed summarized", randn(50, 40), transpose=True)

# --- autograd suffixes
add("requires_grad 1-d", torch.tensor([1.0, 2.0]), requires_grad=True)
add("requires_grad 0-d", torch.tensor(2.2), requires_grad=True)
add("requires_grad 2-d", randn(2, 3), requires_grad=True)
add("requires_grad suffix wraps", torch.arange(7.0) + 0.5, requires_grad=True)
add("requires_grad long wraps", randn(20), requires_grad=True)
add("requires_grad float64", torch.tensor([1.0, 2.5], dtype=torch.float64), requires_grad=True)
add("requires_grad float64 wraps", torch.arange(6.0, dtype=torch.float64) + 0.25, requires_grad=True)
add("grad_fn mul", torch.tensor([[0.1, -0.2, 0.3]]), grad_fn="MulBackward0")
add("grad_fn 0-d", torch.tensor(0.0852), grad_fn="MulBackward0")
add("grad_fn add 2-d", randn(2, 3), grad_fn="AddBackward0")
add("grad_fn wraps", torch.arange(7.0) + 0.5, grad_fn="AddBackward0")
add("grad_fn float64", torch.tensor([1.0, 2.5], dtype=torch.float64), grad_fn="MulBackward0")
add("grad_fn empty", torch.zeros(0, 3), grad_fn="MulBackward0")

sizes = {"scalar": list(torch.Size([])), "vector": list(torch.Size([3])), "matrix": list(torch.Size([2, 3]))}
size_strings = {k: str(torch.Size(v)) for k, v in sizes.items()}
write("print.json", {"cases": cases, "sizes": sizes, "size_strings": size_strings})
