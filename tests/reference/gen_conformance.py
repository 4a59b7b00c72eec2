"""tests/reference/gen_conformance.py — PyTorch's answers for the cross-backend conformance sweep.

Run with PyTorch:  /work/venv/bin/python tests/reference/gen_conformance.py
Writes conformance.json, read by tests/conformance/ (ember_conformance_tests): every case
there runs on every ember backend (the CPU kernels, the CUDA kernels on the emulator, ...),
each result is compared with PyTorch's bit for bit and the backends with each other.

One row of OPS per op: its name (the key of the C++ table in tests/conformance/op_table.cpp),
its family (which decides the shapes, values and layouts), the dtypes to try, the parameter
sets, how many ulps a finite result may be from PyTorch's (docs/reliability.md, "Known
gaps": one for transcendentals and add-with-alpha, zero elsewhere), whether gradcheck runs
on it, and the PyTorch call. Every op is tried on every ember dtype: where PyTorch refuses
a dtype, the case holds PyTorch's error message and ember must throw it.

A case's inputs are given as storage + view, {"storage": flat tensor, "size", "stride",
"offset"}, so the C++ side builds exactly the layout named (as_strided over the storage):
  contiguous   row-major;
  transposed   2-D inputs stored column-major (a .t() view), other inputs contiguous;
  strided      every stride doubled, a filler value in the gaps (x[::2] over each dim);
  expanded     stride 0 over dim 0 (x[:1].expand(...)): one row read again and again;
  broadcast    shapes that broadcast inside the op ([3, 1] with [1, 9], a tensor with a 0-d);
  misaligned   storage offset 1 (the 16-byte vector paths must fall back);
  empty        a dimension of size 0;
  0-d          shape [];
  long         67 contiguous elements (the vector loops and their tails meet the same values).
Values cycle through NaN, ±inf, ±0, denormals, values no integer dtype holds and the integer
extremes (the pool of gen_special_values.py, so its elementwise cases are a subset of the
contiguous and long ones here, with the same pairs of values). Float reductions and products use dyadic values whose sums are exact
in any order (plus NaN, ±inf and -0.0), so a tree reduction must give the same bits as a
sequential one.
"""
import json
import math
import os

import torch

from reflib import HERE, _number

DTYPES = [torch.bool, torch.uint8, torch.int32, torch.int64, torch.float32, torch.float64]
FLOATS = [torch.float32, torch.float64]
INTEGRAL = [torch.uint8, torch.int32, torch.int64]

# The special-value pool of gen_special_values.py, then three ordinary values (27 = 3 x 9).
FLOAT_POOL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 2.5, -2.5, 0.5, -0.5, 1e20, -1e20,
              3e9, -3e9, 300.0, -300.0, 255.5, 65.0, 88.75, -88.75, 710.0]
DENORMAL = {torch.float32: 1.401298464324817e-45, torch.float64: 5e-324}
EXTRA = [3.0, -7.25, 0.1]
INT_POOL = {
    torch.int64: [2**63 - 1, -2**63, -1, 0, 1, 2**62, -2**62, 3, 2**32 + 5, -7],
    torch.int32: [2**31 - 1, -2**31, -1, 0, 1, 2**30, -2**30, 3, 65537, -7],
    torch.uint8: [255, 0, 1, 128, 127, 16, 3, 200, 17, 254],
}
# What fills the gaps of strided and misaligned storage: a kernel that reads it is wrong.
FILLER = {torch.bool: True, torch.uint8: 77, torch.int32: 77, torch.int64: 77, torch.float32: 1234.5,
          torch.float64: 1234.5}


def pool(dtype):
    if dtype.is_floating_point:
        d = DENORMAL[dtype]
        return FLOAT_POOL + [d, -d]
    if dtype == torch.bool:
        return [True, False, False, True, True]
    return INT_POOL[dtype]


