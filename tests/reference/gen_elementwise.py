"""tests/reference/gen_elementwise.py — PyTorch reference values for the elementwise ops.

Run with PyTorch 2.x (pip's torch; generated with 2.15):  python3 tests/reference/gen_elementwise.py
Writes elementwise.json, read by tests/core/test_elementwise.cpp and test_copy.cpp.

Each case names a native op, its operands and the expected result. An operand is either a
tensor (reflib.tensor_json) with an optional "layout" ("t": use the transpose of the stored
tensor, "step2": take every second element of the last dim, "expand": broadcast the stored
tensor to the sizes in "expand", stride 0), or {"scalar": value}, which the C++ side turns
into a wrapped number (ember::scalar_to_tensor), like a Python number. Cases whose op ends
in "_scalar_fn" call ember::add(tensor, number, alpha) etc. and the Tensor methods with a
plain C++ number (the last operand is a {"scalar": value}, or the first for "rsub"/"rdiv").
"""
import torch

from reflib import tensor_json, write

torch.manual_seed(0)
cases = []


def operand(x, layout=None):
    """x is what the op sees; the stored tensor is chosen so that applying layout gives x."""
    if isinstance(x, (bool, int, float)):
        return {"scalar": x}
    if isinstance(layout, list):  # x expanded to these sizes (a broadcast view, stride 0)
        j = tensor_json(x)
        j["layout"] = "expand"
        j["expand"] = layout
        return j
    if layout == "t":
        stored = x.t().contiguous()
        assert torch.equal(stored.t(), x)
    elif layout == "step2":
        filler = ~x if x.dtype == torch.bool else x + 100  # the skipped elements, same dtype
        stored = torch.stack([x, filler], dim=-1).reshape(*x.shape[:-1], x.shape[-1] * 2)
        assert torch.equal(stored[..., ::2], x)
    else:
        stored = x
    j = tensor_json(stored)
    if layout:
        j["layout"] = layout
    return j


def add_case(op, args, result, **extra):
    cases.append({"op": op, "args": [operand(*a) if isinstance(a, tuple) else operand(a) for a in args],
                  "result": tensor_json(result), **extra})


f = torch.tensor
a23 = torch.randn(2, 3)
b3 = torch.randn(3)
a213 = torch.randn(2, 1, 3)
b41 = torch.randn(4, 1)
a34 = torch.randn(3, 4)
i23 = f([[1, -2, 3], [4, 5, -6]])
i3_32 = f([2, 3, 4], dtype=torch.int32)
bool23 = f([[True, False, True], [False, False, True]])
bool3 = f([True, True, False])
empty03 = torch.randn(0, 3)
zero_d = f(1.5)
pos23 = torch.rand(2, 3) + 0.5
with_nan = f([float("nan"), -1.0, 0.0, 2.0, float("inf"), -float("inf")])

binary = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "maximum": torch.maximum,
    "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt,
    "ge": torch.ge, "logical_and": torch.logical_and,
}
for name, fn in binary.items():
    add_case(name, [a23, b3], fn(a23, b3))                      # broadcast a row
    add_case(name, [a213, b41], fn(a213, b41))                  # broadcast both ways
    add_case(name, [(a34.t(), "t"), b3.reshape(1, 3)[:, :1]], fn(a34.t(), b3.reshape(1, 3)[:, :1]))
    add_case(name, [(a23, "step2"), a23], fn(a23, a23))         # strided view
    add_case(name, [i23, b3], fn(i23, b3))                      # int64 with float32
    add_case(name, [i3_32, f(2)], fn(i3_32, f(2)))              # int32 with int64 0-d: stays int32
    add_case(name, [a23, f(2.0, dtype=torch.float64)], fn(a23, f(2.0, dtype=torch.float64)))
    if name not in ("maximum", "minimum", "logical_and"):      # these take no Python number
        add_case(name, [i23, 2.5], fn(i23, 2.5))                # wrapped float number
        add_case(name, [i23, 3], fn(i23, 3))
    add_case(name, [empty03, b3], fn(empty03, b3))
    add_case(name, [zero_d, f(-0.5)], fn(zero_d, f(-0.5)))
    add_case(name, [with_nan, f(0.0)], fn(with_nan, f(0.0)))
    if name != "sub":
        add_case(name, [bool23, bool3], fn(bool23, bool3))
