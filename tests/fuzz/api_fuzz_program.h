// tests/fuzz/api_fuzz_program.h — the pieces api_fuzzer.cpp builds its programs from: a
// reader that turns the fuzzer's bytes into bounded choices, a trace of the C++ calls made
// (so a finding comes with its reproducer), and the contract every returned tensor must meet.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <ember/core/tensor.h>

#include "fuzz_support.h"

namespace ember::fuzz {

// Choices drawn from the input bytes; once they run out every choice is its lowest value,
// so any input is a complete, deterministic program.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return position_ >= size_; }
  std::uint8_t byte() { return empty() ? 0 : data_[position_++]; }
  // A value in [low, high] (high - low < 2^16); low when high < low.
  std::int64_t in(std::int64_t low, std::int64_t high) {
    if (high <= low) return low;
    const std::uint64_t span = static_cast<std::uint64_t>(high - low) + 1;
    std::uint64_t raw = byte();
    if (span > 256) raw = (raw << 8) | byte();
    return low + static_cast<std::int64_t>(raw % span);
  }
  bool flag() { return byte() & 1; }
  template <class T, std::size_t N>
  const T& one_of(const T (&choices)[N]) { return choices[in(0, static_cast<std::int64_t>(N) - 1)]; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t position_ = 0;
};

// The program as C++ source, one statement per call. With EMBER_FUZZ_TRACE=1 in the
// environment each statement is printed before it runs, so the last one printed before a
// crash is the call that crashed:  EMBER_FUZZ_TRACE=1 build-sanitize/bin/api_fuzzer CRASH_FILE
class Trace {
 public:
  Trace() : enabled_(std::getenv("EMBER_FUZZ_TRACE") != nullptr) {}
  template <class... Parts>
  void line(const Parts&... parts) {
    std::ostringstream out;
    (out << ... << parts);
    last_ = out.str();
    if (enabled_) std::fprintf(stderr, "  %s\n", last_.c_str());
  }
  void note(const std::string& what) const {
    if (enabled_) std::fprintf(stderr, "    // -> %s\n", what.c_str());
  }
  const std::string& last() const { return last_; }

 private:
  bool enabled_;
  std::string last_;
};

// Where check_tensor leaves what it read, so the compiler cannot skip the reads.
inline volatile unsigned checksum_sink = 0;

inline std::string list(const std::vector<std::int64_t>& values) {
  std::string text = "{";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "}";
}

inline std::string dtype_code(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "ember::kBool";
    case DType::UInt8: return "ember::kUInt8";
    case DType::Int32: return "ember::kInt32";
    case DType::Int64: return "ember::kInt64";
    case DType::Float32: return "ember::kFloat32";
    case DType::Float64: return "ember::kFloat64";
    case DType::Float16: return "ember::kFloat16";
    case DType::BFloat16: return "ember::kBFloat16";
  }
  return "?";
}

// The contract of every tensor an API call returns: sizes non-negative, numel() their
// product (computed here without overflow), one stride per dim, and every element inside
// its storage. Then every element is read through the strides (up to read_limit elements),
// so ASan sees any view that reaches outside its buffer.
inline void check_tensor(const Tensor& t, const Trace& trace, std::int64_t read_limit) {
  auto fail = [&](const std::string& what) { finding(what + " after: " + trace.last()); };
  if (!t.defined()) fail("an undefined tensor was returned");
  std::int64_t numel = 1;
  for (std::int64_t size : t.sizes()) {
    if (size < 0) fail("a negative size " + shape_to_string(t.sizes()));
    if (__builtin_mul_overflow(numel, size, &numel)) fail("sizes whose product overflows " + shape_to_string(t.sizes()));
  }
  if (t.numel() != numel) fail("numel() " + std::to_string(t.numel()) + " for sizes " + shape_to_string(t.sizes()));
  if (t.strides().size() != t.sizes().size()) fail("strides and sizes of different lengths");
  if (numel == 0 || numel > read_limit || !t.is_cpu()) return;
  std::int64_t lowest = t.storage_offset(), highest = t.storage_offset();
  for (std::size_t d = 0; d < t.sizes().size(); ++d) {
    const std::int64_t reach = (t.sizes()[d] - 1) * t.strides()[d];
    (reach < 0 ? lowest : highest) += reach;
  }
  const auto item = static_cast<std::int64_t>(t.element_size());
  const auto capacity = static_cast<std::int64_t>(t.storage()->nbytes()) / item;
  if (lowest < 0 || highest >= capacity)
    fail("a view reaching elements [" + std::to_string(lowest) + ", " + std::to_string(highest) +
         "] of a storage of " + std::to_string(capacity));
  // Read every element (bytes, so no value is itself undefined to load).
  const auto* base = static_cast<const unsigned char*>(t.storage()->data());
  std::vector<std::int64_t> index(t.sizes().size(), 0);
  unsigned checksum = 0;
  for (std::int64_t n = 0; n < numel; ++n) {
    std::int64_t offset = t.storage_offset();
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * t.strides()[d];
    for (std::int64_t b = 0; b < item; ++b) checksum += base[offset * item + b];
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < t.sizes()[d]) break;
      index[d] = 0;
    }
  }
  checksum_sink = checksum;
}

}  // namespace ember::fuzz
