"""tests/reference/gen_reduced_float_random.py — PyTorch's random fills, arange and linspace in
bfloat16 and float16 (issue 22): uniform_ / rand, normal_ / randn, bernoulli_, random_ and
F.dropout (with its gradient), arange and linspace, on the CPU.

Run with PyTorch:  python3 tests/reference/gen_reduced_float_random.py
Writes reduced_float_random.json, read by tests/core/test_reduced_float_random.cpp, which
replays every case with ember and compares the 16 bits of each element exactly.

What the cases pin down (each rule was measured against PyTorch 2.15; docs/mixed-precision.md):
  * uniform_: the float32 draw rounded to 16 bits, except that a value rounding to `to` becomes
    `from` — seed 0 and 1000 draws hit that for both dtypes and several bounds;
  * normal_: sizes below 16 and strided tensors round the double Box–Muller sample; contiguous
    sizes of 16 and more draw 16 fresh uniforms per block of 16, the tail block included (the
    float32 draw that follows each fill records how many draws it used);
  * bernoulli_ / dropout: the float32 mask, scaled by (1 / (1 - p)) rounded to the dtype;
  * arange: start + step * i in float, rounded once, with PyTorch's vector loop (16 lanes, two
    vectors a block, lanes computed from the vector's rounded first element); the "witness"
    ranges below are ones where fusing or not fusing a multiply-add changes a 16-bit result;
  * linspace: start and end rounded to the dtype, step = (end - start) / float(steps - 1) in
    float, element i = start + step * i below steps // 2 and end - step * (steps - 1 - i) from
    there, in float (fused for bfloat16, not for float16), rounded once; no vector-lane rule
    shows. The witnesses are ranges where each other candidate rule changes a 16-bit result.
"""
import torch
import torch.nn.functional as F

from reflib import _number, write

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def bits16(t):
    return [v & 0xFFFF for v in t.detach().contiguous().view(torch.int16).reshape(-1).tolist()]


def error_of(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e)
    raise AssertionError("expected an error")


# ----------------------------------------------------------------------------- uniform_
uniform = []
for name, dtype in DTYPES.items():
    for low, high in [(0.0, 1.0), (0.1, 0.7), (-3.0, 5.0), (0.001, 2.0), (-1.7, 123.4), (0.3, 0.30001)]:
        torch.manual_seed(0)
        t = torch.empty(1000, dtype=dtype).uniform_(low, high)
        uniform.append({"dtype": name, "size": 1000, "low": low, "high": high, "bits": bits16(t),
                        "next": torch.rand(1).item()})
    # rand(), and a transposed tensor: draws land in memory order.
    torch.manual_seed(123)
    uniform.append({"dtype": name, "rand": True, "size": 700, "bits": bits16(torch.rand(700, dtype=dtype))})
    torch.manual_seed(5)
    t = torch.empty(9, 4, dtype=dtype).t()
    t.uniform_(-2.0, 2.0)
    uniform.append({"dtype": name, "transposed": [9, 4], "low": -2.0, "high": 2.0, "bits": bits16(t)})

uniform_errors = []
for name, dtype in DTYPES.items():
    for low, high in [(-1e39, 0.0), (0.0, 1e39), (0.0, 1e5), (-7e4, 0.0), (2.0, 1.0), (-3e38, 3e38), (-4e4, 4e4)]:
        try:
            torch.empty(3, dtype=dtype).uniform_(low, high)
            message = None
        except RuntimeError as e:
            message = str(e)
        uniform_errors.append({"dtype": name, "low": low, "high": high, "error": message})

# ----------------------------------------------------------------------------- normal_
normal = []
for name, dtype in DTYPES.items():
    for size in [1, 7, 15, 16, 17, 31, 32, 33, 40, 1000]:
        for mean, std in [(0.0, 1.0), (0.3, 1.7), (-3.3, 0.1)]:
            for seed in ([0, 123] if size in (17, 40) else [0]):
                torch.manual_seed(seed)
                t = torch.empty(size, dtype=dtype).normal_(mean, std)
                normal.append({"dtype": name, "seed": seed, "size": size, "mean": mean, "std": std,
                               "bits": bits16(t), "next": torch.rand(1).item()})
    # Strided tensors of 16 and more take the one-at-a-time path.
    torch.manual_seed(0)
    t = torch.empty(8, 5, dtype=dtype).t()
    t.normal_(0.5, 2.0)
    normal.append({"dtype": name, "seed": 0, "transposed": [8, 5], "mean": 0.5, "std": 2.0, "bits": bits16(t),
                   "next": torch.rand(1).item()})
    # randn(3) leaves the second Box–Muller value cached; the block path of randn(40) leaves
    # it alone, and randn(5) starts with it.
    torch.manual_seed(7)
    seq = [torch.randn(3, dtype=dtype), torch.randn(40, dtype=dtype), torch.randn(5, dtype=dtype)]
    normal.append({"dtype": name, "seed": 7, "sequence": [3, 40, 5], "bits": [bits16(s) for s in seq]})

