// apps/cli/evaluation.h — running a trained model over a data split without recording a tape.
//
// Tutorial §7's compute_accuracy: model.eval(), then under torch.no_grad() the logits of
// each batch, argmax over the classes, compared with the labels. Used by `train` (the
// validation accuracy of each epoch and the final summary), `eval` and `predict`.
#pragma once

#include <cstdint>

#include <ember/core/device.h>
#include <ember/core/tensor.h>
#include <ember/nn/module.h>

#include "datasets.h"

namespace ember::cli {

struct Evaluation {
  std::int64_t correct = 0;
  std::int64_t total = 0;
  // Sum over the examples of their cross-entropy (PyTorch: F.cross_entropy(logits, y,
  // reduction="sum") per batch, added up in float64); with labels only.
  double loss_sum = 0;
  Tensor predictions;    // [N] int64 on the CPU
  Tensor probabilities;  // [N, C] float32 on the CPU (only when asked for)
  double accuracy() const { return total == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(total); }
  // The mean cross-entropy over the examples (`ember train`'s val_loss).
  double mean_loss() const { return total == 0 ? 0.0 : loss_sum / static_cast<double>(total); }
};

// Puts `model` in eval mode (Dropout off) and leaves it there; the caller switches back.
// `labels` may be undefined (predict on unlabelled images): correct stays 0.
// interruptible: after each batch, a pending Ctrl-C (interrupt.h) throws Interrupted.
Evaluation evaluate(nn::Module& model, const Tensor& features, const Tensor& labels, Device device,
                    std::int64_t batch_size = 1000, bool keep_probabilities = false, bool interruptible = false);
inline Evaluation evaluate(nn::Module& model, const DataSplit& split, Device device, std::int64_t batch_size = 1000,
                           bool interruptible = false) {
  return evaluate(model, split.features, split.labels, device, batch_size, false, interruptible);
}

}  // namespace ember::cli