add_case("div", [i23, f([2, 4, 5])], torch.div(i23, f([2, 4, 5])))   # true division
# A Python number on the left (2.5 - x, 3 / x, 2 ** x): the wrapped number is operand a.
add_case("sub", [2.5, i23], 2.5 - i23)
add_case("div", [3, i23], 3 / i23)
add_case("pow", [2, f([0, 1, 3])], 2 ** f([0, 1, 3]))
add_case("pow", [2.0, a23], 2.0 ** a23)
add_case("mul", [True, bool3], True * bool3)
add_case("add", [f([1, 2], dtype=torch.uint8), f([-1, 3], dtype=torch.int32)],
         f([1, 2], dtype=torch.uint8) + f([-1, 3], dtype=torch.int32))
add_case("maximum", [f([1, 200], dtype=torch.uint8), bool3[:2]], torch.maximum(f([1, 200], dtype=torch.uint8), bool3[:2]))
add_case("add", [a23, b3], torch.add(a23, b3, alpha=2.5), alpha=2.5)
add_case("sub", [i23, f([1, 1, 1])], torch.sub(i23, f([1, 1, 1]), alpha=3), alpha=3)
add_case("pow", [pos23, b3], torch.pow(pos23, b3))
add_case("pow", [f([2, 3, -2]), f([3, 0, 5])], torch.pow(f([2, 3, -2]), f([3, 0, 5])))
add_case("pow", [f([1, -1, 2]), f([-1, -3, 2])], torch.pow(f([1, -1, 2]), f([-1, -3, 2])))

unary = {"neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "abs": torch.abs,
         "sign": torch.sign, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu}
for name, fn in unary.items():
    add_case(name, [a23], fn(a23))
    add_case(name, [(a34.t(), "t")], fn(a34.t()))
    add_case(name, [i23], fn(i23))
    add_case(name, [empty03], fn(empty03))
    add_case(name, [zero_d], fn(zero_d))
    add_case(name, [with_nan], fn(with_nan))
    add_case(name, [a23.double()], fn(a23.double()))
add_case("sign", [bool3], torch.sign(bool3))
add_case("exp", [bool3], torch.exp(bool3))

clamp_input = f([-2.0, -0.5, 0.0, 0.7, 3.0, float("nan")])
for low, high in [(-1.0, 1.0), (0.0, None), (None, 0.5), (2.0, 1.0)]:
    add_case("clamp", [clamp_input], torch.clamp(clamp_input, low, high), min=low, max=high)
add_case("clamp", [i23], torch.clamp(i23, 0.5), min=0.5, max=None)   # float bound: float32 result
add_case("clamp", [i23], torch.clamp(i23, -1, 2), min=-1, max=2)
add_case("clamp", [(a34.t(), "t")], torch.clamp(a34.t(), -0.5, 0.5), min=-0.5, max=0.5)

for exponent in [2, 3, 0.5, -1.0, 0]:
    add_case("pow_scalar", [pos23], torch.pow(pos23, exponent), exponent=exponent)
add_case("pow_scalar", [i23], torch.pow(i23, 3), exponent=3)
add_case("pow_scalar", [i23], torch.pow(i23, 2.5), exponent=2.5)
add_case("pow_scalar", [(a34.t(), "t")], torch.pow(a34.t(), 2), exponent=2)

cond = a23 > 0
add_case("where", [cond, a23, b3], torch.where(cond, a23, b3))
add_case("where", [cond, i23, 2.5], torch.where(cond, i23, 2.5))
add_case("where", [bool3, a213, b41], torch.where(bool3, a213, b41))
add_case("where", [(cond.t().contiguous().t(), None), i23, f(0)], torch.where(cond, i23, f(0)))

for name in ["add_", "sub_", "mul_", "div_"]:
    fn = getattr(torch.Tensor, name)
    add_case(name, [a23, b3], fn(a23.clone(), b3))
    add_case(name, [(a34.t(), "t"), b3.reshape(1, 3)[:, :1]], fn(a34.t().clone(), b3.reshape(1, 3)[:, :1]))
    add_case(name, [a23, 2], fn(a23.clone(), 2))
    add_case(name, [empty03, b3], fn(empty03.clone(), b3))
    if name != "div_":
        add_case(name, [i3_32, f([1, 2, 3])], fn(i3_32.clone(), f([1, 2, 3])))   # int32 self, int64 other
add_case("add_", [a23, b3], a23.clone().add_(b3, alpha=-2.0), alpha=-2.0)

# Copies and casts.
for dtype in [torch.int64, torch.int32, torch.uint8, torch.bool, torch.float64]:
    src = f([[0.0, 1.7, 2.5], [3.2, 0.4, 9.9]])
    add_case("to_dtype", [src], src.to(dtype), dtype=str(dtype).replace("torch.", ""))
