"""tests/reference/tutorial_06_data.py — tutorial §6 (setting up efficient data loaders) run in
PyTorch; its output is tests/apps/expected/tutorial_06_data.txt, which
apps/tutorial/tutorial_06_data.cpp must reproduce exactly (same shuffles after manual_seed).
Run with PyTorch 2.x: python3 tests/reference/tutorial_06_data.py > tests/apps/expected/tutorial_06_data.txt
"""
import torch
from torch.utils.data import DataLoader

from toy_problem import X_train, y_train, X_test, y_test, ToyDataset  # §6's data and Dataset


train_ds = ToyDataset(X_train, y_train)
test_ds = ToyDataset(X_test, y_test)
print(len(train_ds))

torch.manual_seed(123)
train_loader = DataLoader(dataset=train_ds, batch_size=2, shuffle=True, num_workers=0)
test_ds = ToyDataset(X_test, y_test)
test_loader = DataLoader(dataset=test_ds, batch_size=2, shuffle=False, num_workers=0)

for idx, (x, y) in enumerate(train_loader):
    print(f"Batch {idx+1}:", x, y)

train_loader = DataLoader(dataset=train_ds, batch_size=2, shuffle=True, num_workers=0, drop_last=True)
for idx, (x, y) in enumerate(train_loader):
    print(f"Batch {idx+1}:", x, y)

# The test loader (the tutorial omits this loop "for brevity"); shuffle=False keeps order.
for idx, (x, y) in enumerate(test_loader):
    print(f"Batch {idx+1}:", x, y)

print(len(train_loader), len(test_loader))
