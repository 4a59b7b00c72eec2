"""tests/reference/gen_factories.py — torch.tensor / arange / linspace / eye / full values.

Run with PyTorch 2.x: python3 tests/reference/gen_factories.py   (writes factories.json)
tests/core/test_factories.cpp rebuilds each case with ember and compares dtype, shape and
every value's bits.
"""
import torch

from reflib import tensor_json, write

arange_cases = [
    # (args, dtype or None)
    ((5,), None), ((0, 1, 0.1), None), ((5, 0, -1.5), None), ((0, 30, 0.7), None),
    ((-3, 3, 0.25), None), ((1, 2.5, 0.5), None), ((0, 10, 3), None), ((10, 0, -3), None),
    ((0, 1, 0.1), "float64"), ((0, 100, 1.1), None), ((0.5, 77.3, 0.37), "float64"),
    ((0, 0), None), ((3, 3, 1.5), None), ((0, 5), "float32"), ((0, 7, 2), "int32"),
    ((-1e3, 1e3, 13.7), None),
]
linspace_cases = [
    ((0, 1, 5), None), ((-1, 1, 7), None), ((0, 1, 1), None), ((0, 10, 0), None),
    ((0, 1, 100), None), ((-3.3, 7.7, 37), None), ((0, 1, 50), "float64"), ((0, 10, 4), "int64"),
    ((5, -5, 16), None), ((2, 2, 3), None), ((-1, 1, 33), None),
]
DT = {None: None, "float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "int32": torch.int32}

out = {"arange": [], "linspace": []}
for args, dtype in arange_cases:
    t = torch.arange(*args, dtype=DT[dtype]) if dtype else torch.arange(*args)
    out["arange"].append({"args": list(args), "int_args": [isinstance(a, int) for a in args], "dtype": dtype,
                          "result": tensor_json(t)})
for args, dtype in linspace_cases:
    t = torch.linspace(*args, dtype=DT[dtype]) if dtype else torch.linspace(*args)
    out["linspace"].append({"args": list(args), "dtype": dtype, "result": tensor_json(t)})

write("factories.json", out)
