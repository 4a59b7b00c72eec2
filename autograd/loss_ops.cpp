// autograd/loss_ops.cpp — the losses: binary_cross_entropy(_with_logits), nll_loss,
// cross_entropy, mse_loss; each one node with PyTorch's name and a hand-written formula.
//
// Tutorial §3: `loss = F.binary_cross_entropy(a, y)` prints
// `tensor(0.0852, grad_fn=<BinaryCrossEntropyBackward0>)`. The forward values are computed
// with ember::native (no intermediate nodes); the backward formulas use public ops so they
// can be differentiated again. cross_entropy is log_softmax followed by nll_loss, as in
// PyTorch (its grad_fn is NllLossBackward0); for [N, C] logits both run fused, in one pass
// per row (fused_cross_entropy below), except in reference mode (core/kernel_mode.h).
#include <cmath>

#include <ember/autograd/autocast.h>
#include <ember/autograd/function.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>
#include <ember/core/print.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

namespace {

Tensor number(double value, const Tensor& like) { return scalar_to_tensor(value, like.device()); }

// Per-element losses -> the requested reduction (forward, no graph).
Tensor reduce_native(const Tensor& per_element, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return per_element;
    case Reduction::Sum: return native::sum(per_element, {}, false);
    case Reduction::Mean: return native::mean(per_element, {}, false);
  }
  return per_element;
}

// The gradient of the reduced loss w.r.t. each per-element loss: the incoming gradient,
// broadcast back over the elements (and divided by their count for 'mean').
Tensor per_element_gradient(const Tensor& grad, const Shape& sizes, Reduction reduction, double count) {
  if (reduction == Reduction::None) return grad;
  Tensor spread = ember::expand(grad, sizes);
  return reduction == Reduction::Mean ? spread / count : spread;
}

void check_same_size(const Tensor& input, const Tensor& target) {
  EMBER_CHECK(IntArrayRef(input.sizes()) == IntArrayRef(target.sizes()), ValueError, "Using a target size (",
              size_string(target.sizes()), ") that is different to the input size (", size_string(input.sizes()),
              ") is deprecated. Please ensure they have the same size.");
}

}  // namespace

// ---------------------------------------------------------------- binary cross-entropy
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (autocast::active()) {  // autograd/autocast.h: a float32 op
    const autocast::SuspendGuard cast_once;
    return ember::binary_cross_entropy(autocast::to_float32(input), autocast::to_float32(target), reduction);
  }
  EMBER_RECORD_FUNCTION("binary_cross_entropy", input, target);
  check_same_size(input, target);
  if (input.numel() > 0) {
    double low = native::amin(input, {}, false).item<double>(), high = native::amax(input, {}, false).item<double>();
    EMBER_CHECK(low >= 0.0 && high <= 1.0, ValueError, "all elements of input should be between 0 and 1");
  }
  // -(t log x + (1 - t) log(1 - x)), each log clamped at -100 so x = 0 or 1 stays finite.
  Tensor one = number(1.0, input);
  Tensor log_x = native::clamp(native::log(input), -100.0, std::nullopt);
  Tensor log_1mx = native::clamp(native::log(native::sub(one, input)), -100.0, std::nullopt);
  Tensor per_element =
      native::neg(native::add(native::mul(target, log_x), native::mul(native::sub(one, target), log_1mx)));
  Tensor out = reduce_native(per_element, reduction);
  if (needs_grad(input, target)) {
    auto node = record("BinaryCrossEntropyBackward0", {input, target}, out);
    node->save("self", input);
    node->save("target", target);
    Shape sizes = input.sizes();
    double count = static_cast<double>(input.numel());
    node->set_backward([sizes, reduction, count](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0), t = n.saved(1);
      Tensor g = per_element_gradient(grads[0], sizes, reduction, count);
      Tensor grad_x, grad_t;
      // d/dx = (x - t) / (x (1 - x)), the denominator kept away from 0 (PyTorch's eps 1e-12).
      if (n.needs_input_grad(0)) grad_x = g * (x - t) / ember::clamp((1.0 - x) * x, 1e-12);
      // d/dt = log(1 - x) - log(x), with the same clamping as the forward.
      if (n.needs_input_grad(1)) {
        grad_t = g * (ember::clamp(ember::log(1.0 - x), -100.0) - ember::clamp(ember::log(x), -100.0));
      }
      return {grad_x, grad_t};
    });
  }
  return out;
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (autocast::active()) {
    const autocast::SuspendGuard cast_once;
    return ember::binary_cross_entropy_with_logits(autocast::to_float32(input), autocast::to_float32(target), reduction);
  }
  EMBER_RECORD_FUNCTION("binary_cross_entropy_with_logits", input, target);
  EMBER_CHECK(IntArrayRef(input.sizes()) == IntArrayRef(target.sizes()), ValueError, "Target size (",
              size_string(target.sizes()), ") must be the same as input size (", size_string(input.sizes()), ")");
  // max(x, 0) - x t + log(1 + exp(-|x|)): equal to BCE(sigmoid(x), t), but exp never
  // overflows (the log-sum-exp trick).
  Tensor one = number(1.0, input);
  Tensor per_element = native::add(
      native::sub(native::relu(input), native::mul(input, target)),
      native::log(native::add(one, native::exp(native::neg(native::abs(input))))));
  Tensor out = reduce_native(per_element, reduction);
  if (needs_grad(input, target)) {
    auto node = record("BinaryCrossEntropyWithLogitsBackward0", {input, target}, out);
    node->save("self", input);
    node->save("target", target);
    Shape sizes = input.sizes();
    double count = static_cast<double>(input.numel());
    node->set_backward([sizes, reduction, count](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0), t = n.saved(1);
      Tensor g = per_element_gradient(grads[0], sizes, reduction, count);
      return {n.needs_input_grad(0) ? g * (ember::sigmoid(x) - t) : Tensor(),
              n.needs_input_grad(1) ? -(g * x) : Tensor()};
    });
  }
  return out;
}