# ----------------------------------------------------------------------------- bernoulli_ and dropout
bernoulli = []
for name, dtype in DTYPES.items():
    torch.manual_seed(3)
    bernoulli.append({"dtype": name, "size": 500, "p": 0.3, "bits": bits16(torch.empty(500, dtype=dtype).bernoulli_(0.3))})

# random_: integers drawn as for float32, one 32-bit draw each — random_() over
# [0, 2^digits] (257 values for bfloat16, 2049 for float16), random_(from, to), random_(from)
# to that same end — converted to the dtype (rounded where the integer has no 16-bit value).
random_integers = []
for name, dtype in DTYPES.items():
    for args in [(), (-5, 300), (7,), (1000, 5000)]:
        torch.manual_seed(11)
        t = torch.empty(400, dtype=dtype)
        t.random_(args[0], None) if len(args) == 1 else t.random_(*args)  # random_(7) would mean to=7
        random_integers.append({"dtype": name, "args": list(args), "size": 400, "bits": bits16(t),
                                "next": torch.rand(1).item()})

dropout = []
for name, dtype in DTYPES.items():
    for p in [0.3, 0.1, 0.5, 1 / 3]:
        torch.manual_seed(1)
        x = (torch.randn(400) * 3).to(dtype).requires_grad_()
        upstream = torch.randn(400).to(dtype)
        torch.manual_seed(5)
        y = F.dropout(x, p)
        y.backward(upstream)
        dropout.append({"dtype": name, "p": p, "seed": 5, "x": bits16(x), "upstream": bits16(upstream),
                        "y": bits16(y), "x_grad": bits16(x.grad)})

# ----------------------------------------------------------------------------- arange
RANGES = [(0, 3, 0.7), (250, 260, 1), (0, 600, 1.1), (0.1, 1000.3, 0.37), (-5, 5, 0.01), (1000, 1300, 0.3),
          (3, -600, -1.3), (0.9, 700, 1.3), (-1000.1, 1000, 3.3), (0.01, 60000, 101.7), (0, 70000, 7.7),
          (0, 1e39, 1e38), (-0.3, 2000, 0.999), (0, 5000, 1)]
# (Up to 32768 elements: above that PyTorch splits the range between its threads, and each
# thread's part starts its own vector loop, so the bits depend on the thread count.)
# Witnesses (109 elements: three blocks of 32 and a 13-element tail): a vector lane of bfloat16
# that only the unfused k·step + first gives, of float16 that only the fused one gives, and
# tail elements that only a fused step·i + start gives.
WITNESSES = {"bfloat16": [(-1.368, 0.2734), (-74.411, 9.9125), (-13.921, 0.4177), (0.065, 0.2925), (0.16, 2.2134)],
             "float16": [(-194.535, 9.2703), (-52.147, 4.4106), (-3.105, 0.2434), (-0.842, 0.0081),
                         (-34.699, 0.3221), (-1.314, 0.0129)]}
arange = []
for name, dtype in DTYPES.items():
    ranges = RANGES + [(start, start + step * 108.5, step) for start, step in WITNESSES[name]]
    for start, end, step in ranges:
        t = torch.arange(start, end, step, dtype=dtype)
        arange.append({"dtype": name, "start": start, "end": end, "step": step, "bits": bits16(t)})

arange_errors = []
for name, dtype in DTYPES.items():
    for start, end, step in [(0, 1e39, 1), (0, 10, 1e-50), (0, 1, -1), (0, float("inf"), 1), (0, 1, 1e39),
                             (-1e39, 0, 1e10), (1e39, 0, 1)]:
        arange_errors.append({"dtype": name, "start": _number(start), "end": _number(end), "step": _number(step),
                              "error": error_of(lambda: torch.arange(start, end, step, dtype=dtype))})

