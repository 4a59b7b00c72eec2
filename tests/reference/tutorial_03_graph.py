"""tests/reference/tutorial_03_graph.py — tutorial §3 (seeing models as computation graphs)
run in PyTorch. Its standard output is the transcript tests/apps/expected/tutorial_03_graph.txt
that apps/tutorial/tutorial_03_graph.cpp must reproduce character for character.
Run with PyTorch 2.x: python3 tests/reference/tutorial_03_graph.py > tests/apps/expected/tutorial_03_graph.txt
"""
import torch
import torch.nn.functional as F

y = torch.tensor([1.0])  # true label
x1 = torch.tensor([1.1])  # input feature
w1 = torch.tensor([2.2])  # weight parameter
b = torch.tensor([0.0])  # bias unit

z = x1 * w1 + b  # net input
a = torch.sigmoid(z)  # activation & output

loss = F.binary_cross_entropy(a, y)
print(loss)

# The same forward with the parameters requiring grad: now every op leaves a node behind.
w1 = torch.tensor([2.2], requires_grad=True)
b = torch.tensor([0.0], requires_grad=True)
z = x1 * w1 + b
a = torch.sigmoid(z)
loss = F.binary_cross_entropy(a, y)
print(z)
print(a)
print(loss)


# Walk the graph from the loss: each node and the nodes its gradients flow to.
# (PyTorch spells the leaf node "torch::autograd::AccumulateGrad"; ember says "AccumulateGrad".)
def name(fn):
    return fn.name().replace("torch::autograd::", "") if fn is not None else "None"


def walk(fn, depth):
    nexts = ", ".join(name(n) for n, _ in fn.next_functions)
    print("  " * depth + name(fn) + " -> [" + nexts + "]")
    for n, _ in fn.next_functions:
        if n is not None:
            walk(n, depth + 1)


walk(loss.grad_fn, 0)
print("is_leaf:", w1.is_leaf, z.is_leaf, loss.is_leaf)
