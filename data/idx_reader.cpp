// data/idx_reader.cpp — the IDX reader (see idx_reader.h).
//
// The file is read through zlib's gzread (which also reads uncompressed files
// transparently): the header first, then exactly the bytes its sizes promise (computed with
// overflow checks), then one more read that must find nothing. So a gzip bomb inflates no
// further than the size its header claims, and trailing data is an error, not ignored.
#include <ember/data/idx_reader.h>

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <ember/core/factories.h>

namespace ember::data {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw IOError("IDX file " + path + ": " + problem);
}

// An open gzFile (zlib reads plain files transparently), closed on every path.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    if (file_ == nullptr) fail(path, "cannot open it (" + std::string(std::strerror(errno)) + ")");
  }
  ~GzReader() {
    if (file_ != nullptr) gzclose(file_);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Appends up to `count` bytes to `bytes`; returns how many were read (fewer: the end).
  std::uint64_t read(std::string& bytes, std::uint64_t count) {
    std::uint64_t total = 0;
    char buffer[1 << 16];
    while (total < count) {
      const auto want = static_cast<unsigned>(std::min<std::uint64_t>(sizeof buffer, count - total));
      const int n = gzread(file_, buffer, want);
      if (n < 0) {
        int code = 0;
        fail(path_, "cannot decompress it (" + std::string(gzerror(file_, &code)) + ")");
      }
      if (n == 0) break;
      bytes.append(buffer, static_cast<std::size_t>(n));
      total += static_cast<std::uint64_t>(n);
    }
    return total;
  }

  // Whether the file is plain (not gzip); known after the first read.
  bool plain() { return gzdirect(file_) == 1; }

  // A gzip stream cut short reads as a silent end of data with some zlib versions:
  // gzclose_r reports the truncation.
  void close() {
    const int status = gzclose(file_);
    file_ = nullptr;
    if (status == Z_BUF_ERROR) fail(path_, "the gzip stream is truncated");
    if (status != Z_OK) fail(path_, "cannot read it to the end (corrupt gzip data)");
  }

 private:
  std::string path_;
  gzFile file_;
};

std::uint32_t big_endian_u32(const std::string& bytes, std::size_t offset) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[offset + i]);
  return value;
}

// Copies `count` big-endian values of `width` bytes each, converting to Target.
template <class Target, class Source>
void decode(const char* data, std::int64_t count, Target* out) {
  for (std::int64_t i = 0; i < count; ++i) {
    unsigned char raw[sizeof(Source)];
    for (std::size_t b = 0; b < sizeof(Source); ++b)
      raw[b] = static_cast<unsigned char>(data[i * static_cast<std::int64_t>(sizeof(Source)) + sizeof(Source) - 1 - b]);
    Source value;
    std::memcpy(&value, raw, sizeof(Source));  // raw is now little-endian (host order)
    out[i] = static_cast<Target>(value);
  }
}

}  // namespace

