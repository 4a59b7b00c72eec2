// nn/clip_grad.cpp — gradient clipping (see clip_grad.h), PyTorch's algorithm op for op:
// per-gradient norms (one fused backend call per device and dtype: native::foreach_norm),
// the norm of those norms, clamp(max_norm / (norm + 1e-6), max=1), and an in-place multiply
// of each gradient. Nothing is read back to the host unless error_if_nonfinite asks.
#include <ember/nn/clip_grad.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/nn/python_format.h>

namespace ember::nn::utils {

namespace {

// torch.linalg.vector_norm(x, p) over every element, as a 0-d tensor on x's device.
Tensor vector_norm(const Tensor& x, double p) {
  if (std::isinf(p) && p > 0) return ember::amax(x.abs());
  if (p == 2.0) return x.mul(x).sum().sqrt();
  if (p == 1.0) return x.abs().sum();
  return ember::pow(ember::pow(x.abs(), p).sum(), 1.0 / p);
}

}  // namespace

std::vector<Tensor> gradients_of(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> gradients;
  for (const Tensor& parameter : parameters) {
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  }
  return gradients;
}

Tensor get_total_norm(const std::vector<Tensor>& tensors, double norm_type, bool error_if_nonfinite) {
  NoGradGuard no_grad;  // clipping is not part of any graph
  EMBER_CHECK(norm_type > 0, ValueError, "norm_type must be positive, got ", nn::python_float(norm_type));
  if (tensors.empty()) return ember::zeros({});
  // As PyTorch: the tensors grouped by (device, dtype), each group's norms in one fused call
  // (native::foreach_norm, torch._foreach_norm), then the norm of all the norms on the first
  // tensor's device, in their promoted dtype (a float64 parameter among float32 ones).
  struct Group {
    Device device;
    DType dtype;
    std::vector<Tensor> members;
  };
  std::vector<Group> groups;
  for (const Tensor& tensor : tensors) {
    auto same = [&](const Group& g) { return g.device == tensor.device() && g.dtype == tensor.dtype(); };
    auto found = std::find_if(groups.begin(), groups.end(), same);
    if (found == groups.end()) groups.push_back({tensor.device(), tensor.dtype(), {tensor}});
    else found->members.push_back(tensor);
  }
  const Device first_device = tensors.front().device();
  std::vector<Tensor> norms;
  DType common = tensors.front().dtype();
  for (const Group& group : groups) {
    if (is_floating_point(group.dtype)) {
      norms.push_back(native::foreach_norm(group.members, norm_type).to(first_device));
    } else {  // integer tensors (not gradients): one norm at a time, as vector_norm promotes them
      for (const Tensor& member : group.members) norms.push_back(vector_norm(member, norm_type).reshape({1}).to(first_device));
    }
    common = promote_types(common, norms.back().dtype());
  }
  for (Tensor& norm : norms) {
    if (norm.dtype() != common) norm = norm.to(common);
  }
  Tensor total_norm = vector_norm(norms.size() == 1 ? norms.front() : ember::cat(norms, 0), norm_type);
  if (error_if_nonfinite) {
    const double value = total_norm.item<double>();  // the one host read, only when asked for
    EMBER_CHECK(std::isfinite(value), ValueError, "The total norm of order ", nn::python_float(norm_type),
                " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
                "scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");
  }
  return total_norm;
}

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> gradients = gradients_of(parameters);
  Tensor total_norm = get_total_norm(gradients, norm_type, error_if_nonfinite);
  if (gradients.empty()) return total_norm;
  // Python's `max_norm / tensor` is Tensor.__rtruediv__: reciprocal, then the multiply.
  Tensor clip_coef = (1.0 / total_norm.add(1e-6)).mul(max_norm);
  Tensor clamped = clip_coef.clamp(std::nullopt, Scalar(1.0));
  for (Tensor& gradient : gradients) gradient.mul_(clamped.to(gradient.device()).to(gradient.dtype()));
  return total_norm;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& parameter : parameters) {
    if (!parameter.grad().defined()) continue;
    Tensor gradient = parameter.grad();
    gradient.copy_(gradient.clamp(Scalar(-clip_value), Scalar(clip_value)));
  }
}

}  // namespace ember::nn::utils
