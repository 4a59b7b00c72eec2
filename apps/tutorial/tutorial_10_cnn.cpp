// apps/tutorial/tutorial_10_cnn.cpp — §10, beyond the tutorial: convolutional networks.
//
// The tutorial stops at an MLP; this chapter goes one step further, in five parts:
//   1. what a convolution computes: a 1-channel 4×4 input and a 3×3 kernel of small
//      integers, without padding (2×2), with padding=1 (4×4), with stride 2 (2×2);
//   2. im2col: the same output as one matrix product, weight.view(1, 9) @ cols;
//   3. pooling's backward: max pooling sends each gradient to its window's maximum, average
//      pooling spreads it evenly;
//   4. batch norm in train mode (the batch's statistics, running stats updated) and eval
//      mode (the running statistics);
//   5. a small CNN trained on the first 1000 Fashion-MNIST images (two epochs) and tested
//      on the first 1000 test images, when /usr/share/datasets/fashion-mnist exists.
// The output matches tests/apps/expected/tutorial_10_cnn.txt, which
// tests/reference/tutorial_10_cnn.py printed running the same steps in PyTorch. There is no
// seed text for this chapter, so the step comments quote the PyTorch lines they mirror.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include <ember/ember.h>

namespace nn = ember::nn;
namespace data = ember::data;
namespace F = ember::nn::functional;

// The first `count` images of a Fashion-MNIST split as [count, 1, 28, 28] float32 in [0, 1]
// (read_idx_dataset divides by 255), with their int64 labels.
data::TensorDataset first_images(const std::string& root, const std::string& prefix, std::int64_t count) {
  data::TensorDataset split =
      data::read_idx_dataset(root + "/" + prefix + "-images-idx3-ubyte.gz", root + "/" + prefix + "-labels-idx1-ubyte.gz");
  ember::Tensor images = split.data().narrow(0, 0, count).reshape(count, 1, 28, 28);
  ember::Tensor labels = split.targets().narrow(0, 0, count).contiguous();
  return data::TensorDataset(images, labels);
}

