// core/fused.cpp — the native fused training ops: cross-entropy forward + backward over
// rows, the SGD step, the norms of a list of tensors (clip_grad_norm_, issue 20), and ReLU
// written over a fresh tensor's memory. (ReLU's backward is a
// backward row of core/op_list.h, native::relu_backward.)
//
// Issue 8 ("fused where the training step benefits") and tutorial §7's training loop:
// loss = F.cross_entropy(model(x), y); loss.backward(); optimizer.step(). Each function
// here checks its arguments (the backends never do), lays the work out as one plan
// (core/fused_plans.h, core/strided_index.h) and makes one backend call where the
// composite path made several. The differentiable wrappers that use them are in
// autograd/derivatives.cpp (ReluBackward0) and autograd/loss_ops.cpp (cross_entropy);
// nn/sgd.cpp calls sgd_step_; relu_over_fresh serves the Linear + ReLU fusion.
// docs/performance.md ("Fused ops") counts what each saves.
#include <ember/core/native.h>

#include <algorithm>

#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/tensor_iterator.h>
#include <ember/core/type_promotion.h>

namespace ember::native {

Tensor relu_over_fresh(const Tensor& fresh) {
  EMBER_CHECK(fresh.dtype() != kBool, DTypeError, "Boolean inputs not supported for relu");
  check_no_internal_overlap(fresh);
  if (fresh.numel() > 0) {
    StridedPlan plan = make_strided_plan(fresh, {fresh});  // each element read, then written
    unary_kernel(fresh.device(), UnaryOp::Relu, plan, UnaryParams{});
  }
  // The result is a second handle on fresh's Storage object, not a second Storage over the
  // same bytes: one version counter (an in-place write through either handle later is seen
  // by whoever saved the other), and one use count that says "shared" for as long as fresh
  // is still held (so AccumulateGrad's gradient stealing, which trusts a use count of 1 to
  // mean private memory, copies instead) and "private" once fresh is gone.
  // The relu write itself is not counted: it completes the op that produced fresh, whose
  // result nobody can have saved yet (the caller's contract), and so the fused tape equals
  // the unfused one to the saved versions — relu's result at version 0, as in PyTorch.
  return alias(fresh);
}

// ------------------------------------------------------------------ cross-entropy

CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, std::int64_t ignore_index,
                                    bool with_grad, bool mean_over_kept) {
  check_same_device(logits, target);
  EMBER_CHECK(logits.dim() == 2, ShapeError, "cross_entropy_rows: expected 2-D logits [rows, classes], got ",
              logits.dim(), "-D");
  EMBER_CHECK(is_floating_point(logits.dtype()), DTypeError, "\"log_softmax_lastdim_kernel_impl\" not implemented for '",
              scalar_type_name(logits.dtype()), "'");
  // Class indices: int64, or uint8 widened (PyTorch 2.x's nll_loss takes both).
  EMBER_CHECK(target.dtype() == kInt64 || target.dtype() == kUInt8, DTypeError,
              "expected target dtype to be Long or Byte, but got ", scalar_type_name(target.dtype()));
  if (target.dtype() == kUInt8)
    return cross_entropy_rows(logits, to_dtype(target, kInt64), ignore_index, with_grad, mean_over_kept);
  const std::int64_t rows = logits.size(0), classes = logits.size(1);
  EMBER_CHECK(target.dim() == 1 && target.size(0) == rows, ShapeError, "Expected input batch_size (", rows,
              ") to match target batch_size (", target.dim() == 1 ? target.size(0) : target.numel(), ").");

  // Every target is a class or ignore_index; counted on the host (kernels never check).
  Tensor host_target = contiguous(to_device(target, kCPU));
  const std::int64_t* labels = host_target.data_ptr<std::int64_t>();
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    EMBER_CHECK(labels[i] == ignore_index || (labels[i] >= 0 && labels[i] < classes), IndexError, "Target ",
                labels[i], " is out of bounds.");
    kept += labels[i] != ignore_index;
  }

  CrossEntropyRows result;
  result.kept_rows = kept;
  result.losses = empty({rows}, logits.options());
  if (with_grad) result.grad_logits = empty({rows, classes}, logits.options());
  if (rows == 0) return result;
  Tensor input = contiguous(logits);
  Tensor device_target = contiguous(target);
  CrossEntropyPlan plan;
  plan.logits = input.data_ptr();
  plan.targets = device_target.data_ptr<std::int64_t>();
  plan.losses = result.losses.data_ptr();
  plan.grad_logits = with_grad ? result.grad_logits.data_ptr() : nullptr;
  plan.rows = rows;
  plan.classes = classes;
  plan.ignore_index = ignore_index;
  // 'mean' divides by the kept rows; with none kept every gradient entry is 0 anyway.
  plan.scale = mean_over_kept && kept > 0 ? 1.0 / static_cast<double>(kept) : 1.0;
  plan.dtype = logits.dtype();
  plan.device = logits.device().index();
  cross_entropy_kernel(logits.device(), plan);
  return result;
}

// ------------------------------------------------------------------ foreach_norm

