"""tests/reference/tutorial_09_gpu.py — tutorial §9.1–9.2 and the GPU appendix, in PyTorch.

Run with Debian's torch (`/usr/bin/python3`). On a machine without CUDA its output is
tests/apps/expected/tutorial_09_gpu.txt, which build/bin/tutorial_09_gpu must reproduce.
"""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

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


class ToyDataset(Dataset):
    def __init__(self, X, y):
        self.features = X
        self.labels = y

    def __getitem__(self, index):
        return self.features[index], self.labels[index]

    def __len__(self):
        return self.labels.shape[0]


class NeuralNetwork(torch.nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(num_inputs, 30), torch.nn.ReLU(),
            torch.nn.Linear(30, 20), torch.nn.ReLU(),
            torch.nn.Linear(20, num_outputs),
        )

    def forward(self, x):
        return self.layers(x)


X_train = torch.tensor([[-1.2, 3.1], [-0.9, 2.9], [-0.5, 2.6], [2.3, -1.1], [2.7, -1.5]])
y_train = torch.tensor([0, 0, 0, 1, 1])
X_test = torch.tensor([[-0.8, 2.8], [2.6, -1.6]])
y_test = torch.tensor([0, 1])
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


def compute_accuracy(model, dataloader, device):
    model = model.eval()
    correct = 0.0
    total_examples = 0
    for idx, (features, labels) in enumerate(dataloader):
        features, labels = features.to(device), labels.to(device)
        with torch.no_grad():
            logits = model(features)
        predictions = torch.argmax(logits, dim=1)
        compare = labels == predictions
        correct += torch.sum(compare)
        total_examples += len(compare)
    return (correct / total_examples).item()


print("Training accuracy", compute_accuracy(model, train_loader, device=device))
print("Test accuracy", compute_accuracy(model, test_loader, device=device))
