// tests/fuzz/idx_fuzzer.cpp — libFuzzer harness for the IDX reader (data/idx_reader.cpp):
// the input is a whole IDX file, plain or gzipped (the reader inflates whatever starts with
// gzip's magic bytes; the seed corpus has both). idx_gzip_fuzzer.cpp drives the gzip path
// with well-formed streams around fuzzed IDX bytes.
//
// Contract: any input loads or throws ember::IOError; what loads is self-consistent:
// numel is the product of the sizes, and for a plain file the header plus numel values
// of the type code's width is exactly the file's size and the values are the file's bytes.
// A file that loads with 2 or more dimensions is also read as the images of a dataset
// (read_idx_dataset) with a labels file of matching length, which must load or throw
// IOError, and when it loads hold size(0) examples with pixels in [0, 1].
#include <cstdint>
#include <cstring>
#include <string>

#include <ember/core/factories.h>
#include <ember/data/idx_reader.h>

#include "fuzz_support.h"

using ember::fuzz::finding;

namespace {

std::size_t element_bytes(std::uint8_t type_code) {
  switch (type_code) {
    case 0x08: case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C: case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

void check_plain_file(const ember::Tensor& loaded, const std::uint8_t* data, std::size_t size) {
  const std::size_t ndim = data[3];
  const std::size_t width = element_bytes(data[2]);
  if (width == 0) finding("a file with an unknown type code loaded");
  if (static_cast<std::size_t>(loaded.dim()) != ndim) finding("loaded with another number of dimensions than the header's");
  for (std::size_t d = 0; d < ndim; ++d) {
    const std::uint32_t header_size = (std::uint32_t{data[4 + 4 * d]} << 24) | (std::uint32_t{data[5 + 4 * d]} << 16) |
                                      (std::uint32_t{data[6 + 4 * d]} << 8) | data[7 + 4 * d];
    if (loaded.size(static_cast<std::int64_t>(d)) != header_size) finding("a size differs from the header's");
  }
  const std::size_t header = 4 + 4 * ndim;
  if (header + static_cast<std::size_t>(loaded.numel()) * width != size)
    finding("header + numel * width is not the file's size");
  if (data[2] == 0x08 && loaded.numel() > 0 &&
      std::memcmp(loaded.data_ptr(), data + header, static_cast<std::size_t>(loaded.numel())) != 0)
    finding("unsigned byte values differ from the file's bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ember::fuzz::ScratchFile file("idx"), labels_file("idx-labels");
  const std::string& path = file.write(data, size);
  ember::Tensor loaded;
  try {
    loaded = ember::data::read_idx(path);
  } catch (const ember::IOError&) {
    return 0;
  } catch (...) {
    ember::fuzz::unexpected_exception();
  }
  if (ember::compute_numel(loaded.sizes()) != loaded.numel() || !loaded.is_contiguous())
    finding("loaded with an inconsistent layout");
  const bool gzipped = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (!gzipped) check_plain_file(loaded, data, size);

  if (loaded.dim() < 2 || loaded.size(0) > 4096) return 0;
  // A labels file of the same length: [0 0 8 1][count][count bytes].
  const auto count = static_cast<std::uint32_t>(loaded.size(0));
  std::string labels = {0, 0, 8, 1, static_cast<char>(count >> 24), static_cast<char>(count >> 16),
                        static_cast<char>(count >> 8), static_cast<char>(count)};
  for (std::uint32_t i = 0; i < count; ++i) labels.push_back(static_cast<char>(i % 10));
  labels_file.write(labels);
  try {
    ember::data::TensorDataset dataset = ember::data::read_idx_dataset(path, labels_file.path());
    if (dataset.size() != loaded.size(0)) finding("the dataset's size is not the images' count");
    if (dataset.size() > 0) {
      const ember::Tensor first = dataset.get(0).data;
      const float* pixels = first.data_ptr<float>();
      for (std::int64_t i = 0; i < first.numel(); ++i)
        if (!(pixels[i] >= 0.0f && pixels[i] <= 1.0f)) finding("a pixel outside [0, 1]");
    }
  } catch (const ember::IOError&) {
  } catch (...) {
    ember::fuzz::unexpected_exception();
  }
  return 0;
}
