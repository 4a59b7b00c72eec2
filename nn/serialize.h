// nn/serialize.h — saving and loading tensors in the safetensors format.
//
// Tutorial §8: torch.save(model.state_dict(), "model.pth") and
// model.load_state_dict(torch.load("model.pth")). ember writes safetensors instead of
// .pth (a pickle): a format any language can read safely, which Python's `safetensors`
// package loads too. The file is
//   8 bytes   little-endian u64 N, the header's length
//   N bytes   JSON: {"name": {"dtype": "F32", "shape": [30, 50], "data_offsets": [b, e]}, ...,
//              "__metadata__": {"key": "value"}}  padded with spaces to a multiple of 8
//   the rest  every tensor's bytes, little-endian, row-major, at [b, e) from here.
// The reader checks what the reference implementation checks and names the tensor on
// failure (IOError). Writes are atomic: a temporary file in the same directory, flushed,
// fsync'ed, then renamed over the target, so a crash never leaves half a checkpoint; a
// symlink is written through, a target that is not a regular file (/dev/null, a FIFO) is
// refused, and temporary files left by a killed writer are removed (nn/atomic_file.h).
#pragma once

#include <map>
#include <string>

#include <ember/nn/module.h>

namespace ember {

using Metadata = std::map<std::string, std::string>;

void save(const nn::StateDict& tensors, const std::string& path, const Metadata& metadata = {});
// Tensors come back on the CPU, in the file's order of data offsets.
nn::StateDict load(const std::string& path, Metadata* metadata = nullptr);

// The same on bytes in memory (what the file functions use).
std::string save_to_bytes(const nn::StateDict& tensors, const Metadata& metadata = {});
nn::StateDict load_from_bytes(const std::string& bytes, Metadata* metadata = nullptr,
                              const std::string& source_name = "<bytes>");

}  // namespace ember
