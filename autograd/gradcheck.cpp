// autograd/gradcheck.cpp — numerical vs analytical Jacobians.
//
// Inputs may live on the CPU or on a GPU (issue: "gradcheck passes on CUDA in float64"):
// the perturbation writes one element's bytes in place — a pointer store on the CPU, an
// 8-byte backend copy on a device — without bumping the version counter, so the graph of
// the first evaluation stays valid for the analytical pass.
#include <ember/autograd/gradcheck.h>

#include <cmath>
#include <sstream>

#include <ember/autograd/engine.h>
#include <ember/autograd/ops.h>
#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/print.h>

namespace ember::autograd {

namespace {

// The address of element `flat` (row-major numbering) of a float64 tensor of any strides,
// on any device (a device address for a GPU tensor).
double* element(const Tensor& tensor, std::int64_t flat) {
  std::int64_t offset = 0;
  for (std::int64_t d = tensor.dim() - 1; d >= 0; --d) {
    std::int64_t size = tensor.size(d);
    offset += (flat % size) * tensor.stride(d);
    flat /= size;
  }
  return static_cast<double*>(tensor.data_ptr()) + offset;
}

double read_element(const Tensor& tensor, const double* address) {
  if (tensor.is_cpu()) return *address;
  double value = 0;
  copy_bytes_kernel(tensor.device(), &value, kCPU, address, tensor.device(), sizeof(double));
  return value;
}
void write_element(const Tensor& tensor, double* address, double value) {
  if (tensor.is_cpu()) {
    *address = value;
    return;
  }
  copy_bytes_kernel(tensor.device(), address, tensor.device(), &value, kCPU, sizeof(double));
}

// Values of a tensor as a flat float64 vector.
std::vector<double> values(const Tensor& tensor) {
  Tensor flat = native::contiguous(native::to_dtype(native::to_device(tensor.detach(), kCPU), kFloat64));
  const double* data = flat.data_ptr<double>();
  return std::vector<double>(data, data + flat.numel());
}

// jacobian[input element][output element], for one input and one output.
using Jacobian = std::vector<std::vector<double>>;

std::string describe(const Jacobian& jacobian) {
  std::ostringstream out;
  for (const auto& row : jacobian) {
    out << "  [";
    for (std::size_t k = 0; k < row.size(); ++k) out << (k ? ", " : "") << row[k];
    out << "]\n";
  }
  return out.str();
}

}  // namespace

bool gradcheck(const MultiOutputFunction& fn, const TensorList& inputs, double eps, double atol, double rtol,
               bool raise_exception) {
  std::vector<std::size_t> checked;  // the inputs that require grad
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    EMBER_CHECK(inputs[i].dtype() == kFloat64, ValueError,
                "gradcheck expects float64 inputs (input ", i, " is ", dtype_name(inputs[i].dtype()), ")");
    checked.push_back(i);
  }
  TensorList outputs = fn(inputs);
  TensorList wrt;
  for (std::size_t i : checked) wrt.push_back(inputs[i]);