wrapping = f([-1.0, -2.7, 3.9, 300.0])  # float -> uint8 wraps modulo 256 (through int64)
add_case("to_dtype", [wrapping], wrapping.to(torch.uint8), dtype="uint8")
add_case("to_dtype", [f([float("nan"), 0.0, -0.0, -2.5])], f([float("nan"), 0.0, -0.0, -2.5]).to(torch.bool), dtype="bool")
add_case("to_dtype", [f([-3, 7, 300])], f([-3, 7, 300]).to(torch.uint8), dtype="uint8")
add_case("to_dtype", [(a34.t(), "t")], a34.t().to(torch.float64), dtype="float64")
add_case("to_dtype", [i23], i23.to(torch.float32), dtype="float32")
add_case("to_dtype", [bool23], bool23.to(torch.float32), dtype="float32")
add_case("contiguous", [(a34.t(), "t")], a34.t().contiguous())
add_case("contiguous", [(a23, "step2")], a23.contiguous())
add_case("clone", [(a34.t(), "t")], a34.t().clone())

# Coverage for odd layouts: 0-d, empty (numel 0), non-contiguous and broadcast operands.
a34_t = (a34.t(), "t")
for low, high in [(-0.5, 0.5), (0.0, None), (None, 1.0)]:
    add_case("clamp", [zero_d], torch.clamp(zero_d, low, high), min=low, max=high)
    add_case("clamp", [empty03], torch.clamp(empty03, low, high), min=low, max=high)
add_case("clamp", [f(7)], torch.clamp(f(7), -1, 2), min=-1, max=2)                      # int64 0-d
pos34 = torch.rand(3, 4) + 0.5
add_case("pow", [(pos34.t(), "t"), b3], torch.pow(pos34.t(), b3))                       # transposed base
add_case("pow", [(pos23, "step2"), (a34.t()[:2], "t")], torch.pow(pos23, a34.t()[:2]))        # both strided
add_case("pow", [zero_d, f(2.0)], torch.pow(zero_d, f(2.0)))                              # 0-d ** 0-d
add_case("pow", [pos23, f(0.5)], torch.pow(pos23, f(0.5)))                                # 0-d exponent
add_case("pow", [f(2.0), b3], torch.pow(f(2.0), b3))                                      # 0-d base
add_case("pow", [empty03, b3], torch.pow(empty03, b3))
add_case("pow", [f([2, 3]), f(2)], torch.pow(f([2, 3]), f(2)))                            # int64 with 0-d int64
for exponent in [2, 0.5, -1.0]:
    add_case("pow_scalar", [zero_d], torch.pow(zero_d, exponent), exponent=exponent)
    add_case("pow_scalar", [empty03], torch.pow(empty03, exponent), exponent=exponent)
add_case("pow_scalar", [f(3)], torch.pow(f(3), 2), exponent=2)                            # int64 0-d
add_case("pow_scalar", [(pos23, "step2")], torch.pow(pos23, 1.5), exponent=1.5)
cond34 = a34 > 0
add_case("where", [(cond34.t(), "t"), a34_t, b3.reshape(1, 3)[:, :1]], torch.where(cond34.t(), a34.t(), b3.reshape(1, 3)[:, :1]))
add_case("where", [(cond, "step2"), (a23, "step2"), a34.t()[:2]], torch.where(cond, a23, a34.t()[:2]))
add_case("where", [torch.zeros(0, 3, dtype=torch.bool), empty03, b3], torch.where(torch.zeros(0, 3, dtype=torch.bool), empty03, b3))
add_case("where", [bool3, empty03, 1.5], torch.where(bool3, empty03, 1.5))
add_case("where", [f(True), zero_d, f(-1.0)], torch.where(f(True), zero_d, f(-1.0)))       # all 0-d
for dtype in ["int64", "float64", "bool"]:
    d = getattr(torch, dtype)
    add_case("to_dtype", [zero_d], zero_d.to(d), dtype=dtype)
    add_case("to_dtype", [empty03], empty03.to(d), dtype=dtype)
    add_case("to_dtype", [(b3, [2, 3])], b3.expand(2, 3).to(d), dtype=dtype)               # broadcast view
add_case("to_dtype", [(f([[1.5], [-2.5]]), [2, 4])], f([[1.5], [-2.5]]).expand(2, 4).to(torch.int32), dtype="int32")
for name in ["add_", "sub_", "mul_", "div_"]:
    fn = getattr(torch.Tensor, name)
    add_case(name, [zero_d, f(-0.5)], fn(zero_d.clone(), f(-0.5)))                         # 0-d self, 0-d other
    add_case(name, [zero_d, 2], fn(zero_d.clone(), 2))                                     # 0-d self, number
    add_case(name, [zero_d, f(2.0, dtype=torch.float64)], fn(zero_d.clone(), f(2.0, dtype=torch.float64)))
    if name != "div_":
        add_case(name, [f(5), f(3)], fn(f(5), f(3)))                                       # int64 0-d self
