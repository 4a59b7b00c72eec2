"""tests/reference/gen_fused.py — reference values for the fused training ops (issue 8).

Run with PyTorch 2.x (pip's torch; generated with 2.15): python3 tests/reference/gen_fused.py  (writes fused.json).
Covers:
  relu_backward   torch.ops.aten.threshold_backward(grad, result, 0) on plain, NaN/inf/±0,
                  broadcast, transposed, empty, 0-d, float64, int64 and mixed-dtype inputs,
                  its errors, and relu's double backward (ThresholdBackwardBackward0);
  cross_entropy   F.cross_entropy on [N, C] logits (ember's fused path): every reduction,
                  ignore_index (default and a class index), grad_output scaling, float64,
                  transposed logits, all rows ignored, an empty batch, huge logits, one
                  class; the gradient w.r.t. the logits, grad_fn names, a double-backward
                  value, and the error messages;
  one_hot         F.one_hot on plain, transposed, 0-d and empty indices;
  sgd             torch.optim.SGD trajectories with every option on an odd-sized parameter
                  (float32 and float64), including the alpha = ±1 shortcuts;
  linear_relu     a seeded Sequential(Linear, ReLU, Linear, ReLU, Linear): output, loss,
                  every parameter's gradient and the grad_fn tree (names).
"""
import torch
import torch.nn.functional as F

from reflib import tensor_json, write

out = {}

# ---------------------------------------------------------------- relu_backward
threshold_backward = torch.ops.aten.threshold_backward
torch.manual_seed(0)
relu_cases = []


def relu_case(name, grad, result, transpose_grad=False, transpose_result=False):
    """grad/result are stored as given; the test transposes them (.t()) when asked."""
    g = grad.t() if transpose_grad else grad
    r = result.t() if transpose_result else result
    relu_cases.append({"name": name, "grad": tensor_json(grad), "result": tensor_json(result),
                       "transpose_grad": transpose_grad, "transpose_result": transpose_result,
                       "expected": tensor_json(threshold_backward(g, r, 0))})


relu_case("plain", torch.randn(2, 3), torch.relu(torch.tensor([[0.5, -1.0, 0.0], [2.0, -0.1, 3.0]])))
relu_case("special values", torch.tensor([1.0, 2.0, 3.0, float("nan"), 4.0, 5.0, float("inf")]),
          torch.tensor([float("nan"), 0.0, -0.0, 1.0, float("inf"), -1.0, 0.0]))
relu_case("broadcast result", torch.randn(2, 3), torch.tensor([1.0, 0.0, 2.0]))
relu_case("broadcast grad", torch.tensor([1.0, -2.0, 3.0]), torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.5]]))
relu_case("transposed", torch.randn(3, 2), torch.relu(torch.randn(2, 3)), transpose_grad=True)
relu_case("both transposed", torch.randn(3, 2), torch.relu(torch.randn(3, 2)), transpose_grad=True, transpose_result=True)
relu_case("empty", torch.zeros(0, 3), torch.zeros(0, 3))
relu_case("0-d", torch.tensor(2.5), torch.tensor(0.25))
relu_case("0-d inactive", torch.tensor(2.5), torch.tensor(0.0))
relu_case("float64", torch.randn(4, dtype=torch.float64), torch.tensor([1.0, 0.0, 3.0, 0.0], dtype=torch.float64))
relu_case("int64", torch.tensor([4, -5, 6]), torch.tensor([1, 0, 2]))
relu_case("float32 grad, float64 result", torch.tensor([1.5, 2.5]), torch.tensor([0.0, 2.0], dtype=torch.float64))
out["relu_backward"] = relu_cases
errors = {}
for name, fn in [("shape", lambda: threshold_backward(torch.ones(3), torch.ones(2), 0)),
                 ("bool", lambda: threshold_backward(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool), 0))]:
    try:
        fn()
    except RuntimeError as e:
        errors[name] = str(e)
out["relu_backward_errors"] = errors