Tensor read_idx(const std::string& path) {
  // The header first, then exactly the data it promises: a small gzip bomb (or a header
  // promising more than exists) never inflates beyond the promised size before it is refused.
  GzReader file(path);
  std::string bytes;
  if (file.read(bytes, 4) < 4) {
    fail(path, "file is " + std::to_string(bytes.size()) + " bytes, too short for the IDX magic");
  }
  if (bytes[0] != 0 || bytes[1] != 0)
    fail(path, "wrong magic number (the first two bytes must be zero; is this an IDX file?)");
  const auto type_code = static_cast<unsigned char>(bytes[2]);
  const int ndim = static_cast<unsigned char>(bytes[3]);
  std::size_t element_bytes = 0;
  DType dtype = kUInt8;
  switch (type_code) {
    case 0x08: element_bytes = 1; dtype = kUInt8; break;
    case 0x09: element_bytes = 1; dtype = kInt32; break;
    case 0x0B: element_bytes = 2; dtype = kInt32; break;
    case 0x0C: element_bytes = 4; dtype = kInt32; break;
    case 0x0D: element_bytes = 4; dtype = kFloat32; break;
    case 0x0E: element_bytes = 8; dtype = kFloat64; break;
    default: fail(path, "wrong magic number (unknown element type code " + std::to_string(type_code) + ")");
  }
  if (ndim == 0) fail(path, "wrong magic number (zero dimensions)");
  const std::size_t header_bytes = 4 + 4 * static_cast<std::size_t>(ndim);
  if (file.read(bytes, header_bytes - 4) < header_bytes - 4) fail(path, "truncated: the file ends inside the dimension sizes");
  Shape sizes;
  std::uint64_t count = 1;
  // An element count (and byte count) beyond what a tensor can hold is refused before
  // anything is read: the product is checked against the limit at every dimension.
  constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 62;
  // The product of the non-zero sizes: with a zero size there is no data to check the
  // others against, yet [0, 2^32-1, 2^32-1, 2^32-1] would overflow the tensor's strides.
  std::uint64_t extent = 1;
  constexpr std::uint64_t kMaxExtent = std::uint64_t{1} << 48;
  for (int d = 0; d < ndim; ++d) {
    const std::uint32_t size = big_endian_u32(bytes, 4 + 4 * static_cast<std::size_t>(d));
    sizes.push_back(size);
    if (size != 0 && count > kMaxBytes / element_bytes / size)
      fail(path, "the sizes " + shape_to_string(sizes) + "... promise more data than any file can hold");
    count *= size;
    if (size != 0 && extent > kMaxExtent / size) fail(path, "the sizes " + shape_to_string(sizes) + "... are too large");
    if (size != 0) extent *= size;
  }
  const std::uint64_t data_bytes = count * element_bytes;
  // Nor is a promise the file cannot keep read to its end: a plain file holds its size,
  // deflate inflates at most 1032 bytes per compressed byte.
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)) {
    const auto file_bytes = static_cast<std::uint64_t>(info.st_size);
    const std::uint64_t most = file.plain() ? file_bytes : file_bytes * 1032 + 1024;
    if (data_bytes > most)
      fail(path, "truncated: sizes " + shape_to_string(sizes) + " need " + std::to_string(data_bytes) +
                     " bytes of data but the " + (file.plain() ? "" : "gzipped ") + "file is only " +
                     std::to_string(file_bytes) + " bytes");
  }
  const std::uint64_t available = file.read(bytes, data_bytes);
  if (available < data_bytes)
    fail(path, "truncated: sizes " + shape_to_string(sizes) + " need " + std::to_string(data_bytes) +
                   " bytes of data but the file has " + std::to_string(available));
  std::string extra;
  const std::uint64_t left_over = file.read(extra, 1 << 16);
  if (left_over > 0)
    fail(path, (left_over < (1 << 16) ? std::to_string(left_over) : "more than 65536") +
                   " bytes left over after the data for sizes " + shape_to_string(sizes));
  file.close();

  Tensor result = ember::empty(sizes, TensorOptions(dtype));
  const char* data = bytes.data() + header_bytes;
  const auto n = static_cast<std::int64_t>(count);
  // An empty tensor (a zero size: [0, 28, 28]) has no buffer: its data_ptr() is null, and
  // memcpy from or to null is undefined even for zero bytes.
  if (count == 0) return result;
  switch (type_code) {
    case 0x08: std::memcpy(result.data_ptr(), data, static_cast<std::size_t>(count)); break;
    case 0x09: decode<std::int32_t, std::int8_t>(data, n, result.data_ptr<std::int32_t>()); break;
    case 0x0B: decode<std::int32_t, std::int16_t>(data, n, result.data_ptr<std::int32_t>()); break;
    case 0x0C: decode<std::int32_t, std::int32_t>(data, n, result.data_ptr<std::int32_t>()); break;
    case 0x0D: decode<float, float>(data, n, result.data_ptr<float>()); break;
    case 0x0E: decode<double, double>(data, n, result.data_ptr<double>()); break;
  }
  return result;
}

TensorDataset read_idx_dataset(const std::string& images_path, const std::string& labels_path, bool scale_to_unit) {
  Tensor images = read_idx(images_path);
  Tensor labels = read_idx(labels_path);
  if (images.dim() < 2) fail(images_path, "images need at least 2 dimensions, got " + shape_to_string(images.sizes()));
  if (labels.dim() != 1) fail(labels_path, "labels need 1 dimension, got " + shape_to_string(labels.sizes()));
  if (images.size(0) != labels.size(0))
    fail(labels_path, "count mismatch: " + std::to_string(labels.size(0)) + " labels but " + images_path + " has " +
                          std::to_string(images.size(0)) + " images");
  // Pixels 0..255 -> float32 in [0, 1] (or as they are); labels -> int64 class indices. Done element by
  // element here because the data layer sits below autograd's tensor arithmetic.
  Tensor scaled = ember::empty(images.sizes(), TensorOptions(kFloat32));
  Tensor classes = ember::empty(labels.sizes(), TensorOptions(kInt64));
  float* pixels = scaled.data_ptr<float>();
  const std::int64_t pixel_count = images.numel();
  if (images.dtype() == kUInt8) {
    const std::uint8_t* raw = images.data_ptr<std::uint8_t>();
    const float divisor = scale_to_unit ? 255.0f : 1.0f;
    for (std::int64_t i = 0; i < pixel_count; ++i) pixels[i] = static_cast<float>(raw[i]) / divisor;
  } else {
    fail(images_path, "images must be unsigned bytes (type code 0x08)");
  }
  std::int64_t* targets = classes.data_ptr<std::int64_t>();
  if (labels.dtype() == kUInt8) {
    const std::uint8_t* raw = labels.data_ptr<std::uint8_t>();
    for (std::int64_t i = 0; i < labels.numel(); ++i) targets[i] = raw[i];
  } else {
    fail(labels_path, "labels must be unsigned bytes (type code 0x08)");
  }
  return TensorDataset(scaled, classes);
}

}  // namespace ember::data