add_case("add_", [zero_d, f(4.0)], zero_d.clone().add_(f(4.0), alpha=0.5), alpha=0.5)

# add/sub/mul/div with a plain number, as functions and methods (torch.add(x, 2, alpha=3),
# x.mul(2.5)): promotion treats the number as a Python scalar (int tensor * 2.5 is float32).
scalar_fns = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}
for name, fn in scalar_fns.items():
    op = name + "_scalar_fn"
    for number in [2, 2.5, True] if name in ("add", "mul") else [2, 2.5]:
        add_case(op, [i23, number], fn(i23, number))                                       # int64: int stays, float -> float32
        add_case(op, [a23, number], fn(a23, number))
    add_case(op, [i3_32, 3], fn(i3_32, 3))                                                 # int32 stays int32
    add_case(op, [a23.double(), 2.5], fn(a23.double(), 2.5))
    if name != "sub":
        add_case(op, [bool3, 2], fn(bool3, 2))                                             # bool with int
    add_case(op, [zero_d, 3], fn(zero_d, 3))                                               # 0-d
    add_case(op, [f(4), 2.5], fn(f(4), 2.5))                                               # int64 0-d * float
    add_case(op, [empty03, 2.5], fn(empty03, 2.5))                                         # empty
    add_case(op, [a34_t, -1.5], fn(a34.t(), -1.5))                                         # non-contiguous
    add_case(op, [(a23, "step2"), 2], fn(a23, 2))
    add_case(op, [(b3, [2, 3]), 0.5], fn(b3.expand(2, 3), 0.5))                            # broadcast view
for name, fn in [("add", torch.add), ("sub", torch.sub)]:
    op = name + "_scalar_fn"
    add_case(op, [i23, 2], fn(i23, 2, alpha=3), alpha=3)
    add_case(op, [a23, 2.5], fn(a23, 2.5, alpha=-0.5), alpha=-0.5)
    add_case(op, [a34_t, 1], fn(a34.t(), 1, alpha=2), alpha=2)
# The number first (torch.sub(2, x), torch.div(3, x)): free functions only.
add_case("rsub_scalar_fn", [2, i23], torch.sub(2, i23, alpha=3), alpha=3)
add_case("rsub_scalar_fn", [2.5, a34_t], torch.sub(2.5, a34.t()))
add_case("radd_scalar_fn", [1, (a23, "step2")], torch.add(1, a23, alpha=2), alpha=2)
add_case("rmul_scalar_fn", [2.5, i23], torch.mul(2.5, i23))
add_case("rdiv_scalar_fn", [3, i23], torch.div(3, i23))
add_case("rdiv_scalar_fn", [3, zero_d], torch.div(3, zero_d))

# torch.result_type for every pair of dtypes and operand kinds: "tensor" (1-d), "zero_dim"
# (a 0-d tensor) and "number" (a Python number of that dtype's category: True, 2, 2.5).
dtypes = [torch.bool, torch.uint8, torch.int32, torch.int64, torch.float32, torch.float64]


def make(kind, dtype):
    if kind == "tensor":
        return torch.ones(2, dtype=dtype)
    if kind == "zero_dim":
        return torch.tensor(1, dtype=dtype)
    return True if dtype == torch.bool else (2.5 if dtype.is_floating_point else 2)


promotion = []
for kind_a, kind_b in [("tensor", "tensor"), ("tensor", "zero_dim"), ("zero_dim", "tensor"), ("tensor", "number"),
                       ("zero_dim", "zero_dim"), ("zero_dim", "number")]:
    for dtype_a in dtypes:
        for dtype_b in dtypes:
            if kind_b == "number" and dtype_b in (torch.uint8, torch.int32, torch.float32):
                continue  # a Python number is only bool, int (int64) or float (float64)
            result = torch.result_type(make(kind_a, dtype_a), make(kind_b, dtype_b))
            name = lambda d: str(d).replace("torch.", "")
            promotion.append({"kind_a": kind_a, "dtype_a": name(dtype_a), "kind_b": kind_b, "dtype_b": name(dtype_b),
                              "result": name(result), "can_cast": torch.can_cast(dtype_a, dtype_b)})

write("elementwise.json", {"cases": cases, "promotion": promotion})