def cycled(dtype, n, shift):
    """n values of the pool, input k shifted by `shift` as gen_special_values's x.roll(shift)."""
    p = pool(dtype)
    if dtype.is_floating_point and shift == 0 and n <= 27:
        values = p + EXTRA
    else:
        values = [p[(i - shift) % len(p)] for i in range(n)]
    return torch.tensor(values[:n], dtype=dtype)


def exact_values(dtype, shape, seed):
    """Values whose sums and products are exact in any order: for reductions, mm, softmax."""
    n = math.prod(shape)
    if dtype.is_floating_point:
        specials = [math.nan, 1.0, -0.0, math.inf, 2.5, 1.5, -2.0, -0.0, 3.0, -math.inf, 0.5, 4.0, -0.0, -1.0, 0.25,
                    0.0, -0.5, 2.0, -3.0, 1.25, 0.75]
        values = [specials[(i + seed) % len(specials)] for i in range(n)]
    elif dtype == torch.bool:
        values = [(i * 7 + seed) % 3 != 0 for i in range(n)]
    else:
        values = [pool(dtype)[(i + seed) % len(pool(dtype))] for i in range(n)]
    return torch.tensor(values, dtype=dtype).reshape(shape)


def finite_values(dtype, shape, seed):
    """Small dyadic values, no specials: for inputs a special value would blank out (mm)."""
    n = math.prod(shape)
    steps = [1.0, -0.5, 2.0, 0.25, -1.5, 3.0, -2.0, 0.75, 1.25, -0.25, 0.5]
    if dtype == torch.bool:
        return torch.tensor([(i + seed) % 3 != 0 for i in range(n)], dtype=dtype).reshape(shape)
    if not dtype.is_floating_point:
        low = 0 if dtype == torch.uint8 else -4
        return torch.tensor([(i * 5 + seed) % 11 + low for i in range(n)], dtype=dtype).reshape(shape)
    return torch.tensor([steps[(i + seed) % len(steps)] for i in range(n)], dtype=dtype).reshape(shape)


# ------------------------------------------------------------------------------------------ layouts


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= max(size, 1)
    return strides


def lay_out(t, layout):
    """(view, json) of logical tensor t stored in `layout`."""
    dtype, shape = t.dtype, list(t.shape)
    strides, offset = contiguous_strides(shape), 0
    if layout == "transposed" and t.dim() >= 2:
        stored = t.transpose(-1, -2).contiguous().reshape(-1)
        strides = contiguous_strides(shape[:-2] + [shape[-1], shape[-2]])
        strides[-1], strides[-2] = strides[-2], strides[-1]
    elif layout == "strided":
        strides = [2 * s for s in strides]
        extent = 1 + sum((size - 1) * s for size, s in zip(shape, strides)) if t.numel() else 0
        stored = torch.full([extent], FILLER[dtype], dtype=dtype)
        if t.numel():
            torch.as_strided(stored, shape, strides).copy_(t)
    elif layout == "misaligned":
        stored = torch.cat([torch.full([1], FILLER[dtype], dtype=dtype), t.reshape(-1)])
        offset = 1
    elif layout == "expanded" and t.dim() >= 1 and shape[0] > 1:
        stored = t[0].contiguous().reshape(-1)
        strides = [0] + contiguous_strides(shape[1:])
    else:
        stored = t.contiguous().reshape(-1)
    view = torch.as_strided(stored, shape, strides, offset)
    same = torch.equal(view.isnan(), t.isnan()) and torch.equal(view[~view.isnan()], t[~t.isnan()]) \
        if dtype.is_floating_point else torch.equal(view, t)
    assert same, f"{layout}: the view does not hold the tensor's values (an expanded input needs equal rows)"
    return view, {"storage": tensor_json(stored), "size": shape, "stride": strides, "offset": offset}


def tensor_json(t):
    t = t.detach().contiguous().cpu()
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
            "data": [_number(v) for v in t.reshape(-1).tolist()]}


# ------------------------------------------------------------------------------------------ inputs per family

