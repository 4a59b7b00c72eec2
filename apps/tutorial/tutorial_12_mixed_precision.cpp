// apps/tutorial/tutorial_12_mixed_precision.cpp — §12, beyond the tutorial: mixed precision,
// part 1: the 16-bit formats (docs/mixed-precision.md).
//
// Training at speed means computing in 16 bits. Before autocast and loss scaling, this part
// shows what the two 16-bit formats hold and where they lose what float32 keeps:
//   1. one number (1/3) in float32, bfloat16 and float16, with its bits split into sign,
//      exponent and mantissa, and a few values printed in each format;
//   2. rounding to nearest, ties to even, worked on four values near 1;
//   3. where precision is lost: a running sum that stops growing, sum() that accumulates in
//      float32 instead, float16's overflow and underflow, and dtype promotion.
// The output matches tests/apps/expected/tutorial_12_mixed_precision.txt, which
// tests/reference/tutorial_12_mixed_precision.py printed running the same steps in PyTorch.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include <ember/ember.h>

using ember::Tensor;

namespace {

// A double as Python's repr() writes it: the shortest digits that read back to the same
// value, with ".0" on whole numbers.
std::string python_repr(double value) {
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

// A 0-d tensor's bits as "sign exponent mantissa" (float32: 1 8 23, bfloat16: 1 8 7,
// float16: 1 5 10).
std::string bits(const Tensor& t) {
  int exponent_bits = 8, mantissa_bits = 23;
  std::uint32_t pattern = 0;
  const Tensor dense = t.contiguous();
  if (t.dtype() == ember::kFloat32) {
    pattern = std::bit_cast<std::uint32_t>(*dense.data_ptr<float>());
  } else if (t.dtype() == ember::kBFloat16) {
    mantissa_bits = 7;
    pattern = dense.data_ptr<ember::BFloat16>()->bits;
  } else {
    exponent_bits = 5;
    mantissa_bits = 10;
    pattern = dense.data_ptr<ember::Half>()->bits;
  }
  std::string text;
  for (int bit = exponent_bits + mantissa_bits; bit >= 0; --bit) {
    text += (pattern >> bit) & 1 ? '1' : '0';
    if (bit == exponent_bits + mantissa_bits || bit == mantissa_bits) text += ' ';  // sign | exponent | mantissa
  }
  return text;
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace

int main() {
  // ---------------------------------------------------------------- 1. one number, three formats
  std::cout << "== 1. One number, three formats ==\n";
  const Tensor third = ember::tensor(1.0 / 3.0);  // float32, like torch.tensor(1 / 3)
  for (ember::DType dtype : {ember::kFloat32, ember::kBFloat16, ember::kFloat16}) {
    const Tensor x = third.to(dtype);
    std::cout << padded(ember::dtype_name(dtype), 9) << " " << padded(python_repr(x.item().to_double()), 20) << " "
              << bits(x) << "\n";
  }
  const Tensor values = ember::tensor({1.0 / 3.0, 100.0, 70000.0, 1e-6});
  std::cout << values.to(ember::kBFloat16) << "\n";
  std::cout << values.to(ember::kFloat16) << "\n";  // 70000 is past float16's largest, 65504: inf

  // ---------------------------------------------------------------- 2. rounding
  std::cout << "== 2. Rounding to nearest, ties to even ==\n";
  // bfloat16 keeps 7 mantissa bits: between 1 and 2 its values are 2^-7 = 0.0078125 apart.
  // 1.00390625 and 1.01171875 lie exactly halfway between two of them: the one whose last
  // mantissa bit is 0 wins. The other two are nearer one neighbour, which wins.
  for (double value : {1.00390625, 1.01171875, 1.005, 1.0048828125}) {
    const Tensor x = ember::tensor(value);
    const Tensor y = x.to(ember::kBFloat16);
    std::cout << padded(python_repr(value), 14) << " " << bits(x) << " -> " << bits(y) << " = "
              << python_repr(y.item().to_double()) << "\n";
  }

  // ---------------------------------------------------------------- 3. where precision is lost
  std::cout << "== 3. Where precision is lost ==\n";
  // Adding 0.01 ten thousand times, rounding after every addition: the sum stops growing
  // once 0.01 is less than half the distance between neighbouring bfloat16 values (at 4,
  // where they are 2^-5 apart).
  const Tensor step = ember::tensor(0.01, ember::kBFloat16);
  Tensor total = ember::tensor(0.0, ember::kBFloat16);
  for (int i = 0; i < 10000; ++i) total = total + step;
  std::cout << "running bfloat16 sum: " << total << "\n";
  // sum() accumulates in a wider type and rounds once at the end.
  std::cout << "bfloat16 sum():      " << ember::full({10000}, 0.01, ember::kBFloat16).sum() << "\n";
  // float16's range ends at 65504; bfloat16 keeps float32's range, with fewer digits.
  const Tensor big = ember::tensor({100.0, 300.0});
  std::cout << "float16 300 * x:     " << big.to(ember::kFloat16) * 300 << "\n";
  std::cout << "bfloat16 300 * x:    " << big.to(ember::kBFloat16) * 300 << "\n";
  std::cout << "float16 tiny:        " << ember::tensor({1e-5, 1e-7, 1e-8}).to(ember::kFloat16) << "\n";
  // Mixed dtypes promote: bfloat16 with float32 computes in float32, and bfloat16 with
  // float16, neither of which holds the other's values, in float32 too. A number keeps the
  // tensor's dtype.
  const Tensor a = ember::tensor({1.5}, ember::kBFloat16);
  std::cout << (a + ember::tensor({0.1})).dtype() << " " << (a + ember::tensor({0.1}, ember::kFloat16)).dtype() << " "
            << (a * 3).dtype() << "\n";
  return 0;
}
