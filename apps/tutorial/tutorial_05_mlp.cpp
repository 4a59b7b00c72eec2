// apps/tutorial/tutorial_05_mlp.cpp — tutorial §5 "Implementing multilayer neural networks".
//
// Builds the tutorial's two-hidden-layer perceptron as a custom nn::Module, prints its
// summary, its number of trainable parameters and its seeded weights, and runs one forward
// pass. The output matches tests/apps/expected/tutorial_05_mlp.txt, produced by running
// the same steps in PyTorch (tests/reference/tutorial_05_mlp.py). One step of the
// tutorial is left out on purpose, the first, unseeded print(model.layers[0].weight): see
// the comment where it would be.
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp); quotes of the tutorial's code read the same in both.
#include <cstdint>
#include <iostream>
#include <memory>

#include <ember/ember.h>

namespace nn = ember::nn;

// §5 "we typically subclass the torch.nn.Module class to define our own custom network
// architecture ... we define the network layers in the __init__ constructor and specify how
// they interact in the forward method." 「我们通常会继承 torch.nn.Module 类来定义自己的自定义
// 网络架构」 In C++ the layers are registered explicitly
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
  // §5 "we can instantiate a new neural network object as follows: model = NeuralNetwork(50, 3)"
  //   「我们可以按如下方式实例化一个新的神经网络对象」
  auto model = std::make_shared<NeuralNetwork>(50, 3);
  // §5 "it's often useful to call print on the model to see a summary of its structure"
  //   「先对模型调用 print 查看它的结构摘要通常很有用」
  std::cout << model << "\n";

  // §5 "let's check the total number of trainable parameters of this model"
  //   「让我们检查这个模型的可训练参数总数」
  std::int64_t num_params = 0;
  for (const auto& p : model->parameters())
    if (p.requires_grad()) num_params += p.numel();
  std::cout << "Total number of trainable model parameters: " << num_params << "\n";

  // §5 "print(model.layers[0].weight)" 「我们可以按如下方式访问对应的权重参数矩阵」 — the
  // first, unseeded print of the weights: skipped here, on purpose. PyTorch seeds its
  // generator from the operating system when it starts, so these numbers differ on every
  // run, as the tutorial says ("the numbers in the weight matrix will likely differ"
  // 「权重矩阵中的数字很可能与上面显示的不同」), and no transcript could pin them.
  // ember's default generator starts from a fixed seed instead, PyTorch's compile-time
  // default 67280421310721 (core/random.h): printing here would show the same matrix on
  // every run, the one PyTorch prints after torch.manual_seed(67280421310721) — neither the
  // page's numbers nor a fresh PyTorch process's. docs/tutorial.md §5 shows that matrix.
  // The statement would be:
  //   std::cout << model->layers->at<nn::Linear>(0).weight << "\n";

  // §5 "we can use the .shape attribute to show its dimensions: print(model.layers[0].weight.shape)"
  //   「让我们用 .shape 属性显示它的维度」
  std::cout << ember::size_string(model->layers->at<nn::Linear>(0).weight.sizes()) << "\n";

  // §5 "we can make the random number initialization reproducible by seeding PyTorch's random
  // number generator via manual_seed" 「通过 manual_seed 为 PyTorch 的随机数生成器设置种子即可」
  ember::manual_seed(123);
  model = std::make_shared<NeuralNetwork>(50, 3);
  std::cout << model->layers->at<nn::Linear>(0).weight << "\n";

  // §5 "let's briefly see how it's used via the forward pass" 「简单看一下如何通过前向传播使用它」
  ember::manual_seed(123);
  ember::Tensor X = ember::rand({1, 50});
  ember::Tensor out = (*model)(X);
  std::cout << out << "\n";

  // §5 "when we use a model for inference ... it is a best practice to use the
  // torch.no_grad() context manager" 「最佳实践是使用 torch.no_grad() 上下文管理器」
  {
    ember::NoGradGuard no_grad;
    out = (*model)(X);
  }
  std::cout << out << "\n";

  // §5 "if we want to compute class-membership probabilities for our predictions, we have to
  // call the softmax function explicitly" 「就必须显式调用 softmax 函数」
  {
    ember::NoGradGuard no_grad;
    out = ember::softmax((*model)(X), /*dim=*/1);
  }
  std::cout << out << "\n";
  return 0;
}