ELEMENTWISE_LAYOUTS = ["contiguous", "transposed", "strided", "expanded", "broadcast", "misaligned", "empty", "0-d",
                       "long"]
REDUCE_LAYOUTS = ["contiguous", "transposed", "strided", "expanded", "misaligned", "empty", "0-d"]


def elementwise_shapes(layout, arity):
    """Logical shapes of the inputs of an elementwise op in `layout`."""
    if layout == "broadcast":  # binary and ternary ops only
        return [[3, 1], [1, 9], [9]][:arity]
    if layout == "empty":
        return [[0, 9]] * arity
    if layout == "0-d":
        return [[]] * arity
    if layout == "long":
        return [[67]] * arity
    return [[3, 9]] * arity


def shift_of(dtype, k):
    """Where input k starts in the pool: the pairs of gen_special_values.py (x, x.roll(5) for
    floats, x.roll(3) for integers), the third input (where's b) elsewhere again."""
    return ([0, 5, 3] if dtype.is_floating_point else [0, 3, 7])[k]


def elementwise_inputs(dtypes, layout):
    """Inputs of an elementwise op: a transposed layout applies to input 0 only (a transposed
    operand meets contiguous ones), an expanded one to the last input only (stride 0 next to
    dense operands); the other layouts to every input."""
    shapes = elementwise_shapes(layout, len(dtypes))
    tensors = [cycled(d, math.prod(s), shift_of(d, k)).reshape(s) for k, (d, s) in enumerate(zip(dtypes, shapes))]
    layouts = [layout] * len(tensors)
    if layout == "transposed":
        layouts = ["transposed"] + ["contiguous"] * (len(tensors) - 1)
    if layout == "expanded":
        layouts = ["contiguous"] * (len(tensors) - 1) + ["expanded"]
        tensors[-1] = tensors[-1][:1].expand(tensors[-1].shape).contiguous()
    return [lay_out(t, l) for t, l in zip(tensors, layouts)]


def reduce_inputs(dtype, layout, values=exact_values, shape=(3, 5), seed=0):
    shape = {"empty": [0, 5], "0-d": []}.get(layout, list(shape))
    t = values(dtype, shape, seed)
    if layout == "expanded":
        t = t[:1].expand(shape).contiguous()
    return [lay_out(t, layout)]


# ------------------------------------------------------------------------------------------ the op table


def op(name, family, fn, dtypes=DTYPES, params=({},), ulps=0, grad=False, arity=1, layouts=None):
    return {"name": name, "family": family, "fn": fn, "dtypes": dtypes, "params": params, "ulps": ulps,
            "grad": grad, "arity": arity, "layouts": layouts}


def pow_scalar_ulps(p):
    return 0 if p["exponent"] in (2, 3, -1, -2, 2.0, 3.0, -1.0, -2.0) else 1


REDUCE_PARAMS = ({"dim": None, "keepdim": False}, {"dim": [0], "keepdim": False}, {"dim": [-1], "keepdim": True},
                 {"dim": [0, 1], "keepdim": False})
TOPK_PARAMS = ({"k": 2, "dim": -1, "largest": True, "sorted": True}, {"k": 1, "dim": 0, "largest": False, "sorted": True},
               {"k": 3, "dim": 1, "largest": True, "sorted": False}, {"k": 0, "dim": 0, "largest": True, "sorted": True})
ARG_PARAMS = ({"dim": None, "keepdim": False}, {"dim": 0, "keepdim": False}, {"dim": -1, "keepdim": True})


def dims(p):
    return p["dim"] if p["dim"] is not None else []


