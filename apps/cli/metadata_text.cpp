// apps/cli/metadata_text.cpp — see metadata_text.h.
#include "metadata_text.h"

#include <cstdio>
#include <cstdlib>

#include <ember/core/error.h>

namespace ember::cli {

std::string to_hex(const std::vector<std::uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (std::uint8_t byte : bytes) {
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

std::vector<std::uint8_t> from_hex(const std::string& text, const std::string& path, const std::string& what) {
  auto value = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw IOError(path + ": the checkpoint's " + what + " is not hexadecimal");
  };
  EMBER_CHECK(text.size() % 2 == 0, IOError, path, ": the checkpoint's ", what, " has an odd length");
  std::vector<std::uint8_t> bytes(text.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::uint8_t>(value(text[2 * i]) * 16 + value(text[2 * i + 1]));
  }
  return bytes;
}

std::string exact_text(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

double number_from_text(const std::string& text, const std::string& path, const std::string& what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  EMBER_CHECK(!text.empty() && end == text.c_str() + text.size(), IOError, path, ": the checkpoint's ", what, " \"",
              text, "\" is not a number");
  return value;
}

}  // namespace ember::cli
