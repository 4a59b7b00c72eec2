// apps/cli/metadata_text.h — values as text and back, for the checkpoint's metadata
// (safetensors metadata holds strings only): bytes as lowercase hexadecimal (the generator
// states that make a resumed run draw the same random numbers) and doubles with every digit
// (running loss sums, the early-stopping best), which also says nan and ±inf where a JSON
// number cannot (checkpoint.h, loader_position.h, early_stopping.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::cli {

std::string to_hex(const std::vector<std::uint8_t>& bytes);
// The bytes of `text`; IOError naming the checkpoint `path` and `what` the text holds when it
// is not an even number of lowercase hexadecimal digits.
std::vector<std::uint8_t> from_hex(const std::string& text, const std::string& path, const std::string& what);

// "%.17g": reads back to the same double; "inf", "-inf", "nan" for those.
std::string exact_text(double value);
// The double `text` spells in full; IOError naming `path` and `what` otherwise.
double number_from_text(const std::string& text, const std::string& path, const std::string& what);

}  // namespace ember::cli