# relu's gradient and second derivative through autograd (create_graph).
x = torch.tensor([[1.0, -2.0, 0.5], [3.0, -0.25, 4.0]], dtype=torch.float64, requires_grad=True)
v = torch.tensor([[0.5, 1.0, -1.5], [2.0, 3.0, -0.5]], dtype=torch.float64, requires_grad=True)
y = torch.relu(x)
(g,) = torch.autograd.grad(y, x, v, create_graph=True)
(gv,) = torch.autograd.grad((g * g).sum(), v)
out["relu_double_backward"] = {"x": tensor_json(x), "v": tensor_json(v), "grad": tensor_json(g),
                               "grad_fn": type(g.grad_fn).__name__,
                               "next": [type(f).__name__ for f, _ in g.grad_fn.next_functions],
                               "grad_of_sum_grad_squared_wrt_v": tensor_json(gv)}

# ---------------------------------------------------------------- cross_entropy
torch.manual_seed(1)
ce_cases = []


def ce_case(name, logits, target, reduction="mean", ignore_index=-100, grad_output=None, transpose=False):
    """logits are stored as given; the test (and this script) uses logits.t() when transpose."""
    base = logits.clone().requires_grad_(True)
    xin = base.t() if transpose else base
    loss = F.cross_entropy(xin, target, reduction=reduction, ignore_index=ignore_index)
    if grad_output is None:
        grad_output = torch.ones_like(loss)
    loss.backward(grad_output)
    grad = base.grad.t() if transpose else base.grad
    ce_cases.append({"name": name, "logits": tensor_json(logits), "transpose": transpose,
                     "target": tensor_json(target), "reduction": reduction, "ignore_index": ignore_index,
                     "grad_output": tensor_json(grad_output), "loss": tensor_json(loss),
                     "grad": tensor_json(grad), "grad_fn": type(loss.grad_fn).__name__})


ce_case("mean", torch.randn(4, 5) * 2, torch.tensor([1, 0, 4, 2]))
ce_case("mean, ignored rows", torch.randn(4, 5) * 2, torch.tensor([1, -100, 4, -100]))
ce_case("mean, grad_output 2.5", torch.randn(3, 4), torch.tensor([3, 0, 1]), grad_output=torch.tensor(2.5))
ce_case("sum, ignore_index is a class", torch.randn(4, 5), torch.tensor([2, 0, 2, 3]), reduction="sum",
        ignore_index=2, grad_output=torch.tensor(0.5))
ce_case("none", torch.randn(4, 3), torch.tensor([0, -100, 2, 1]), reduction="none",
        grad_output=torch.tensor([1.0, -2.0, 0.5, 3.0]))
ce_case("float64", torch.randn(3, 6, dtype=torch.float64), torch.tensor([5, 0, 3]))
ce_case("transposed logits", torch.randn(5, 4), torch.tensor([4, 1, 0, 2]), transpose=True)
ce_case("all ignored, mean", torch.randn(3, 4), torch.tensor([-100, -100, -100]))
ce_case("all ignored, sum", torch.randn(3, 4), torch.tensor([-100, -100, -100]), reduction="sum")
ce_case("empty batch, mean", torch.zeros(0, 5), torch.zeros(0, dtype=torch.int64))
ce_case("empty batch, sum", torch.zeros(0, 5), torch.zeros(0, dtype=torch.int64), reduction="sum")
ce_case("empty batch, none", torch.zeros(0, 5), torch.zeros(0, dtype=torch.int64), reduction="none",
        grad_output=torch.zeros(0))
ce_case("huge logits", torch.tensor([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 1000.0]]), torch.tensor([0, 2]))
ce_case("one class", torch.randn(3, 1), torch.tensor([0, 0, 0]), reduction="sum")
ce_case("many classes", torch.randn(2, 300), torch.tensor([299, 7]))
out["cross_entropy"] = ce_cases

# Double backward through cross_entropy (create_graph): d/dx of sum(dloss/dx * w).
x = torch.tensor([[0.3, -1.2, 0.8, 0.1], [1.5, 0.2, -0.4, -2.0], [0.0, 0.7, 0.9, -0.3]],
                 dtype=torch.float64, requires_grad=True)
w = torch.tensor([[1.0, -0.5, 2.0, 0.25], [0.5, 1.5, -1.0, 3.0], [-2.0, 0.75, 1.25, -0.5]], dtype=torch.float64)
ce_double = {}
for reduction in ["mean", "sum", "none"]:
    loss = F.cross_entropy(x, torch.tensor([2, -100, 0]), reduction=reduction)
    go = torch.ones_like(loss) if reduction != "none" else torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64)
    (g,) = torch.autograd.grad(loss, x, go, create_graph=True)
    (h,) = torch.autograd.grad((g * w).sum(), x)
    ce_double[reduction] = {"grad": tensor_json(g), "second": tensor_json(h), "grad_output": tensor_json(go)}