Tensor foreach_norm(const std::vector<Tensor>& tensors, double p) {
  EMBER_CHECK(p > 0, ValueError, "foreach_norm: the norm's order must be positive, got ", p);
  EMBER_CHECK(!tensors.empty(), ValueError, "foreach_norm: expected at least one tensor");
  const Device device = tensors.front().device();
  const DType dtype = tensors.front().dtype();
  EMBER_CHECK(is_floating_point(dtype), DTypeError, "foreach_norm: expected floating tensors, got ",
              scalar_type_name(dtype));
  for (const Tensor& tensor : tensors) {
    check_same_device(tensors.front(), tensor);
    EMBER_CHECK(tensor.dtype() == dtype, DTypeError, "foreach_norm: expected every tensor to be ",
                scalar_type_name(dtype), ", got ", scalar_type_name(tensor.dtype()));
  }
  // bfloat16/float16: each norm of the values widened to float32, rounded once (PyTorch's
  // opmath; equal to torch._foreach_norm on 2.15, tests/reference/gen_reduced_float.py).
  if (is_reduced_floating_point(dtype)) {
    std::vector<Tensor> widened;
    widened.reserve(tensors.size());
    for (const Tensor& tensor : tensors) widened.push_back(to_dtype(tensor, DType::Float32));
    return to_dtype(foreach_norm(widened, p), dtype);
  }
  const auto count = static_cast<std::int64_t>(tensors.size());
  Tensor norms = empty({count}, TensorOptions().dtype(dtype).device(device));
  std::vector<Tensor> ready;  // contiguous operands, alive until the kernels have been queued
  ready.reserve(tensors.size());
  for (const Tensor& tensor : tensors) ready.push_back(contiguous(tensor));
  const std::size_t item = itemsize(dtype);
  for (std::int64_t first = 0; first < count; first += ForeachNormPlan::kMaxTensors) {
    ForeachNormPlan plan;
    plan.count = static_cast<int>(std::min<std::int64_t>(count - first, ForeachNormPlan::kMaxTensors));
    for (int i = 0; i < plan.count; ++i) {
      plan.data[i] = ready[first + i].data_ptr();
      plan.numel[i] = ready[first + i].numel();
    }
    plan.output = static_cast<char*>(norms.data_ptr()) + first * static_cast<std::int64_t>(item);
    plan.p = p;
    plan.dtype = dtype;
    plan.device = device.index();
    foreach_norm_kernel(device, plan);
  }
  return norms;
}

// ------------------------------------------------------------------ SGD

namespace {

// A bfloat16/float16 parameter: PyTorch's single-tensor SGD as it is written, one 16-bit op
// after another (each computes in float32 and rounds once; a number multiplies unrounded),
// so every intermediate rounds where PyTorch's does. The fused kernel keeps its
// intermediates in the parameter's dtype too, but has no 16-bit loops.
void sgd_step_reduced_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer,
                      const optim::SGDOptions& options, bool first_step) {
  Tensor d = options.maximize ? neg(grad) : grad;
  if (options.weight_decay != 0.0) d = add(d, param, options.weight_decay);
  if (options.momentum != 0.0) {
    if (first_step) {
      copy_(momentum_buffer, d);
    } else {
      mul_(momentum_buffer, scalar_to_tensor(options.momentum));
      add_(momentum_buffer, d, 1.0 - options.dampening);
    }
    d = options.nesterov ? add(d, momentum_buffer, options.momentum) : momentum_buffer;
  }
  add_(param, d, -options.lr);
}

}  // namespace

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer,
               const optim::SGDOptions& options, bool first_step) {
  check_same_device(param, grad);
  EMBER_CHECK(is_floating_point(param.dtype()), DTypeError, "sgd_step_: expected a floating point parameter, got ",
              scalar_type_name(param.dtype()));
  EMBER_CHECK(param.is_contiguous(), ValueError, "sgd_step_: the parameter must be contiguous");
  EMBER_CHECK(IntArrayRef(grad.sizes()) == IntArrayRef(param.sizes()), ShapeError,
              "sgd_step_: the gradient's shape ", shape_to_string(grad.sizes()), " does not match the parameter's ",
              shape_to_string(param.sizes()));
  const bool use_momentum = options.momentum != 0.0;
  if (use_momentum) {
    EMBER_CHECK(momentum_buffer.defined(), ValueError, "sgd_step_: momentum needs a momentum buffer");
    check_same_device(param, momentum_buffer);
    EMBER_CHECK(momentum_buffer.dtype() == param.dtype() && momentum_buffer.is_contiguous() &&
                    IntArrayRef(momentum_buffer.sizes()) == IntArrayRef(param.sizes()),
                ValueError, "sgd_step_: the momentum buffer must be a contiguous tensor of the parameter's shape and dtype");
  }
  if (param.numel() == 0) return;
  if (is_reduced_floating_point(param.dtype())) {
    sgd_step_reduced_(param, to_dtype(grad, param.dtype()), momentum_buffer, options, first_step);
    return;
  }
  Tensor grad_ready = contiguous(to_dtype(grad, param.dtype()));
  SgdPlan plan;
  plan.param = param.data_ptr();
  plan.grad = grad_ready.data_ptr();
  plan.momentum_buffer = use_momentum ? momentum_buffer.data_ptr() : nullptr;
  plan.numel = param.numel();
  plan.options = options;  // the optimizer's object, whole: no field is copied by name
  plan.first_step = first_step;
  plan.dtype = param.dtype();
  plan.device = param.device().index();
  sgd_step_kernel(param.device(), plan);
  // In place, like the composite add_/mul_: a graph that saved the old values notices.
  param.bump_version();
  if (use_momentum) momentum_buffer.bump_version();
}

}  // namespace ember::native
