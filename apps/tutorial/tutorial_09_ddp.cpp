// apps/tutorial/tutorial_09_ddp.cpp — tutorial §9.3 "Training with multiple GPUs" (DDP).
//
// The tutorial's DDP-script-torchrun.py, step for step: every process reads who it is from
// torchrun's environment variables, joins a process group, trains its own copy of §7's
// network on its own share of the data (DistributedSampler), and DistributedDataParallel
// averages the gradients so all copies stay the same. Run it as the tutorial runs its script:
//   build/bin/ember-run --nproc-per-node 2 -- build/bin/tutorial_09_ddp   (two processes)
//   build/bin/tutorial_09_ddp                                             (one process)
// On GPUs it uses NCCL and cuda:LOCAL_RANK; without one, Gloo on the CPU, which is how the
// reference was made: tests/reference/tutorial_09_ddp.py runs the tutorial's script with
// backend="gloo", and its transcripts tests/apps/expected/tutorial_09_ddp_world{1,2}.txt are
// what this program prints (tests/apps/test_tutorial_09_ddp.cpp).
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <ember/ember.h>

namespace nn = ember::nn;
namespace data = ember::data;
namespace dist = ember::distributed;
namespace F = ember::nn::functional;

// "NEW: function to initialize a distributed process group (1 process / GPU)"
void ddp_setup(int rank, int world_size) {
  // "Only set MASTER_ADDR and MASTER_PORT if not already defined by torchrun"
  // (The script's "localhost" is written as 127.0.0.1: ember's rendezvous store takes
  // numeric IPv4 addresses only.)
  ::setenv("MASTER_ADDR", "127.0.0.1", /*overwrite=*/0);
  ::setenv("MASTER_PORT", "12345", /*overwrite=*/0);
  // "nccl: NVIDIA Collective Communication Library" on GPUs; the script's Windows branch
  // uses "gloo", which is also what runs on a machine without a GPU.
  if (ember::cuda::is_available()) {
    dist::init_process_group("nccl", rank, world_size);
  } else {
    dist::init_process_group("gloo", rank, world_size);
  }
  // "torch.cuda.set_device(rank)": ember has no current-device state; the device is passed
  // explicitly below (cuda:rank).
}

struct ToyDataset : data::Dataset {
  ember::Tensor features;
  ember::Tensor labels;
  ToyDataset(ember::Tensor X, ember::Tensor y) : features(X), labels(y) {}
  data::Example get(std::int64_t index) override { return {features[index], labels[index]}; }
  std::int64_t size() const override { return labels.size(0); }
};

struct NeuralNetwork : nn::Module {
  std::shared_ptr<nn::Sequential> layers;
  NeuralNetwork(std::int64_t num_inputs, std::int64_t num_outputs) {
    layers = register_module("layers", nn::sequential({
        std::make_shared<nn::Linear>(num_inputs, 30), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Linear>(30, 20), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Linear>(20, num_outputs)}));
  }
  ember::Tensor forward(const ember::Tensor& x) override { return (*layers)(x); }
};

struct Loaders {
  std::shared_ptr<dist::DistributedSampler> train_sampler;
  std::unique_ptr<data::DataLoader> train_loader;
  std::unique_ptr<data::DataLoader> test_loader;
};

Loaders prepare_dataset() {
  ember::Tensor X_train = ember::tensor({{-1.2, 3.1}, {-0.9, 2.9}, {-0.5, 2.6}, {2.3, -1.1}, {2.7, -1.5}});
  ember::Tensor y_train = ember::tensor({0, 0, 0, 1, 1});
  ember::Tensor X_test = ember::tensor({{-0.8, 2.8}, {2.6, -1.6}});
  ember::Tensor y_test = ember::tensor({0, 1});
  auto train_ds = std::make_shared<ToyDataset>(X_train, y_train);
  auto test_ds = std::make_shared<ToyDataset>(X_test, y_test);

  Loaders loaders;
  // "NEW: chunk batches across GPUs without overlapping samples: sampler=DistributedSampler(train_ds)"
  loaders.train_sampler = std::make_shared<dist::DistributedSampler>(train_ds->size());
  data::DataLoaderOptions train_options;
  train_options.batch_size = 2;
  train_options.shuffle = false;  // "NEW: False because of DistributedSampler below"
  train_options.drop_last = true;
  train_options.sampler = loaders.train_sampler;
  loaders.train_loader = std::make_unique<data::DataLoader>(train_ds, train_options);
  loaders.test_loader = std::make_unique<data::DataLoader>(test_ds, data::DataLoaderOptions{.batch_size = 2, .shuffle = false});
  return loaders;
}

