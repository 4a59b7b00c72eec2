// nn/serialize.cpp — the safetensors reader and writer (see serialize.h).
//
// Reading is defensive: a checkpoint may come from anywhere, so before any tensor is
// built the header is checked the way the reference implementation (Rust `safetensors`)
// checks it — size limit, JSON shape, known dtypes, offsets that tile the data buffer
// exactly with nothing left over. Each failure names the file and the tensor.
#include <ember/nn/serialize.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <ember/core/native.h>
#include <ember/nn/atomic_file.h>

namespace ember {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian data; this reader copies bytes as they are");

namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit

// ember dtype <-> safetensors dtype string.
std::string safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "BOOL";
    case DType::UInt8: return "U8";
    case DType::Int32: return "I32";
    case DType::Int64: return "I64";
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Float16: return "F16";
    case DType::BFloat16: return "BF16";
  }
  throw DTypeError("safetensors: unsupported dtype " + dtype_name(dtype));
}

// The dtypes the format defines; ember can hold only some of them.
bool is_known_safetensors_dtype(const std::string& name) {
  static const char* const kKnown[] = {"BOOL", "U8",  "I8",   "I16",      "U16",      "F16",  "BF16", "I32",
                                       "U32",  "F32", "F64",  "I64",      "U64",      "F8_E4M3", "F8_E5M2",
                                       "C64",  "F4",  "F6_E2M3", "F6_E3M2", "E8M0", "F8_E8M0"};
  for (const char* known : kKnown)
    if (name == known) return true;
  return false;
}

std::optional<DType> ember_dtype(const std::string& name) {
  if (name == "BOOL") return DType::Bool;
  if (name == "U8") return DType::UInt8;
  if (name == "I32") return DType::Int32;
  if (name == "I64") return DType::Int64;
  if (name == "F32") return DType::Float32;
  if (name == "F64") return DType::Float64;
  if (name == "F16") return DType::Float16;
  if (name == "BF16") return DType::BFloat16;
  return std::nullopt;
}

// result = a * b if that is at most `limit`; false (result untouched) otherwise.
bool checked_multiply(std::uint64_t a, std::uint64_t b, std::uint64_t limit, std::uint64_t& result) {
  if (b != 0 && a > limit / b) return false;
  result = a * b;
  return true;
}

[[noreturn]] void fail(const std::string& source, const std::string& problem) {
  throw IOError("safetensors file " + source + ": " + problem);
}

// Everything ember::load needs about one tensor, taken from the header and checked.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  std::uint64_t begin;
  std::uint64_t end;
};

std::vector<Entry> parse_header(const std::string& header_text, std::uint64_t data_size, const std::string& source,
                                Metadata* metadata) {
  OrderedJson header;
  try {
    header = OrderedJson::parse(header_text);
  } catch (const std::exception& error) {
    fail(source, std::string("header is not valid JSON (") + error.what() + ")");
  }
  if (!header.is_object()) fail(source, "header is not a JSON object");

  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) fail(source, "__metadata__ is not a JSON object of strings");
      for (const auto& [key, value] : info.items()) {
        if (!value.is_string()) fail(source, "__metadata__ value of \"" + key + "\" is not a string");
        if (metadata) (*metadata)[key] = value.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor \"" + name + "\"";
    if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets"))
      fail(source, where + " needs \"dtype\", \"shape\" and \"data_offsets\"");
    if (!info["dtype"].is_string()) fail(source, where + " has a dtype that is not a string");
    const std::string dtype_text = info["dtype"].get<std::string>();
    if (!is_known_safetensors_dtype(dtype_text)) fail(source, where + " has unknown dtype \"" + dtype_text + "\"");
    const auto dtype = ember_dtype(dtype_text);
    if (!dtype) fail(source, where + " has dtype " + dtype_text + ", which ember does not support");

    Entry entry{name, *dtype, {}, 0, 0};
    if (!info["shape"].is_array()) fail(source, where + " has a shape that is not a list");
    // Every size must fit ember's int64 sizes, and the element count and the byte count
    // are multiplied with overflow checks (the reference implementation's checked_mul):
    // an unchecked product can wrap to a small number that matches tiny data_offsets,
    // and the tensor built from the huge shape would then be read out of bounds.
    // `span`, the product of max(size, 1), bounds every stride ember computes for the
    // shape, so it must fit int64 even when a zero size makes the tensor empty.
    std::uint64_t span = 1;
    bool has_zero_size = false;
    for (const auto& size : info["shape"]) {
      if (!size.is_number_unsigned()) fail(source, where + " has a shape entry that is not a non-negative integer");
      const std::uint64_t value = size.get<std::uint64_t>();
      if (value > static_cast<std::uint64_t>(INT64_MAX))
        fail(source, where + " has shape entry " + std::to_string(value) + ", larger than the largest size (INT64_MAX)");
      if (value == 0) has_zero_size = true;
      if (!checked_multiply(span, std::max<std::uint64_t>(value, 1), static_cast<std::uint64_t>(INT64_MAX), span))
        fail(source, where + " has shape " + info["shape"].dump() + " whose number of elements overflows int64");
      entry.shape.push_back(static_cast<std::int64_t>(value));
    }
    const std::uint64_t numel = has_zero_size ? 0 : span;
    std::uint64_t nbytes = 0;
    if (!checked_multiply(numel, itemsize(entry.dtype), UINT64_MAX, nbytes))
      fail(source, where + " has shape " + info["shape"].dump() + " whose size in bytes overflows 64 bits");
    const auto& offsets = info["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      fail(source, where + " needs data_offsets [begin, end] of two non-negative integers");
    entry.begin = offsets[0].get<std::uint64_t>();
    entry.end = offsets[1].get<std::uint64_t>();
    if (entry.end < entry.begin) fail(source, where + " has data_offsets that end before they begin");
    if (nbytes != entry.end - entry.begin)
      fail(source, where + " has " + std::to_string(entry.end - entry.begin) + " bytes but its shape and dtype need " +
                       std::to_string(nbytes));
    entries.push_back(std::move(entry));
  }

  // The tensors must tile the data buffer: sorted by offset, each starts where the
  // previous one ended, and the last one ends exactly at the end of the file.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t expected_begin = 0;
  for (const auto& entry : entries) {
    if (entry.begin != expected_begin)
      fail(source, "tensor \"" + entry.name + "\" has data_offsets that " +
                       (entry.begin < expected_begin ? "overlap the previous tensor" : "leave a gap before it"));
    if (entry.end > data_size) fail(source, "tensor \"" + entry.name + "\" runs past the end of the file (truncated?)");
    expected_begin = entry.end;
  }
  if (expected_begin != data_size)
    fail(source, std::to_string(data_size - expected_begin) + " bytes after the last tensor belong to no tensor");
  return entries;
}

