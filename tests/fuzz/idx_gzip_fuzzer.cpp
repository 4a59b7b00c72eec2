// tests/fuzz/idx_gzip_fuzzer.cpp — libFuzzer harness for the gzip path of the IDX reader
// (data/idx_reader.cpp). Random bytes rarely get past gzip's CRC, so this harness makes
// the stream itself: input byte 0 is a mode, the rest is an IDX file, which the harness
// gzips (zlib, level from the mode) and writes as NAME.gz.
//   mode bit 0 clear: the whole stream. The reader must agree exactly with reading the
//                     same bytes uncompressed: both throw IOError, or both load equal tensors.
//   mode bit 0 set:   the stream cut short by 1 + (mode >> 1) bytes (the gzip trailer is 8
//                     bytes, so anything from a lost CRC to lost data). A truncated stream
//                     must never load: IOError.
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include <ember/data/idx_reader.h>

#include "fuzz_support.h"

using ember::fuzz::finding;

namespace {

std::string gzip(const std::uint8_t* data, std::size_t size, int level) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) finding("deflateInit2 failed");
  std::string out(deflateBound(&stream, size), '\0');
  stream.next_in = const_cast<Bytef*>(data);
  stream.avail_in = static_cast<uInt>(size);
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END) finding("deflate did not finish");
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// The loaded tensor, or nothing when the reader threw IOError.
std::optional<ember::Tensor> read(const std::string& path) {
  return ember::fuzz::load_or_ioerror([&] { return ember::data::read_idx(path); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ember::fuzz::ScratchFile gz_file("idx.gz"), plain_file("idx-plain");
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  const std::uint8_t* idx = data + 1;
  const std::size_t idx_size = size - 1;
  std::string stream = gzip(idx, idx_size, (mode >> 1) % 10);

  if (mode & 1) {
    const std::size_t cut = 1 + (mode >> 1);
    stream.resize(stream.size() > cut ? stream.size() - cut : 0);
    if (read(gz_file.write(stream)).has_value()) finding("a truncated gzip stream loaded");
    return 0;
  }
  const std::optional<ember::Tensor> from_gzip = read(gz_file.write(stream));
  const std::optional<ember::Tensor> from_plain = read(plain_file.write(idx, idx_size));
  if (from_gzip.has_value() != from_plain.has_value())
    finding(std::string("the gzipped file ") + (from_gzip ? "loads" : "fails") + " but the plain one " +
            (from_plain ? "loads" : "fails"));
  if (from_gzip && (from_gzip->sizes() != from_plain->sizes() || from_gzip->dtype() != from_plain->dtype() ||
                    (from_gzip->numel() > 0 &&  // an empty tensor's data_ptr() is null
                     std::memcmp(from_gzip->data_ptr(), from_plain->data_ptr(),
                                 static_cast<std::size_t>(from_gzip->numel()) * from_gzip->element_size()) != 0)))
    finding("the gzipped file loads other values than the plain one");
  return 0;
}
