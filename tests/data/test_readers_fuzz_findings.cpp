// tests/data/test_readers_fuzz_findings.cpp — inputs that the libFuzzer harnesses of
// tests/fuzz/ (idx_fuzzer, idx_gzip_fuzzer, csv_fuzzer) found to break the IDX or CSV
// readers, each kept as a regression test. Most failed only as sanitizer reports (undefined
// behaviour that happens to work in an ordinary build), so they matter most in
// `make test-sanitize`, which CI runs.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <ember/ember.h>

using namespace ember;

namespace {

// Writes `bytes` to a file of its own under /tmp and removes it at the end of the test.
class FileWith {
 public:
  FileWith(const std::string& name, const std::string& bytes)
      : path_("/tmp/ember-test-" + std::to_string(::getpid()) + "-" + name) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~FileWith() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

TEST_CASE("read_idx loads a file with a zero size as an empty tensor", "[data][idx][fuzz]") {
  // idx_fuzzer: [0, 28, 28] of u8 (header only). The reader used to memcpy zero bytes into
  // the empty tensor's null buffer (UBSan: "null pointer passed as argument 1").
  const std::string header = {0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0, 28};
  FileWith file("zero-size-idx", header);
  Tensor loaded = data::read_idx(file.path());
  REQUIRE(loaded.dtype() == kUInt8);
  REQUIRE(loaded.sizes() == Shape{0, 28, 28});
  REQUIRE(loaded.numel() == 0);
  // The same for a wider type, which goes through the big-endian decoder.
  FileWith floats("zero-size-float-idx", std::string{0, 0, 0x0D, 2, 0, 0, 0, 3, 0, 0, 0, 0});
  REQUIRE(data::read_idx(floats.path()).sizes() == Shape{3, 0});
}

TEST_CASE("read_idx refuses sizes too large for a tensor even when one is zero", "[data][idx][fuzz]") {
  // idx_fuzzer: [0, 2^32-1, 2^32-1, 2^32-1] promises no data, so the truncation check
  // passed, and the empty tensor's row-major strides overflowed int64 (UBSan: "signed
  // integer overflow" in contiguous_strides).
  std::string header = {0, 0, 8, 4, 0, 0, 0, 0};
  for (int d = 0; d < 3; ++d) header += std::string(4, '\xFF');
  FileWith file("huge-empty-idx", header);
  REQUIRE_THROWS_AS(data::read_idx(file.path()), IOError);
  REQUIRE_THROWS_WITH(data::read_idx(file.path()),
                      Catch::Matchers::Contains("huge-empty-idx") &&
                          Catch::Matchers::Contains("the sizes [0, 4294967295, 4294967295]... are too large"));
  // Large but sane sizes around a zero still load.
  std::string sane = {0, 0, 8, 3, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0};
  FileWith sane_file("large-empty-idx", sane);
  REQUIRE(data::read_idx(sane_file.path()).sizes() == Shape{0, 65536, 65536});
}