// ---------------------------------------------------------------- negative log-likelihood
Tensor nll_loss(const Tensor& input, const Tensor& target, Reduction reduction, std::int64_t ignore_index) {
  if (autocast::active()) {
    const autocast::SuspendGuard cast_once;
    return ember::nll_loss(autocast::to_float32(input), target, reduction, ignore_index);
  }
  EMBER_CHECK(input.dim() >= 1, ShapeError, "Expected 1 or more dimensions (got 0)");
  // Class indices are int64 or uint8 (PyTorch 2.x; 1.13 took int64 only), except on an
  // [N, C, d...] input, whose nll_loss2d still takes int64 only. A uint8 target is widened.
  EMBER_CHECK(target.dtype() == kInt64 || target.dtype() == kUInt8, DTypeError,
              "expected target dtype to be Long or Byte, but got ", scalar_type_name(target.dtype()));
  if (target.dtype() == kUInt8 && input.dim() <= 2)
    return ember::nll_loss(input, ember::to(target, kInt64), reduction, ignore_index);
  EMBER_RECORD_FUNCTION("nll_loss", input, target);
  if (input.dim() > 2) {
    // [N, C, d1, ...] (a class score per pixel or per time step): move the class dim last,
    // flatten to [N * d1 * ..., C] rows and compute the 2-D loss; one node records it under
    // PyTorch's name, NllLoss2DBackward0. (PyTorch runs nll_loss2d on [N, C, 1, d1 * ...]
    // for inputs other than 4-D and, for reduction='none', views the [N, 1, d1 * ...]
    // result back to the target's shape: ViewBackward0. ember does the same.)
    Shape expected_target = {input.size(0)};
    for (std::int64_t d = 2; d < input.dim(); ++d) expected_target.push_back(input.size(d));
    EMBER_CHECK(IntArrayRef(target.sizes()) == IntArrayRef(expected_target), ShapeError, "Expected target size ",
                shape_to_string(expected_target), ", got ", shape_to_string(target.sizes()));
    EMBER_CHECK(target.dtype() == kInt64, DTypeError, "expected scalar type Long but found ",
                scalar_type_name(target.dtype()));
    std::vector<std::int64_t> classes_last = {0};
    for (std::int64_t d = 2; d < input.dim(); ++d) classes_last.push_back(d);
    classes_last.push_back(1);
    const std::int64_t classes = input.size(1);
    Tensor flat_target = native::reshape(target, {-1});
    Tensor loss;
    {
      NoGradGuard values_only;  // the node below is the only one recorded
      loss = nll_loss(native::reshape(native::permute(input, classes_last), {-1, classes}), flat_target, reduction,
                      ignore_index);
    }
    const bool four_d = input.dim() == 4;
    if (reduction == Reduction::None) {
      std::int64_t positions = 1;  // d1 * d2 * ...
      for (std::int64_t d = 2; d < input.dim(); ++d) positions *= input.size(d);
      loss = native::reshape(loss, four_d ? Shape(target.sizes()) : Shape{input.size(0), 1, positions});
    }
    if (needs_grad(input)) {
      // The 2-D formula on the rows, then the rows put back into [N, C, d1, ...].
      Tensor keep = native::ne(flat_target, scalar_to_tensor(ignore_index, target.device()));
      Tensor keep_factor = native::to_dtype(keep, input.dtype());
      const double kept = native::sum(keep_factor, {}, false).item<double>();
      auto node = record("NllLoss2DBackward0", {input}, loss);
      node->save("target", native::where(keep, flat_target, scalar_to_tensor(std::int64_t{0}, target.device())));
      node->save("keep", keep_factor);
      Shape rows_sizes = native::permute(input, classes_last).sizes();  // [N, d1, ..., C]
      std::vector<std::int64_t> back = {0, input.dim() - 1};           // inverse of classes_last
      for (std::int64_t d = 1; d < input.dim() - 1; ++d) back.push_back(d);
      node->set_backward([rows_sizes, back, reduction, kept, classes](Node& n, const TensorList& grads) -> TensorList {
        Tensor safe = n.saved(0), keep_rows = n.saved(1);
        const std::int64_t rows = safe.numel();
        Tensor g_rows = reduction == Reduction::None ? ember::reshape(grads[0], {rows}) : ember::expand(grads[0], {rows});
        if (reduction == Reduction::Mean) g_rows = g_rows / kept;
        Tensor chosen = ember::to(ember::one_hot(safe, classes), grads[0].dtype());
        Tensor grad_rows = -(chosen * ember::unsqueeze(g_rows * keep_rows, 1));
        return {ember::permute(ember::reshape(grad_rows, rows_sizes), back)};
      });
    }
    return reduction == Reduction::None && !four_d ? ember::view(loss, target.sizes()) : loss;
  }
  const bool batched = input.dim() == 2;
  EMBER_CHECK(target.dim() <= 1, ShapeError, "0D or 1D target tensor expected, multi-target not supported");
  const std::int64_t batch = batched ? input.size(0) : 1;
  const std::int64_t target_batch = target.dim() == 0 ? 1 : target.size(0);
  EMBER_CHECK(batched ? (target.dim() == 1 && batch == target_batch) : target.dim() == 0, ShapeError,
              "Expected input batch_size (", batch, ") to match target batch_size (", target_batch, ").");
  const std::int64_t classes = input.size(-1);
  // Every target must be a class index or ignore_index (checked on the host: clear and cheap).
  Tensor host_target = native::contiguous(native::to_device(target, kCPU));
  const std::int64_t* labels = host_target.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < host_target.numel(); ++i) {
    EMBER_CHECK(labels[i] == ignore_index || (labels[i] >= 0 && labels[i] < classes), IndexError, "Target ",
                labels[i], " is out of bounds.");
  }

  // Pick -input[i, target[i]] per row; ignored rows contribute 0 and do not count.
  Tensor rows = batched ? input : native::unsqueeze(input, 0);
  Tensor row_targets = native::reshape(target, {batch});
  Tensor keep = native::ne(row_targets, scalar_to_tensor(ignore_index, target.device()));
  Tensor safe_targets = native::where(keep, row_targets, scalar_to_tensor(std::int64_t{0}, target.device()));
  Tensor picked = native::squeeze(native::gather(rows, 1, native::unsqueeze(safe_targets, 1)), 1);
  Tensor keep_factor = native::to_dtype(keep, input.dtype());
  Tensor per_row = native::neg(native::mul(picked, keep_factor));
  const double kept = native::sum(keep_factor, {}, false).item<double>();
  Tensor out;
  if (reduction == Reduction::None) {
    out = batched ? per_row : native::reshape(per_row, {});
  } else {
    out = native::sum(per_row, {}, false);
    if (reduction == Reduction::Mean) out = native::div(out, number(kept, out));  // all ignored: nan, as PyTorch
  }

  if (needs_grad(input)) {
    auto node = record("NllLossBackward0", {input}, out);
    node->save("target", safe_targets);
    node->save("keep", keep_factor);
    Shape sizes = input.sizes();
    node->set_backward([sizes, reduction, kept, batch, classes, batched](Node& n, const TensorList& grads) -> TensorList {
      Tensor safe = n.saved(0), keep_rows = n.saved(1);
      // d loss / d input[i, c] = -(c == target[i]) * keep[i] * (d loss / d row loss i).
      Tensor g_rows = reduction == Reduction::None ? ember::reshape(grads[0], {batch})
                                                   : ember::expand(grads[0], {batch});
      // 'mean' divides by the kept rows. With none kept PyTorch skips every row, so the
      // gradient is 0 (not 0 * (g / 0) = NaN), whatever grad_output holds.
      if (reduction == Reduction::Mean) g_rows = kept > 0 ? g_rows / kept : ember::zeros_like(g_rows);
      Tensor chosen = ember::to(ember::one_hot(safe, classes), grads[0].dtype());
      Tensor grad = -(chosen * ember::unsqueeze(g_rows * keep_rows, 1));
      return {batched ? grad : ember::reshape(grad, sizes)};
    });
  }
  return out;
}

