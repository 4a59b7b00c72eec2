// apps/cli/tensorboard_record.cpp — CRC32C and TFRecord framing (see tensorboard_record.h).
#include "tensorboard_record.h"

#include <ember/core/error.h>

#if EMBER_HAVE_TENSORBOARD
#include <boost/crc.hpp>
#endif

namespace ember::cli {

namespace {
void append_little_endian(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}
}  // namespace

bool tensorboard_available() {
#if EMBER_HAVE_TENSORBOARD
  return true;
#else
  return false;
#endif
}

std::string tensorboard_unavailable() {
  return "ember was built without libprotobuf and Boost (needed for --tensorboard): install libprotobuf-dev "
         "protobuf-compiler libboost-dev and rebuild";
}

std::uint32_t crc32c(std::string_view bytes) {
#if EMBER_HAVE_TENSORBOARD
  // Castagnoli: reflected input and output, all-ones initial value and final xor.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
#else
  (void)bytes;
  throw NotImplementedError(tensorboard_unavailable());
#endif
}

std::uint32_t masked_crc32c(std::string_view bytes) {
  const std::uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;  // wraps modulo 2^32, as TFRecord's mask does
}

std::string tfrecord_frame(std::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  append_little_endian(record, data.size(), 8);
  append_little_endian(record, masked_crc32c(record), 4);  // the CRC of the 8 length bytes
  record.append(data);
  append_little_endian(record, masked_crc32c(data), 4);
  return record;
}

}  // namespace ember::cli
