"""tests/reference/gen_embedding.py — PyTorch reference values for embedding (issue 21).

Writes embedding.json, read by tests/nn/test_embedding.cpp. Each case runs
  out = F.embedding(indices, weight, padding_idx); (out * grad).sum().backward()
and stores weight, indices, grad (in their storage layout: "layout" says how the C++ test
views them), out and weight.grad. The gradients of duplicated indices are summed by
PyTorch's CPU embedding_dense_backward in input order; the grads mix magnitudes (powers of
ten) so that a different order would round differently, and the test compares bit for bit.
"init" holds nn.Embedding's weights after torch.manual_seed(seed) (the normal_ stream, both
of its paths: fewer and at least 16 elements) and the reprs; "errors" PyTorch's messages.
Run: /work/venv/bin/python tests/reference/gen_embedding.py
"""
import torch
import torch.nn.functional as F

from reflib import tensor_json, write

torch.manual_seed(21)


def mixed_grad(shape, dtype):
    """Values of mixed magnitude, so the order of a sum shows in its last bits."""
    scale = 10.0 ** torch.randint(-3, 4, shape).to(dtype)
    return torch.randn(shape, dtype=dtype) * scale


def view_of(stored, layout):
    if layout == "contiguous":
        return stored
    if layout == "transposed":  # stored [dim, num] / [cols, rows] -> .t()
        return stored.t()
    if layout == "step2":  # every other element of the last dim
        return stored[..., ::2]
    raise ValueError(layout)


def case(num, dim, indices, padding_idx=None, dtype=torch.float32, weight_layout="contiguous",
         index_layout="contiguous", index_dtype=torch.int64):
    stored_weight_shape = [dim, num] if weight_layout == "transposed" else [num, dim]
    stored_weight = torch.randn(stored_weight_shape, dtype=dtype)
    stored_indices = torch.tensor(indices, dtype=index_dtype)
    weight = view_of(stored_weight, weight_layout).clone().requires_grad_()
    index_view = view_of(stored_indices, index_layout)
    out = F.embedding(index_view, weight, padding_idx=padding_idx)
    grad = mixed_grad(list(out.shape), dtype)
    (out * grad).sum().backward()
    return {"weight": tensor_json(stored_weight), "weight_layout": weight_layout,
            "indices": tensor_json(stored_indices), "index_layout": index_layout,
            "padding_idx": padding_idx, "grad": tensor_json(grad), "out": tensor_json(out),
            "grad_weight": tensor_json(weight.grad), "grad_fn": type(out.grad_fn).__name__}


many = torch.randint(0, 5, (300,)).tolist()
cases = {
    "duplicates": case(10, 4, [1, 3, 3, 0, 9, 3, 1]),
    "padding": case(10, 4, [1, 3, 3, 0, 9, 3, 1], padding_idx=3),
    "padding_negative": case(10, 4, [1, 3, 9, 0, 9, 3], padding_idx=-1),
    "padding_zero_unused": case(6, 3, [1, 2, 5], padding_idx=0),
    "indices_2d": case(7, 5, [[0, 6, 2], [2, 2, 6]]),
    "indices_3d_padding": case(7, 3, [[[0, 1], [1, 4]], [[4, 4], [0, 6]]], padding_idx=4),
    "index_0d": case(5, 3, 2),
    "index_0d_padding": case(5, 3, 2, padding_idx=2),
    "int32_indices": case(8, 4, [7, 0, 7, 7, 2], index_dtype=torch.int32),
    "float64": case(9, 6, [[8, 1, 1], [0, 8, 8]], dtype=torch.float64),
    "weight_transposed": case(6, 5, [5, 0, 5, 3], weight_layout="transposed"),
    "indices_transposed": case(6, 4, [[0, 1, 5], [5, 2, 1]], index_layout="transposed"),
    "indices_step2": case(6, 4, [[0, 1, 5, 2, 5, 3], [1, 1, 0, 4, 2, 1]], index_layout="step2"),
    "empty": case(4, 3, []),
    "empty_2d": case(4, 3, [[], []]),
    "many_duplicates": case(5, 7, many),
    "many_duplicates_padding": case(5, 3, many, padding_idx=2),
}

init = {}
for seed, num, dim, padding_idx in [(123, 65, 32, None), (0, 12, 8, 0), (7, 3, 4, None), (5, 10, 3, -2)]:
    torch.manual_seed(seed)
    module = torch.nn.Embedding(num, dim, padding_idx=padding_idx)
    init[f"seed{seed}_{num}x{dim}"] = {"seed": seed, "num_embeddings": num, "embedding_dim": dim,
                                         "padding_idx": padding_idx, "weight": tensor_json(module.weight),
                                         "repr": repr(module)}


def message(fn):
    try:
        fn()
    except (RuntimeError, IndexError, AssertionError) as error:
        return {"type": type(error).__name__, "message": str(error)}
    raise AssertionError("expected an error")


w = torch.randn(5, 3)
errors = {
    "float_indices": message(lambda: F.embedding(torch.tensor([1.0, 2.0]), w)),
    "double_indices": message(lambda: F.embedding(torch.tensor([1.0], dtype=torch.float64), w)),
    "bool_indices": message(lambda: F.embedding(torch.tensor([True]), w)),
    "uint8_indices": message(lambda: F.embedding(torch.tensor([1], dtype=torch.uint8), w)),
    "index_out_of_range": message(lambda: F.embedding(torch.tensor([1, 5]), w)),
    "negative_index": message(lambda: F.embedding(torch.tensor([-1]), w)),
    "weight_1d": message(lambda: torch.embedding(torch.randn(5), torch.tensor([1]))),
    "weight_3d": message(lambda: torch.embedding(torch.randn(5, 3, 2), torch.tensor([1]))),
    "padding_too_large": message(lambda: F.embedding(torch.tensor([1]), w, padding_idx=5)),
    "padding_too_small": message(lambda: F.embedding(torch.tensor([1]), w, padding_idx=-6)),
    "module_padding": message(lambda: torch.nn.Embedding(5, 3, padding_idx=5)),
    "module_padding_negative": message(lambda: torch.nn.Embedding(5, 3, padding_idx=-6)),
    "backward_float_indices": message(
        lambda: torch.ops.aten.embedding_dense_backward(torch.randn(2, 3), torch.tensor([1.0, 2.0]), 5, -1, False)),
}

write("embedding.json", {"cases": cases, "init": init, "errors": errors})
