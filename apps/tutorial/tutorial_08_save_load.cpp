// apps/tutorial/tutorial_08_save_load.cpp — tutorial §8 "Saving and loading models".
//
// Trains §7's model (quietly), saves its state_dict, builds a fresh NeuralNetwork(2, 2)
// and loads the saved parameters into it. PyTorch's torch.save writes a pickle ("model.pth");
// ember writes the same state_dict in the safetensors format ("model.safetensors"), which
// Python's safetensors package also reads. The output matches
// tests/apps/expected/tutorial_08_save_load.txt (tests/reference/tutorial_08_save_load.py).
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <unistd.h>

#include <ember/ember.h>

namespace nn = ember::nn;
namespace data = ember::data;
namespace F = ember::nn::functional;

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

int main(int argc, char** argv) {
  // §7: the same data, seed, model and three epochs of SGD.
  ember::Tensor X_train = ember::tensor({{-1.2, 3.1}, {-0.9, 2.9}, {-0.5, 2.6}, {2.3, -1.1}, {2.7, -1.5}});
  ember::Tensor y_train = ember::tensor({0, 0, 0, 1, 1});
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

  // "A model's state_dict is a Python dictionary object that maps each layer in the model
  // to its trainable parameters (weights and biases)."
  for (const auto& [name, tensor] : model->state_dict()) std::cout << name << " " << ember::size_string(tensor.sizes()) << "\n";

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

  // "model = NeuralNetwork(2, 2)  # needs to match the original model exactly"
  model = std::make_shared<NeuralNetwork>(2, 2);
  // "model.load_state_dict(torch.load("model.pth", weights_only=True))"
  std::cout << model->load_state_dict(ember::load(path.string())) << "\n";

  // The restored model computes what the trained one computed.
  model->eval();
  {
    ember::NoGradGuard no_grad;
    std::cout << (*model)(X_train) << "\n";
  }
  if (argc <= 1) std::filesystem::remove_all(path.parent_path());
  return 0;
}
