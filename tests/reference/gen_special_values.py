"""tests/reference/gen_special_values.py — PyTorch's answers at the edges of every dtype.

Run with PyTorch:  python3 tests/reference/gen_special_values.py
Writes special_values.json, read by tests/core/test_special_values.cpp, which checks them bit
for bit (the sign of zero, NaN, the exact int64) on the CPU backend, both kernel paths.

The inputs are NaN, ±inf, ±0, the smallest denormal, values that do not fit the integer
dtypes (1e20, 3e9, 300, -1) and the integer dtypes' extremes, so that integer overflow
(PyTorch wraps modulo 2^N), float-to-integer casts (undefined in C++; PyTorch on x86 gives
what the hardware gives) and the IEEE corner cases of each op are pinned down. Each input
vector is also repeated to 67 elements, so PyTorch's vectorised loops are measured as well as
its scalar tails: the two must agree for a case to be written (the script fails otherwise;
sums, products and matrix products are checked on the short inputs only).
"""
import math

import torch

from reflib import tensor_json, write

cases = []

FLOAT_INPUTS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 2.5, -2.5, 0.5, -0.5, 1e20, -1e20,
                3e9, -3e9, 300.0, -300.0, 255.5, 65.0, 88.75, -88.75, 710.0]
DENORMAL = {torch.float32: 1.401298464324817e-45, torch.float64: 5e-324}
INT_INPUTS = {
    torch.int64: [2**63 - 1, -2**63, -1, 0, 1, 2**62, -2**62, 3, 2**32 + 5, -7],
    torch.int32: [2**31 - 1, -2**31, -1, 0, 1, 2**30, -2**30, 3, 65537, -7],
    torch.uint8: [255, 0, 1, 128, 127, 16, 3, 200, 17, 254],
}


def float_inputs(dtype):
    d = DENORMAL[dtype]
    return torch.tensor(FLOAT_INPUTS + [d, -d], dtype=dtype)


def repeated(x, n=67):
    return x.repeat((n + x.numel() - 1) // x.numel())[:n]


def add(op, args, fn, reduction=False, **extra):
    """fn(*args) must give the same values on the short inputs and inside 67-element ones."""
    result = fn(*args)
    if reduction:
        cases.append({"op": op, "args": [tensor_json(a) for a in args], "result": tensor_json(result), **extra})
        return
    long_args = [repeated(a) for a in args]
    long_result = fn(*long_args)
    short_again = long_result[: result.numel()]
    same = torch.equal(short_again.isnan(), result.isnan()) if result.is_floating_point() else True
    if result.is_floating_point():
        keep = ~result.isnan()
        same = same and torch.equal(short_again[keep], result[keep]) and \
            torch.equal(torch.signbit(short_again[keep]), torch.signbit(result[keep]))
    else:
        same = torch.equal(short_again, result)
    assert same, f"{op}: vectorised and scalar paths disagree: {result} vs {short_again}"
    cases.append({"op": op, "args": [tensor_json(a) for a in args], "result": tensor_json(result), **extra})


def add_casts_and_reductions(x, reduced):
    """x to every other dtype; sum and prod of `reduced` (a slice of x)."""
    for target in (torch.int64, torch.int32, torch.uint8, torch.bool, torch.float32, torch.float64):
        if target != x.dtype:
            add("to_dtype", [x], lambda t, d=target: t.to(d), dtype=str(target).replace("torch.", ""))
    add("sum", [reduced], lambda t: t.sum().reshape(1), reduction=True)
    add("prod", [reduced], lambda t: t.prod().reshape(1), reduction=True)


for dtype in (torch.float32, torch.float64):
    x = float_inputs(dtype)
    y = x.roll(5)
    for name, fn in [("neg", torch.neg), ("abs", torch.abs), ("sign", torch.sign), ("relu", torch.relu),
                     ("exp", torch.exp), ("log", torch.log), ("sqrt", torch.sqrt), ("sigmoid", torch.sigmoid),
                     ("tanh", torch.tanh)]:
        add(name, [x], fn)
    add("clamp", [x], lambda t: torch.clamp(t, -1.0, 1.0), min=-1.0, max=1.0)
    add("clamp", [x], lambda t: torch.clamp(t, min=0.0), min=0.0, max=None)
    for exponent in (2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.5):
        add("pow_scalar", [x], lambda t, e=exponent: torch.pow(t, e), exponent=exponent)
    for name, fn in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div),
                     ("maximum", torch.maximum), ("minimum", torch.minimum), ("pow", torch.pow),
                     ("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le), ("gt", torch.gt),
                     ("ge", torch.ge), ("logical_and", torch.logical_and)]:
        add(name, [x, y], fn)
    add("add", [x, y], lambda a, b: torch.add(a, b, alpha=2.5), alpha=2.5)
    add_casts_and_reductions(x, x[3:11])

for dtype, values in INT_INPUTS.items():
    x = torch.tensor(values, dtype=dtype)
    y = x.roll(3)
    ops = [("neg", torch.neg), ("abs", torch.abs), ("sign", torch.sign), ("relu", torch.relu)]
    for name, fn in ops:
        add(name, [x], fn)
    for exponent in (2, 3):
        add("pow_scalar", [x], lambda t, e=exponent: torch.pow(t, e), exponent=exponent)
    for name, fn in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("maximum", torch.maximum),
                     ("minimum", torch.minimum), ("lt", torch.lt)]:
        add(name, [x, y], fn)
    add("add", [x, y], lambda a, b: torch.add(a, b, alpha=3), alpha=3)
    add_casts_and_reductions(x, x)

# Integer matrix products wrap as the elementwise ops do (found by the API fuzzer: ember's
# GEMM overflowed int64 in C++).
big = torch.tensor([[2**62, 3, -7], [5, 2**61 + 1, 2**40], [-2**63, 1, 2**33]], dtype=torch.int64)
add("mm", [big, big.t().contiguous()], torch.mm, reduction=True)
add("mm", [big.to(torch.int32), big.t().contiguous().to(torch.int32)], torch.mm, reduction=True)

write("special_values.json", {"cases": cases})