# ----------------------------------------------------------------------------- linspace
# Every element is its own formula (no lane is built from a neighbour), so PyTorch's split of
# a long range between threads changes nothing; one thread anyway, as for arange.
torch.set_num_threads(1)
INF, NAN = float("inf"), float("nan")
LINSPACE = [(0, 1, 0), (0, 1, 1), (0.3, 0.7, 1), (0, 1, 2), (0, 1, 17), (-1, 1, 33), (-3.3, 7.7, 100),
            (5, -5, 1000), (0.1, 1000.3, 5000), (-1000.1, 1000, 1001), (0.001, 60000, 33), (-60000, 65504, 17),
            (1e-8, 1, 3), (1 + 2**-8 + 2**-30, -3, 5), (1e5, 0, 1),
            (0, INF, 5), (-INF, 0, 4), (INF, -INF, 4), (NAN, 1, 3), (0, INF, 100)]
LINSPACE_BFLOAT16 = [(0, 1e5, 17), (-3e38, 3e38, 9)]
# Witnesses. For each dtype, a range where each of these rules would change a value: the
# other fusing of step * i with start or end; splitting at (steps + 1) // 2 or not at all;
# start and end kept in float, or the step rounded to 16 bits; the step's difference taken
# in double (steps 7); vector lanes built as first + k * step (fused or not) from their first
# element, kept in float or rounded to 16 bits, in vectors of 8, 16 or 32 lanes.
LINSPACE_WITNESSES = {
    "bfloat16": [(0.529, -1.633, 101), (-0.006, 0.012, 100), (-476.23, 1915.4, 101), (-3.071, 17.398, 64),
                 (-0.179, -0.693, 64), (-0.032, -0.003, 64), (0.771, 0.198, 100), (0.005, 0.002, 101),
                 (-0.1, -0.007, 64), (-0.042, -0.016, 33), (-0.007039, 25740.0, 7)],
    "float16": [(21.141, -6.026, 101), (32.037, -22.787, 64), (-20.314, 7.847, 101), (110.912, 15.992, 64),
                (3.806, -7.284, 64), (-0.061, -0.237, 100), (0.017, 0.109, 64), (-19.609, 1.221, 64),
                (-0.014, -0.007, 33), (0.003593, 14330.0, 7)],
}
linspace = []
for name, dtype in DTYPES.items():
    cases = LINSPACE + (LINSPACE_BFLOAT16 if name == "bfloat16" else []) + LINSPACE_WITNESSES[name]
    for start, end, steps in cases:
        t = torch.linspace(start, end, steps, dtype=dtype)
        linspace.append({"dtype": name, "start": _number(start), "end": _number(end), "steps": steps,
                         "bits": bits16(t)})
# 2^24 + 2 steps: float(steps - 1) rounds to 2^24, which changes values the exact count would
# not (bfloat16: 130 of them, float16: 1045). Stored sparsely: every 4099th element and the
# first 300 where the exact count would differ.
sparse_linspace = []
for name, dtype in DTYPES.items():
    start, end, steps = 0.1, 1000.3, 2**24 + 2
    t = torch.linspace(start, end, steps, dtype=dtype)
    first = t[0].float().item()
    last = t[-1].float().item()
    exact_step = (torch.tensor(last, dtype=torch.float64) - first) / (steps - 1)
    i = torch.arange(steps, dtype=torch.float64)
    exact = torch.where(i < steps // 2, first + exact_step.float().double() * i,
                        last - exact_step.float().double() * (steps - 1 - i))
    if name == "float16":  # unfused: the product rounds to float first
        exact = torch.where(i < steps // 2, first + (exact_step.float().double() * i).float().double(),
                            last - (exact_step.float().double() * (steps - 1 - i)).float().double())
    changed = (exact.float().to(dtype) != t).nonzero().reshape(-1)
    indices = sorted(set(range(0, steps, 4099)) | set(changed[:300].tolist()) | {steps - 1})
    sparse_linspace.append({"dtype": name, "start": start, "end": end, "steps": steps, "indices": indices,
                            "bits": bits16(t[torch.tensor(indices)]), "exact_count_changes": changed.numel()})

linspace_errors = []
for name, dtype in DTYPES.items():
    too_large = [(0, 1e5, 2), (1e5, 0, 2), (-7e4, 0, 17)] if name == "float16" else []
    for start, end, steps in too_large + [(-1e39, 0, 3), (0, 1e39, 5), (0, 1, -1)]:
        linspace_errors.append({"dtype": name, "start": start, "end": end, "steps": steps,
                                "error": error_of(lambda: torch.linspace(start, end, steps, dtype=dtype))})

write("reduced_float_random.json", {"uniform": uniform, "uniform_errors": uniform_errors, "normal": normal,
                                    "bernoulli": bernoulli, "random_": random_integers, "dropout": dropout,
                                    "arange": arange,
                                    "arange_errors": arange_errors, "linspace": linspace,
                                    "sparse_linspace": sparse_linspace, "linspace_errors": linspace_errors})