// The header is JSON, which holds only UTF-8 text: nlohmann's dump() would throw its own
// type_error at the first bad byte (found by tests/fuzz/checkpoint_fuzzer.cpp).
void check_utf8(const std::string& text, const std::string& what) {
  try {
    (void)OrderedJson(text).dump();
  } catch (const OrderedJson::type_error&) {
    throw ValueError("safetensors: " + what + " is not valid UTF-8 text");
  }
}

}  // namespace

std::string save_to_bytes(const nn::StateDict& tensors, const Metadata& metadata) {
  OrderedJson header = OrderedJson::object();
  if (!metadata.empty()) {
    OrderedJson meta = OrderedJson::object();
    for (const auto& [key, value] : metadata) {
      check_utf8(key, "a metadata key");
      check_utf8(value, "the metadata value of \"" + key + "\"");
      meta[key] = value;
    }
    header["__metadata__"] = meta;
  }
  std::vector<Tensor> contiguous;
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    EMBER_CHECK(name != "__metadata__", ValueError, "safetensors: \"__metadata__\" cannot be a tensor name");
    EMBER_CHECK(tensor.defined(), ValueError, "safetensors: tensor \"", name, "\" is undefined");
    check_utf8(name, "the tensor name \"" + name + "\"");
    // Bytes on disk are row-major on the CPU, whatever the tensor's strides or device.
    Tensor data = native::contiguous(native::to_device(tensor, kCPU));
    const std::uint64_t nbytes = static_cast<std::uint64_t>(data.numel()) * data.element_size();
    header[name] = {{"dtype", safetensors_dtype(data.dtype())}, {"shape", data.sizes()},
                    {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    contiguous.push_back(data);
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');  // pad so the data is 8-byte aligned

  std::string bytes;
  bytes.reserve(8 + header_text.size() + offset);
  const std::uint64_t header_size = header_text.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((header_size >> (8 * i)) & 0xFF));
  bytes += header_text;
  for (const auto& data : contiguous)
    bytes.append(static_cast<const char*>(data.data_ptr()), static_cast<std::size_t>(data.numel()) * data.element_size());
  return bytes;
}

nn::StateDict load_from_bytes(const std::string& bytes, Metadata* metadata, const std::string& source) {
  if (bytes.size() < 8) fail(source, "file is " + std::to_string(bytes.size()) + " bytes, too short for a header");
  std::uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (header_size > kMaxHeaderBytes)
    fail(source, "header of " + std::to_string(header_size) + " bytes is larger than the 100 MB limit");
  if (header_size > bytes.size() - 8)
    fail(source, "header length " + std::to_string(header_size) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes)");
  const std::string header_text = bytes.substr(8, header_size);
  if (header_text.empty() || header_text[0] != '{') fail(source, "header is not a JSON object");
  const std::uint64_t data_start = 8 + header_size;
  const std::uint64_t data_size = bytes.size() - data_start;

  Metadata parsed_metadata;
  std::vector<Entry> entries = parse_header(header_text, data_size, source, &parsed_metadata);
  if (metadata) *metadata = parsed_metadata;

  nn::StateDict result;
  for (const auto& entry : entries) {
    Tensor tensor = empty(entry.shape, TensorOptions(entry.dtype));
    if (entry.end > entry.begin)
      std::memcpy(tensor.data_ptr(), bytes.data() + data_start + entry.begin, entry.end - entry.begin);
    if (entry.dtype == DType::Bool) {
      // A C++ bool must hold 0 or 1 (anything else is undefined behaviour to read), but a
      // BOOL byte in a file may be any value; numpy reads nonzero as True, and so does ember.
      auto* flags = static_cast<unsigned char*>(tensor.data_ptr());
      for (std::uint64_t i = 0; i < entry.end - entry.begin; ++i) flags[i] = flags[i] != 0 ? 1 : 0;
    }
    result.insert(entry.name, tensor);
  }
  return result;
}

void save(const nn::StateDict& tensors, const std::string& path, const Metadata& metadata) {
  // Atomic replace through symlinks, refusing device nodes and FIFOs (atomic_file.h).
  write_file_atomically(path, save_to_bytes(tensors, metadata));
}

nn::StateDict load(const std::string& path, Metadata* metadata) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw IOError("cannot open safetensors file " + path + ": " + std::strerror(errno));
  std::ostringstream contents;
  contents << file.rdbuf();
  return load_from_bytes(contents.str(), metadata, path);
}

}  // namespace ember
