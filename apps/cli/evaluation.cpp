// apps/cli/evaluation.cpp — batched, gradient-free inference (see evaluation.h).
#include "evaluation.h"

#include <algorithm>
#include <vector>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/nn/functional.h>

#include "interrupt.h"

namespace ember::cli {

Evaluation evaluate(nn::Module& model, const Tensor& features, const Tensor& labels, Device device,
                    std::int64_t batch_size, bool keep_probabilities, bool interruptible) {
  model.eval();
  NoGradGuard no_grad;  // inference records no graph: less memory, less time
  Evaluation result;
  std::int64_t count = features.size(0);
  std::vector<Tensor> predictions, probabilities;
  for (std::int64_t start = 0; start < count; start += batch_size) {
    std::int64_t length = std::min(batch_size, count - start);
    Tensor logits = model(features.narrow(0, start, length).to(device));
    Tensor predicted = logits.argmax(1);
    if (labels.defined()) {
      Tensor batch_labels = labels.narrow(0, start, length).to(device);
      result.correct += predicted.eq(batch_labels).sum().item<std::int64_t>();
      // A few operations on [batch, classes] next to the forward pass: always computed.
      result.loss_sum += static_cast<double>(
          nn::functional::cross_entropy(logits, batch_labels, Reduction::Sum).item<float>());
    }
    predictions.push_back(predicted.cpu());
    if (keep_probabilities) probabilities.push_back(logits.softmax(1).cpu());
    if (interruptible && interrupt_requested()) throw Interrupted();
  }
  result.total = count;
  result.predictions = predictions.empty() ? Tensor() : cat(predictions, 0);
  if (keep_probabilities && !probabilities.empty()) result.probabilities = cat(probabilities, 0);
  return result;
}

}  // namespace ember::cli
