// apps/cli/hex_text.cpp — see hex_text.h.
#include "hex_text.h"

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

}  // namespace ember::cli
