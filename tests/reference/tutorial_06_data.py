"""tests/reference/tutorial_06_data.py — tutorial §6 (setting up efficient data loaders) run in
PyTorch; its output is tests/apps/expected/tutorial_06_data.txt, which
apps/tutorial/tutorial_06_data.cpp must reproduce exactly (same shuffles after manual_seed).
Run: /usr/bin/python3 tests/reference/tutorial_06_data.py > tests/apps/expected/tutorial_06_data.txt
"""
import torch
from torch.utils.data import Dataset, DataLoader

X_train = torch.tensor([
    [-1.2, 3.1],
    [-0.9, 2.9],
    [-0.5, 2.6],
    [2.3, -1.1],
    [2.7, -1.5]
])
y_train = torch.tensor([0, 0, 0, 1, 1])
X_test = torch.tensor([
    [-0.8, 2.8],
    [2.6, -1.6],
])
y_test = torch.tensor([0, 1])


class ToyDataset(Dataset):
    def __init__(self, X, y):
        self.features = X
        self.labels = y

    def __getitem__(self, index):
        one_x = self.features[index]
        one_y = self.labels[index]
        return one_x, one_y

    def __len__(self):
        return self.labels.shape[0]


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
