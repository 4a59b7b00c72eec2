"""tests/reference/tutorial_12_mixed_precision.py — the chapter beyond the tutorial on mixed
precision (§12), part 1: the 16-bit formats, run in PyTorch. Its output is
tests/apps/expected/tutorial_12_mixed_precision.txt, which
apps/tutorial/tutorial_12_mixed_precision.cpp must reproduce exactly.
Run: /work/venv/bin/python tests/reference/tutorial_12_mixed_precision.py > tests/apps/expected/tutorial_12_mixed_precision.txt
"""
import torch

FIELDS = {torch.float32: (8, 23), torch.bfloat16: (8, 7), torch.float16: (5, 10)}
NAMES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16"}


def bits(t):
    """A 0-d tensor's bits as 'sign exponent mantissa'."""
    exponent_bits, mantissa_bits = FIELDS[t.dtype]
    width = 1 + exponent_bits + mantissa_bits
    integer_dtype = torch.int32 if width == 32 else torch.int16
    pattern = t.view(integer_dtype).item() & ((1 << width) - 1)
    text = format(pattern, "0%db" % width)
    return text[0] + " " + text[1:1 + exponent_bits] + " " + text[1 + exponent_bits:]


print("== 1. One number, three formats ==")
third = torch.tensor(1 / 3)
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    x = third.to(dtype)
    print(f"{NAMES[dtype]:<9} {x.item()!r:<20} {bits(x)}")
print(torch.tensor([1 / 3, 100.0, 70000.0, 1e-6]).to(torch.bfloat16))
print(torch.tensor([1 / 3, 100.0, 70000.0, 1e-6]).to(torch.float16))

print("== 2. Rounding to nearest, ties to even ==")
# bfloat16 keeps 7 mantissa bits: between 1 and 2 its values are 2^-7 = 0.0078125 apart.
for value in (1.00390625, 1.01171875, 1.005, 1.0048828125):
    x = torch.tensor(value)
    y = x.to(torch.bfloat16)
    print(f"{value!r:<14} {bits(x)} -> {bits(y)} = {y.item()!r}")

print("== 3. Where precision is lost ==")
# Adding 0.01 ten thousand times, rounding after every addition: the sum stops growing
# once 0.01 is less than half the distance between neighbouring bfloat16 values.
step = torch.tensor(0.01, dtype=torch.bfloat16)
total = torch.tensor(0.0, dtype=torch.bfloat16)
for _ in range(10000):
    total = total + step
print("running bfloat16 sum:", total)
# sum() accumulates in float32 and rounds once at the end.
print("bfloat16 sum():     ", torch.full((10000,), 0.01, dtype=torch.bfloat16).sum())
# float16's range ends at 65504; bfloat16 keeps float32's range.
big = torch.tensor([100.0, 300.0])
print("float16 300 * x:    ", big.to(torch.float16) * 300)
print("bfloat16 300 * x:   ", big.to(torch.bfloat16) * 300)
print("float16 tiny:       ", torch.tensor([1e-5, 1e-7, 1e-8]).to(torch.float16))
# Mixed dtypes promote: bfloat16 with float32 computes in float32, and bfloat16 with
# float16, neither of which holds the other's values, in float32 too.
a = torch.tensor([1.5], dtype=torch.bfloat16)
print((a + torch.tensor([0.1])).dtype, (a + torch.tensor([0.1], dtype=torch.float16)).dtype, (a * 3).dtype)
