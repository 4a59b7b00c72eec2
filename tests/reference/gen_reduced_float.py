"""tests/reference/gen_reduced_float.py — PyTorch's values for bfloat16 and float16 (issue 22):
the rounding of float32, float64 and int64 values to 16 bits, type promotion with the
16-bit floats, elementwise ops, reductions, matrix products, autograd, layer and batch norm
and printing.

Run with PyTorch:  python3 tests/reference/gen_reduced_float.py
Writes reduced_float.json, read by tests/core/test_reduced_float.cpp and
tests/nn/test_reduced_float_training.cpp, and reduced_float.safetensors (safetensors.torch's
BF16 and F16 encoding), read by the latter.
"""
import math
import os
import struct

import torch
import torch.nn.functional as F

from reflib import HERE, tensor_json, write

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits16(t):
    return [v & 0xFFFF for v in t.view(torch.int16).tolist()]


# float32 values at the edges of both formats: ties to even either way, the largest finite
# values and just past them, float16's subnormals and the halfway points below them,
# signed zeros, infinities.
EDGES = [0.0, -0.0, 1.0, -1.0, 1.00390625, 1.0078125, 1.01171875, 1.005859375, 3.140625, 1 / 3,
         65504.0, 65505.0, 65519.99, 65520.0, 65536.0, 1e5, -1e5,
         3.3895313892515355e38, 3.3961775292304957e38, 3.4028234663852886e38, math.inf, -math.inf,
         6.103515625e-05, 6.097555160522461e-05, 5.960464477539063e-08, 2.9802322387695312e-08,
         2.980232594040899e-08, 8.940696716308594e-08, 1.1920928955078125e-07, 1e-8, -3e-8,
         1e-40, 1.1754943508222875e-38, 9.183549615799121e-41, 1e-45]
float32_values = [torch.tensor(v, dtype=torch.float32).item() for v in EDGES]
# And every 997th pattern of the first 2^24 above some exponents, for breadth.
for base in (0x33000000, 0x38000000, 0x3F800000, 0x477F0000, 0x7F000000):
    for i in range(0, 1 << 16, 997):
        float32_values.append(struct.unpack("<f", struct.pack("<I", base + i))[0])
f32 = torch.tensor(float32_values, dtype=torch.float32)
conversions = {"float32_bits": [f32_bits(v) for v in float32_values]}
for name, dtype in DTYPES.items():
    conversions[name] = bits16(f32.to(dtype))

# float64 and int64 sources round to float32 first (two roundings, as c10 does).
F64 = [1.0 + 2.0 ** -8 + 2.0 ** -30, 1.0 + 2.0 ** -11 + 2.0 ** -40, 1 / 3, 0.1, 1e300, -1e-300, 65519.999999]
I64 = [0, 1, -7, 257, 2049, 16777217, 2 ** 40 + 2 ** 16 + 1, -(2 ** 62)]
from_float64 = {name: bits16(torch.tensor(F64, dtype=torch.float64).to(dtype)) for name, dtype in DTYPES.items()}
from_int64 = {name: bits16(torch.tensor(I64, dtype=torch.int64).to(dtype)) for name, dtype in DTYPES.items()}
# ... and back: 16-bit values to int64, uint8 and bool.
BACK = [0.0, -0.0, 1.5, -2.5, 255.0, 300.0, -1.0, 65504.0, math.nan, math.inf]
to_integers = {}
for name, dtype in DTYPES.items():
    t = torch.tensor(BACK, dtype=dtype)
    to_integers[name] = {"int64": torch.where(t.isfinite(), t, 0).to(torch.int64).tolist(),
                         "uint8": torch.where(t.isfinite() & (t >= 0) & (t < 256), t, 0).to(torch.uint8).tolist(),
                         "bool": t.to(torch.bool).tolist()}

