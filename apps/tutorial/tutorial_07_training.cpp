// apps/tutorial/tutorial_07_training.cpp — tutorial §7 "A typical training loop".
//
// Trains §5's NeuralNetwork(2, 2) on §6's toy data for three epochs with SGD(lr=0.5) and
// cross-entropy, then evaluates it. Each training step flows forward (the tape records
// every op), backward (the engine replays the tape into .grad), and SGD updates the
// parameters in place. The output — the loss log 0.75, 0.65, 0.44, 0.13, 0.03, 0.00, the
// trained outputs and probabilities, accuracy 1.0 — matches
// tests/apps/expected/tutorial_07_training.txt (tests/reference/tutorial_07_training.py).
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp); quotes of the tutorial's code read the same in both.
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

// Prints a double as Python's print(float) does (shortest round-trip digits, "1.0" not "1").
std::string python_float(double value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

// §7 "def compute_accuracy(model, dataloader):" 「让我们实现一个 compute_accuracy 函数」 — the
// number of correct predictions divided by the number of examples, one batch at a time.
double compute_accuracy(nn::Module& model, data::DataLoader& dataloader) {
  model.eval();                    // "model.eval()"
  std::int64_t correct = 0;        // "correct = 0.0": a count, so an integer here
  std::int64_t total_examples = 0;
  // "for idx, (features, labels) in enumerate(dataloader):" (idx is never used)
  for (auto& [features, labels] : dataloader) {
    ember::Tensor logits;
    {
      ember::NoGradGuard no_grad;  // "with torch.no_grad():"
      logits = model(features);
    }
    ember::Tensor predictions = ember::argmax(logits, /*dim=*/1);
    ember::Tensor compare = labels == predictions;
    correct += ember::sum(compare).item<std::int64_t>();  // "correct += torch.sum(compare)"
    total_examples += compare.size(0);                    // "total_examples += len(compare)"
  }
  // "return (correct / total_examples).item()": a Python float, 1.0 here.
  return static_cast<double>(correct) / static_cast<double>(total_examples);
}

int main() {
  // §7 "let's ... train a neural network on the toy dataset from the previous section"
  //   「在上一节的玩具数据集上训练一个神经网络」: §6's data and loaders (the drop_last
  //   training loader is the one §7 iterates).
  auto [X_train, y_train, X_test, y_test] = toy_data();
  auto train_ds = std::make_shared<ToyDataset>(X_train, y_train);
  auto test_ds = std::make_shared<ToyDataset>(X_test, y_test);
  ember::manual_seed(123);
  data::DataLoader train_loader(train_ds, {.batch_size = 2, .shuffle = true, .num_workers = 0, .drop_last = true});
  data::DataLoader test_loader(test_ds, {.batch_size = 2, .shuffle = false, .num_workers = 0});

  // §7 "torch.manual_seed(123); model = NeuralNetwork(num_inputs=2, num_outputs=2);
  //  optimizer = torch.optim.SGD(model.parameters(), lr=0.5)"
  //   「我们使用了随机梯度下降（SGD）优化器，学习率（lr）为 0.5」
  ember::manual_seed(123);
  auto model = std::make_shared<NeuralNetwork>(2, 2);
  ember::optim::SGD optimizer(model->parameters(), {.lr = 0.5});

  const int num_epochs = 3;
  for (int epoch = 0; epoch < num_epochs; ++epoch) {
    // §7 "model.train()" and, below, "model.eval()" 「分别让模型进入训练模式和评估模式」
    model->train();
    int batch_idx = 0;
    // §7 "for batch_idx, (features, labels) in enumerate(train_loader):" — C++ counts by hand
    for (auto& [features, labels] : train_loader) {
      ember::Tensor logits = (*model)(features);
      // §7 "we pass the logits directly into the cross_entropy loss function, which will apply
      // the softmax function internally for efficiency and numerical stability reasons"
      //   「我们直接把 logits 传入 cross_entropy 损失函数，它会出于效率和数值稳定性的考虑
      //   在内部应用 softmax」
      ember::Tensor loss = F::cross_entropy(logits, labels);  // Loss function

      // §7 "it is important to include an optimizer.zero_grad() call in each update round"
      //   「在每一轮更新中包含 optimizer.zero_grad() 调用，把梯度重置为零，这一点很重要」
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();

      // §7 "### LOGGING": the f-string's {epoch+1:03d}, {loss:.2f} in printf's spelling
      std::printf("Epoch: %03d/%03d | Batch %03d/%03lld | Train/Val Loss: %.2f\n", epoch + 1, num_epochs, batch_idx,
                  static_cast<long long>(train_loader.size()), loss.item<double>());
      ++batch_idx;
    }
    model->eval();
    // Optional model evaluation
  }

  // §7 "After we trained the model, we can use it to make predictions"
  //   「训练好模型之后，我们可以用它来进行预测」
  model->eval();
  ember::Tensor outputs;
  {
    ember::NoGradGuard no_grad;
    outputs = (*model)(X_train);
  }
  std::cout << outputs << "\n";

  // §7 "To obtain the class membership probabilities, we can then use PyTorch's softmax"
  //   「为了得到类成员概率，我们可以使用 PyTorch 的 softmax 函数」
  ember::set_printoptions({.sci_mode = false});
  ember::Tensor probas = ember::softmax(outputs, /*dim=*/1);
  std::cout << probas << "\n";

  // §7 "We can convert these values into class label predictions using PyTorch's argmax"
  //   「我们可以使用 PyTorch 的 argmax 函数把这些值转换为类别标签预测」
  ember::Tensor predictions = ember::argmax(probas, /*dim=*/1);
  std::cout << predictions << "\n";
  // §7 "we could also apply the argmax function to the logits (outputs) directly"
  //   「我们也可以直接对 logits（outputs）应用 argmax 函数」
  predictions = ember::argmax(outputs, /*dim=*/1);
  std::cout << predictions << "\n";

  // §7 "predictions == y_train" 「我们可以用 == 比较运算符来验证」: a bool tensor, as in PyTorch
  std::cout << (predictions == y_train) << "\n";
  // §7 "torch.sum(predictions == y_train)" 「使用 torch.sum，我们可以统计正确预测的数量」:
  // the notebook shows tensor(5), which the tutorial reads as "5"
  std::cout << ember::sum(predictions == y_train) << "\n";

  // §7 "compute_accuracy(model, train_loader)" 「把函数应用到训练集上」: 1.0
  std::cout << python_float(compute_accuracy(*model, train_loader)) << "\n";
  // §7 "compute_accuracy(model, test_loader)" 「把函数应用到测试集上」: 1.0
  std::cout << python_float(compute_accuracy(*model, test_loader)) << "\n";
  return 0;
}
