"""tests/reference/gen_factories.py — torch.tensor / arange / linspace / eye / full values,
and empty_strided's layouts (strides kept or filled in, storage bytes) and errors.

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
empty_strided_cases = [
    # (sizes, strides, dtype or None): gaps, overlaps, a transposed layout, empty and 0-d
    # tensors, and negative strides where PyTorch accepts them (dims of at most one element).
    ((2, 3), (1, 2), None), ((2, 3), (3, 1), None), ((2, 3), (4, 1), None), ((2, 3), (0, 0), None),
    ((0, 3), (5, 7), None), ((), (), None), ((2, 3), (1, 2), "float64"), ((4,), (3,), "int32"),
    ((1, 3), (-5, 1), None), ((2, 1), (1, -4), None), ((1,), (-3,), None), ((0, 3), (1, -2), None),
    ((2, 0), (-1, 1), None), ((3, 1, 2), (2, -1, 1), None), ((1, 3), (7, 1), None),
]
empty_strided_errors = [
    ((2, 3), (-1, 1)), ((2, 3), (-1, 2)), ((2, 3), (1,)), ((-2, 3), (1, 1)), ((2, 3), (2**62, 1)),
    ((2**62, 4), (4, 1)), ((1, 3, 0), (-1, 2**62, 5)),
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

out["empty_strided"] = []
for sizes, strides, dtype in empty_strided_cases:
    t = torch.empty_strided(sizes, strides, dtype=DT[dtype]) if dtype else torch.empty_strided(sizes, strides)
    out["empty_strided"].append({"sizes": list(sizes), "strides": list(strides), "dtype": dtype,
                                 "result_strides": list(t.stride()), "nbytes": t.untyped_storage().nbytes(),
                                 "contiguous": t.is_contiguous(), "dtype_out": str(t.dtype).replace("torch.", "")})
out["empty_strided_errors"] = []
for sizes, strides in empty_strided_errors:
    try:
        torch.empty_strided(sizes, strides)
        raise AssertionError("expected an error")
    except RuntimeError as error:
        out["empty_strided_errors"].append({"sizes": list(sizes), "strides": list(strides), "message": str(error)})

write("factories.json", out)