namespace {

// sum / count for the fresh 0-d sum of fused_cross_entropy: the value native::div(sum,
// number(count)) gives (the count cast to the sum's dtype, one IEEE division), computed in
// place on the CPU without building a divisor tensor and a plan for one element. The
// training step's loss is this value; on other devices it is that native::div.
template <class T>
void divide_in_place(const Tensor& sum, std::int64_t count) {
  T* value = sum.data_ptr<T>();
  *value = *value / static_cast<T>(static_cast<double>(count));  // the count as number() casts it
}
Tensor divide_fresh_scalar(const Tensor& sum, std::int64_t count) {
  if (!sum.device().is_cpu() || (sum.dtype() != kFloat32 && sum.dtype() != kFloat64))
    return native::div(sum, number(static_cast<double>(count), sum));
  if (sum.dtype() == kFloat32) divide_in_place<float>(sum, count);
  else divide_in_place<double>(sum, count);
  return sum;
}

// cross_entropy for [N, C] logits and [N] class indices, fused (issue 8): one backend pass
// per row gives every row's loss and — when the logits need a gradient — the gradient
// (softmax - one_hot) / kept rows ('mean') in the same pass (native::cross_entropy_rows,
// core/cpu/fused_kernels.cpp, cuda/kernels/cross_entropy.cuh). Losses are bit-identical
// to log_softmax + nll_loss; the reduction below is the same native calls nll_loss makes.
// The tape is one node, named like PyTorch's loss node (NllLossBackward0): log_softmax's
// output is never materialised, so there is no LogSoftmaxBackward0 below it. Its backward
// is the saved gradient times grad_output (one pass); under create_graph it recomputes
// the same gradient from differentiable ops (softmax of the saved logits) instead, so
// double backward works.
Tensor fused_cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction, std::int64_t ignore_index) {
  const bool track = needs_grad(input);
  native::CrossEntropyRows rows = native::cross_entropy_rows(input, target, ignore_index, /*with_grad=*/track,
                                                             /*mean_over_kept=*/reduction == Reduction::Mean);
  Tensor out;
  if (reduction == Reduction::None) {
    out = rows.losses;
  } else {
    out = native::sum(rows.losses, {}, false);
    if (reduction == Reduction::Mean) out = divide_fresh_scalar(out, rows.kept_rows);
  }
  if (!track) return out;
  auto node = record("NllLossBackward0", {input}, out);
  node->save("self", input);
  node->save("target", target);
  node->save("grad_input", rows.grad_logits);  // d loss / d input for grad_output = 1
  const std::int64_t kept = rows.kept_rows;
  node->set_backward([reduction, ignore_index, kept](Node& n, const TensorList& grads) -> TensorList {
    const Tensor& g = grads[0];
    // Per row for 'none' ([N] -> [N, 1]); one scalar for 'mean' and 'sum'.
    Tensor g_factor = reduction == Reduction::None ? ember::unsqueeze(g, 1) : g;
    // No create_graph, or nothing to differentiate (an empty batch or no classes).
    if (!is_grad_enabled() || n.saved(2).numel() == 0) return {n.saved(2) * g_factor};
    // create_graph: the same gradient, recorded. (softmax - one_hot) at kept rows / kept.
    Tensor x = n.saved(0), t = n.saved(1);
    Tensor keep = ember::ne(t, scalar_to_tensor(ignore_index, t.device()));
    Tensor safe = ember::where(keep, t, scalar_to_tensor(std::int64_t{0}, t.device()));
    Tensor one_hot = ember::to(ember::one_hot(safe, x.size(1)), x.dtype());
    Tensor unit = (ember::softmax(x, 1) - one_hot) * ember::unsqueeze(ember::to(keep, x.dtype()), 1);
    if (reduction == Reduction::Mean) unit = unit * (kept > 0 ? 1.0 / static_cast<double>(kept) : 0.0);
    return {unit * g_factor};
  });
  return out;
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction, std::int64_t ignore_index,
                     double label_smoothing) {
  if (autocast::active()) {
    const autocast::SuspendGuard cast_once;  // a float target (class probabilities) too
    return ember::cross_entropy(autocast::to_float32(input), autocast::to_float32(target), reduction, ignore_index,
                                label_smoothing);
  }
  EMBER_RECORD_FUNCTION("cross_entropy", input, target);
  EMBER_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, ValueError,
              "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  EMBER_CHECK(input.dim() >= 1, ShapeError, "input tensor should be 1D or 2D");
  // The training case takes the fused path; every other case (one sample, [N, C, d...],
  // label smoothing, and the inputs whose errors log_softmax / nll_loss report) the
  // composite one below, and so does every case in reference mode (core/kernel_mode.h),
  // where cross-entropy is the two steps a reader can follow. 16-bit inputs take the composite
  // too (log_softmax in float32, rounded, then nll_loss), as PyTorch computes them.
  if (label_smoothing == 0.0 && input.dim() == 2 && is_floating_point(input.dtype()) &&
      !is_reduced_floating_point(input.dtype()) && target.dim() == 1 &&
      target.dtype() == kInt64 && kernel_mode() == KernelMode::Fast) {
    return fused_cross_entropy(input, target, reduction, ignore_index);
  }
  const std::int64_t class_dim = input.dim() == 1 ? 0 : 1;
  Tensor log_probabilities = ember::log_softmax(input, class_dim);
  Tensor nll = ember::nll_loss(log_probabilities, target, reduction, ignore_index);
  if (label_smoothing == 0.0) return nll;
  // With smoothing the target distribution is (1 - ε) one_hot + ε / C: the loss adds
  // ε/C * (-sum over classes of log p) per kept row, reduced like the nll part.
  const double classes = static_cast<double>(input.size(class_dim));
  Tensor keep = ember::to(ember::ne(target, scalar_to_tensor(ignore_index, target.device())), input.dtype());
  Tensor smooth = -ember::sum(log_probabilities, {class_dim}) * keep;
  Tensor smooth_reduced;
  if (reduction == Reduction::None) {
    smooth_reduced = smooth;
  } else {
    smooth_reduced = ember::sum(smooth);
    if (reduction == Reduction::Mean) smooth_reduced = smooth_reduced / ember::sum(keep);
  }
  return nll * (1.0 - label_smoothing) + smooth_reduced * (label_smoothing / classes);
}

// ---------------------------------------------------------------- mean squared error
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (autocast::active()) {
    const autocast::SuspendGuard cast_once;
    return ember::mse_loss(autocast::to_float32(input), autocast::to_float32(target), reduction);
  }
  EMBER_RECORD_FUNCTION("mse_loss", input, target);
  Tensor difference = native::sub(input, target);  // broadcasts, as PyTorch (which warns)
  Tensor out = reduce_native(native::mul(difference, difference), reduction);
  if (needs_grad(input, target)) {
    auto node = record("MseLossBackward0", {input, target}, out);
    node->save("self", input);
    node->save("target", target);
    Shape sizes = difference.sizes();
    double count = static_cast<double>(difference.numel());
    node->set_backward([sizes, reduction, count](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0), t = n.saved(1);
      // d (x - t)² = 2 (x - t) for x, the negative for t.
      Tensor g = per_element_gradient(grads[0], sizes, reduction, count) * ((x - t) * 2.0);
      return {n.needs_input_grad(0) ? sum_to(g, x.sizes()) : Tensor(),
              n.needs_input_grad(1) ? sum_to(-g, t.sizes()) : Tensor()};
    });
  }
  return out;
}

}  // namespace ember