// Python's print(float): shortest round-trip digits, "1.0" rather than "1".
std::string python_float(double value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

double compute_accuracy(nn::Module& model, data::DataLoader& dataloader, ember::Device device) {
  model.eval();
  std::int64_t correct = 0;
  std::int64_t total_examples = 0;
  for (auto& [batch_features, batch_labels] : dataloader) {
    ember::Tensor features = batch_features.to(device);
    ember::Tensor labels = batch_labels.to(device);
    ember::Tensor logits;
    {
      ember::NoGradGuard no_grad;
      logits = model(features);
    }
    ember::Tensor predictions = ember::argmax(logits, /*dim=*/1);
    ember::Tensor compare = labels == predictions;
    correct += ember::sum(compare).item<std::int64_t>();
    total_examples += compare.size(0);
  }
  // "(correct / total_examples).item()": a float32 tensor divided, then widened to a double.
  return static_cast<double>(static_cast<float>(correct) / static_cast<float>(total_examples));
}

// "NEW: wrapper"
void run(int rank, int world_size, int num_epochs) {
  ddp_setup(rank, world_size);  // "NEW: initialize process groups"

  Loaders loaders = prepare_dataset();
  ember::Device device = ember::cuda::is_available() ? ember::Device("cuda:" + std::to_string(rank)) : ember::Device("cpu");
  auto network = std::make_shared<NeuralNetwork>(2, 2);
  network->to(device);  // "model.to(rank)"
  ember::optim::SGD optimizer(network->parameters(), {.lr = 0.5});

  // "NEW: wrap model with DDP"; "the core model is now accessible as model.module"
  auto model = std::make_shared<dist::DistributedDataParallel>(network);

  for (int epoch = 0; epoch < num_epochs; ++epoch) {
    // "NEW: Set sampler to ensure each epoch has a different shuffle order"
    loaders.train_sampler->set_epoch(epoch);
    model->train();
    for (auto& [batch_features, batch_labels] : *loaders.train_loader) {
      ember::Tensor features = batch_features.to(device);  // "New: use rank"
      ember::Tensor labels = batch_labels.to(device);
      ember::Tensor logits = (*model)(features);
      ember::Tensor loss = F::cross_entropy(logits, labels);  // "Loss function"
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      // "LOGGING"
      std::printf("[GPU%d] Epoch: %03d/%03d | Batchsize %03lld | Train/Val Loss: %.2f\n", rank, epoch + 1, num_epochs,
                  static_cast<long long>(labels.size(0)), loss.item<double>());
    }
  }
  std::fflush(stdout);

  model->eval();
  double train_acc = compute_accuracy(*model, *loaders.train_loader, device);
  std::cout << "[GPU" << rank << "] Training accuracy " << python_float(train_acc) << "\n";
  double test_acc = compute_accuracy(*model, *loaders.test_loader, device);
  std::cout << "[GPU" << rank << "] Test accuracy " << python_float(test_acc) << "\n" << std::flush;

  dist::destroy_process_group();  // "NEW: cleanly exit distributed mode"
}

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::atoi(text) : fallback;
}

int main() {
  // "NEW: Use environment variables set by torchrun if available, otherwise default to
  // single-process." (ember-run sets the same variables.)
  int world_size = env_int("WORLD_SIZE", 1);
  int rank = std::getenv("LOCAL_RANK") != nullptr ? env_int("LOCAL_RANK", 0) : env_int("RANK", 0);

  // "Only print on rank 0 to avoid duplicate prints from each GPU process"
  // (The script's first line, "PyTorch version:", names the library and has no counterpart.)
  if (rank == 0) {
    std::cout << "CUDA available: " << (ember::cuda::is_available() ? "True" : "False") << "\n";
    std::cout << "Number of GPUs available: " << ember::cuda::device_count() << "\n" << std::flush;
  }

  ember::manual_seed(123);
  const int num_epochs = 3;
  try {
    run(rank, world_size, num_epochs);
  } catch (const ember::Error& error) {
    std::cout.flush();
    std::cerr << "tutorial_09_ddp: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
