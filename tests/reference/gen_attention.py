"""tests/reference/gen_attention.py — PyTorch reference values for scaled_dot_product_attention.

Writes attention.json, read by tests/nn/test_attention.cpp. Each case draws query, key,
value (and a mask) with a fixed seed, runs torch.nn.functional.scaled_dot_product_attention
on the CPU (PyTorch picks its kernel: the flash CPU kernel or the math path; they agree to
rounding; "grad_fn" records which, and "grad_fn_strided" which it picks for the same inputs
with a last-dim stride of 2) and backpropagates sum(out * grad) to get dq, dk, dv.
  "heads_view" cases store one packed tensor x [B, T, 3·H·D] and take q, k, v from it as a
  transformer does: x[..., i·C:(i+1)·C].view(B, T, H, D).transpose(1, 2) (non-contiguous,
  batch dims that cannot be merged into one stride).
  "dropout" cases seed the default generator before the call (the draws are the mask's).
Also: F.linear on a 3-D input (the projections around attention), and the error messages.
Run: /work/venv/bin/python tests/reference/gen_attention.py
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from reflib import tensor_json, write

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def attention_case(q_shape, k_shape, v_shape, dtype, mask=None, mask_shape=None, is_causal=False, scale=None,
                   hidden_rows=(), dropout_p=0.0, seed=0, heads_view=None):
    gen = torch.Generator().manual_seed(seed)
    out = {"dtype": str(dtype).replace("torch.", ""), "is_causal": is_causal, "scale": scale,
           "dropout_p": dropout_p, "mask": mask}
    if heads_view is not None:
        batch, time, heads, head_dim = heads_view
        channels = heads * head_dim
        x = torch.randn(batch, time, 3 * channels, generator=gen, dtype=dtype)
        out["x"] = tensor_json(x)
        out["heads_view"] = list(heads_view)
        x = x.clone().requires_grad_()
        q, k, v = (x[..., i * channels:(i + 1) * channels].view(batch, time, heads, head_dim).transpose(1, 2)
                   for i in range(3))
        leaves = [x]
    else:
        q, k, v = (torch.randn(s, generator=gen, dtype=dtype) for s in (q_shape, k_shape, v_shape))
        out.update(q=tensor_json(q), k=tensor_json(k), v=tensor_json(v))
        q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
        leaves = [q, k, v]
    attn_mask = None
    if mask == "bool":
        attn_mask = torch.rand(mask_shape, generator=gen) > 0.4
        attn_mask[..., 0] = True  # every row sees something, except the hidden rows below
        for row in hidden_rows:
            attn_mask[..., row, :] = False
    elif mask in ("float", "float32"):
        attn_mask = torch.randn(mask_shape, generator=gen, dtype=DTYPES["float32"] if mask == "float32" else dtype)
        for row in hidden_rows:
            attn_mask[..., row, :] = float("-inf")
    if attn_mask is not None:
        out["attn_mask"] = tensor_json(attn_mask)
    if dropout_p > 0:
        out["dropout_seed"] = seed + 1000
        torch.manual_seed(seed + 1000)
    result = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                                            scale=scale)
    out["grad_fn"] = result.grad_fn.name()
    grad = torch.randn(result.shape, generator=gen, dtype=dtype)
    (result * grad).sum().backward()
    out["grad"] = tensor_json(grad)
    if heads_view is None:
        # The kernel PyTorch picks for the same call on inputs whose last dim has stride 2 (the
        # test's "strided" variant): its fused kernels need unit strides there.
        spread = [torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=dtype)[..., ::2].copy_(t.detach()).requires_grad_()
                  for t in leaves]
        out["grad_fn_strided"] = F.scaled_dot_product_attention(*spread, attn_mask=attn_mask, dropout_p=dropout_p,
                                                                 is_causal=is_causal, scale=scale).grad_fn.name()
    out["out"] = tensor_json(result)
    if heads_view is not None:
        out["dx"] = tensor_json(leaves[0].grad)
    else:
        out.update(dq=tensor_json(q.grad), dk=tensor_json(k.grad), dv=tensor_json(v.grad))
    return out


cases = {}
for name, dtype in DTYPES.items():
    def add(case_name, *args, **kwargs):
        cases[f"{case_name}_{name}"] = attention_case(*args, dtype=dtype, **kwargs)

    add("three_d", [2, 3, 4], [2, 5, 4], [2, 5, 4], seed=1)
    add("four_d", [2, 3, 4, 8], [2, 3, 6, 8], [2, 3, 6, 8], seed=2)
    add("two_d", [3, 4], [5, 4], [5, 4], seed=3)
    add("causal_square", [2, 2, 5, 4], [2, 2, 5, 4], [2, 2, 5, 4], is_causal=True, seed=4)
    add("causal_more_queries", [2, 6, 4], [2, 4, 4], [2, 4, 4], is_causal=True, seed=5)
    add("causal_fewer_queries", [2, 3, 4], [2, 5, 4], [2, 5, 4], is_causal=True, seed=6)
    add("bool_mask", [2, 2, 3, 4], [2, 2, 5, 4], [2, 2, 5, 4], mask="bool", mask_shape=[2, 2, 3, 5], seed=7)
    add("float_mask", [2, 2, 3, 4], [2, 2, 5, 4], [2, 2, 5, 4], mask="float", mask_shape=[2, 2, 3, 5], seed=8)
    add("broadcast_bool_mask", [2, 2, 3, 4], [2, 2, 5, 4], [2, 2, 5, 4], mask="bool", mask_shape=[3, 5], seed=9)
    add("broadcast_float_mask", [2, 2, 3, 4], [2, 2, 5, 4], [2, 2, 5, 4], mask="float", mask_shape=[3, 5], seed=10)
    add("custom_scale", [2, 3, 4], [2, 5, 4], [2, 5, 4], scale=0.3, seed=11)
    add("value_dim", [2, 3, 4], [2, 5, 4], [2, 5, 6], seed=12)
    add("hidden_row_bool", [2, 2, 4, 4], [2, 2, 5, 4], [2, 2, 5, 4], mask="bool", mask_shape=[4, 5],
        hidden_rows=[1, 3], seed=13)
    add("hidden_row_float", [2, 4, 4], [2, 5, 4], [2, 5, 4], mask="float", mask_shape=[2, 4, 5], hidden_rows=[2],
        seed=14)
    add("head_dim_one", [2, 2, 3, 1], [2, 2, 4, 1], [2, 2, 4, 1], seed=15)
    add("broadcast_batch", [2, 3, 4, 8], [3, 5, 8], [1, 3, 5, 8], seed=16)
    add("heads_view", None, None, None, heads_view=[2, 5, 3, 4], seed=17)
    add("heads_view_causal", None, None, None, heads_view=[2, 6, 2, 8], is_causal=True, seed=18)
    add("dropout", [2, 2, 4, 8], [2, 2, 6, 8], [2, 2, 6, 8], dropout_p=0.3, seed=19)
# 2048 attention weights: enough elements for any size-dependent path of the random draws.
cases["dropout_causal_large_float32"] = attention_case([2, 4, 16, 8], [2, 4, 16, 8], [2, 4, 16, 8], torch.float32,
                                                       dropout_p=0.25, is_causal=True, seed=20)
cases["float32_mask_on_float64"] = attention_case([2, 3, 4], [2, 5, 4], [2, 5, 4], torch.float64, mask="float32",
                                                  mask_shape=[3, 5], seed=21)

# F.linear on [B, T, C]: one addmm over B·T rows in both libraries.
gen = torch.Generator().manual_seed(30)
linear = {}
for name, dtype in DTYPES.items():
    x = torch.randn(2, 5, 6, generator=gen, dtype=dtype, requires_grad=True)
    weight = torch.randn(4, 6, generator=gen, dtype=dtype, requires_grad=True)
    bias = torch.randn(4, generator=gen, dtype=dtype, requires_grad=True)
    y = F.linear(x, weight, bias)
    grad = torch.randn(y.shape, generator=gen, dtype=dtype)
    (y * grad).sum().backward()
    linear[name] = {"x": tensor_json(x), "weight": tensor_json(weight), "bias": tensor_json(bias),
                    "grad": tensor_json(grad), "out": tensor_json(y), "grad_fn": type(y.grad_fn).__name__,
                    "dx": tensor_json(x.grad), "dweight": tensor_json(weight.grad), "dbias": tensor_json(bias.grad)}


def message(call):
    try:
        call()
    except RuntimeError as error:
        return str(error)
    raise AssertionError("expected an error")


q = torch.randn(1, 2, 3, 4, dtype=torch.float64)
k = torch.randn(1, 2, 5, 4, dtype=torch.float64)
v = torch.randn(1, 2, 5, 4, dtype=torch.float64)
sdpa = F.scaled_dot_product_attention
# The math path (the one ember's composition mirrors) for the messages and the edge cases: the
# CPU flash kernel does not check that key and value have the same length, and refuses a
# negative dropout_p, which the math path treats as no dropout.
with sdpa_kernel(SDPBackend.MATH):
    errors = {
        "mask_and_causal": message(lambda: sdpa(q, k, v, attn_mask=torch.ones(3, 5, dtype=torch.bool),
                                                is_causal=True)),
        "dtypes": message(lambda: sdpa(q, k, v.float())),
        "mask_dtype": message(lambda: sdpa(q, k, v, attn_mask=torch.ones(3, 5, dtype=torch.int64))),
        "one_dim": message(lambda: sdpa(q[0, 0, 0], k[0, 0, 0], v[0, 0, 0])),
        "key_dim": message(lambda: sdpa(q, k[..., :3], v)),
        "value_length": message(lambda: sdpa(q, k, v[:, :, :4])),
        "mask_shape": message(lambda: sdpa(q, k, v, attn_mask=torch.ones(4, 5, dtype=torch.float64))),
        "dropout_above_one": message(lambda: sdpa(q, k, v, dropout_p=1.5)),
    }
    # Edge cases PyTorch accepts: no queries, no keys (zeros), dropout_p = 1 (zeros), dropout_p < 0.
    edges = {
        "no_queries": tensor_json(sdpa(q[:, :, :0], k, v)),
        "no_keys": tensor_json(sdpa(q, k[:, :, :0], v[:, :, :0])),
        "dropout_one": tensor_json(sdpa(q, k, v, dropout_p=1.0)),
        "negative_dropout": tensor_json(sdpa(q, k, v, dropout_p=-1.0)),
        "plain": tensor_json(sdpa(q, k, v)),
    }
write("attention.json", {"cases": cases, "linear_3d": linear, "errors": errors, "edge_inputs":
                         {"q": tensor_json(q), "k": tensor_json(k), "v": tensor_json(v)}, "edges": edges})