out["cross_entropy_double_backward"] = {"x": tensor_json(x), "w": tensor_json(w), "target": [2, -100, 0],
                                        "cases": ce_double}

ce_errors = {}
logits = torch.randn(3, 4)
for name, fn in [("out of bounds", lambda: F.cross_entropy(logits, torch.tensor([1, 7, 0]))),
                 ("negative target", lambda: F.cross_entropy(logits, torch.tensor([1, -3, 0]))),
                 ("int32 target", lambda: F.cross_entropy(logits, torch.tensor([1, 2, 0], dtype=torch.int32))),
                 ("batch mismatch", lambda: F.cross_entropy(logits, torch.tensor([1, 2])))]:
    try:
        fn()
    except (RuntimeError, IndexError, ValueError) as e:
        ce_errors[name] = str(e)
out["cross_entropy_errors"] = ce_errors

# ---------------------------------------------------------------- one_hot
index = torch.tensor([[0, 2, 1], [3, 0, 2]])
out["one_hot"] = [
    {"name": "plain", "index": tensor_json(index), "num_classes": 5, "transpose": False,
     "expected": tensor_json(F.one_hot(index, 5))},
    {"name": "inferred", "index": tensor_json(index), "num_classes": -1, "transpose": False,
     "expected": tensor_json(F.one_hot(index))},
    {"name": "transposed", "index": tensor_json(index), "num_classes": 4, "transpose": True,
     "expected": tensor_json(F.one_hot(index.t(), 4))},
    {"name": "0-d", "index": tensor_json(torch.tensor(2)), "num_classes": 3, "transpose": False,
     "expected": tensor_json(F.one_hot(torch.tensor(2), 3))},
    {"name": "empty", "index": tensor_json(torch.zeros(0, dtype=torch.int64)), "num_classes": 3, "transpose": False,
     "expected": tensor_json(F.one_hot(torch.zeros(0, dtype=torch.int64), 3))},
]

# ---------------------------------------------------------------- SGD
torch.manual_seed(2)
sgd_start = torch.randn(3, 37)
sgd_grads = [torch.randn(3, 37) for _ in range(4)]
sgd = {}
for name, dtype, options in [
        ("every option", torch.float32, dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01, maximize=True)),
        ("nesterov float64", torch.float64, dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.001)),
        ("lr 1", torch.float32, dict(lr=1.0)),
        ("weight_decay 1, no dampening", torch.float32, dict(lr=0.2, momentum=0.5, weight_decay=1.0))]:
    p = sgd_start.clone().to(dtype).requires_grad_(True)
    optimizer = torch.optim.SGD([p], **options)
    steps = []
    for g in sgd_grads:
        p.grad = g.clone().to(dtype)
        optimizer.step()
        steps.append(tensor_json(p))
    sgd[name] = {"options": options, "dtype": str(dtype).replace("torch.", ""), "steps": steps}
out["sgd"] = {"start": tensor_json(sgd_start), "grads": [tensor_json(g) for g in sgd_grads], "runs": sgd}

# ---------------------------------------------------------------- Linear + ReLU in a Sequential
torch.manual_seed(123)
model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5), torch.nn.ReLU(),
                            torch.nn.Linear(5, 3))
x = torch.randn(7, 4)
labels = torch.tensor([0, 2, 1, 1, 0, 2, 2])
y = model(x)
loss = F.cross_entropy(y, labels)
loss.backward()


def tree(fn, depth=0, lines=None):
    """One line per node, two spaces per depth; valid edges only (as ember's next_edges)."""
    lines = [] if lines is None else lines
    lines.append("  " * depth + type(fn).__name__)
    for child, _ in fn.next_functions:
        if child is not None:
            tree(child, depth + 1, lines)
    return lines


out["linear_relu"] = {"x": tensor_json(x), "labels": tensor_json(labels), "output": tensor_json(y),
                      "loss": tensor_json(loss),
                      "grads": {name: tensor_json(p.grad) for name, p in model.named_parameters()},
                      "output_tree": tree(y.grad_fn)}

write("fused.json", out)
