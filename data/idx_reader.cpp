// data/idx_reader.cpp — the IDX reader (see idx_reader.h).
//
// The whole file is read into memory first (through zlib's gzread, which also reads
// uncompressed files transparently), then parsed: a 60000-image Fashion-MNIST file is
// 47 MB, small enough, and parsing a byte buffer keeps the checks simple.
#include <ember/data/idx_reader.h>

#include <zlib.h>

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

std::string read_all(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) fail(path, "cannot open it (" + std::string(std::strerror(errno)) + ")");
  std::string bytes;
  std::vector<char> buffer(1 << 16);
  while (true) {
    const int n = gzread(file, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) {
      int code = 0;
      const std::string message = gzerror(file, &code);
      gzclose(file);
      fail(path, "cannot decompress it (" + message + ")");
    }
    if (n == 0) break;
    bytes.append(buffer.data(), static_cast<std::size_t>(n));
  }
  // A gzip stream cut short reads as a silent end of data with some zlib versions:
  // gzclose_r reports the truncation.
  const int close_status = gzclose(file);
  if (close_status != Z_OK && close_status != Z_BUF_ERROR) fail(path, "cannot read it to the end (corrupt gzip data)");
  if (close_status == Z_BUF_ERROR) fail(path, "the gzip stream is truncated");
  return bytes;
}

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
  const std::string bytes = read_all(path);
  if (bytes.size() < 4) fail(path, "file is " + std::to_string(bytes.size()) + " bytes, too short for the IDX magic");
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
  if (bytes.size() < header_bytes) fail(path, "truncated: the file ends inside the dimension sizes");
  Shape sizes;
  std::uint64_t count = 1;
  // The product of the non-zero sizes: with a zero size there is no data to check the
  // others against, yet [0, 2^32-1, 2^32-1, 2^32-1] would overflow the tensor's strides.
  std::uint64_t extent = 1;
  constexpr std::uint64_t kMaxExtent = std::uint64_t{1} << 48;
  for (int d = 0; d < ndim; ++d) {
    const std::uint32_t size = big_endian_u32(bytes, 4 + 4 * static_cast<std::size_t>(d));
    sizes.push_back(size);
    count *= size;
    if (count > bytes.size()) fail(path, "truncated: the sizes " + shape_to_string(sizes) + "... need more data than the file has");
    if (size != 0 && extent > kMaxExtent / size) fail(path, "the sizes " + shape_to_string(sizes) + "... are too large");
    if (size != 0) extent *= size;
  }
  const std::uint64_t data_bytes = count * element_bytes;
  const std::uint64_t available = bytes.size() - header_bytes;
  if (available < data_bytes)
    fail(path, "truncated: sizes " + shape_to_string(sizes) + " need " + std::to_string(data_bytes) +
                   " bytes of data but the file has " + std::to_string(available));
  if (available > data_bytes)
    fail(path, std::to_string(available - data_bytes) + " bytes left over after the data for sizes " +
                   shape_to_string(sizes));

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

TensorDataset read_idx_dataset(const std::string& images_path, const std::string& labels_path) {
  Tensor images = read_idx(images_path);
  Tensor labels = read_idx(labels_path);
  if (images.dim() < 2) fail(images_path, "images need at least 2 dimensions, got " + shape_to_string(images.sizes()));
  if (labels.dim() != 1) fail(labels_path, "labels need 1 dimension, got " + shape_to_string(labels.sizes()));
  if (images.size(0) != labels.size(0))
    fail(labels_path, "count mismatch: " + std::to_string(labels.size(0)) + " labels but " + images_path + " has " +
                          std::to_string(images.size(0)) + " images");
  // Pixels 0..255 -> float32 in [0, 1]; labels -> int64 class indices. Done element by
  // element here because the data layer sits below autograd's tensor arithmetic.
  Tensor scaled = ember::empty(images.sizes(), TensorOptions(kFloat32));
  Tensor classes = ember::empty(labels.sizes(), TensorOptions(kInt64));
  float* pixels = scaled.data_ptr<float>();
  const std::int64_t pixel_count = images.numel();
  if (images.dtype() == kUInt8) {
    const std::uint8_t* raw = images.data_ptr<std::uint8_t>();
    for (std::int64_t i = 0; i < pixel_count; ++i) pixels[i] = static_cast<float>(raw[i]) / 255.0f;
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
