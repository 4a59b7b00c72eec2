// apps/tutorial/tutorial_09_gpu.cpp — tutorial §9.1–9.2 and the GPU appendix (seed 000).
//
// PyTorch computations happen on a *device*; every tensor taking part in one op must be on
// the same one. This program checks for a GPU, adds two tensors on the CPU, moves them to
// the GPU when there is one (and shows the same-device error, caught), then trains §7's
// network on `device = is_available() ? cuda : cpu`, moving every batch to that device.
// On a machine without a GPU it runs on the CPU and says so. Without a GPU its output is
// tests/apps/expected/tutorial_09_gpu.txt, produced by tests/reference/tutorial_09_gpu.py.
// (The appendix prints "Batch{batch_idx+1:03d}"; we follow the main tutorial's §9.2 log line.)
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp). The GPU appendix exists only in Chinese: for its steps
// ("Appendix §N", its own numbering) the "..." is our English rendering and 「...」 the original.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <ember/ember.h>

#include "toy_problem.h"  // §5's NeuralNetwork, §6's toy data and ToyDataset

namespace nn = ember::nn;
namespace data = ember::data;
namespace F = ember::nn::functional;

// Python's print(float): shortest round-trip digits, "1.0" rather than "1".
std::string python_float(double value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

// Appendix §13 "compute_accuracy now takes the device" 「现在对compute_accuracy也做了设备适配」:
// "def compute_accuracy(model, dataloader, device):" — model, inputs and labels must all live
// on the same device.
double compute_accuracy(nn::Module& model, data::DataLoader& dataloader, ember::Device device) {
  model.eval();  // "model = model.eval()"
  std::int64_t correct = 0;
  std::int64_t total_examples = 0;
  for (auto& [batch_features, batch_labels] : dataloader) {
    // Appendix §13, the one new line: "features, labels = features.to(device), labels.to(device)"
    //   「和 CPU 版相比，关键新增」
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
  return static_cast<double>(correct) / static_cast<double>(total_examples);
}

int main() {
  // §9.1 (and appendix §2) "print(torch.cuda.is_available())" 「我们可以通过以下代码确认运行环境
  // 确实支持 GPU 计算」 「检查 CUDA 是否可用」
  std::cout << "CUDA available: " << (ember::cuda::is_available() ? "True" : "False") << "\n";

  // §9.1 "by default, the computation is carried out on the CPU" 「默认情况下，这个计算会在 CPU
  // 上执行」; appendix §3 adds "print(tensor_1.device)" 「默认情况下，它们在 CPU 上」
  ember::Tensor tensor_1 = ember::tensor({1., 2., 3.});
  ember::Tensor tensor_2 = ember::tensor({4., 5., 6.});
  std::cout << tensor_1.device() << "\n";
  std::cout << tensor_1 + tensor_2 << "\n";

  if (ember::cuda::is_available()) {
    // §9.1 (appendix §4) "we can use the .to() method to transfer these tensors onto a GPU"
    // 「我们可以用 .to() 方法把这些张量转移到 GPU 上，并在那里执行加法」:
    // "tensor_1 = tensor_1.to("cuda")": the sum now prints device='cuda:0'.
    tensor_1 = tensor_1.to("cuda");
    tensor_2 = tensor_2.to("cuda");
    std::cout << tensor_1 + tensor_2 << "\n";
    // §9.1 (appendix §5) "all tensors must be on the same device, otherwise the computation will
    // fail" 「所有张量必须位于同一设备上，否则计算会失败」
    tensor_1 = tensor_1.to("cpu");
    try {
      std::cout << tensor_1 + tensor_2 << "\n";
    } catch (const ember::DeviceError& error) {
      std::cout << "RuntimeError: " << error.what() << "\n";
    }
  } else {
    // Appendix §19 "when running the tensor .to("cuda") example without a GPU, skip the cells
    // that hard-code "cuda"" 「如果没 GPU，跳过硬编码"cuda"的单元」
    std::cout << "CUDA not available: skipping the cells that hard-code \"cuda\"\n";
  }

  // §9.2 first writes "# New: Define a device variable that defaults to a GPU."
  // "device = torch.device("cuda")" — in ember `ember::Device device("cuda");`, whose
  // model->to(device) throws DeviceError on a machine without a GPU. The program takes the
  // form §9.2 recommends next, which also runs on a CPU when there is no GPU
  // 「让同一份代码在没有 GPU 时也能在 CPU 上运行」 (appendix §6 「更稳的设备写法」):
  // "device = torch.device("cuda" if torch.cuda.is_available() else "cpu")"
  ember::Device device = ember::cuda::is_available() ? ember::Device("cuda") : ember::Device("cpu");
  std::cout << "device: " << device << "\n";

  // Appendix §7 "reuses appendix one's toy data" 「复用了附录一的玩具数据」; §8 "the Dataset
  // is still the same" 「Dataset 和 CPU 训练时一样」.
  auto [X_train, y_train, X_test, y_test] = toy_data();
  auto train_ds = std::make_shared<ToyDataset>(X_train, y_train);
  auto test_ds = std::make_shared<ToyDataset>(X_test, y_test);

  // Appendix §9 "DataLoader(..., num_workers=1, drop_last=True)": the loaders use one worker
  // (a thread in ember, a process in PyTorch) 「num_workers=1」
  ember::manual_seed(123);
  data::DataLoader train_loader(train_ds, {.batch_size = 2, .shuffle = true, .num_workers = 1, .drop_last = true});
  data::DataLoader test_loader(test_ds, {.batch_size = 2, .shuffle = false, .num_workers = 1});

  // §9.2 "torch.manual_seed(123); model = NeuralNetwork(num_inputs=2, num_outputs=2)"
  // (appendix §10 "the model is the same" 「模型和之前的附录一是一样的」)
  ember::manual_seed(123);
  auto model = std::make_shared<NeuralNetwork>(2, 2);
  model->to(device);  // §9.2 "New: Transfer the model onto the GPU." (appendix §11 "model.to(device)")
  ember::optim::SGD optimizer(model->parameters(), {.lr = 0.5});

  const int num_epochs = 3;
  for (int epoch = 0; epoch < num_epochs; ++epoch) {
    model->train();
    int batch_idx = 0;
    for (auto& [batch_features, batch_labels] : train_loader) {
      // §9.2 "New: Transfer the data onto the GPU." (appendix §12: the DataLoader yields
      // CPU tensors, so every batch is moved 「所以输入也必须移动到同一个设备」)
      ember::Tensor features = batch_features.to(device);
      ember::Tensor labels = batch_labels.to(device);
      ember::Tensor logits = (*model)(features);
      ember::Tensor loss = F::cross_entropy(logits, labels);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      // §9.2 "### LOGGING", §7's line
      std::printf("Epoch: %03d/%03d | Batch %03d/%03lld | Train/Val Loss: %.2f\n", epoch + 1, num_epochs, batch_idx,
                  static_cast<long long>(train_loader.size()), loss.item<double>());
      ++batch_idx;
    }
    model->eval();
  }
  std::fflush(stdout);

  // Appendix §14 "evaluation after training" 「训练后评估」:
  // "compute_accuracy(model, train_loader, device=device)", then the test loader
  std::cout << "Training accuracy " << python_float(compute_accuracy(*model, train_loader, device)) << "\n";
  std::cout << "Test accuracy " << python_float(compute_accuracy(*model, test_loader, device)) << "\n";
  return 0;
}
