// apps/tutorial/tutorial_06_data.cpp — tutorial §6 "Setting up efficient data loaders".
//
// A custom Dataset (ToyDataset) over five training and two test examples, and DataLoaders
// that batch and shuffle it. After manual_seed(123) the shuffles are PyTorch's: the output
// matches tests/apps/expected/tutorial_06_data.txt (tests/reference/tutorial_06_data.py).
// Step comments: §N "the English original" 「the Chinese seed's wording」 (see
// tutorial_02_tensors.cpp); quotes of the tutorial's code read the same in both.
#include <cstdint>
#include <iostream>
#include <memory>

#include <ember/ember.h>

namespace data = ember::data;

// §6 "the three main components of a custom Dataset class are the __init__ constructor, the
// __getitem__ method, and the __len__ method" 「自定义 Dataset 类的三个主要部分是 __init__
// 构造函数、__getitem__ 方法和 __len__ 方法」 — here the constructor, get() and size().
struct ToyDataset : data::Dataset {
  ember::Tensor features;
  ember::Tensor labels;

  ToyDataset(ember::Tensor X, ember::Tensor y) : features(X), labels(y) {}

  // §6 "we define instructions for returning exactly one item from the dataset via an index"
  //   「我们定义如何通过索引从数据集中恰好返回一个条目」
  data::Example get(std::int64_t index) override {
    ember::Tensor one_x = features[index];
    ember::Tensor one_y = labels[index];
    return {one_x, one_y};
  }
  // §6 "the __len__ method contains instructions for retrieving the length of the dataset"
  //   「__len__ 方法包含获取数据集长度的指令」
  std::int64_t size() const override { return labels.size(0); }
};

int main() {
  // §6 "a simple toy dataset of five training examples with two features each"
  //   「五个训练样本，每个样本有两个特征」
  ember::Tensor X_train = ember::tensor({
      {-1.2, 3.1},
      {-0.9, 2.9},
      {-0.5, 2.6},
      {2.3, -1.1},
      {2.7, -1.5},
  });
  ember::Tensor y_train = ember::tensor({0, 0, 0, 1, 1});
  ember::Tensor X_test = ember::tensor({
      {-0.8, 2.8},
      {2.6, -1.6},
  });
  ember::Tensor y_test = ember::tensor({0, 1});

  auto train_ds = std::make_shared<ToyDataset>(X_train, y_train);
  auto test_ds = std::make_shared<ToyDataset>(X_test, y_test);
  // §6 "len(train_ds)" 「结果是 5」
  std::cout << train_ds->size() << "\n";

  // §6 "we can use PyTorch's DataLoader class to sample from it"
  //   「接下来可以使用 PyTorch 的 DataLoader 类从中采样」
  ember::manual_seed(123);
  data::DataLoader train_loader(train_ds, {.batch_size = 2, .shuffle = true, .num_workers = 0});
  test_ds = std::make_shared<ToyDataset>(X_test, y_test);
  data::DataLoader test_loader(test_ds, {.batch_size = 2, .shuffle = false, .num_workers = 0});

  // §6 "After instantiating the training data loader, we can iterate over it"
  //   「实例化训练数据加载器后，我们可以像下面这样遍历它」
  int idx = 0;
  for (auto& [x, y] : train_loader) std::cout << "Batch " << ++idx << ": " << x << " " << y << "\n";

  // §6 "we recommend setting drop_last=True, which will drop the last batch in each epoch"
  //   「建议设置 drop_last=True，丢弃每个轮次的最后一个 batch」
  train_loader = data::DataLoader(train_ds, {.batch_size = 2, .shuffle = true, .num_workers = 0, .drop_last = true});
  idx = 0;
  for (auto& [x, y] : train_loader) std::cout << "Batch " << ++idx << ": " << x << " " << y << "\n";

  // §6 "Iterating over the test_loader works similarly" 「对 test_loader 的遍历方式类似」 — the
  // tutorial omits it "for brevity"; shown here (shuffle = false: always the same order)
  idx = 0;
  for (auto& [x, y] : test_loader) std::cout << "Batch " << ++idx << ": " << x << " " << y << "\n";

  // Beyond the tutorial: len(loader) = number of batches: 5 examples, batch 2, drop_last -> 2;
  // 2 test examples -> 1 (§7 prints len(train_loader) in its log line)
  std::cout << train_loader.size() << " " << test_loader.size() << "\n";
  return 0;
}
