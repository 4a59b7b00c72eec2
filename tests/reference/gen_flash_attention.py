"""tests/reference/gen_flash_attention.py — PyTorch reference values for the fused attention path.

Writes flash_attention.json, read by tests/nn/test_flash_attention.cpp. Each case draws q, k,
v with a fixed seed and runs torch.nn.functional.scaled_dot_product_attention on the CPU
with PyTorch's own choice of kernel — its CPU flash kernel for every case here (the case
records the output's grad_fn to show it) — then backpropagates sum(out * grad) to get dq, dk,
dv. The shapes cross ember's CPU tiles (64 query rows, 256 keys) and the CUDA kernels' (32
and 16 rows for a head dim of 64): odd L and S, L != S, causal (top-left) with L > S and
L < S, head dims 1, 8, 16, 64 and 80, three 3-D inputs (PyTorch runs them as [1, N, L, E]),
and the heads of a packed projection (x.view(B, T, H, D).transpose(1, 2)), whose output
strides are recorded too. A few cases also store the logsumexp of
torch.ops.aten._scaled_dot_product_flash_attention_for_cpu. And PyTorch's error for a second
backward through its fused kernel (ember's works: the composite's formula).
Run: /work/venv/bin/python tests/reference/gen_flash_attention.py
"""
import torch
import torch.nn.functional as F

from reflib import tensor_json, write

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def flash_case(q_shape, k_shape, v_shape, dtype, is_causal=False, scale=None, seed=0, heads_view=None, lse=False):
    gen = torch.Generator().manual_seed(seed)
    out = {"dtype": str(dtype).replace("torch.", ""), "is_causal": is_causal, "scale": scale}
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
    result = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=scale)
    out["grad_fn"] = result.grad_fn.name()
    out["out_strides"] = list(result.stride())
    if lse:
        _, logsumexp = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, is_causal=is_causal,
                                                                                   scale=scale)
        out["logsumexp"] = tensor_json(logsumexp)
    grad = torch.randn(result.shape, generator=gen, dtype=dtype)
    (result * grad).sum().backward()
    out["grad"] = tensor_json(grad)
    out["out"] = tensor_json(result)
    if heads_view is not None:
        out["dx"] = tensor_json(leaves[0].grad)
    else:
        out.update(dq=tensor_json(q.grad), dk=tensor_json(k.grad), dv=tensor_json(v.grad))
    return out


cases = {}
for name, dtype in DTYPES.items():
    def add(case_name, *args, **kwargs):
        cases[f"{case_name}_{name}"] = flash_case(*args, dtype=dtype, **kwargs)

    add("cross_tiles_causal", [1, 2, 70, 16], [1, 2, 67, 16], [1, 2, 67, 16], is_causal=True, seed=1, lse=True)
    add("heads_view_causal", None, None, None, heads_view=[1, 37, 2, 16], is_causal=True, seed=2)
    add("head_dim_64", [1, 1, 33, 64], [1, 1, 35, 64], [1, 1, 35, 64], seed=3, lse=True)
cases["cross_tiles_float32"] = flash_case([1, 2, 70, 16], [1, 2, 67, 16], [1, 2, 67, 16], torch.float32, seed=4)
cases["causal_more_queries_float32"] = flash_case([2, 2, 9, 8], [2, 2, 5, 8], [2, 2, 5, 8], torch.float32,
                                                  is_causal=True, seed=5, lse=True)
cases["causal_fewer_queries_float64"] = flash_case([2, 2, 5, 8], [2, 2, 9, 8], [2, 2, 9, 8], torch.float64,
                                                   is_causal=True, seed=6)
cases["head_dim_one_float32"] = flash_case([2, 2, 5, 1], [2, 2, 6, 1], [2, 2, 6, 1], torch.float32, is_causal=True,
                                           seed=7)
cases["head_dim_80_float32"] = flash_case([1, 1, 33, 80], [1, 1, 33, 80], [1, 1, 33, 80], torch.float32,
                                          is_causal=True, seed=8)
cases["long_keys_float32"] = flash_case([1, 1, 3, 8], [1, 1, 300, 8], [1, 1, 300, 8], torch.float32, seed=9)
cases["three_d_causal_float32"] = flash_case([3, 6, 8], [3, 6, 8], [3, 6, 8], torch.float32, is_causal=True,
                                             seed=10)
cases["custom_scale_float64"] = flash_case([1, 2, 7, 8], [1, 2, 11, 8], [1, 2, 11, 8], torch.float64, scale=0.3,
                                           seed=11)
cases["single_query_float32"] = flash_case([2, 1, 1, 16], [2, 1, 9, 16], [2, 1, 9, 16], torch.float32,
                                           is_causal=True, seed=12)

# A second backward through PyTorch's fused kernel: its backward has no derivative.
q, k, v = (torch.randn(1, 1, 3, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
(dq,) = torch.autograd.grad(F.scaled_dot_product_attention(q, k, v).sum(), q, create_graph=True)
try:
    dq.sum().backward()
    raise AssertionError("expected PyTorch to refuse the double backward")
except RuntimeError as error:
    double_backward_error = str(error)

write("flash_attention.json", {"cases": cases, "double_backward_error": double_backward_error})