  // numerical[c][o][j][k]: input c, output o, input element j, output element k.
  std::vector<std::vector<Jacobian>> numerical(checked.size(), std::vector<Jacobian>(outputs.size()));
  for (std::size_t c = 0; c < checked.size(); ++c) {
    const Tensor& x = inputs[checked[c]];
    for (std::size_t o = 0; o < outputs.size(); ++o) numerical[c][o].assign(x.numel(), {});
    for (std::int64_t j = 0; j < x.numel(); ++j) {
      double* entry = element(x, j);
      const double original = read_element(x, entry);
      // Read the values right away: an output may share data with an input (a gradient
      // that *is* one of the inputs, say), so it changes when the input is restored.
      auto evaluate = [&](double value) {
        write_element(x, entry, value);
        std::vector<std::vector<double>> result;
        for (const Tensor& out : fn(inputs)) result.push_back(values(out));
        return result;
      };
      std::vector<std::vector<double>> plus = evaluate(original + eps);
      std::vector<std::vector<double>> minus = evaluate(original - eps);
      write_element(x, entry, original);
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        const std::vector<double>& high = plus[o];
        const std::vector<double>& low = minus[o];
        std::vector<double> slope(high.size());
        for (std::size_t k = 0; k < high.size(); ++k) slope[k] = (high[k] - low[k]) / (2 * eps);
        numerical[c][o][static_cast<std::size_t>(j)] = slope;
      }
    }
  }

  // Analytical: one backward pass per output element, with a one-hot output gradient.
  std::vector<std::vector<Jacobian>> analytical(checked.size(), std::vector<Jacobian>(outputs.size()));
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    for (std::size_t c = 0; c < checked.size(); ++c) {
      analytical[c][o].assign(inputs[checked[c]].numel(), std::vector<double>(out.numel(), 0.0));
    }
    if (!out.requires_grad()) continue;  // constant output: its Jacobian is zero
    for (std::int64_t k = 0; k < out.numel(); ++k) {
      Tensor one_hot_grad = zeros(out.sizes(), out.options());
      native::fill_(native::select(native::reshape(one_hot_grad, {out.numel()}), 0, k), 1.0);
      TensorList grads = grad({out}, wrt, {one_hot_grad}, /*retain_graph=*/true, false, /*allow_unused=*/true);
      for (std::size_t c = 0; c < checked.size(); ++c) {
        if (!grads[c].defined()) continue;
        std::vector<double> row = values(grads[c]);
        for (std::size_t j = 0; j < row.size(); ++j) analytical[c][o][j][static_cast<std::size_t>(k)] = row[j];
      }
    }
  }

  for (std::size_t o = 0; o < outputs.size(); ++o) {
    for (std::size_t c = 0; c < checked.size(); ++c) {
      std::ostringstream mismatches;
      int count = 0;
      const Jacobian& num = numerical[c][o];
      const Jacobian& ana = analytical[c][o];
      for (std::size_t j = 0; j < num.size(); ++j) {
        for (std::size_t k = 0; k < num[j].size(); ++k) {
          double a = ana[j][k], n = num[j][k];
          bool close = std::abs(a - n) <= atol + rtol * std::abs(n);
          if (!close && count++ < 10) {
            mismatches << "  d output[" << k << "] / d input[" << j << "]: numerical " << n << ", analytical " << a
                       << "\n";
          }
        }
      }
      if (count == 0) continue;
      std::string report = make_message("Jacobian mismatch for output ", o, " with respect to input ", checked[c],
                                        ",\nnumerical:\n", describe(num), "analytical:\n", describe(ana), count,
                                        " mismatching entries (rows: input elements, columns: output elements):\n",
                                        mismatches.str());
      if (raise_exception) throw GradcheckError(report);
      return false;
    }
  }
  return true;
}

bool gradcheck(const SingleOutputFunction& fn, const TensorList& inputs, double eps, double atol, double rtol,
               bool raise_exception) {
  return gradcheck(MultiOutputFunction([&fn](const TensorList& x) { return TensorList{fn(x)}; }), inputs, eps, atol,
                   rtol, raise_exception);
}

bool gradgradcheck(const MultiOutputFunction& fn, const TensorList& inputs, const TensorList& grad_outputs,
                   double eps, double atol, double rtol, bool raise_exception) {
  TensorList outputs = fn(inputs);
  TensorList vectors = grad_outputs;
  if (vectors.empty()) {
    // Fixed, non-symmetric values (no RNG: the check must be reproducible).
    for (const Tensor& out : outputs) {
      Tensor v = zeros(out.sizes(), TensorOptions().dtype(kFloat64));
      double* data = v.data_ptr<double>();
      for (std::int64_t k = 0; k < v.numel(); ++k) data[k] = 0.3 + 0.7 * std::sin(1.7 * static_cast<double>(k) + 0.5);
      if (!out.is_cpu()) v = native::to_device(v, out.device());  // beside the output (a GPU run)
      vectors.push_back(v.requires_grad_(true));
    }
  }
  const std::size_t input_count = inputs.size();
  // (inputs, v) -> the gradients fn's backward produces, as a differentiable function.
  MultiOutputFunction first_derivative = [&fn, input_count](const TensorList& all) -> TensorList {
    TensorList x(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(input_count));
    TensorList v(all.begin() + static_cast<std::ptrdiff_t>(input_count), all.end());
    TensorList outs = fn(x);
    TensorList roots, root_grads, wrt;
    for (std::size_t o = 0; o < outs.size(); ++o) {
      if (outs[o].requires_grad()) {
        roots.push_back(outs[o]);
        root_grads.push_back(v[o]);
      }
    }
    for (const Tensor& input : x) {
      if (input.requires_grad()) wrt.push_back(input);
    }
    if (roots.empty()) return {};
    TensorList grads = grad(roots, wrt, root_grads, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined()) grads[i] = zeros_like(wrt[i]);
    }
    return grads;
  };
  TensorList all = inputs;
  all.insert(all.end(), vectors.begin(), vectors.end());
  return gradcheck(first_derivative, all, eps, atol, rtol, raise_exception);
}

bool gradgradcheck(const SingleOutputFunction& fn, const TensorList& inputs, const TensorList& grad_outputs,
                   double eps, double atol, double rtol, bool raise_exception) {
  return gradgradcheck(MultiOutputFunction([&fn](const TensorList& x) { return TensorList{fn(x)}; }), inputs,
                       grad_outputs, eps, atol, rtol, raise_exception);
}

}  // namespace ember::autograd
