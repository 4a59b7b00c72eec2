// nn/init.cpp — torch.nn.init's formulas (see init.h).
#include <ember/nn/init.h>

#include <cmath>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>

namespace ember::nn::init {

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  static const char* const kLinearLike[] = {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                                            "conv_transpose2d", "conv_transpose3d", "sigmoid"};
  for (const char* name : kLinearLike)
    if (nonlinearity == name) return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw ValueError("Unsupported nonlinearity " + nonlinearity);
}

std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  EMBER_CHECK(tensor.dim() >= 2, ValueError,
              "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  std::int64_t receptive_field = 1;
  for (std::int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

namespace {

std::int64_t select_fan(const Tensor& tensor, const std::string& mode) {
  EMBER_CHECK(mode == "fan_in" || mode == "fan_out", ValueError, "Mode ", mode,
              " not supported, please use one of ['fan_in', 'fan_out']");
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode == "fan_in" ? fan_in : fan_out;
}

}  // namespace

void uniform_(const Tensor& tensor, double a, double b, Generator* generator) {
  NoGradGuard no_grad;
  ember::uniform_(tensor, a, b, generator);
}

void normal_(const Tensor& tensor, double mean, double std, Generator* generator) {
  NoGradGuard no_grad;
  ember::normal_(tensor, mean, std, generator);
}

void constant_(const Tensor& tensor, double value) {
  NoGradGuard no_grad;
  Tensor target = tensor;
  target.fill_(value);
}

void zeros_(const Tensor& tensor) { constant_(tensor, 0.0); }
void ones_(const Tensor& tensor) { constant_(tensor, 1.0); }

void kaiming_uniform_(const Tensor& tensor, double a, const std::string& mode, const std::string& nonlinearity,
                      Generator* generator) {
  if (tensor.numel() == 0) return;  // PyTorch only warns "Initializing zero-element tensors is a no-op"
  const double fan = static_cast<double>(select_fan(tensor, mode));
  const double gain = calculate_gain(nonlinearity, a);
  const double std = gain / std::sqrt(fan);
  const double bound = std::sqrt(3.0) * std;  // same operation order as PyTorch: same rounding
  init::uniform_(tensor, -bound, bound, generator);
}

void kaiming_normal_(const Tensor& tensor, double a, const std::string& mode, const std::string& nonlinearity,
                     Generator* generator) {
  if (tensor.numel() == 0) return;
  const double fan = static_cast<double>(select_fan(tensor, mode));
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(fan);
  init::normal_(tensor, 0.0, std, generator);
}

void xavier_uniform_(const Tensor& tensor, double gain, Generator* generator) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  const double bound = std::sqrt(3.0) * std;
  init::uniform_(tensor, -bound, bound, generator);
}

void xavier_normal_(const Tensor& tensor, double gain, Generator* generator) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  init::normal_(tensor, 0.0, std, generator);
}

}  // namespace ember::nn::init
