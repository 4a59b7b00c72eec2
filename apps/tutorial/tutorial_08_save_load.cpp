// apps/tutorial/tutorial_08_save_load.cpp — tutorial §8 "Saving and loading models".
//
// Trains §7's model (quietly), saves its state_dict, builds a fresh NeuralNetwork(2, 2)
// and loads the saved parameters into it. PyTorch's torch.save writes a pickle ("model.pth");
// ember writes the same state_dict in the safetensors format ("model.safetensors"), which
// Python's safetensors package also reads. The output matches
// tests/apps/expected/tutorial_08_save_load.txt (tests/reference/tutorial_08_save_load.py).
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp); quotes of the tutorial's code read the same in both.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <unistd.h>

#include <ember/ember.h>

#include "toy_problem.h"  // §5's NeuralNetwork, §6's toy data and ToyDataset

namespace data = ember::data;
namespace F = ember::nn::functional;

int main(int argc, char** argv) {
  // §8 "In the previous section, we successfully trained a model." 「在上一节中，我们成功训练了
  // 一个模型」 — §7 again, quietly: the same data, seed, model and three epochs of SGD.
  auto [X_train, y_train, X_test, y_test] = toy_data();
  auto train_ds = std::make_shared<ToyDataset>(X_train, y_train);
  ember::manual_seed(123);
  data::DataLoader train_loader(train_ds, {.batch_size = 2, .shuffle = true, .num_workers = 0, .drop_last = true});
  ember::manual_seed(123);
  auto model = std::make_shared<NeuralNetwork>(2, 2);
  ember::optim::SGD optimizer(model->parameters(), {.lr = 0.5});
  for (int epoch = 0; epoch < 3; ++epoch) {
    model->train();
    for (auto& [features, labels] : train_loader) {
      ember::Tensor loss = F::cross_entropy((*model)(features), labels);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
    }
  }
  model->eval();
  {
    ember::NoGradGuard no_grad;
    std::cout << (*model)(X_train) << "\n";
  }

  // §8 "A model's state_dict is a Python dictionary object that maps each layer in the model
  // to its trainable parameters (weights and biases)." 「模型的 state_dict 是一个 Python 字典
  // 对象，它把模型中的每一层映射到该层可训练的参数（权重和偏置）」 (beyond the tutorial: printed)
  for (const auto& [name, tensor] : model->state_dict()) std::cout << name << " " << ember::size_string(tensor.sizes()) << "\n";

  // §8 "the recommended way to save and load models in PyTorch" 「在 PyTorch 中保存和加载模型的
  // 推荐方式」:
  // "torch.save(model.state_dict(), "model.pth")" — here safetensors, in a temporary
  // directory unless a path is given on the command line.
  std::filesystem::path path;
  if (argc > 1) {
    path = argv[1];
  } else {
    path = std::filesystem::temp_directory_path() / ("ember_tutorial_08_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    path /= "model.safetensors";
  }
  ember::save(model->state_dict(), path.string());

  // §8 "After saving the model, we can restore it from disk" 「保存模型之后，我们可以按如下方式从
  // 磁盘恢复」:
  // §8 "model = NeuralNetwork(2, 2) # needs to match the original model exactly"
  model = std::make_shared<NeuralNetwork>(2, 2);
  // §8 "model.load_state_dict(torch.load("model.pth", weights_only=True))": <All keys matched successfully>
  std::cout << model->load_state_dict(ember::load(path.string())) << "\n";

  // Beyond the tutorial: the restored model computes what the trained one computed.
  model->eval();
  {
    ember::NoGradGuard no_grad;
    std::cout << (*model)(X_train) << "\n";
  }
  if (argc <= 1) std::filesystem::remove_all(path.parent_path());
  return 0;
}
