// nn/init.h — parameter initialisation (PyTorch: torch.nn.init).
//
// Tutorial §5: "model weights are initialized with small random numbers ... to break
// symmetry during training". Each function fills a tensor in place, under no_grad, using
// PyTorch's formulas and drawing from the generator in PyTorch's order, so the same seed
// gives the same weights:
//   kaiming_uniform_:  bound = gain * sqrt(3 / fan),           U(-bound, bound)
//   kaiming_normal_:   std   = gain / sqrt(fan),               N(0, std)
//   xavier_uniform_:   bound = gain * sqrt(6 / (fan_in + fan_out))
//   xavier_normal_:    std   = gain * sqrt(2 / (fan_in + fan_out))
// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (a Linear weight
// [out, in] has fan_in = in).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <ember/core/random.h>
#include <ember/core/tensor.h>

namespace ember::nn::init {

// PyTorch's calculate_gain: "linear", "conv1d".., "sigmoid" -> 1, "tanh" -> 5/3,
// "relu" -> sqrt(2), "leaky_relu" -> sqrt(2 / (1 + slope^2)) (slope defaults to 0.01),
// "selu" -> 3/4. Unknown names: "Unsupported nonlinearity foo".
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);
// (fan_in, fan_out); needs at least 2 dims: "Fan in and fan out can not be computed for
// tensor with fewer than 2 dimensions".
std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

void uniform_(const Tensor& tensor, double a = 0.0, double b = 1.0, Generator* generator = nullptr);
void normal_(const Tensor& tensor, double mean = 0.0, double std = 1.0, Generator* generator = nullptr);
void constant_(const Tensor& tensor, double value);
void zeros_(const Tensor& tensor);
void ones_(const Tensor& tensor);
// mode: "fan_in" (default) or "fan_out"; a: the negative slope for leaky_relu.
void kaiming_uniform_(const Tensor& tensor, double a = 0.0, const std::string& mode = "fan_in",
                      const std::string& nonlinearity = "leaky_relu", Generator* generator = nullptr);
void kaiming_normal_(const Tensor& tensor, double a = 0.0, const std::string& mode = "fan_in",
                     const std::string& nonlinearity = "leaky_relu", Generator* generator = nullptr);
void xavier_uniform_(const Tensor& tensor, double gain = 1.0, Generator* generator = nullptr);
void xavier_normal_(const Tensor& tensor, double gain = 1.0, Generator* generator = nullptr);

}  // namespace ember::nn::init
