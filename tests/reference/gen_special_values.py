"""tests/reference/gen_special_values.py — PyTorch's integer and special-value reductions.

Run with PyTorch:  python3 tests/reference/gen_special_values.py
Writes special_values.json, read by tests/core/test_special_values.cpp, which checks them bit
for bit on the CPU backend.

The elementwise ops and casts at the edges of every dtype (NaN, ±inf, ±0, denormals, values
no integer dtype holds, the integer extremes) moved to the conformance sweep
(gen_conformance.py, whose value pool is this file's FLOAT_INPUTS and INT_INPUTS, run on every
backend and layout). What stays here: sums and products over those values (which the sweep
keeps exact) and integer matrix products that overflow: integer sums, products and GEMMs wrap
modulo 2^N as PyTorch's.
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


def add(op, args, fn):
    cases.append({"op": op, "args": [tensor_json(a) for a in args], "result": tensor_json(fn(*args))})


def add_reductions(reduced):
    add("sum", [reduced], lambda t: t.sum().reshape(1))
    add("prod", [reduced], lambda t: t.prod().reshape(1))


for dtype in (torch.float32, torch.float64):
    add_reductions(float_inputs(dtype)[3:11])

for dtype, values in INT_INPUTS.items():
    add_reductions(torch.tensor(values, dtype=dtype))

# Integer matrix products wrap as the elementwise ops do (found by the API fuzzer: ember's
# GEMM overflowed int64 in C++).
big = torch.tensor([[2**62, 3, -7], [5, 2**61 + 1, 2**40], [-2**63, 1, 2**33]], dtype=torch.int64)
add("mm", [big, big.t().contiguous()], torch.mm)
add("mm", [big.to(torch.int32), big.t().contiguous().to(torch.int32)], torch.mm)

write("special_values.json", {"cases": cases})