# torch.promote_types over every pair.
ALL = {"bool": torch.bool, "uint8": torch.uint8, "int32": torch.int32, "int64": torch.int64,
       "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64}
promotion = [[a, b, str(torch.promote_types(ta, tb)).replace("torch.", "")] for a, ta in ALL.items() for b, tb in ALL.items()]
# Tensor-scalar promotion: a 16-bit tensor keeps its dtype with a Python float or int.
scalar_promotion = {name: [str((torch.ones(2, dtype=dtype) * 2.5).dtype), str((torch.ones(2, dtype=dtype) + 3).dtype),
                           str((torch.ones(2, dtype=torch.int64) * torch.tensor(2.5, dtype=dtype)).dtype),
                           str((torch.ones(2, dtype=dtype) * torch.tensor(2.5, dtype=torch.float64)).dtype)]
                    for name, dtype in DTYPES.items()}

# Elementwise ops: computed in float32 and rounded once.
A = [1.0, -2.5, 3.140625, 0.333984375, 100.0, -0.0, 7.0e-3, 250.0, math.inf, math.nan, 1e-4, 0.5]
B = [3.0, 0.1, -1.5, 0.333984375, 1e-3, 2.0, -7.0, 250.0, 1.0, 2.0, 3e4, -0.5]
POS = [0.5, 1.0, 2.0, 3.0, 10.0, 0.01, 1e-4, 100.0, 0.0, math.inf, 6e4, 1.7]
UNARY = {"neg": torch.neg, "abs": torch.abs, "relu": torch.relu, "exp": torch.exp, "tanh": torch.tanh,
         "sigmoid": torch.sigmoid, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu,
         "erf": torch.erf, "square": lambda x: x ** 2, "pow_1_5": lambda x: x ** 1.5,
         "clamp": lambda x: torch.clamp(x, -1.1, 2.3)}
POSITIVE = {"log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": lambda x: x ** -1.0}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
          "maximum": torch.maximum, "minimum": torch.minimum, "pow": torch.pow,
          "eq": torch.eq, "lt": torch.lt, "ge": torch.ge,
          "add_scalar": lambda a, b: a + 0.1, "mul_scalar": lambda a, b: a * 3}
BINARY_ALPHA = {"add_alpha": lambda a, b: torch.add(a, b, alpha=0.3), "sub_alpha": lambda a, b: torch.sub(a, b, alpha=3)}
elementwise = []
for name, dtype in DTYPES.items():
    a, b, p = (torch.tensor(v, dtype=dtype) for v in (A, B, POS))
    for op, fn in UNARY.items():
        elementwise.append({"op": op, "args": [tensor_json(a)], "result": tensor_json(fn(a))})
    for op, fn in POSITIVE.items():
        elementwise.append({"op": op, "args": [tensor_json(p)], "result": tensor_json(fn(p))})
    for op, fn in BINARY.items():
        elementwise.append({"op": op, "args": [tensor_json(a), tensor_json(b)], "result": tensor_json(fn(a, b))})
    # add and sub with an alpha: PyTorch rounds alpha to the tensor's dtype, then computes
    # a + alpha * b in float32 and rounds once, in its vectorised loop. Its scalar loop (the
    # elements left over after whole vectors, so any tensor smaller than a vector) also
    # rounds alpha * b, so the same element can come out differently by position. ember
    # rounds once everywhere; the reference uses 64 elements, whole vectors at any width.
    a64, b64 = (torch.tensor((v * 6)[:64], dtype=dtype) for v in (A, B))
    for op in ("add_alpha", "sub_alpha"):
        elementwise.append({"op": op, "args": [tensor_json(a64), tensor_json(b64)], "result": tensor_json(BINARY_ALPHA[op](a64, b64))})
    # Mixed dtypes promote: bfloat16 + float32 is float32, bfloat16 + float16 is float32.
    other = torch.float16 if dtype == torch.bfloat16 else torch.bfloat16
    elementwise.append({"op": "add", "args": [tensor_json(a), tensor_json(b.float())], "result": tensor_json(a + b.float())})
    elementwise.append({"op": "add", "args": [tensor_json(a), tensor_json(b.to(other))], "result": tensor_json(a + b.to(other))})

# Reductions and matrix products.
g = torch.Generator().manual_seed(22)
reductions, products = [], []
for name, dtype in DTYPES.items():
    x = (torch.randn(6, 40, generator=g) * 3).to(dtype)
    reductions.append({"input": tensor_json(x), "sum": tensor_json(x.sum()), "mean": tensor_json(x.mean()),
                       "softmax_dim1": tensor_json(torch.softmax(x, 1)), "log_softmax_dim0": tensor_json(torch.log_softmax(x, 0)),
                       "sum_dim0": tensor_json(x.sum(0)), "mean_dim1": tensor_json(x.mean(1)),
                       "max_dim1": tensor_json(x.max(1).values), "argmin_dim0": tensor_json(x.argmin(0)),
                       "amax": tensor_json(x.max())})
    m1 = torch.randn(7, 33, generator=g).to(dtype)
    m2 = torch.randn(33, 5, generator=g).to(dtype)
    bias = torch.randn(5, generator=g).to(dtype)
    products.append({"a": tensor_json(m1), "b": tensor_json(m2), "bias": tensor_json(bias),
                     "mm": tensor_json(m1 @ m2), "addmm": tensor_json(torch.addmm(bias, m1, m2)),
                     "linear": tensor_json(torch.nn.functional.linear(m1, m2.t(), bias))})

