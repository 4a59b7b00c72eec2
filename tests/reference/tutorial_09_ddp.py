"""tests/reference/tutorial_09_ddp.py — the tutorial's §9.3 DDP script, run on CPUs with Gloo.

Run with PyTorch 2.x (`python3 tests/reference/tutorial_09_ddp.py`; 2.15 and 1.13 print the same). Without
arguments it is the driver: it runs this same file as the tutorial's script twice, once on
its own (world size 1) and once as two processes given torchrun's environment variables
(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), and writes what they printed to
  tests/apps/expected/tutorial_09_ddp_world1.txt   the single process's output
  tests/apps/expected/tutorial_09_ddp_world2.txt   each rank's lines as `ember-run` prefixes
                                                   them, "[rank 0] ..." first, then rank 1's
build/bin/tutorial_09_ddp must reproduce both (tests/apps/test_tutorial_09_ddp.cpp).
The "PyTorch version:" line is left out of the transcripts: it is the one line that names
the library rather than a result.

The script itself is the tutorial's with the changes a CPU needs: backend "gloo" instead of
"nccl", no torch.cuda.set_device, no device_ids, and `.to(device)` with device "cpu"
instead of `.to(rank)`. The "[GPU{rank}]" tags are kept, so the logs read the same.
"""
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "..", "apps", "expected")


def tutorial_script():
    import torch
    import torch.nn.functional as F
    from torch.utils.data import Dataset, DataLoader
    from torch.utils.data.distributed import DistributedSampler
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed import init_process_group, destroy_process_group

    def ddp_setup(rank, world_size):
        if "MASTER_ADDR" not in os.environ:
            os.environ["MASTER_ADDR"] = "localhost"
        if "MASTER_PORT" not in os.environ:
            os.environ["MASTER_PORT"] = "12345"
        # CPU: gloo (the tutorial uses nccl and torch.cuda.set_device(rank) on GPUs).
        init_process_group(backend="gloo", rank=rank, world_size=world_size)

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

    def prepare_dataset():
        X_train = torch.tensor([[-1.2, 3.1], [-0.9, 2.9], [-0.5, 2.6], [2.3, -1.1], [2.7, -1.5]])
        y_train = torch.tensor([0, 0, 0, 1, 1])
        X_test = torch.tensor([[-0.8, 2.8], [2.6, -1.6]])
        y_test = torch.tensor([0, 1])
        train_ds = ToyDataset(X_train, y_train)
        test_ds = ToyDataset(X_test, y_test)
        train_loader = DataLoader(dataset=train_ds, batch_size=2, shuffle=False, pin_memory=False,
                                  drop_last=True, sampler=DistributedSampler(train_ds))
        test_loader = DataLoader(dataset=test_ds, batch_size=2, shuffle=False)
        return train_loader, test_loader

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

    def main(rank, world_size, num_epochs):
        ddp_setup(rank, world_size)
        device = torch.device("cpu")
        train_loader, test_loader = prepare_dataset()
        model = NeuralNetwork(num_inputs=2, num_outputs=2)
        model.to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        model = DDP(model)
        for epoch in range(num_epochs):
            train_loader.sampler.set_epoch(epoch)
            model.train()
            for features, labels in train_loader:
                features, labels = features.to(device), labels.to(device)
                logits = model(features)
                loss = F.cross_entropy(logits, labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                print(f"[GPU{rank}] Epoch: {epoch+1:03d}/{num_epochs:03d}"
                      f" | Batchsize {labels.shape[0]:03d}"
                      f" | Train/Val Loss: {loss:.2f}")
        model.eval()
        train_acc = compute_accuracy(model, train_loader, device=device)
        print(f"[GPU{rank}] Training accuracy", train_acc)
        test_acc = compute_accuracy(model, test_loader, device=device)
        print(f"[GPU{rank}] Test accuracy", test_acc)
        destroy_process_group()

    world_size = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
    if "LOCAL_RANK" in os.environ:
        rank = int(os.environ["LOCAL_RANK"])
    elif "RANK" in os.environ:
        rank = int(os.environ["RANK"])
    else:
        rank = 0
    if rank == 0:
        print("PyTorch version:", torch.__version__)
        print("CUDA available:", torch.cuda.is_available())
        print("Number of GPUs available:", torch.cuda.device_count())
    torch.manual_seed(123)
    main(rank, world_size, 3)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def transcript(text):
    return "".join(line + "\n" for line in text.splitlines() if not line.startswith("PyTorch version:"))


def run(world_size):
    port = str(free_port())
    processes = []
    for rank in range(world_size):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        if world_size > 1:
            env.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                       LOCAL_WORLD_SIZE=str(world_size))
        processes.append(subprocess.Popen([sys.executable, __file__, "--script"], env=env,
                                          stdout=subprocess.PIPE, text=True))
    outputs = []
    for process in processes:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0, process.returncode
        outputs.append(transcript(out))
    return outputs


if __name__ == "__main__":
    if sys.argv[1:] == ["--script"]:
        tutorial_script()
    else:
        (single,) = run(1)
        with open(os.path.join(EXPECTED, "tutorial_09_ddp_world1.txt"), "w") as f:
            f.write(single)
        ranks = run(2)
        with open(os.path.join(EXPECTED, "tutorial_09_ddp_world2.txt"), "w") as f:
            for rank, text in enumerate(ranks):
                f.write("".join(f"[rank {rank}] {line}\n" for line in text.splitlines()))
