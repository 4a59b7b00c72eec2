// core/print.h — printing tensors the way PyTorch's repr does.
//
//   tensor([[1, 2],
//           [3, 4]])
//   tensor([0.3113, 0.3934, 0.2952])
//   tensor(0.0852, grad_fn=<BinaryCrossEntropyBackward0>)
// Four decimals by default, scientific notation by PyTorch's rules unless
// set_printoptions({.sci_mode = false}), "..." summarisation above 1000 elements.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <ember/core/tensor.h>

namespace ember {

struct PrintOptions {
  int precision = 4;
  std::int64_t threshold = 1000;
  int edgeitems = 3;
  int linewidth = 80;
  std::optional<bool> sci_mode;  // nullopt: decide automatically, like PyTorch
};

void set_printoptions(const PrintOptions& options);
const PrintOptions& get_printoptions();

std::ostream& operator<<(std::ostream& out, const Tensor& tensor);
std::string to_string(const Tensor& tensor);
// What print(t.shape) shows: "torch.Size([2, 3])".
std::string size_string(IntArrayRef sizes);

}  // namespace ember
