"""tests/reference/gen_indexing.py — reference results and errors of cat, stack,
index_select, index_add, gather, scatter_add and one_hot.

Run with PyTorch 2.x (pip's torch; generated with 2.15):  python3 tests/reference/gen_indexing.py
Writes indexing.json, read by tests/core/test_indexing.cpp. Each case stores its inputs as
contiguous JSON tensors; an input flagged "t" reaches the op as that tensor transposed over
its last two dims (a non-contiguous view), in PyTorch here and in the C++ test alike.
"""
import torch
import torch.nn.functional as F

from reflib import tensor_json, write

torch.manual_seed(0)


def values(shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    low = 0 if dtype == torch.uint8 else -9
    return torch.randint(low, 10, shape, dtype=dtype)


class Case:
    """Collects the inputs of one case in the order the op takes them."""

    def __init__(self):
        self.inputs, self.layouts = [], []

    def add(self, t, transposed=False):
        """Stores t; with transposed, the op gets t.transpose(-1, -2) (a strided view)."""
        self.inputs.append(tensor_json(t))
        self.layouts.append("t" if transposed else "c")
        return t.transpose(-1, -2) if transposed else t


def index(values_list, dtype=torch.int64):
    return torch.tensor(values_list, dtype=dtype)


def build_cases():
    cases = []

    def record(op, args, builder):
        case = Case()
        out = builder(case)
        cases.append({"op": op, "args": args, "inputs": case.inputs, "layouts": case.layouts,
                      "output": tensor_json(out)})

    # cat: dims, negative dims, promotion, the legacy skip of 1-D empties, empty slabs.
    record("cat", [0], lambda c: torch.cat([c.add(values([2, 3])), c.add(values([1, 3]))], 0))
    record("cat", [1], lambda c: torch.cat([c.add(values([2, 3])), c.add(values([2, 2]))], 1))
    record("cat", [-1], lambda c: torch.cat([c.add(values([2, 3])), c.add(values([3, 2]), True)], -1))
    record("cat", [1], lambda c: torch.cat([c.add(values([2, 3, 2])), c.add(values([2, 1, 2])),
                                            c.add(values([2, 4, 2]))], 1))
    record("cat", [0], lambda c: torch.cat([c.add(values([2, 3], torch.int64)), c.add(values([1, 3]))], 0))
    record("cat", [0], lambda c: torch.cat([c.add(values([2, 3], torch.bool)), c.add(values([1, 3], torch.uint8))], 0))
    record("cat", [0], lambda c: torch.cat([c.add(values([2, 3])), c.add(values([0]))], 0))
    record("cat", [1], lambda c: torch.cat([c.add(values([0])), c.add(values([2, 3])), c.add(values([2, 0]))], 1))
    record("cat", [0], lambda c: torch.cat([c.add(values([0, 3])), c.add(values([2, 3]))], 0))
    record("cat", [0], lambda c: torch.cat([c.add(values([0])), c.add(values([0]))], 0))
    record("cat", [0], lambda c: torch.cat([c.add(values([3]))], 0))
    record("cat", [0], lambda c: torch.cat([c.add(values([2, 3])), c.add(values([0], torch.float64))], 0))
    # stack
    record("stack", [0], lambda c: torch.stack([c.add(values([2, 3])), c.add(values([2, 3]))], 0))
    record("stack", [2], lambda c: torch.stack([c.add(values([2, 3])), c.add(values([3, 2]), True)], 2))
    record("stack", [-1], lambda c: torch.stack([c.add(values([2])), c.add(values([2])), c.add(values([2]))], -1))
    record("stack", [0], lambda c: torch.stack([c.add(torch.tensor(1.5)), c.add(torch.tensor(2))], 0))
    record("stack", [1], lambda c: torch.stack([c.add(values([0, 2])), c.add(values([0, 2]))], 1))
    # index_select
    record("index_select", [0], lambda c: c.add(values([4, 3])).index_select(0, c.add(index([3, 0, 0, 2]))))
    record("index_select", [1], lambda c: c.add(values([4, 3]), True).index_select(1, c.add(index([1, 3]))))
    record("index_select", [-1], lambda c: c.add(values([2, 3, 4])).index_select(-1, c.add(index([2, 2], torch.int32))))
    record("index_select", [1], lambda c: c.add(values([2, 3, 4])).index_select(1, c.add(index([], torch.int64))))
    record("index_select", [0], lambda c: c.add(values([3, 2])).index_select(0, c.add(index(1))))
    record("index_select", [0], lambda c: c.add(torch.tensor(5.)).index_select(0, c.add(index([0]))))
    record("index_select", [0], lambda c: c.add(values([4], torch.int64)).index_select(0, c.add(index([3, 1]))))
    # index_add
    record("index_add", [0], lambda c: c.add(values([4, 3])).index_add(0, c.add(index([0, 2, 0])), c.add(values([3, 3]))))
    record("index_add", [1], lambda c: c.add(values([4, 3]), True).index_add(1, c.add(index([3, 1], torch.int32)),
                                                                              c.add(values([2, 3]), True)))
    record("index_add", [1], lambda c: c.add(values([2, 3, 2])).index_add(1, c.add(index([1, 1])),
                                                                           c.add(values([2, 2, 2]))))
    record("index_add", [0], lambda c: c.add(values([3, 4])).index_add(0, c.add(index([2, 0])), c.add(values([4, 2]), True)))
    record("index_add", [0], lambda c: c.add(values([4], torch.int64)).index_add(0, c.add(index([1, 1, 3])),
                                                                                   c.add(values([3], torch.int64))))
    record("index_add", [0], lambda c: c.add(values([3, 2])).index_add(0, c.add(index([], torch.int64)),
                                                                        c.add(values([0, 2]))))
    record("index_add", [0], lambda c: c.add(torch.tensor(5.)).index_add(0, c.add(index(0)), c.add(torch.tensor(2.))))
    # gather
    record("gather", [0], lambda c: c.add(values([3])).gather(0, c.add(index(1))))
    record("gather", [0], lambda c: c.add(values([3, 4])).gather(0, c.add(index([[0, 1, 2, 0], [2, 2, 1, 0]]))))
    record("gather", [1], lambda c: c.add(values([3, 4])).gather(1, c.add(index([[3], [0], [1]]))))
    record("gather", [1], lambda c: c.add(values([4, 3]), True).gather(1, c.add(index([[3, 0, 0, 1, 2], [1, 1, 1, 1, 1]]))))
    record("gather", [0], lambda c: c.add(values([4, 3, 2])).gather(0, c.add(index([[[3, 0], [1, 2]]]))))
    record("gather", [-1], lambda c: c.add(values([2, 3])).gather(-1, c.add(index([[2, 1], [0, 0]]))))
    record("gather", [1], lambda c: c.add(values([3, 4])).gather(1, c.add(index([[3, 1], [0, 0], [1, 2]], torch.int32))))
    record("gather", [0], lambda c: c.add(torch.tensor(5.)).gather(0, c.add(index(0))))
    record("gather", [0], lambda c: c.add(values([3, 4])).gather(0, c.add(torch.zeros(0, 2, dtype=torch.int64))))
    # scatter_add
    record("scatter_add", [0], lambda c: c.add(values([3, 4])).scatter_add(
        0, c.add(index([[0, 1, 2, 0], [0, 2, 1, 0]])), c.add(values([2, 4]))))
    record("scatter_add", [1], lambda c: c.add(values([3, 4])).scatter_add(
        1, c.add(index([[3], [0], [3]])), c.add(values([3, 2]))))
    record("scatter_add", [1], lambda c: c.add(values([5, 3]), True).scatter_add(
        1, c.add(index([[4, 4, 0], [1, 2, 1]])), c.add(values([4, 3]), True)))
    record("scatter_add", [0], lambda c: c.add(values([4, 3, 2])).scatter_add(
        0, c.add(index([[[3, 0], [1, 3]], [[3, 3], [0, 0]]])), c.add(values([2, 2, 2]))))
    record("scatter_add", [1], lambda c: c.add(values([3, 4])).scatter_add(
        1, c.add(index([[3, 3], [0, 1], [2, 2]], torch.int32)), c.add(values([3, 2]))))
    record("scatter_add", [0], lambda c: c.add(values([5], torch.int64)).scatter_add(
        0, c.add(index([4, 4, 0])), c.add(values([3], torch.int64))))
    record("scatter_add", [0], lambda c: c.add(values([3, 2])).scatter_add(
        0, c.add(torch.zeros(0, 2, dtype=torch.int64)), c.add(values([1, 2]))))
    record("scatter_add", [0], lambda c: c.add(values([2])).scatter_add(
        0, c.add(index([1, 1])), c.add(values([3]))))
    # one_hot
    record("one_hot", [-1], lambda c: F.one_hot(c.add(index([0, 3, 1])), -1))
    record("one_hot", [5], lambda c: F.one_hot(c.add(index([[0, 3], [4, 1]])), 5))
    record("one_hot", [3], lambda c: F.one_hot(c.add(index(2)), 3))
    record("one_hot", [3], lambda c: F.one_hot(c.add(index([], torch.int64)), 3))
    return cases


def build_errors():
    z = torch.zeros
    x = torch.arange(12.).view(3, 4)
    errors = []

    def expect(op, args, inputs, call):
        try:
            call()
        except (RuntimeError, IndexError, ValueError) as error:
            errors.append({"op": op, "args": args, "inputs": [tensor_json(t) for t in inputs], "message": str(error)})
        else:
            raise AssertionError(f"{op} did not fail")

    def cat_error(tensors, dim=0):
        expect("cat", [dim], tensors, lambda: torch.cat(tensors, dim))

    def stack_error(tensors, dim=0):
        expect("stack", [dim], tensors, lambda: torch.stack(tensors, dim))

    cat_error([])
    cat_error([z(2, 3), z(2, 4)])
    cat_error([z(2, 0), z(3, 3)], 1)
    cat_error([z(2, 3), z(2, 3, 1)])
    cat_error([z(2, 3), z(3)])
    cat_error([z(2, 3), z(2, 3)], 2)
    cat_error([z(2, 3), z(2, 3)], -3)
    cat_error([torch.tensor(1.), torch.tensor(2.)])
    cat_error([z(2, 3), torch.tensor(2.)])
    stack_error([])
    stack_error([z(2, 3), z(2, 4)])
    stack_error([z(2, 3), z(2, 3)], 3)

    def three(op, dim, a, i, *rest):
        call = {
            "index_select": lambda: a.index_select(dim, i),
            "index_add": lambda: a.index_add(dim, i, rest[0]),
            "gather": lambda: a.gather(dim, i),
            "scatter_add": lambda: a.scatter_add(dim, i, rest[0]),
        }[op]
        expect(op, [dim], [a, i, *rest], call)

    three("index_select", 0, x, index([3]))
    three("index_select", 0, x, index([-1]))
    three("index_select", 0, x, torch.tensor([0.]))
    three("index_select", 0, x, index([[0]]))
    three("index_select", 2, x, index([0]))
    three("index_select", 0, torch.tensor(5.), index([1]))
    three("index_add", 0, x, index([0, 5]), z(2, 4))
    three("index_add", 0, x, index([0, -1]), z(2, 4))
    three("index_add", 0, x, index([0, 1]), z(2, 3))
    three("index_add", 0, x, index([0, 1]), z(3, 4))
    three("index_add", 0, x, torch.tensor([0, 1.]), z(2, 4))
    three("index_add", 0, x, index([0, 1]), z(2, 4, dtype=torch.float64))
    three("index_add", 0, x, index([[0, 1]]), z(2, 4))
    three("index_add", 0, x, index([0, 1]), z(2, 4, 1))
    three("index_add", 0, x, index([0, 1]), z(2, 1))  # PyTorch 1.13 broadcast the source slice; 2.x refuses
    three("index_add", 0, torch.tensor(5.), index([0]), z(1))
    three("gather", 0, x, index([[0]], torch.float32))  # int32 indices work since PyTorch 2.x
    three("gather", 0, x, index([0]))
    three("gather", 0, x, index([[3]]))
    three("gather", 0, x, index([[-1]]))
    three("gather", 0, x, index([[0, 0, 0, 0, 0]]))
    three("gather", 1, x, index([[0], [0], [0], [0]]))
    three("gather", 2, x, index([[0]]))
    three("scatter_add", 0, x, index([[0]]), z(1, 1, 1))
    three("scatter_add", 0, x, index([[0, 0]]), z(1, 1))
    three("scatter_add", 0, x, index([[0, 0, 0, 0, 0]]), z(1, 5))
    three("scatter_add", 0, x, index([[0]]), z(1, 1, dtype=torch.float64))
    three("scatter_add", 0, x, index([[0]], torch.float32), z(1, 1))
    three("scatter_add", 0, x, index([[5]]), z(1, 1))
    three("scatter_add", 0, x, index([[-1]]), z(1, 1))

    def one_hot_error(t, num_classes):
        expect("one_hot", [num_classes], [t], lambda: F.one_hot(t, num_classes))

    one_hot_error(index([0, 3]), 3)
    one_hot_error(index([0, -1]), 3)
    one_hot_error(index([0, -1]), -1)
    one_hot_error(torch.tensor([0, 1.]), 3)
    one_hot_error(index([0, 1], torch.int32), 3)
    one_hot_error(index([], torch.int64), -1)
    one_hot_error(index([1, 2]), 0)
    return errors


def main():
    write("indexing.json", {"cases": build_cases(), "errors": build_errors()})


if __name__ == "__main__":
    main()
