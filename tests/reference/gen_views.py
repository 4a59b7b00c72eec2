"""tests/reference/gen_views.py — reference sizes, strides, offsets and values of views.

Run with PyTorch 2.x (pip's torch; generated with 2.15):  python3 tests/reference/gen_views.py
Writes views.json, read by tests/core/test_views.cpp. Every case applies one view op to a
float32 base holding 0, 1, 2, ... (optionally permuted, to make it non-contiguous) and
records what PyTorch reports: shape, stride(), storage_offset(), the values, and whether
the result still shares the base's storage. Error cases record PyTorch's message.
"""
import torch

from reflib import tensor_json, write


def make_base(shape, permute=None):
    n = 1
    for s in shape:
        n *= s
    base = torch.arange(n, dtype=torch.float32).reshape(shape)
    return base.permute(*permute) if permute is not None else base


def apply(x, op, args):
    if op == "view":
        return x.view(*args)
    if op == "reshape":
        return x.reshape(*args)
    if op == "transpose":
        return x.transpose(*args)
    if op == "t":
        return x.t()
    if op == "permute":
        return x.permute(*args)
    if op == "T":  # reverse all dims (x.T), written without the deprecation warning
        return x.permute(*reversed(range(x.dim())))
    if op == "squeeze":
        return x.squeeze(*args)
    if op == "unsqueeze":
        return x.unsqueeze(*args)
    if op == "flatten":
        return x.flatten(*args)
    if op == "expand":
        return x.expand(*args)
    if op == "select":  # x[..., index] at dim: the indexing path learners use
        dim, index = args
        return x[(slice(None),) * dim + (index,)] if x.dim() > 0 else x.select(dim, index)
    if op == "narrow":
        return x.narrow(*args)
    if op == "slice":
        dim, start, end, step = args
        return torch.ops.aten.slice(x, dim, start, end, step)
    if op == "as_strided":
        sizes, strides, offset = args
        return x.as_strided(sizes, strides, offset)
    if op == "alias":
        return torch.ops.aten.alias(x)
    raise ValueError(op)


CASES = [
    # (base shape, base permutation or None, op, args)
    ([2, 3, 4], None, "view", [4, 6]),
    ([2, 3, 4], None, "view", [-1, 2]),
    ([2, 3, 4], None, "view", [24]),
    ([2, 3, 4], None, "view", [2, 1, 3, 1, 4]),
    ([4, 6], [1, 0], "view", [6, 2, 2]),        # splitting a transposed dim is a view
    ([2, 3, 4], [1, 0, 2], "view", [3, 2, 2, 2]),
    ([2, 1, 3], [2, 1, 0], "view", [3, 2]),       # size-1 dims never break a chunk
    ([], None, "view", [1, 1]),
    ([0, 3], None, "view", [3, 0]),
    ([2, 3], None, "view", [2, 3]),
    ([2, 3, 4], None, "reshape", [6, 4]),
    ([4, 6], [1, 0], "reshape", [24]),            # needs a copy
    ([4, 6], [1, 0], "reshape", [3, 2, 4]),       # needs a copy
    ([4, 6], [1, 0], "reshape", [6, 2, 2]),       # still a view
    ([2, 3, 4], None, "transpose", [0, 2]),
    ([2, 3, 4], None, "transpose", [-1, 1]),
    ([], None, "transpose", [0, -1]),
    ([2, 3], None, "t", []),
    ([3], None, "t", []),
    ([], None, "t", []),
    ([2, 3, 4], None, "permute", [2, 0, 1]),
    ([2, 3, 4], None, "permute", [-1, 0, 1]),
    ([2, 3, 4], [2, 0, 1], "permute", [1, 2, 0]),
    ([2, 3, 4], None, "T", []),
    ([2, 3], [1, 0], "T", []),
    ([2, 1, 3, 1], None, "squeeze", []),
    ([2, 1, 3, 1], None, "squeeze", [1]),
    ([2, 1, 3, 1], None, "squeeze", [-1]),
    ([2, 1, 3, 1], None, "squeeze", [0]),
    ([], None, "squeeze", [0]),
    ([1, 1], None, "squeeze", []),
    ([2, 3], None, "unsqueeze", [0]),
    ([2, 3], None, "unsqueeze", [1]),
    ([2, 3], None, "unsqueeze", [2]),
    ([2, 3], None, "unsqueeze", [-1]),
    ([2, 3], [1, 0], "unsqueeze", [0]),
    ([], None, "unsqueeze", [0]),
    ([2, 3, 4], None, "flatten", []),
    ([2, 3, 4], None, "flatten", [1]),
    ([2, 3, 4], None, "flatten", [0, 1]),
    ([2, 3, 4], None, "flatten", [1, 1]),
    ([2, 3, 4], [0, 2, 1], "flatten", [1, 2]),    # needs a copy
    ([], None, "flatten", []),
    ([3], None, "expand", [2, 3]),
    ([3, 1], None, "expand", [3, 4]),
    ([3, 1], None, "expand", [-1, 4]),
    ([3], None, "expand", [2, 1, 3]),
    ([3], None, "expand", [1, 3]),
    ([1, 3], [1, 0], "expand", [2, 3, 5]),
    ([], None, "expand", [2, 3]),
    ([0, 1], None, "expand", [0, 4]),
    ([3], None, "expand", [0, 3]),
    ([3, 4], None, "select", [0, 1]),
    ([3, 4], None, "select", [1, -1]),
    ([3, 4], None, "select", [0, -3]),
    ([2, 3, 4], [2, 0, 1], "select", [2, 2]),
    ([3], None, "select", [0, 2]),
    ([3, 4], None, "narrow", [0, 1, 2]),
    ([3, 4], None, "narrow", [1, -2, 2]),
    ([3, 4], None, "narrow", [1, 4, 0]),
    ([3, 4], [1, 0], "narrow", [0, 1, 3]),
    ([5, 4], None, "slice", [0, 1, 4, 2]),
    ([5, 4], None, "slice", [1, None, None, 3]),
    ([5, 4], None, "slice", [0, -3, None, 1]),
    ([5, 4], None, "slice", [0, -100, 100, 1]),   # bounds are clamped
    ([5, 4], None, "slice", [0, 4, 2, 1]),        # end before start: empty
    ([5, 4], None, "slice", [1, 10, 20, 1]),
    ([5, 4], [1, 0], "slice", [-1, 1, None, 2]),
    ([6], None, "as_strided", [[2, 2], [1, 2], 1]),
    ([6], None, "as_strided", [[3, 2], [0, 1], 4]),
    ([2, 3], None, "as_strided", [[0, 5], [1, 1], 6]),
    ([2, 3], [1, 0], "alias", []),
    # empty bases (numel 0): the views keep PyTorch's sizes, strides and offsets
    ([0, 3], None, "narrow", [1, 1, 2]),
    ([0, 3], None, "narrow", [0, 0, 0]),
    ([2, 0, 3], None, "narrow", [2, -2, 2]),
    ([0, 3], None, "select", [1, 2]),
    ([2, 0, 3], None, "select", [0, 1]),
    ([0, 3], [1, 0], "select", [0, -1]),
    ([0, 3], None, "slice", [0, 0, 5, 1]),
    ([0, 3], None, "slice", [1, 1, None, 2]),
    ([2, 0, 3], None, "slice", [2, -2, None, 1]),
    ([0, 3], None, "permute", [1, 0]),
    ([2, 0, 3], None, "permute", [2, 0, 1]),
    ([0, 3], None, "T", []),
    ([2, 0, 3], None, "T", []),
    ([0, 3], None, "t", []),
    ([0, 1, 3], None, "squeeze", []),
    ([0, 3], None, "transpose", [0, 1]),
    # non-contiguous bases: squeeze, t and transpose only move strides around
    ([2, 1, 3], [2, 1, 0], "squeeze", []),
    ([2, 1, 3, 1], [3, 2, 1, 0], "squeeze", [2]),
    ([1, 3, 2], [2, 0, 1], "squeeze", [1]),
    ([2, 3], [1, 0], "t", []),
    ([2, 3, 4], [2, 0, 1], "transpose", [0, 2]),
    ([2, 3, 4], [1, 2, 0], "transpose", [-1, 1]),
]

