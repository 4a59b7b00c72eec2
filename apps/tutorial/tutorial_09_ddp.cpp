// apps/tutorial/tutorial_09_ddp.cpp — tutorial §9.3 "Training with multiple GPUs" (DDP).
//
// The tutorial's DDP-script-torchrun.py, step for step: every process reads who it is from
// torchrun's environment variables, joins a process group, trains its own copy of §7's
// network on its own share of the data (DistributedSampler), and DistributedDataParallel
// averages the gradients so all copies stay the same. Run it as the tutorial runs its script:
//   build/bin/ember-run --nproc-per-node 2 -- build/bin/tutorial_09_ddp   (two processes)
//   build/bin/tutorial_09_ddp                                             (one process)
// and on several machines as docs/distributed.md shows (ember-run --nnodes 2 ...).
// On GPUs it uses NCCL and cuda:LOCAL_RANK; without one, Gloo on the CPU, which is how the
// reference was made: tests/reference/tutorial_09_ddp.py runs the tutorial's script with
// backend="gloo", and its transcripts tests/apps/expected/tutorial_09_ddp_world{1,2}.txt are
// what this program prints (tests/apps/test_tutorial_09_ddp.cpp).
//
// One deliberate difference: the script takes its rank from LOCAL_RANK (the process's
// index on its machine) and uses it both as the process's rank and as its GPU. That is
// right on one machine only: on a second machine LOCAL_RANK starts again at 0, so two
// processes would claim rank 0. This program keeps the two apart — RANK (global) names the
// process in the group and in its log lines, LOCAL_RANK picks its GPU — which on one
// machine are the same numbers, so the output is the script's.
//
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp); quotes of the script's code read the same in both.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <ember/ember.h>

// §9.3 "# NEW imports:" 「为 PyTorch 分布式训练导入一些额外的子模块、类和函数」 — os, platform,
// DistributedSampler, DDP, init_process_group and destroy_process_group: all of them come
// with <ember/ember.h> (std::getenv and ::setenv play os.environ); the aliases play "import ... as".
namespace nn = ember::nn;
namespace data = ember::data;
namespace dist = ember::distributed;
namespace F = ember::nn::functional;

// Python's ZeroDivisionError, which the script catches around its accuracy computation.
struct ZeroDivisionError : ember::Error {
  using ember::Error::Error;
};

// §9.3 "NEW: function to initialize a distributed process group (1 process / GPU)"
// "this allows communication among processes"
void ddp_setup(int rank, int world_size, int local_rank) {
  // §9.3 "Only set MASTER_ADDR and MASTER_PORT if not already defined by torchrun"
  //   「该函数设置主节点的地址和通信端口（除非 torchrun 已经提供）」 — ember-run sets them too
  ::setenv("MASTER_ADDR", "localhost", /*overwrite=*/0);
  ::setenv("MASTER_PORT", "12345", /*overwrite=*/0);
  // §9.3 "initialize process group": "nccl: NVIDIA Collective Communication Library" on
  // GPUs; the script's Windows branch uses "gloo", which is also what runs without a GPU.
  if (ember::cuda::is_available()) {
    // §9.3 "torch.cuda.set_device(rank)": each process drives its own GPU. The script calls
    // it after init_process_group; ember's NCCL group binds its communicator to the current
    // GPU when it is created (PyTorch's binds at the first collective), so the GPU is chosen
    // first — otherwise every process would bind GPU 0.
    ember::cuda::set_device(local_rank);
    dist::init_process_group("nccl", rank, world_size);
  } else {
    dist::init_process_group("gloo", rank, world_size);
  }
}

// §9.3 "class ToyDataset(Dataset):" — §6's dataset: __getitem__ returns one (features, label)
// pair, __len__ the number of examples.
struct ToyDataset : data::Dataset {
  ember::Tensor features;
  ember::Tensor labels;
  ToyDataset(ember::Tensor X, ember::Tensor y) : features(X), labels(y) {}
  data::Example get(std::int64_t index) override { return {features[index], labels[index]}; }
  std::int64_t size() const override { return labels.size(0); }
};