int main() {
  // ---------------------------------------------------------------- 1. a convolution
  std::cout << "== 1. What a convolution computes ==\n";
  // "x = torch.tensor([[1., 2., 0., 1.], ...]).view(1, 1, 4, 4)": one image, one channel.
  ember::Tensor x = ember::tensor({{1.0, 2.0, 0.0, 1.0},
                                   {3.0, 1.0, 2.0, 0.0},
                                   {0.0, 2.0, 1.0, 3.0},
                                   {1.0, 0.0, 2.0, 1.0}}).view(1, 1, 4, 4);
  // "weight = torch.tensor([[1., 0., -1.], ...]).view(1, 1, 3, 3)": one output channel,
  // one input channel, 3×3 (Conv2d's layout: out, in, kH, kW). It responds to left-right change.
  ember::Tensor weight = ember::tensor({{1.0, 0.0, -1.0},
                                        {2.0, 0.0, -2.0},
                                        {1.0, 0.0, -1.0}}).view(1, 1, 3, 3);
  std::cout << x << "\n" << weight << "\n";
  // "out = F.conv2d(x, weight)": the kernel slides over the 2×2 positions where it fits; each
  // output is the sum of the 9 products under it. Top left: 1·1 + 2·0 + 0·(-1) + 3·2 + 1·0 +
  // 2·(-2) + 0·1 + 2·0 + 1·(-1) = 2.
  ember::Tensor out = F::conv2d(x, weight);
  std::cout << out << "\n";
  // "F.conv2d(x, weight, padding=1)": a ring of zeros around x, so the output keeps 4×4.
  std::cout << F::conv2d(x, weight, /*bias=*/ember::Tensor(), /*stride=*/1, /*padding=*/1) << "\n";
  // "F.conv2d(x, weight, stride=2, padding=1)": every second position of the padded output.
  std::cout << F::conv2d(x, weight, /*bias=*/ember::Tensor(), /*stride=*/2, /*padding=*/1) << "\n";

  // ---------------------------------------------------------------- 2. im2col
  std::cout << "== 2. im2col: the convolution as one matrix product ==\n";
  // "patches.append(x[0, 0, i:i + 3, j:j + 3].reshape(9))": each 3×3 window the kernel
  // visits, flattened into a column of 9 ("stack(patches, dim=1)"): cols is [9, 4], one
  // column per output position. core/cpu/conv_kernels.cpp builds the same matrix (im2col).
  std::vector<ember::Tensor> patches;
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 2; ++j) {
      patches.push_back(x.select(0, 0).select(0, 0).slice(0, i, i + 3).slice(1, j, j + 3).reshape(9));
    }
  }
  ember::Tensor cols = ember::stack(patches, /*dim=*/1);
  std::cout << cols << "\n";
  // "weight.view(1, 9) @ cols": the kernel as one row of 9 weights times the columns — the
  // same matmul a Linear layer runs; with C_out kernels the row becomes C_out rows.
  ember::Tensor product = ember::matmul(weight.view(1, 9), cols);
  std::cout << product << "\n";
  // "torch.equal(product.view(1, 1, 2, 2), out)": the same four numbers.
  std::cout << (product.view(1, 1, 2, 2).equal(out) ? "True" : "False") << "\n";

  // ---------------------------------------------------------------- 3. pooling's backward
  std::cout << "== 3. Pooling's backward ==\n";
  ember::Tensor values = ember::tensor({{1.0, 5.0, 2.0, 0.0},
                                        {3.0, 4.0, 8.0, 1.0},
                                        {0.0, 2.0, 6.0, 7.0},
                                        {9.0, 1.0, 3.0, 5.0}}).view(1, 1, 4, 4);
  // "pooled = nn.MaxPool2d(2)(x); pooled.sum().backward()": each 2×2 window keeps its
  // maximum, so each output's gradient (1, from the sum) goes to that one input: x.grad is 1
  // where the maxima were (5, 8, 9, 7) and 0 elsewhere.
  x = values.clone().requires_grad_(true);
  ember::Tensor pooled = nn::MaxPool2d(2)(x);
  std::cout << pooled << "\n";
  pooled.sum().backward();
  std::cout << x.grad() << "\n";
  // "pooled = nn.AvgPool2d(2)(x)": each output is the mean of 4 inputs, so each input gets 1/4.
  x = values.clone().requires_grad_(true);
  pooled = nn::AvgPool2d(2)(x);
  std::cout << pooled << "\n";
  pooled.sum().backward();
  std::cout << x.grad() << "\n";

  // ---------------------------------------------------------------- 4. batch norm
  std::cout << "== 4. Batch norm in train and eval mode ==\n";
  // "bn = nn.BatchNorm2d(2)": 2 channels; weight 1, bias 0, running_mean 0, running_var 1.
  nn::BatchNorm2d bn(2);
  // A batch of 2 images, 2 channels, 1×2 pixels: 4 values per channel.
  ember::Tensor batch = ember::tensor({1.0, 3.0, 10.0, 12.0, 5.0, 7.0, 20.0, 40.0}).view(2, 2, 1, 2);
  {
    ember::NoGradGuard no_grad;  // "with torch.no_grad():" (only to print without grad_fn)
    // Train mode (a new module's): each channel normalised with this batch's mean and biased
    // variance — channel 0 is 1, 3, 5, 7: mean 4, variance 5, so (1 - 4) / √5 = -1.3416.
    std::cout << bn(batch) << "\n";
    // ... and the running statistics moved 10 % of the way (momentum 0.1) to the batch's:
    // running_mean = 0.9 · 0 + 0.1 · 4; running_var = 0.9 · 1 + 0.1 · 20/3 (unbiased: n - 1).
    std::cout << bn.running_mean << "\n" << bn.running_var << "\n" << bn.num_batches_tracked << "\n";
    // "bn.eval()": normalise with the running statistics instead, and leave them as they are.
    bn.eval();
    std::cout << bn(batch) << "\n";
  }

  // ---------------------------------------------------------------- 5. training the CNN
  std::cout << "== 5. Training the CNN on 1000 Fashion-MNIST images ==\n";
  const std::string root = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::is_directory(root)) {
    std::cout << "skipped: " << root << " not found (Debian's dataset-fashion-mnist)\n";
    return 0;
  }
  auto train_ds = std::make_shared<data::TensorDataset>(first_images(root, "train", 1000));
  data::TensorDataset test_ds = first_images(root, "t10k", 1000);

  // "torch.manual_seed(0); model = nn.Sequential(...)": two conv stages (3×3 convolution,
  // ReLU, 2×2 max pooling: 28×28 → 14×14 → 7×7), then §5's kind of MLP on the 16·7·7 features.
  ember::manual_seed(0);
  auto model = nn::sequential({
      std::make_shared<nn::Conv2d>(1, 8, 3, nn::Conv2dOptions{.padding = 1}),
      std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2),
      std::make_shared<nn::Conv2d>(8, 16, 3, nn::Conv2dOptions{.padding = 1}),
      std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2),
      std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(16 * 7 * 7, 64),
      std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(64, 10),
  });
  std::cout << model << "\n";
  data::DataLoader train_loader(train_ds, {.batch_size = 32, .shuffle = true});
  ember::optim::SGD optimizer(model->parameters(), {.lr = 0.05, .momentum = 0.9});

  // §7's loop, unchanged but for the model: it logs every 8th batch and each epoch's last.
  const int num_epochs = 2;
  for (int epoch = 0; epoch < num_epochs; ++epoch) {
    model->train();
    std::int64_t batch_idx = 0;
    for (auto& [features, labels] : train_loader) {
      ember::Tensor loss = F::cross_entropy((*model)(features), labels);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      if (batch_idx % 8 == 0 || batch_idx == train_loader.size() - 1) {
        std::printf("Epoch: %03d/%03d | Batch %03lld/%03lld | Train Loss: %.2f\n", epoch + 1, num_epochs,
                    static_cast<long long>(batch_idx), static_cast<long long>(train_loader.size()), loss.item<double>());
      }
      ++batch_idx;
    }
  }

  // "predictions = torch.argmax(model(X_test), dim=1)": all 1000 test images in one batch.
  model->eval();
  ember::Tensor logits;
  {
    ember::NoGradGuard no_grad;
    logits = (*model)(test_ds.data());
  }
  ember::Tensor predictions = ember::argmax(logits, /*dim=*/1);
  const std::int64_t correct = ember::sum(predictions == test_ds.targets()).item<std::int64_t>();
  // In whole percent: an image or two on the decision boundary may flip with the weights'
  // last bits (552 correct here, 553 in PyTorch and under EMBER_KERNELS=reference).
  std::printf("Test accuracy (first 1000 test images): %.0f %%\n", static_cast<double>(correct) / 10.0);
  return 0;
}
