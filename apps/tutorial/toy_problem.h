// apps/tutorial/toy_problem.h — the tutorial's toy problem, for the programs that reuse it.
//
// The tutorial defines three things once and then keeps using them:
//   toy_data()     the five training and two test examples      — first written in §6
//                  (tutorial_06_data.cpp spells them out; the GPU appendix §7 "reuses
//                  appendix one's toy data")
//   ToyDataset     the custom Dataset over those tensors          — first defined in §6
//                  (tutorial_06_data.cpp; the GPU appendix §8: "Dataset is still the same")
//   NeuralNetwork  the two-hidden-layer perceptron (30, 20 units) — first defined in §5
//                  (tutorial_05_mlp.cpp; the GPU appendix §10: "the model is the same")
// tutorial_05_mlp.cpp and tutorial_06_data.cpp keep their own, commented definitions so that
// each reads like the section that introduces it; §7, §8 and §9.2 (tutorial_07_training.cpp,
// tutorial_08_save_load.cpp, tutorial_09_gpu.cpp) reuse them from here, as the tutorial does.
// The transcripts under tests/apps/expected/ pin both copies to PyTorch's numbers; the
// reference scripts share the same definitions in Python (tests/reference/toy_problem.py).
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include <ember/ember.h>

// §6 "a simple toy dataset of five training examples with two features each"
// 「五个训练样本，每个样本有两个特征」, three of class 0 and two of class 1, and a test set of two.
struct ToyData {
  ember::Tensor X_train;
  ember::Tensor y_train;
  ember::Tensor X_test;
  ember::Tensor y_test;
};

inline ToyData toy_data() {
  return {
      ember::tensor({{-1.2, 3.1}, {-0.9, 2.9}, {-0.5, 2.6}, {2.3, -1.1}, {2.7, -1.5}}),
      ember::tensor({0, 0, 0, 1, 1}),
      ember::tensor({{-0.8, 2.8}, {2.6, -1.6}}),
      ember::tensor({0, 1}),
  };
}

// §6 "class ToyDataset(Dataset):" — __getitem__ is get(), __len__ is size().
struct ToyDataset : ember::data::Dataset {
  ember::Tensor features;
  ember::Tensor labels;

  ToyDataset(ember::Tensor X, ember::Tensor y) : features(X), labels(y) {}

  ember::data::Example get(std::int64_t index) override {
    ember::Tensor one_x = features[index];
    ember::Tensor one_y = labels[index];
    return {one_x, one_y};
  }
  std::int64_t size() const override { return labels.size(0); }
};

// §5 "class NeuralNetwork(torch.nn.Module):" — register_module gives the layers the names
// layers.0.weight, ..., which §8's state_dict uses as keys.
struct NeuralNetwork : ember::nn::Module {
  std::shared_ptr<ember::nn::Sequential> layers;

  NeuralNetwork(std::int64_t num_inputs, std::int64_t num_outputs) {
    layers = register_module("layers", ember::nn::sequential({
        // 1st hidden layer
        std::make_shared<ember::nn::Linear>(num_inputs, 30),
        std::make_shared<ember::nn::ReLU>(),
        // 2nd hidden layer
        std::make_shared<ember::nn::Linear>(30, 20),
        std::make_shared<ember::nn::ReLU>(),
        // output layer
        std::make_shared<ember::nn::Linear>(20, num_outputs),
    }));
  }

  ember::Tensor forward(const ember::Tensor& x) override {
    ember::Tensor logits = (*layers)(x);
    return logits;
  }
};