OPS = [
    # unary
    op("neg", "unary", lambda x: torch.neg(x), grad=True),
    op("exp", "unary", lambda x: torch.exp(x), ulps=1, grad=True),
    op("log", "unary", lambda x: torch.log(x), ulps=1, grad=True),
    op("sqrt", "unary", lambda x: torch.sqrt(x), ulps=1, grad=True),
    op("abs", "unary", lambda x: torch.abs(x), grad=True),
    op("sign", "unary", lambda x: torch.sign(x)),
    op("sigmoid", "unary", lambda x: torch.sigmoid(x), ulps=1, grad=True),
    op("tanh", "unary", lambda x: torch.tanh(x), ulps=1, grad=True),
    op("relu", "unary", lambda x: torch.relu(x), grad=True),
    # Added on the op list (issue 18). PyTorch's vectorised erf/exp (SLEEF) and its FMA
    # contraction put a few ulps between it and the scalar formulas; its float32 GELU is
    # oneDNN's polynomial, far from the erf formula in the tails (docs/reliability.md,
    # "Known gaps"). The backends are still compared with each other bit for bit.
    op("erf", "unary", lambda x: torch.erf(x), ulps=2, grad=True),
    op("rsqrt", "unary", lambda x: torch.rsqrt(x), ulps=1, grad=True),
    op("silu", "unary", lambda x: torch.nn.functional.silu(x), ulps=4, grad=True),
    op("gelu", "unary", lambda x: torch.nn.functional.gelu(x), ulps=4096, grad=True),
    op("gelu_tanh", "unary", lambda x: torch.nn.functional.gelu(x, approximate="tanh"), ulps=64, grad=True),
    op("clamp", "unary", lambda x, min, max: torch.clamp(x, min, max), grad=True,
       params=({"min": -1, "max": 1}, {"min": -1.0, "max": 1.0}, {"min": 0.0, "max": None}, {"min": None, "max": 2.5})),
    op("pow_scalar", "unary", lambda x, exponent: torch.pow(x, exponent), ulps=pow_scalar_ulps, grad=True,
       params=({"exponent": 2}, {"exponent": 3}, {"exponent": 2.0}, {"exponent": 3.0}, {"exponent": 0.5},
               {"exponent": -0.5}, {"exponent": -1.0}, {"exponent": -2.0}, {"exponent": 1.5})),
    # binary
    op("add", "binary", lambda a, b, alpha: torch.add(a, b, alpha=alpha), arity=2, grad=True,
       params=({"alpha": 1}, {"alpha": 3}, {"alpha": 2.5}),
       ulps=lambda p: 0 if p["alpha"] in (1, -1) else 1),
    op("sub", "binary", lambda a, b, alpha: torch.sub(a, b, alpha=alpha), arity=2, grad=True,
       params=({"alpha": 1}, {"alpha": 2.5}), ulps=lambda p: 0 if p["alpha"] in (1, -1) else 1),
    op("mul", "binary", lambda a, b: torch.mul(a, b), arity=2, grad=True),
    op("div", "binary", lambda a, b: torch.div(a, b), arity=2, grad=True),
    op("pow", "binary", lambda a, b: torch.pow(a, b), arity=2, ulps=1, grad=True),
    op("maximum", "binary", lambda a, b: torch.maximum(a, b), arity=2, grad=True),
    op("minimum", "binary", lambda a, b: torch.minimum(a, b), arity=2, grad=True),
    op("eq", "binary", lambda a, b: torch.eq(a, b), arity=2),
    op("ne", "binary", lambda a, b: torch.ne(a, b), arity=2),
    op("lt", "binary", lambda a, b: torch.lt(a, b), arity=2),
    op("le", "binary", lambda a, b: torch.le(a, b), arity=2),
    op("gt", "binary", lambda a, b: torch.gt(a, b), arity=2),
    op("ge", "binary", lambda a, b: torch.ge(a, b), arity=2),
    op("logical_and", "binary", lambda a, b: torch.logical_and(a, b), arity=2),
    op("where", "where", lambda c, a, b: torch.where(c, a, b), arity=3, grad=True),
    op("to", "cast", lambda x, dtype: x.to(getattr(torch, dtype)),
       params=tuple({"dtype": str(d).replace("torch.", "")} for d in DTYPES)),
    # reductions
    op("sum", "reduce", lambda x, dim, keepdim: torch.sum(x, dims(dict(dim=dim)), keepdim), params=REDUCE_PARAMS,
       grad=True),
    op("mean", "reduce", lambda x, dim, keepdim: torch.mean(x, dims(dict(dim=dim)), keepdim), params=REDUCE_PARAMS,
       grad=True),
    op("prod", "reduce", lambda x, dim, keepdim: torch.prod(x) if dim is None else torch.prod(x, dim[0], keepdim),
       params=REDUCE_PARAMS[:3], grad=True),
    op("amax", "reduce", lambda x, dim, keepdim: torch.amax(x, dims(dict(dim=dim)), keepdim), params=REDUCE_PARAMS,
       grad=True),
    op("amin", "reduce", lambda x, dim, keepdim: torch.amin(x, dims(dict(dim=dim)), keepdim), params=REDUCE_PARAMS,
       grad=True),
    op("argmax", "reduce", lambda x, dim, keepdim: torch.argmax(x, dim, keepdim), params=ARG_PARAMS),
    op("argmin", "reduce", lambda x, dim, keepdim: torch.argmin(x, dim, keepdim), params=ARG_PARAMS),
    op("softmax", "softmax", lambda x, dim: torch.softmax(x, dim), params=({"dim": 0}, {"dim": 1}, {"dim": -1}),
       ulps=1, grad=True),
    op("log_softmax", "softmax", lambda x, dim: torch.log_softmax(x, dim),
       params=({"dim": 0}, {"dim": 1}, {"dim": -1}), ulps=1, grad=True),
    # linear algebra
    op("mm", "mm", lambda a, b: torch.mm(a, b), arity=2, grad=True),
    op("matmul", "matmul", lambda a, b: torch.matmul(a, b), arity=2, grad=True),
    # indexing: dim, then an int64 index built by the family
    op("index_select", "index", lambda x, index, dim: torch.index_select(x, dim, index), params=({"dim": 0}, {"dim": 1}),
       grad=True),
    op("gather", "index", lambda x, index, dim: torch.gather(x, dim, index), params=({"dim": 0}, {"dim": 1}), grad=True),
    op("scatter_add", "index", lambda x, index, source, dim: torch.scatter_add(x, dim, index, source),
       params=({"dim": 0}, {"dim": 1}), grad=True),
    op("index_add", "index", lambda x, index, source, dim: torch.index_add(x, dim, index, source),
       params=({"dim": 0}, {"dim": 1}), grad=True),
    # topk (issue 21): values and indices, ties (±0, repeated values) and NaN in PyTorch's order
    op("topk", "reduce", lambda x, k, dim, largest, sorted: torch.topk(x, k, dim, largest, sorted).values,
       params=TOPK_PARAMS, grad=True),
    op("topk_indices", "reduce", lambda x, k, dim, largest, sorted: torch.topk(x, k, dim, largest, sorted).indices,
       params=TOPK_PARAMS),
]