ERROR_CASES = [
    ([2, 3], [1, 0], "view", [6]),
    ([2, 3], None, "view", [4, -1]),
    ([2, 3], None, "view", [-1, -1]),
    ([2, 3], None, "view", [-2, 3]),
    ([2, 3, 4], None, "t", []),
    ([2, 3, 4], None, "transpose", [0, 3]),
    ([2, 3, 4], None, "permute", [0, 1]),
    ([2, 3, 4], None, "permute", [0, 1, 1]),
    ([2, 3, 4], None, "permute", [0, 1, 3]),
    ([2, 3, 4], None, "squeeze", [3]),
    ([2, 3], None, "unsqueeze", [3]),
    ([2, 3], None, "flatten", [1, 0]),
    ([2, 3], None, "expand", [2, 4]),
    ([2, 3], None, "expand", [3]),
    ([2, 3], None, "expand", [-1, -1, 3]),
    ([2, 3, 4], None, "expand", [2, 3, 4, 4]),
    ([3], None, "select", [0, 5]),
    ([3], None, "select", [0, -4]),
    ([3, 4], None, "select", [1, 4]),
    ([], None, "select", [0, 0]),
    ([2, 3], None, "narrow", [1, 2, 2]),
    ([2, 3], None, "narrow", [1, 4, 0]),
    ([2, 3], None, "narrow", [1, 0, -1]),
    ([], None, "narrow", [0, 0, 1]),
    ([2, 3], None, "slice", [1, 0, 3, 0]),
    ([2, 3], None, "slice", [1, 0, 3, -1]),
    ([], None, "slice", [0, 0, 1, 1]),
    ([0, 3], None, "select", [0, 0]),
    ([2, 0, 3], None, "select", [1, -1]),
    ([0, 3], None, "narrow", [0, 0, 1]),
    ([6], None, "as_strided", [[2, 3], [3, 1], 1]),
    ([6], None, "as_strided", [[2, 3], [3], 0]),
    ([6], None, "as_strided", [[2, 2], [1, 1], -1]),
]


def main():
    cases = []
    for shape, permute, op, args in CASES:
        base = make_base(shape, permute)
        out = apply(base, op, args)
        cases.append({
            "base_shape": shape, "base_permute": permute, "op": op, "args": args,
            "shape": list(out.shape), "stride": list(out.stride()),
            "storage_offset": out.storage_offset(),
            "shares_storage": out.storage().data_ptr() == base.storage().data_ptr(),
            "values": tensor_json(out),
        })
    errors = []
    for shape, permute, op, args in ERROR_CASES:
        base = make_base(shape, permute)
        try:
            apply(base, op, args)
        except (RuntimeError, IndexError, ValueError) as error:
            errors.append({"base_shape": shape, "base_permute": permute, "op": op, "args": args,
                           "message": str(error)})
        else:
            raise AssertionError(f"{op}{args} did not fail")
    write("views.json", {"cases": cases, "errors": errors})


if __name__ == "__main__":
    main()
