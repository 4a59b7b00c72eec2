"""tests/reference/gen_view_inplace.py — reference values for in-place ops on views and on
the bases of views (tests/autograd/test_view_inplace.cpp): the gradients, values and
grad_fn names PyTorch gives when a view's base history is rewritten (CopySlices) and a
view's history is rebuilt from its base (AsStridedBackward0), and the messages of the
cases PyTorch refuses. Run: /work/venv/bin/python tests/reference/gen_view_inplace.py
"""
import torch

from reflib import tensor_json, write

out = {}


def case(name, **values):
    out[name] = {
        k: (v if isinstance(v, (str, bool)) else tensor_json(v)) for k, v in values.items()
    }


def grad_fn_name(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else "None"


# 1. The case: an in-place op on the base; the view's history is rebased.
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 1
v = y[0]
y.mul_(2)
v.backward()
case("base_inplace_then_view", x_grad=x.grad, view_grad_fn=grad_fn_name(v), base_grad_fn=grad_fn_name(y))

# 2. The second case: a base that does not require grad, a tensor that does written
#    into a slice of it: the base's history becomes CopySlices.
base = torch.zeros(3)
w = torch.tensor([1.0, 2.0], requires_grad=True)
s = base[0:2]
s.add_(w)
base_fn, view_fn = grad_fn_name(base), grad_fn_name(s)
(base * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
case("slice_of_plain_base_add", w_grad=w.grad, base=base, base_grad_fn=base_fn, view_grad_fn=view_fn,
     base_requires_grad=base.requires_grad)

# 3. mul_ on a slice of a non-leaf base, with another input that requires grad.
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
w = torch.tensor([3.0, -4.0], requires_grad=True)
y = x * 2
s = y[1:3]
s.mul_(w)
(y * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
case("slice_mul", x_grad=x.grad, w_grad=w.grad, y=y, view_grad_fn=grad_fn_name(s), base_grad_fn=grad_fn_name(y))

# 4. copy_ into a row of a transposed view (a strided region of the base).
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
src = torch.tensor([7.0, 8.0], requires_grad=True)
y = x * 1
t = y.t()
t[1].copy_(src)
(y * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
case("transpose_row_copy", x_grad=x.grad, src_grad=src.grad, y=y)

# 5. A view of a view modified in place; the middle view (stale) and the base are used.
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
y = x * 1
v = y.view(6)
vv = v[2:5]
vv.mul_(3)
loss = (v * torch.arange(1.0, 7.0)).sum() + (y * y).sum()
loss.backward()
case("view_of_view", x_grad=x.grad, v=v, v_grad_fn=grad_fn_name(v), vv_grad_fn=grad_fn_name(vv))

# 6. A sibling view made before the in-place op on another view is stale, and rebuilt.
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 1
a = y[0]
b = y[1]
a.mul_(3)
(a + b).backward()
case("stale_sibling", x_grad=x.grad, b_grad_fn=grad_fn_name(b), base_grad_fn=grad_fn_name(y))

# 7. zero_ and fill_ on views: no gradient reaches the overwritten values.
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = x * 2
y[1:3].zero_()
y[3:].fill_(5.0)
(y * y).sum().backward()
case("zero_fill_views", x_grad=x.grad, y=y)

# 8. div_ by a 0-d tensor on a column (strided view of a 2-D base).
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
w = torch.tensor(2.0, requires_grad=True)
y = x * 1
y[:, 1].div_(w)
(y * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
case("column_div", x_grad=x.grad, w_grad=w.grad, y=y)

# 9. A plain base written twice through overlapping slices (the second one reads the first).
w = torch.tensor([2.0, 3.0], requires_grad=True)
base = torch.zeros(4)
base[1:3].copy_(w)
base[0:2].mul_(w)
(base * torch.arange(1.0, 5.0)).sum().backward()
case("plain_base_two_writes", w_grad=w.grad, base=base)

# 10. An in-place op on a view in no-grad mode: the view's history is rebuilt from the
#     base's (unchanged) history.
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 1
v = y[0]
with torch.no_grad():
    v.mul_(2)
nograd_fn = grad_fn_name(v)
v.backward()
case("no_grad_write_on_view", x_grad=x.grad, view_grad_fn=nograd_fn)

# 11. Second derivatives through CopySlices (create_graph).
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
y[0:2].mul_(x[1:3])
(g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
g.sum().backward()
case("double_backward", first=g, x_grad=x.grad)

# 12. backward twice with retain_graph through CopySlices; then without it the second
#     backward is refused (the in-place node's saved tensors are freed with CopySlices).
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 1
y[0:1].mul_(x[1:2])
y.sum().backward(retain_graph=True)
y.sum().backward()
case("retain_graph_twice", x_grad=x.grad)

# 13. Errors PyTorch raises.
def message(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e)
    raise AssertionError("no error")


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
errors = {"view_of_leaf": message(lambda: x[0].mul_(2)), "leaf": message(lambda: x.mul_(2))}
y = x * 1
with torch.no_grad():
    v = y[0]
errors["no_grad_view"] = message(lambda: v.mul_(2))
plain = torch.zeros(3)
with torch.no_grad():
    s = plain[0:2]
errors["no_grad_view_of_plain_base"] = message(lambda: s.add_(torch.ones(2, requires_grad=True)))
errors["detach_view"] = message(lambda: (x * 1)[0].detach_())
out["errors"] = errors

write("view_inplace.json", out)
