// apps/cli/hex_text.h — bytes as lowercase hexadecimal text and back, for the checkpoint's
// metadata (safetensors metadata holds strings only): the generator states that make a
// resumed run draw the same random numbers (checkpoint.h, loader_position.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::cli {

std::string to_hex(const std::vector<std::uint8_t>& bytes);
// The bytes of `text`; IOError naming the checkpoint `path` and `what` the text holds when it
// is not an even number of lowercase hexadecimal digits.
std::vector<std::uint8_t> from_hex(const std::string& text, const std::string& path, const std::string& what);

}  // namespace ember::cli
