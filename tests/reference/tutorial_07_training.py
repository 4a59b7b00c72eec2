"""tests/reference/tutorial_07_training.py — tutorial §7 (a typical training loop) run in
PyTorch; its output is tests/apps/expected/tutorial_07_training.txt, which
apps/tutorial/tutorial_07_training.cpp must reproduce exactly.
The data and loaders are §6's (the drop_last loader is the one §7 reuses); §7 then calls
torch.manual_seed(123) again before building the model, so the generator is used as:
seed, model init (5 Linear inits), then per epoch the loader's base seed + shuffle seed.
Run with PyTorch 2.x: python3 tests/reference/tutorial_07_training.py > tests/apps/expected/tutorial_07_training.txt
"""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from toy_problem import X_train, y_train, X_test, y_test, ToyDataset, NeuralNetwork, compute_accuracy

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
    for batch_idx, (features, labels) in enumerate(train_loader):

        logits = model(features)

        loss = F.cross_entropy(logits, labels)  # Loss function

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        ### LOGGING
        print(f"Epoch: {epoch+1:03d}/{num_epochs:03d}"
              f" | Batch {batch_idx:03d}/{len(train_loader):03d}"
              f" | Train/Val Loss: {loss:.2f}")

    model.eval()
    # Optional model evaluation

model.eval()
with torch.no_grad():
    outputs = model(X_train)
print(outputs)

torch.set_printoptions(sci_mode=False)
probas = torch.softmax(outputs, dim=1)
print(probas)

predictions = torch.argmax(probas, dim=1)
print(predictions)

predictions = torch.argmax(outputs, dim=1)
print(predictions)

print(predictions == y_train)
print(torch.sum(predictions == y_train))


print(compute_accuracy(model, train_loader))
print(compute_accuracy(model, test_loader))
