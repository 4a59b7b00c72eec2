"""tests/reference/reflib.py — shared helpers for the reference generators.

Each gen_*.py script runs with PyTorch 2.x (pip's torch; the committed files were written by
2.15 and record its version), computes values with PyTorch, and writes a JSON file next to
itself that is committed. The C++ tests read those files (tests/support/test_support.h); CI
never needs PyTorch. PyTorch 1.x is refused: its semantics differ where ember follows 2.x
(grad_fn names, clamp's gradient at a bound, matmul's folding, random_'s 64-bit draws,
printing with sci_mode=False, index_add's shapes, error messages).
"""
import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

if int(torch.__version__.split(".")[0]) < 2:
    raise SystemExit(f"reflib: the references follow PyTorch 2.x; this python has torch {torch.__version__}"
                     " (python3 -m pip install torch)")


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