# Autograd through 16-bit ops: y = sum(tanh(x * w) + x), gradients in the leaf's dtype.
autograd = []
for name, dtype in DTYPES.items():
    x = torch.tensor([0.5, -1.25, 2.0, 0.1], dtype=dtype, requires_grad=True)
    w = torch.tensor([1.5, 0.75, -0.5, 3.0], dtype=dtype, requires_grad=True)
    y = (torch.tanh(x * w) + x).sum()
    y.backward()
    # softmax and log_softmax's backward on 16-bit values.
    s_in = (torch.randn(3, 5, generator=g) * 2).to(dtype).requires_grad_(True)
    upstream = torch.randn(3, 5, generator=g).to(dtype)
    (torch.softmax(s_in, 1) * upstream).sum().backward()
    softmax_grad = s_in.grad.clone()
    s_in.grad = None
    (torch.log_softmax(s_in, 1) * upstream).sum().backward()
    autograd.append({"x": tensor_json(x), "w": tensor_json(w), "y": tensor_json(y),
                     "x_grad": tensor_json(x.grad), "w_grad": tensor_json(w.grad),
                     "softmax_input": tensor_json(s_in), "upstream": tensor_json(upstream),
                     "softmax_grad": tensor_json(softmax_grad), "log_softmax_grad": tensor_json(s_in.grad)})

# Convolution, max pooling and fused attention on 16-bit values: forward and gradients.
layers = []
for name, dtype in DTYPES.items():
    image = torch.randn(2, 3, 6, 6, generator=g).to(dtype).requires_grad_(True)
    kernel = (torch.randn(4, 3, 3, 3, generator=g) * 0.3).to(dtype).requires_grad_(True)
    kernel_bias = torch.randn(4, generator=g).to(dtype).requires_grad_(True)
    conv = F.conv2d(image, kernel, kernel_bias, padding=1)
    pooled = F.max_pool2d(conv, 2)
    pooled_upstream = torch.randn(pooled.shape, generator=g).to(dtype)
    (pooled * pooled_upstream).sum().backward()
    q, k, v = ((torch.randn(1, 2, 5, 8, generator=g)).to(dtype).requires_grad_(True) for _ in range(3))
    attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    attended_upstream = torch.randn(attended.shape, generator=g).to(dtype)
    (attended * attended_upstream).sum().backward()
    layers.append({"image": tensor_json(image), "kernel": tensor_json(kernel), "kernel_bias": tensor_json(kernel_bias),
                   "conv": tensor_json(conv), "pooled": tensor_json(pooled), "pooled_upstream": tensor_json(pooled_upstream),
                   "image_grad": tensor_json(image.grad), "kernel_grad": tensor_json(kernel.grad),
                   "kernel_bias_grad": tensor_json(kernel_bias.grad),
                   "q": tensor_json(q), "k": tensor_json(k), "v": tensor_json(v), "attended": tensor_json(attended),
                   "attended_upstream": tensor_json(attended_upstream), "q_grad": tensor_json(q.grad),
                   "k_grad": tensor_json(k.grad), "v_grad": tensor_json(v.grad)})

printing = []
for name, dtype in DTYPES.items():
    for values in ([1.0, 2.5, 1 / 3], [1e-5, 1e5], [[0.1, -2.0], [300.0, 0.0]], 1 / 3, [1.0, 2.0, 3.0], [math.nan, -math.inf, 1.5]):
        t = torch.tensor(values, dtype=dtype)
        printing.append({"tensor": tensor_json(t), "text": str(t)})

errors = {}
try:
    torch.zeros(2, dtype=torch.float16).fill_(1e10)
except RuntimeError as e:
    errors["fill_float16"] = str(e)
try:
    torch.zeros(2, dtype=torch.bfloat16).fill_(1e39)
except RuntimeError as e:
    errors["fill_bfloat16"] = str(e)

