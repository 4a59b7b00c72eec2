"""tests/reference/reflib.py — shared helpers for the reference generators.

Each gen_*.py script runs with Debian's python3-torch (`/usr/bin/python3`), computes
values with PyTorch, and writes a JSON file next to itself that is committed. The C++
tests read those files (tests/support/test_support.h); CI never needs PyTorch.
"""
import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def _number(x):
    if isinstance(x, bool):
        return x
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def tensor_json(t):
    """{"shape", "dtype", "data"} with data flat in row-major order."""
    t = t.detach().contiguous().cpu()
    return {
        "shape": list(t.shape),
        "dtype": str(t.dtype).replace("torch.", ""),
        "data": [_number(v) for v in t.reshape(-1).tolist()],
    }


def write(name, payload):
    path = os.path.join(HERE, name)
    with open(path, "w") as f:
        json.dump({"torch_version": torch.__version__, **payload}, f, indent=1)
        f.write("\n")
    print("wrote", path)