def index_inputs(name, dtype, layout, dim):
    """self, index (int64) and, for the add ops, source; the layout applies to each."""
    base_shape = {"0-d": []}.get(layout, [3, 5])
    self_t = exact_values(dtype, base_shape, 0)
    if layout == "expanded":
        self_t = self_t[:1].expand(3, 5).contiguous()
    rows = 0 if layout == "empty" else 4
    if layout == "0-d":
        index = torch.tensor(0)
    elif name in ("index_select", "index_add"):
        index = torch.tensor([2, 0, 2, 1] if dim == 0 else [4, 0, 4, 2])[:rows]
    else:  # gather, scatter_add: index of self's rank, smaller along dim
        shape = [2, 5] if dim == 0 else [3, 2]
        if layout == "empty":
            shape[dim] = 0
        n = math.prod(shape)
        high = 3 if dim == 0 else 5
        index = torch.tensor([(i * 2 + 1) % high for i in range(n)], dtype=torch.int64).reshape(shape)
    tensors = [self_t, index]
    layouts = [layout, layout if layout != "expanded" else "contiguous"]
    if name in ("scatter_add", "index_add"):
        if layout == "0-d":
            source_shape = []
        elif name == "scatter_add":
            source_shape = list(index.shape)
        else:
            source_shape = [index.numel(), 5] if dim == 0 else [3, index.numel()]
        tensors.append(finite_values(dtype, source_shape, 2))
        layouts.append(layout if layout != "expanded" else "contiguous")
    return [lay_out(t, l) for t, l in zip(tensors, layouts)]