# Indexing: copies (index_select, gather, embedding, topk) are exact; the adds (index_add,
# scatter_add, embedding's backward) round after every addition, in index order.
g = torch.Generator().manual_seed(2212)
indexing = []
for name, dtype in DTYPES.items():
    x = (torch.randn(5, 4, generator=g) * 3).to(dtype)
    index = torch.tensor([3, 0, 3, 1, 3, 4])
    gather_index = torch.tensor([[1, 0, 3, 3], [2, 2, 0, 1], [0, 1, 2, 3], [3, 3, 3, 3], [1, 2, 1, 0]])
    source = (torch.randn(6, 4, generator=g) * 100).to(dtype)
    scatter_index = torch.tensor([[0, 1, 2, 0], [2, 2, 1, 0], [0, 0, 0, 0], [1, 2, 0, 1], [2, 1, 0, 2], [0, 0, 1, 1]])
    weight = x.clone().requires_grad_(True)
    torch.nn.functional.embedding(index, weight).backward(source)
    values, positions = torch.topk(x, 2, dim=1)
    indexing.append({"x": tensor_json(x), "index": tensor_json(index), "gather_index": tensor_json(gather_index),
                     "source": tensor_json(source), "scatter_index": tensor_json(scatter_index),
                     "index_select": tensor_json(torch.index_select(x, 0, index)),
                     "gather": tensor_json(torch.gather(x, 1, gather_index)),
                     "index_add": tensor_json(x.index_add(0, index, source)),
                     "scatter_add": tensor_json(torch.zeros(3, 4, dtype=dtype).scatter_add(0, scatter_index, source)),
                     "embedding_grad": tensor_json(weight.grad),
                     "topk_values": tensor_json(values), "topk_indices": tensor_json(positions)})

# Max pooling with overlapping windows (3x3, stride 1): an input element can be the max of
# several windows, and PyTorch's backward adds their gradients in 16 bits, one rounding per
# addition, in output order.
g = torch.Generator().manual_seed(2213)
overlapping_pool = []
for name, dtype in DTYPES.items():
    x = torch.randn(2, 3, 7, 7, generator=g).round().to(dtype).requires_grad_(True)  # ties: the first index wins
    y = torch.nn.functional.max_pool2d(x, 3, 1)
    upstream = (torch.randn(y.shape, generator=g) * 100).to(dtype)
    y.backward(upstream)
    overlapping_pool.append({"x": tensor_json(x.detach()), "upstream": tensor_json(upstream), "pooled": tensor_json(y.detach()),
                             "grad": tensor_json(x.grad)})

# Layer and batch norm on 16-bit inputs: with parameters of the input's dtype ("plain") and
# with float32 parameters and running statistics ("mixed", autocast's case: the statistics
# and the parameters' gradients are float32).
g = torch.Generator().manual_seed(2214)
norms = []
for name, dtype in DTYPES.items():
    for mixed in (False, True):
        parameter_dtype = torch.float32 if mixed else dtype
        x = (torch.randn(3, 4, 8, generator=g) * 2 + 3).to(dtype).requires_grad_(True)
        weight = (torch.randn(8, generator=g) + 1).to(parameter_dtype).requires_grad_(True)
        bias = torch.randn(8, generator=g).to(parameter_dtype).requires_grad_(True)
        upstream = torch.randn(3, 4, 8, generator=g).to(dtype)
        ln, ln_mean, ln_rstd = torch.native_layer_norm(x.detach(), [8], weight.detach(), bias.detach(), 1e-5)
        F.layer_norm(x, [8], weight, bias).backward(upstream)
        # PyTorch's 16-bit kernel sums the weight's and bias's gradients in 16 bits (even for
        # float32 parameters), rounding after each row of a thread's share of the rows, so its
        # result depends on its thread count. ember sums in float32 and rounds once: the
        # reference is that sum (in float64, from PyTorch's stored statistics), rounded once.
        normalized = (x.detach().double() - ln_mean.double()) * ln_rstd.double()
        weight_grad = (upstream.double() * normalized).sum((0, 1)).to(parameter_dtype)
        bias_grad = upstream.double().sum((0, 1)).to(parameter_dtype)
        case = {"dtype": name, "mixed": mixed, "x": tensor_json(x.detach()), "weight": tensor_json(weight.detach()),
                "bias": tensor_json(bias.detach()), "upstream": tensor_json(upstream),
                "layer_norm": tensor_json(ln), "layer_norm_mean": tensor_json(ln_mean),
                "layer_norm_rstd": tensor_json(ln_rstd), "layer_norm_x_grad": tensor_json(x.grad),
                "layer_norm_weight_grad": tensor_json(weight_grad), "layer_norm_bias_grad": tensor_json(bias_grad)}
        # Batch norm over the 4 channels of x viewed as [3, 4, 8].
        channel_weight = (torch.randn(4, generator=g) + 1).to(parameter_dtype).requires_grad_(True)
        channel_bias = torch.randn(4, generator=g).to(parameter_dtype).requires_grad_(True)
        running_mean = torch.randn(4, generator=g).to(parameter_dtype)
        running_var = (torch.rand(4, generator=g) + 0.5).to(parameter_dtype)
        case.update({"channel_weight": tensor_json(channel_weight.detach()),
                     "channel_bias": tensor_json(channel_bias.detach()),
                     "running_mean": tensor_json(running_mean), "running_var": tensor_json(running_var)})
        eval_out = F.batch_norm(x.detach(), running_mean, running_var, channel_weight.detach(),
                                channel_bias.detach(), training=False)
        x.grad = None
        bn = F.batch_norm(x, running_mean, running_var, channel_weight, channel_bias, training=True)
        bn.backward(upstream)
        case.update({"batch_norm_eval": tensor_json(eval_out), "batch_norm": tensor_json(bn.detach()),
                     "running_mean_after": tensor_json(running_mean), "running_var_after": tensor_json(running_var),
                     "batch_norm_x_grad": tensor_json(x.grad), "batch_norm_weight_grad": tensor_json(channel_weight.grad),
                     "batch_norm_bias_grad": tensor_json(channel_bias.grad)})
        norms.append(case)

