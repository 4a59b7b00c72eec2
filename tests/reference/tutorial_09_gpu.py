"""tests/reference/tutorial_09_gpu.py — tutorial §9.1–9.2 and the GPU appendix, in PyTorch.

Run with PyTorch 2.x (`python3`; 2.15 wrote it). On a machine without CUDA its output is
tests/apps/expected/tutorial_09_gpu.txt, which build/bin/tutorial_09_gpu must reproduce.
"""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from toy_problem import X_train, y_train, X_test, y_test, ToyDataset, NeuralNetwork, compute_accuracy

# §9.1 / appendix 2: is a GPU there?
print("CUDA available:", torch.cuda.is_available())

tensor_1 = torch.tensor([1., 2., 3.])
tensor_2 = torch.tensor([4., 5., 6.])
print(tensor_1.device)
print(tensor_1 + tensor_2)

if torch.cuda.is_available():
    tensor_1 = tensor_1.to("cuda")
    tensor_2 = tensor_2.to("cuda")
    print(tensor_1 + tensor_2)
    tensor_1 = tensor_1.to("cpu")
    try:
        print(tensor_1 + tensor_2)
    except RuntimeError as error:
        print("RuntimeError:", error)
else:
    print('CUDA not available: skipping the cells that hard-code "cuda"')

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("device:", device)


train_ds = ToyDataset(X_train, y_train)
test_ds = ToyDataset(X_test, y_test)

torch.manual_seed(123)
train_loader = DataLoader(dataset=train_ds, batch_size=2, shuffle=True, num_workers=1, drop_last=True)
test_loader = DataLoader(dataset=test_ds, batch_size=2, shuffle=False, num_workers=1)

torch.manual_seed(123)
model = NeuralNetwork(num_inputs=2, num_outputs=2)
model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

num_epochs = 3
for epoch in range(num_epochs):
    model.train()
    for batch_idx, (features, labels) in enumerate(train_loader):
        features, labels = features.to(device), labels.to(device)
        logits = model(features)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"Epoch: {epoch+1:03d}/{num_epochs:03d}"
              f" | Batch {batch_idx:03d}/{len(train_loader):03d}"
              f" | Train/Val Loss: {loss:.2f}")
    model.eval()


print("Training accuracy", compute_accuracy(model, train_loader, device=device))
print("Test accuracy", compute_accuracy(model, test_loader, device=device))
