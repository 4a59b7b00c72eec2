"""tests/reference/gen_loss_stability.py — losses and (log-)softmax on huge logits (±1000 and
beyond), where a naive exp() overflows to inf and log(0) gives -inf: PyTorch's values and
gradients, which ember's stable formulations must reproduce (finite where PyTorch is).

Run with PyTorch 2.x (pip's torch; generated with 2.15): python3 tests/reference/gen_loss_stability.py  (writes loss_stability.json).
"""
import torch
import torch.nn.functional as F

from reflib import tensor_json, write

out = {}
for dtype in (torch.float32, torch.float64):
    name = str(dtype).replace("torch.", "")
    case = {}
    logits = torch.tensor([[1000.0, -1000.0, 0.0],
                           [-1000.0, -1000.0, -1000.0],
                           [1000.0, 1000.0, -1000.0],
                           [0.5, 1000.0, -999.5],
                           [-1e4, 1e4, 0.0]], dtype=dtype)
    target = torch.tensor([0, 2, 1, 0, 2])
    case["logits"] = tensor_json(logits)
    case["target"] = tensor_json(target)

    x = logits.clone().requires_grad_()
    loss = F.cross_entropy(x, target, reduction="none")
    loss.sum().backward()
    case["ce_none"] = tensor_json(loss)
    case["ce_none_grad"] = tensor_json(x.grad)
    case["ce_mean"] = tensor_json(F.cross_entropy(logits, target))
    x = logits.clone().requires_grad_()
    smooth = F.cross_entropy(x, target, label_smoothing=0.1)
    smooth.backward()
    case["ce_smooth"] = tensor_json(smooth)
    case["ce_smooth_grad"] = tensor_json(x.grad)

    weights = torch.arange(15, dtype=dtype).reshape(5, 3) / 7 - 1  # a non-uniform upstream gradient
    for fn_name, fn in [("log_softmax", F.log_softmax), ("softmax", F.softmax)]:
        for dim in (0, 1):
            x = logits.clone().requires_grad_()
            y = fn(x, dim=dim)
            (y * weights).sum().backward()
            case[f"{fn_name}_dim{dim}"] = tensor_json(y)
            case[f"{fn_name}_dim{dim}_grad"] = tensor_json(x.grad)

    z = torch.tensor([1000.0, -1000.0, 1000.0, -1000.0, 0.0, 88.7, -88.7, 50.0, -1e4, 1e4], dtype=dtype)
    y01 = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.5, 1.0, 0.0, 0.3, 1.0, 0.0], dtype=dtype)
    case["bce_z"] = tensor_json(z)
    case["bce_target"] = tensor_json(y01)
    x = z.clone().requires_grad_()
    bce = F.binary_cross_entropy_with_logits(x, y01, reduction="none")
    bce.sum().backward()
    case["bce_logits_none"] = tensor_json(bce)
    case["bce_logits_none_grad"] = tensor_json(x.grad)
    case["bce_logits_mean"] = tensor_json(F.binary_cross_entropy_with_logits(z, y01))
    case["bce_logits_sum"] = tensor_json(F.binary_cross_entropy_with_logits(z, y01, reduction="sum"))

    # Saturated probabilities: PyTorch clamps log() at -100 instead of returning inf.
    p = torch.tensor([0.0, 1.0, 0.0, 1.0, 1e-30, 0.5], dtype=dtype)
    t = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.5], dtype=dtype)
    case["bce_probs"] = tensor_json(p)
    case["bce_probs_target"] = tensor_json(t)
    case["bce_saturated_none"] = tensor_json(F.binary_cross_entropy(p, t, reduction="none"))
    out[name] = case

write("loss_stability.json", out)
