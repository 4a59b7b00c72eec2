"""tests/reference/gen_gpt.py — PyTorch reference values for ember's GPT (nn/gpt.h, issue 21).

Writes gpt.json, read by tests/nn/test_gpt.cpp. Per configuration (small enough to store whole):
  parameters     every tensor of named_parameters() right after GPT(...) with manual_seed(seed)
                 (the init order: defaults, apply(init_weights), the c_proj redraw)
  logits, loss   the model on a fixed batch (tokens that need no generator), float32
  grads          the loss's gradient of every parameter, float32
  loss64, grads64  the same with the model in float64 (a tight comparison of the formulas)
  steps          training: after init, `steps` iterations of get_batch (torch.randint from the
                 default generator), forward, backward, clip_grad_norm_(1.0), AdamW step with
                 nanoGPT's two groups (lr 1e-3, betas (0.9, 0.95), weight_decay 0.1), zero_grad;
                 the loss of each step and the parameters at the end
Run: /work/venv/bin/python tests/reference/gen_gpt.py
"""
import torch

from gpt_model import GPT, get_batch
from reflib import tensor_json, write

CONFIGS = [
    dict(name="tiny", seed=0, vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16, dropout=0.0, bias=True,
         batch=3, time=8, steps=4),
    dict(name="no_bias_short_context", seed=1337, vocab_size=7, block_size=6, n_layer=1, n_head=4, n_embd=8,
         dropout=0.0, bias=False, batch=2, time=4, steps=3),
    dict(name="dropout", seed=5, vocab_size=9, block_size=5, n_layer=2, n_head=1, n_embd=12, dropout=0.2, bias=True,
         batch=2, time=5, steps=3),
]


def fixed_tokens(vocab, count, offset=0):
    return torch.tensor([(7 * i + 3 + offset) % vocab for i in range(count)], dtype=torch.long)


def case(c):
    torch.manual_seed(c["seed"])
    model = GPT(c["vocab_size"], c["block_size"], c["n_layer"], c["n_head"], c["n_embd"], c["dropout"], c["bias"])
    out = {key: c[key] for key in c}
    out["parameter_names"] = [name for name, _ in model.named_parameters()]
    out["state_dict_keys"] = list(model.state_dict().keys())
    out["parameters"] = {name: tensor_json(p) for name, p in model.named_parameters()}
    out["repr"] = repr(model)

    idx = fixed_tokens(c["vocab_size"], c["batch"] * c["time"]).view(c["batch"], c["time"])
    targets = fixed_tokens(c["vocab_size"], c["batch"] * c["time"], offset=1).view(c["batch"], c["time"])
    targets[0, 0] = -1  # ignore_index=-1 takes part
    out["idx"] = tensor_json(idx)
    out["targets"] = tensor_json(targets)

    model.eval()  # no dropout: the formulas alone
    logits, loss = model(idx, targets)
    loss.backward()
    out["logits"] = tensor_json(logits)
    out["loss"] = loss.item()
    out["grads"] = {name: tensor_json(p.grad) for name, p in model.named_parameters()}
    model.zero_grad()

    model64 = GPT(c["vocab_size"], c["block_size"], c["n_layer"], c["n_head"], c["n_embd"], c["dropout"], c["bias"])
    model64.load_state_dict(model.state_dict())
    model64.double().eval()
    _, loss64 = model64(idx, targets)
    loss64.backward()
    out["loss64"] = loss64.item()
    out["grads64"] = {name: tensor_json(p.grad) for name, p in model64.named_parameters()}

    # Training from the generator state right after the first model's init: the second
    # model above drew from it too, so reseed and rebuild to start where ember's test starts.
    torch.manual_seed(c["seed"])
    model = GPT(c["vocab_size"], c["block_size"], c["n_layer"], c["n_head"], c["n_embd"], c["dropout"], c["bias"])
    model.train()
    data = fixed_tokens(c["vocab_size"], 40, offset=2)
    out["data"] = tensor_json(data)
    optimizer = model.optimizer(0.1, 1e-3, (0.9, 0.95))
    losses = []
    for _ in range(c["steps"]):
        x, y = get_batch(data, c["time"], c["batch"])
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    out["step_losses"] = losses
    out["trained_parameters"] = {name: tensor_json(p) for name, p in model.named_parameters()}

    # Generation from the trained model: past block_size (the window slides), with and
    # without temperature and top-k, a batch of two prompts.
    model.eval()
    generated = []
    for seed, temperature, top_k, prompt in [(5, 1.0, None, [[1]]), (6, 0.7, 3, [[2, 0, 1], [4, 4, 3]]),
                                             (7, 1.3, 1, [[0, 1]])]:
        torch.manual_seed(seed)
        prompt = torch.tensor(prompt, dtype=torch.long) % c["vocab_size"]
        tokens = model.generate(prompt, 2 * c["block_size"] + 3, temperature, top_k)
        generated.append({"seed": seed, "temperature": temperature, "top_k": top_k, "prompt": tensor_json(prompt),
                          "tokens": tensor_json(tokens)})
    out["generated"] = generated
    return out


if __name__ == "__main__":
    write("gpt.json", {"configs": [case(c) for c in CONFIGS]})
