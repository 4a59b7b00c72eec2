// nn/python_format.h — numbers and lists printed the way Python prints them.
//
// Error messages and reprs follow PyTorch's text, which Python formats: a float always
// shows a decimal point ("Invalid learning rate: -1.0", "Dropout(p=0.5, inplace=False)"),
// with the shortest digits that round-trip; a list of strings uses single quotes.
#pragma once

#include <charconv>
#include <string>
#include <vector>

namespace ember::nn {

// Python's repr(float): 0.25 -> "0.25", 1.0 -> "1.0", 1e-08 -> "1e-08".
inline std::string python_float(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  const auto exponent = text.find('e');
  if (exponent != std::string::npos) {
    // C++ writes 1e-08 as "1e-08"; Python agrees, but writes 1e+20 as "1e+20" too: keep.
    return text;
  }
  if (text.find_first_of(".ni") == std::string::npos) text += ".0";  // not for nan / inf
  return text;
}

// Python's repr of a list of strings: ['fan_in', 'fan_out'].
inline std::string python_string_list(const std::vector<std::string>& items) {
  std::string text = "[";
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? ", '" : "'") + items[i] + "'";
  return text + "]";
}

}  // namespace ember::nn
