"""tests/reference/tutorial_11_gpt.py — the chapter beyond the tutorial (§11, a GPT) run in
PyTorch; its output is tests/apps/expected/tutorial_11_gpt.txt, which
apps/tutorial/tutorial_11_gpt.cpp must reproduce exactly.
The model is gpt_model.py's GPT (nanoGPT's structure and init), trained on the committed word
list tests/apps/fixtures/words-sample.txt. The generator is used as: manual_seed(0), the
Embedding of part 1; manual_seed(1337), the GPT's init, then per training step get_batch's
randint (the first batch only measures the loss before training); manual_seed(42), the
draws of generate.
The training is gentle (AdamW at lr 3e-3, 150 steps): ember's and PyTorch's float32 sums,
which add in different orders, then stay within a few units in the last place of each other
(every step's loss printed with nine decimals agreed within 3e-6 here, with ember's fast and
reference kernels), far below the two printed decimals (the nearest printed loss is 5e-4 from a
rounding boundary) and below what could change a draw of generate (the closest draw won by a
relative 1 %). At lr 1e-2 the same training amplifies those last bits: the losses part in
the second decimal within 100 steps, and the words with them.
Run: /work/venv/bin/python tests/reference/tutorial_11_gpt.py > tests/apps/expected/tutorial_11_gpt.txt
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from gpt_model import GPT, get_batch

HERE = os.path.dirname(os.path.abspath(__file__))

# 1. Tokens and embeddings
print("== 1. Tokens and embeddings ==")
text = "not to be"
chars = sorted(set(text))
print(chars)
print(len(chars))
stoi = {ch: i for i, ch in enumerate(chars)}
encode = lambda s: [stoi[ch] for ch in s]
decode = lambda ids: "".join(chars[i] for i in ids)
ids = encode(text)
print(ids)
print(decode(ids))
torch.manual_seed(0)
wte = nn.Embedding(len(chars), 4)
print(wte(torch.tensor(ids)))

# 2. Attention
print("== 2. Attention on three tokens ==")
x = torch.tensor([[1., 0., 1., 0.],
                  [0., 2., 0., 1.],
                  [1., 1., 2., 0.]])
W_q = torch.tensor([[1., 0., 0., 1.],
                    [0., 1., 0., 0.],
                    [0., 0., 1., 0.],
                    [1., 0., 0., 0.]])
W_k = torch.tensor([[0., 1., 0., 0.],
                    [1., 0., 0., 1.],
                    [0., 0., 1., 0.],
                    [0., 0., 1., 1.]])
W_v = torch.tensor([[1., 0., 0., 0.],
                    [0., 0., 2., 0.],
                    [0., 1., 0., 0.],
                    [0., 0., 0., 3.]])
q, k, v = x @ W_q, x @ W_k, x @ W_v
print(q)
print(k)
print(v)
scores = q @ k.T / math.sqrt(4)
print(scores)
weights = F.softmax(scores, dim=-1)
print(weights)
out = weights @ v
print(out)
print(F.scaled_dot_product_attention(q, k, v))
print(torch.allclose(F.scaled_dot_product_attention(q, k, v), out))

# 3. The causal mask
print("== 3. The causal mask ==")
mask = torch.tril(torch.ones(3, 3))
print(mask)
masked = scores.masked_fill(mask == 0, float("-inf"))
print(masked)
weights = F.softmax(masked, dim=-1)
print(weights)
out = weights @ v
print(out)
print(F.scaled_dot_product_attention(q, k, v, is_causal=True))
print(torch.allclose(F.scaled_dot_product_attention(q, k, v, is_causal=True), out))

# 4. Layer norm and residuals
print("== 4. Layer norm and residuals ==")
ln_1 = nn.LayerNorm(4)


def attn(h):
    return F.scaled_dot_product_attention(h @ W_q, h @ W_k, h @ W_v, is_causal=True)


with torch.no_grad():
    h = ln_1(x)
    print(h)
    print(x + attn(h))

# 5. A GPT
print("== 5. A GPT trained on a word list ==")
with open(os.path.join(HERE, "..", "apps", "fixtures", "words-sample.txt"), encoding="utf-8") as f:
    text = f.read()
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}  # encode and decode now use this vocabulary
train_data = torch.tensor(encode(text), dtype=torch.long)
print(f"{len(text)} characters, {len(chars)} distinct")

torch.manual_seed(1337)
block_size, batch_size = 16, 16
model = GPT(vocab_size=len(chars), block_size=block_size, n_layer=2, n_head=2, n_embd=32)
print(f"parameters: {sum(p.numel() for p in model.parameters())}")

xb, yb = get_batch(train_data, block_size, batch_size)
_, loss = model(xb, yb)
print(f"loss before training: {loss:.2f} (ln {len(chars)} = {math.log(len(chars)):.2f})")

optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
max_steps = 150
for step in range(1, max_steps + 1):
    xb, yb = get_batch(train_data, block_size, batch_size)
    _, loss = model(xb, yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 25 == 0:
        print(f"step {step:03d}/{max_steps:03d} | loss {loss:.2f}")

model.eval()
torch.manual_seed(42)
start = torch.tensor([encode("\n")])
generated = model.generate(start, max_new_tokens=100, temperature=0.8, top_k=10)
print(decode(generated[0].tolist()[1:]).replace("\n", " "))