MM_SHAPES = {"contiguous": ([3, 4], [4, 5]), "transposed": ([3, 4], [4, 5]), "strided": ([3, 4], [4, 5]),
             "expanded": ([3, 4], [4, 5]), "misaligned": ([3, 4], [4, 5]), "empty": ([3, 0], [0, 5]),
             "0-d": ([], [4, 5])}
MATMUL_SHAPES = {"contiguous": ([2, 3, 4], [4, 5]), "transposed": ([2, 3, 4], [2, 4, 5]), "strided": ([4], [4, 5]),
                 "expanded": ([3, 4], [4]), "broadcast": ([2, 1, 3, 4], [3, 4, 5]), "misaligned": ([4], [4]),
                 "empty": ([0, 4], [4, 5]), "0-d": ([], [4])}


def matrix_inputs(dtype, layout, shapes, special):
    a_shape, b_shape = shapes[layout]
    a = (exact_values if special else finite_values)(dtype, a_shape, 0)
    b = finite_values(dtype, b_shape, 3)
    if layout == "expanded":
        a = a[:1].expand(a_shape).contiguous()
    return [lay_out(a, layout), lay_out(b, layout if layout != "expanded" else "contiguous")]


def inputs_of(row, dtype, layout, params):
    """Lists of inputs ([(view, json)]) for one op row, dtype and layout (several variants)."""
    family = row["family"]
    if family in ("unary", "cast"):
        return [elementwise_inputs([dtype], layout)]
    if family == "binary":
        return [elementwise_inputs([dtype, dtype], layout)]
    if family == "where":
        return [elementwise_inputs([torch.bool, dtype, dtype], layout)]
    if family in ("reduce", "softmax"):
        return [reduce_inputs(dtype, layout)]
    if family == "mm":
        return [matrix_inputs(dtype, layout, MM_SHAPES, special) for special in (True, False)]
    if family == "matmul":
        return [matrix_inputs(dtype, layout, MATMUL_SHAPES, layout == "contiguous")]
    if family == "index":
        return [index_inputs(row["name"], dtype, layout, params["dim"])]
    raise ValueError(family)


# Layouts of a unary op's further parameter sets (its first set meets every layout), and of
# casts: the element function does not care about the layout, the loop does.
LIGHT_LAYOUTS = ["contiguous", "misaligned", "0-d", "long"]
CAST_LAYOUTS = ["contiguous", "transposed", "expanded", "misaligned", "empty", "0-d", "long"]


def layouts_of(row, params=None):
    if row["layouts"]:
        return row["layouts"]
    family = row["family"]
    if family == "cast":
        return CAST_LAYOUTS
    if family in ("binary", "where"):
        return ELEMENTWISE_LAYOUTS  # alpha meets every layout too
    if family == "unary":  # one input: nothing to broadcast against (expanded is its stride-0 case)
        first = params is None or params is row["params"][0]
        return [l for l in ELEMENTWISE_LAYOUTS if l != "broadcast"] if first else LIGHT_LAYOUTS
    if family == "matmul":
        return list(MATMUL_SHAPES)
    if family == "mm":
        return list(MM_SHAPES)
    return REDUCE_LAYOUTS


def call(row, views, params):
    if row["family"] == "index":
        x, index, *rest = views
        return row["fn"](x, index, *rest, **params)
    return row["fn"](*views, **params)


def error_text(e):
    return str(e).splitlines()[0]


def ulps_of(row, params):
    return row["ulps"](params) if callable(row["ulps"]) else row["ulps"]