// §9.3 "class NeuralNetwork(torch.nn.Module):" — §5's multilayer perceptron:
// "# 1st hidden layer" Linear(num_inputs, 30) + ReLU, "# 2nd hidden layer" Linear(30, 20)
// + ReLU, "# output layer" Linear(20, num_outputs); forward returns the logits.
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

// §9.3 "def prepare_dataset():" — §6's five training and two test examples.
Loaders prepare_dataset() {
  ember::Tensor X_train = ember::tensor({{-1.2, 3.1}, {-0.9, 2.9}, {-0.5, 2.6}, {2.3, -1.1}, {2.7, -1.5}});
  ember::Tensor y_train = ember::tensor({0, 0, 0, 1, 1});
  ember::Tensor X_test = ember::tensor({{-0.8, 2.8}, {2.6, -1.6}});
  ember::Tensor y_test = ember::tensor({0, 1});

  // §9.3 "Uncomment these lines to increase the dataset size to run this script on up to 8 GPUs:"
  // const int factor = 4;
  // std::vector<ember::Tensor> X_train_parts, X_test_parts;
  // for (int i = 0; i < factor; ++i) X_train_parts.push_back(X_train + ember::randn_like(X_train) * 0.1);
  // X_train = ember::cat(X_train_parts);
  // y_train = ember::cat(std::vector<ember::Tensor>(factor, y_train));  // y_train.repeat(factor)
  // for (int i = 0; i < factor; ++i) X_test_parts.push_back(X_test + ember::randn_like(X_test) * 0.1);
  // X_test = ember::cat(X_test_parts);
  // y_test = ember::cat(std::vector<ember::Tensor>(factor, y_test));

  auto train_ds = std::make_shared<ToyDataset>(X_train, y_train);
  auto test_ds = std::make_shared<ToyDataset>(X_test, y_test);

  Loaders loaders;
  // §9.3 "NEW: chunk batches across GPUs without overlapping samples: sampler=DistributedSampler(train_ds)"
  //   「在训练数据加载器中通过参数 sampler=DistributedSampler(train_ds) 使用 DistributedSampler」
  loaders.train_sampler = std::make_shared<dist::DistributedSampler>(train_ds->size());
  data::DataLoaderOptions train_options;
  train_options.batch_size = 2;
  train_options.shuffle = false;  // §9.3 "NEW: False because of DistributedSampler below"
  // §9.3 "pin_memory=True" is not copied: DataLoaderOptions::pin_memory exists, but without a
  // GPU the loader ignores it with PyTorch's warning on stderr, and these batches are tiny.
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

// §9.3 "def compute_accuracy(model, dataloader, device):" — §7's: count the correct
// predictions over the loader's batches and divide by the number of examples.
double compute_accuracy(nn::Module& model, data::DataLoader& dataloader, ember::Device device) {
  model.eval();
  std::int64_t correct = 0;
  std::int64_t total_examples = 0;
  for (auto& [batch_features, batch_labels] : dataloader) {
    ember::Tensor features = batch_features.to(device);
    ember::Tensor labels = batch_labels.to(device);
    ember::Tensor logits;
    {
      ember::NoGradGuard no_grad;  // §9.3 "with torch.no_grad():"
      logits = model(features);
    }
    ember::Tensor predictions = ember::argmax(logits, /*dim=*/1);
    ember::Tensor compare = labels == predictions;
    correct += ember::sum(compare).item<std::int64_t>();
    total_examples += compare.size(0);
  }
  // "correct = 0.0" stays a Python float when the loader yields no batch (a rank whose share
  // of the data is smaller than one batch), and 0.0 / 0 raises ZeroDivisionError.
  if (total_examples == 0) throw ZeroDivisionError("float division by zero");
  // "(correct / total_examples).item()": a float32 tensor divided, then widened to a double.
  return static_cast<double>(static_cast<float>(correct) / static_cast<float>(total_examples));
}

// §9.3 "NEW: wrapper" (the script's main(rank, world_size, num_epochs))
void run(int rank, int world_size, int local_rank, int num_epochs) {
  ddp_setup(rank, world_size, local_rank);  // §9.3 "NEW: initialize process groups"

  Loaders loaders = prepare_dataset();
  ember::Device device =
      ember::cuda::is_available() ? ember::Device("cuda:" + std::to_string(local_rank)) : ember::Device("cpu");
  auto network = std::make_shared<NeuralNetwork>(2, 2);
  network->to(device);  // §9.3 "model.to(rank)"
  ember::optim::SGD optimizer(network->parameters(), {.lr = 0.5});

  // §9.3 "NEW: wrap model with DDP"; "the core model is now accessible as model.module"
  //   「我们还用 DistributedDataParallel (DDP) 包装模型」 (model.module is model->module())
  auto model = std::make_shared<dist::DistributedDataParallel>(network);

  for (int epoch = 0; epoch < num_epochs; ++epoch) {
    // §9.3 "NEW: Set sampler to ensure each epoch has a different shuffle order"
    loaders.train_sampler->set_epoch(epoch);
    model->train();
    for (auto& [batch_features, batch_labels] : *loaders.train_loader) {
      ember::Tensor features = batch_features.to(device);  // §9.3 "New: use rank"
      ember::Tensor labels = batch_labels.to(device);
      ember::Tensor logits = (*model)(features);
      ember::Tensor loss = F::cross_entropy(logits, labels);  // §9.3 "Loss function"
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      // §9.3 "LOGGING"
      std::printf("[GPU%d] Epoch: %03d/%03d | Batchsize %03lld | Train/Val Loss: %.2f\n", rank, epoch + 1, num_epochs,
                  static_cast<long long>(labels.size(0)), loss.item<double>());
    }
  }
  std::fflush(stdout);

  model->eval();
  try {
    double train_acc = compute_accuracy(*model, *loaders.train_loader, device);
    std::cout << "[GPU" << rank << "] Training accuracy " << python_float(train_acc) << "\n";
    double test_acc = compute_accuracy(*model, *loaders.test_loader, device);
    // Every rank prints, as the script does. The tutorial's later suggestion,
    // §9.3 "if rank == 0: # only print in the first process" / "print("Test accuracy: ", accuracy)"
    //   「你可以利用每个进程的 rank 来控制 print 语句」,
    // would be `if (rank == 0) std::cout << "Test accuracy:  " << python_float(test_acc) << "\n";`
    // — not taken here, so the output stays the script's transcript.
    std::cout << "[GPU" << rank << "] Test accuracy " << python_float(test_acc) << "\n" << std::flush;
  } catch (const ZeroDivisionError& error) {
    // §9.3 "NEW: except ZeroDivisionError as e: raise ZeroDivisionError(...)": with more
    // processes than the five examples fill batches of 2 for, a rank has nothing to evaluate.
    throw ZeroDivisionError(std::string(error.what()) +
                            "\n\nThis script is designed for 2 GPUs. You can run it as:\n"
                            "ember-run --nproc-per-node 2 -- build/bin/tutorial_09_ddp\n"
                            "Or, to run it on " +
                            std::to_string(ember::cuda::device_count()) +
                            " GPUs, uncomment the lines that increase the dataset size in prepare_dataset().");
  }

  // §9.3 "NEW: cleanly exit distributed mode" 「妥善关闭分布式训练进程并释放相关资源」
  dist::destroy_process_group();
}

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::atoi(text) : fallback;
}

int main() {
  // §9.3 "NEW: Use environment variables set by torchrun if available, otherwise default to
  // single-process." 「在 __main__ 块中，我们用 os.environ 读取这些变量」 (ember-run sets the
  // same variables.) RANK and LOCAL_RANK are read apart; see the file comment.
  int world_size = env_int("WORLD_SIZE", 1);
  int rank = env_int("RANK", env_int("LOCAL_RANK", 0));
  int local_rank = env_int("LOCAL_RANK", rank);

  // §9.3 "Only print on rank 0 to avoid duplicate prints from each GPU process"
  // (The script's first line, "PyTorch version:", names the library and has no counterpart.)
  if (rank == 0) {
    std::cout << "CUDA available: " << (ember::cuda::is_available() ? "True" : "False") << "\n";
    std::cout << "Number of GPUs available: " << ember::cuda::device_count() << "\n" << std::flush;
  }

  ember::manual_seed(123);
  const int num_epochs = 3;
  try {
    run(rank, world_size, local_rank, num_epochs);
  } catch (const ember::Error& error) {
    std::cout.flush();
    std::cerr << "tutorial_09_ddp: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
