"""tests/reference/tutorial_08_save_load.py — tutorial §8 (saving and loading models) run in
PyTorch; its output is tests/apps/expected/tutorial_08_save_load.txt, which
apps/tutorial/tutorial_08_save_load.cpp must reproduce exactly. The model is trained as in
§7 (without the log), saved, and loaded into a freshly built NeuralNetwork(2, 2).
PyTorch saves a pickle (.pth); ember saves the same state_dict as safetensors — the
printed results are the same.
Run with PyTorch 2.x: python3 tests/reference/tutorial_08_save_load.py > tests/apps/expected/tutorial_08_save_load.txt
"""
import os
import tempfile
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from toy_problem import X_train, y_train, X_test, y_test, ToyDataset, NeuralNetwork

train_ds = ToyDataset(X_train, y_train)
test_ds = ToyDataset(X_test, y_test)
torch.manual_seed(123)
train_loader = DataLoader(dataset=train_ds, batch_size=2, shuffle=True, num_workers=0, drop_last=True)
test_loader = DataLoader(dataset=test_ds, batch_size=2, shuffle=False, num_workers=0)

torch.manual_seed(123)
model = NeuralNetwork(num_inputs=2, num_outputs=2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

num_epochs = 3
for epoch in range(num_epochs):
    model.train()
    for features, labels in train_loader:
        loss = F.cross_entropy(model(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
model.eval()
with torch.no_grad():
    print(model(X_train))

for name, tensor in model.state_dict().items():
    print(name, tensor.shape)

path = os.path.join(tempfile.mkdtemp(), "model.pth")
torch.save(model.state_dict(), path)

model = NeuralNetwork(2, 2)  # needs to match the original model exactly
print(model.load_state_dict(torch.load(path, weights_only=True)))

model.eval()
with torch.no_grad():
    print(model(X_train))