def forward_cases():
    cases = []
    for row in OPS:
        for dtype in DTYPES:
            for params in row["params"]:
                for layout in layouts_of(row, params):
                    for inputs in inputs_of(row, dtype, layout, params):
                        case = {"op": row["name"], "family": row["family"],
                                "dtype": str(dtype).replace("torch.", ""), "layout": layout, "params": params,
                                "inputs": [j for _, j in inputs]}
                        try:
                            result = call(row, [v for v, _ in inputs], params)
                            case["expected"] = tensor_json(result)
                            ulps = ulps_of(row, params)
                            if ulps and result.is_floating_point():
                                case["ulps"] = ulps
                        except Exception as e:  # PyTorch refuses: ember must refuse with the same words
                            case["error"] = error_text(e)
                        cases.append(case)
    return cases


# ------------------------------------------------------------------------------------------ gradcheck

GRAD_LAYOUTS = ["contiguous", "transposed", "strided", "broadcast", "misaligned", "0-d"]
POSITIVE_ONLY = {"log", "sqrt", "pow_scalar", "pow", "rsqrt"}


def smooth(shape, seed, positive):
    """float64 values away from every kink (0, the clamp bounds) and from each other."""
    g = torch.Generator().manual_seed(seed)
    magnitude = 0.3 + 1.4 * torch.rand(shape, generator=g, dtype=torch.float64)
    if positive:
        return magnitude
    sign = torch.where(torch.rand(shape, generator=g, dtype=torch.float64) < 0.5, -1.0, 1.0)
    values = magnitude * sign
    return torch.where((values.abs() - 1.0).abs() < 0.05, values * 0.8, values)


def gradcheck_cases():
    """Float64 inputs away from every kink, in each layout that makes a leaf without
    overlapping elements (gradcheck perturbs one element at a time: PyTorch's refuses stride-0
    inputs too). Each case is checked here with torch.autograd.gradcheck first."""
    cases, seed = [], 0
    for row in OPS:
        if not row["grad"]:
            continue
        for params in row["params"][:2]:
            for layout in GRAD_LAYOUTS:
                if layout not in layouts_of(row):  # a unary op has no broadcast layout
                    continue
                seed += 1
                grad_inputs, views = [], []
                for k, (view, j) in enumerate(inputs_of(row, torch.float64, layout, params)[0]):
                    differentiable = view.dtype == torch.float64
                    if differentiable:
                        fresh = smooth(view.shape, seed * 10 + k, row["name"] in POSITIVE_ONLY and k == 0)
                        # as in the forward cases, a transposed layout goes to input 0 only
                        view, j = lay_out(fresh, "contiguous" if layout == "transposed" and k > 0 else layout)
                    grad_inputs.append(j)
                    views.append(view.detach().requires_grad_(differentiable))
                f = lambda *xs: call(row, list(xs), params)
                try:
                    f(*views)
                except Exception:
                    continue  # PyTorch refuses the forward (amax over an empty dim, mm of a 0-d)
                assert torch.autograd.gradcheck(f, tuple(views), eps=1e-6, atol=1e-5, rtol=1e-3), row["name"]
                cases.append({"op": row["name"], "family": row["family"], "dtype": "float64", "layout": layout,
                              "params": params, "inputs": grad_inputs})
    return cases


def main():
    payload = {"torch_version": torch.__version__, "cases": forward_cases(), "gradcheck": gradcheck_cases()}
    path = os.path.join(HERE, "conformance.json")
    with open(path, "w") as f:
        f.write('{"torch_version": %s,\n"cases": [\n' % json.dumps(payload["torch_version"]))
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in payload["cases"]))
        f.write('\n],\n"gradcheck": [\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in payload["gradcheck"]))
        f.write("\n]}\n")
    errors = sum("error" in c for c in payload["cases"])
    print(f"wrote {path}: {len(payload['cases'])} cases ({errors} PyTorch errors), "
          f"{len(payload['gradcheck'])} gradcheck cases, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
