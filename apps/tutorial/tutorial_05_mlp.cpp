// apps/tutorial/tutorial_05_mlp.cpp — tutorial §5 "Implementing multilayer neural networks".
//
// Builds the tutorial's two-hidden-layer perceptron as a custom nn::Module, prints its
// summary, its number of trainable parameters and its seeded weights, and runs one forward
// pass. The output matches tests/apps/expected/tutorial_05_mlp.txt, produced by running
// the same steps in PyTorch (tests/reference/tutorial_05_mlp.py).
#include <cstdint>
#include <iostream>
#include <memory>

#include <ember/ember.h>

namespace nn = ember::nn;

// §5: "we typically subclass the torch.nn.Module class to define our own custom network
// architecture ... we define the network layers in the __init__ constructor and specify how
// they interact in the forward method." In C++ the layers are registered explicitly
// (register_module), which is what gives them the names layers.0.weight, ...
struct NeuralNetwork : nn::Module {
  std::shared_ptr<nn::Sequential> layers;

  NeuralNetwork(std::int64_t num_inputs, std::int64_t num_outputs) {
    layers = register_module("layers", nn::sequential({
        // 1st hidden layer
        std::make_shared<nn::Linear>(num_inputs, 30),
        std::make_shared<nn::ReLU>(),
        // 2nd hidden layer
        std::make_shared<nn::Linear>(30, 20),
        std::make_shared<nn::ReLU>(),
        // output layer
        std::make_shared<nn::Linear>(20, num_outputs),
    }));
  }

  ember::Tensor forward(const ember::Tensor& x) override {
    ember::Tensor logits = (*layers)(x);
    return logits;
  }
};

int main() {
  // §5: "we can instantiate a new neural network object as follows: model = NeuralNetwork(50, 3)"
  auto model = std::make_shared<NeuralNetwork>(50, 3);
  // §5: "it's often useful to call print on the model to see a summary of its structure"
  std::cout << model << "\n";

  // §5: "let's check the total number of trainable parameters of this model"
  std::int64_t num_params = 0;
  for (const auto& p : model->parameters())
    if (p.requires_grad()) num_params += p.numel();
  std::cout << "Total number of trainable model parameters: " << num_params << "\n";

  // §5: "we can use the .shape attribute to show its dimensions: print(model.layers[0].weight.shape)"
  std::cout << ember::size_string(model->layers->at<nn::Linear>(0).weight.sizes()) << "\n";

  // §5: "we can make the random number initialization reproducible by seeding PyTorch's random
  // number generator via manual_seed"
  ember::manual_seed(123);
  model = std::make_shared<NeuralNetwork>(50, 3);
  std::cout << model->layers->at<nn::Linear>(0).weight << "\n";

  // §5: "let's briefly see how it's used via the forward pass"
  ember::manual_seed(123);
  ember::Tensor X = ember::rand({1, 50});
  ember::Tensor out = (*model)(X);
  std::cout << out << "\n";

  // §5: "when we use a model for inference ... it is a best practice to use the
  // torch.no_grad() context manager"
  {
    ember::NoGradGuard no_grad;
    out = (*model)(X);
  }
  std::cout << out << "\n";

  // §5: "if we want to compute class-membership probabilities for our predictions, we have to
  // call the softmax function explicitly"
  {
    ember::NoGradGuard no_grad;
    out = ember::softmax((*model)(X), /*dim=*/1);
  }
  std::cout << out << "\n";
  return 0;
}
