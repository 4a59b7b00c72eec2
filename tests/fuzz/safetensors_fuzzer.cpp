// tests/fuzz/safetensors_fuzzer.cpp — libFuzzer harness for the safetensors reader
// (nn/serialize.cpp): the input is a whole .safetensors file. tests/nn/test_serialize_fuzz.cpp
// is its bounded, structure-aware companion in the Catch2 suite.
//
// Contract: any input loads or throws ember::IOError (anything else escaping, a sanitizer
// report or a crash is a finding), and what loads is self-consistent: every tensor's byte
// count is numel * itemsize, and saving it and loading it back gives the same names,
// shapes, dtypes, values and metadata.
// Build and run: scripts/fuzz.sh (or -DEMBER_FUZZ=ON with clang, target safetensors_fuzzer).
#include <cstdint>
#include <cstring>
#include <string>

#include <ember/nn/serialize.h>

#include "fuzz_support.h"

using ember::fuzz::finding;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ember::Metadata metadata;
  ember::nn::StateDict loaded;
  try {
    loaded = ember::load_from_bytes(std::string(reinterpret_cast<const char*>(data), size), &metadata);
  } catch (const ember::IOError&) {
    return 0;
  } catch (...) {
    ember::fuzz::unexpected_exception();
  }
  for (const auto& [name, tensor] : loaded) {
    if (ember::compute_numel(tensor.sizes()) != tensor.numel() || !tensor.is_contiguous())
      finding("tensor " + name + " loaded with an inconsistent layout");
    for (std::int64_t size : tensor.sizes())
      if (size < 0) finding("tensor " + name + " loaded with a negative size");
  }
  try {
    ember::Metadata metadata_again;
    const ember::nn::StateDict again = ember::load_from_bytes(ember::save_to_bytes(loaded, metadata), &metadata_again);
    if (again.size() != loaded.size()) finding("a loaded file saved and loaded back has another tensor count");
    if (metadata_again != metadata) finding("a loaded file saved and loaded back has other metadata");
    for (const auto& [name, tensor] : loaded) {
      const ember::Tensor* back = again.find(name);
      if (back == nullptr) finding("tensor " + name + " is lost by a save and load");
      if (back->sizes() != tensor.sizes() || back->dtype() != tensor.dtype())
        finding("tensor " + name + " changes shape or dtype in a save and load");
      // Bytes, not equal(): a NaN read from the file must come back as the same NaN.
      const std::size_t nbytes = static_cast<std::size_t>(tensor.numel()) * tensor.element_size();
      if (nbytes != 0 && std::memcmp(back->data_ptr(), tensor.data_ptr(), nbytes) != 0)
        finding("tensor " + name + " changes value in a save and load");
    }
  } catch (const ember::Error& error) {
    finding(std::string("a loaded file does not save and load back: ") + error.what());
  } catch (...) {
    ember::fuzz::unexpected_exception();
  }
  return 0;
}
