"""tests/reference/toy_problem.py — the tutorial's toy problem, shared by the reference scripts.

The tutorial defines these once and reuses them: the five-example training set and the
two-example test set (§6), ToyDataset (§6), NeuralNetwork (§5: 2 hidden layers of 30 and 20
units) and compute_accuracy (§7). The ember side is apps/tutorial/toy_problem.h; the
reference scripts tutorial_06 … tutorial_09 import from here so each one reads like its
own section. Nothing here touches the random generator: importing it changes no numbers.
"""
import torch
from torch.utils.data import Dataset

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


class NeuralNetwork(torch.nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(num_inputs, 30), torch.nn.ReLU(),   # 1st hidden layer
            torch.nn.Linear(30, 20), torch.nn.ReLU(),           # 2nd hidden layer
            torch.nn.Linear(20, num_outputs),                   # output layer
        )

    def forward(self, x):
        return self.layers(x)


def compute_accuracy(model, dataloader, device=None):
    model.eval()
    correct = 0.0
    total_examples = 0
    for features, labels in dataloader:
        if device is not None:
            features, labels = features.to(device), labels.to(device)
        with torch.no_grad():
            logits = model(features)
        predictions = torch.argmax(logits, dim=1)
        compare = labels == predictions
        correct += torch.sum(compare)
        total_examples += len(compare)
    return (correct / total_examples).item()