# A 16-bit tensor and a number: PyTorch's CPU kernels multiply and divide by the number's own
# value as a float, and add and subtract it rounded to the tensor's dtype.
g = torch.Generator().manual_seed(2215)
scalar_ops = []
for name, dtype in DTYPES.items():
    x = (torch.randn(256, generator=g) * 10).to(dtype)
    for number in (0.7, 1.3, 3.14159, 1e-3, 3):
        zero_dim = torch.tensor(float(number), dtype=torch.float32)
        scalar_ops.append({"x": tensor_json(x), "number": number, "mul": tensor_json(x * number),
                           "div": tensor_json(x / number), "add": tensor_json(x + number),
                           "sub": tensor_json(x - number), "mul_": tensor_json(x.clone().mul_(number)),
                           "div_": tensor_json(x.clone().div_(number)), "mul_float32": tensor_json(x * zero_dim),
                           "float32_mul": tensor_json(zero_dim * x), "div_float32": tensor_json(x / zero_dim)})

# torch._foreach_norm (clip_grad_norm_'s norms) on 16-bit tensors: each norm in float32,
# rounded once to the dtype.
g = torch.Generator().manual_seed(2216)
foreach_norms = []
for name, dtype in DTYPES.items():
    tensors = [(torch.randn(n, generator=g) * scale).to(dtype) for n, scale in ((5, 1.0), (100, 3.0), (1000, 0.01), (3000, 40.0))]
    for order in (2.0, 1.0, float("inf"), 3.0):
        foreach_norms.append({"tensors": [tensor_json(t) for t in tensors], "p": "inf" if order == float("inf") else order,
                              "norms": tensor_json(torch.stack(torch._foreach_norm(tensors, order)))})

# A safetensors file written by safetensors.torch, for the reader's test (BF16 and F16).
from safetensors.torch import save_file  # noqa: E402

file_tensors = {"weight_bf16": torch.tensor([[1.5, -2.0, 0.333984375], [3e38, -1e-38, 0.0]], dtype=torch.bfloat16),
                "weight_f16": torch.tensor([[65504.0, -6.1035e-05, 5.96e-08], [0.1, -0.0, 2.5]], dtype=torch.float16)}
save_file(file_tensors, os.path.join(HERE, "reduced_float.safetensors"))
safetensors_file = {name: tensor_json(t) for name, t in file_tensors.items()}

write("reduced_float.json", {"conversions": conversions, "from_float64": {"values": F64, **from_float64},
                             "from_int64": {"values": I64, **from_int64}, "to_integers": {"values": [str(v) for v in BACK], **to_integers},
                             "promotion": promotion, "scalar_promotion": scalar_promotion,
                             "elementwise": elementwise, "reductions": reductions, "products": products,
                             "autograd": autograd, "layers": layers, "printing": printing, "errors": errors,
                             "safetensors_file": safetensors_file, "indexing": indexing,
                             "overlapping_pool": overlapping_pool, "norms": norms,
                             "scalar_ops": scalar_ops, "foreach_norms": foreach_norms})
