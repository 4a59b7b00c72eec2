// tests/nn/fuzz/safetensors_fuzzer.cpp — a libFuzzer target for the safetensors reader
// (nn/serialize.cpp), for longer, coverage-guided runs than the bounded fuzz test in
// tests/nn/test_serialize_fuzz.cpp (which CI runs). Not part of the CMake build: libFuzzer
// needs clang, and the reader must be compiled with the fuzzer's instrumentation, so it is
// built together with nn/serialize.cpp against a Release build's libraries:
//
//   B=build; I="-I$B/layer-include/core -I$B/layer-include/autograd -I$B/layer-include/nn"
//   clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined $I tests/nn/fuzz/safetensors_fuzzer.cpp \
//     nn/serialize.cpp $B/lib/libember_nn.a $B/lib/libember_autograd.a $B/lib/libember_core.a \
//     -lz -lpthread -o /tmp/safetensors_fuzzer
//   /tmp/safetensors_fuzzer -max_total_time=120 -max_len=512 CORPUS_DIR   # seed it with a few saved files
//
// The contract it checks: any input loads or throws ember::IOError (anything else
// escaping, a sanitizer report or a crash is a finding), and what loads saves and loads
// back with the same number of tensors.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <ember/nn/serialize.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const ember::nn::StateDict loaded = ember::load_from_bytes(std::string(reinterpret_cast<const char*>(data), size));
    const ember::nn::StateDict again = ember::load_from_bytes(ember::save_to_bytes(loaded));
    if (again.size() != loaded.size()) std::abort();
  } catch (const ember::IOError&) {
  }
  return 0;
}
