// apps/cli/tensorboard_record.h — TFRecord framing, the container of TensorBoard event files.
//
// An event file is a sequence of records, each
//   uint64 length (little-endian) | uint32 masked CRC32C of those 8 bytes |
//   length bytes of data (one serialized Event) | uint32 masked CRC32C of the data
// CRC32C is the Castagnoli CRC (polynomial 0x1EDC6F41, reflected, init and final xor
// 0xFFFFFFFF; CRC32C("123456789") = 0xE3069283), computed by Boost.CRC. TFRecord stores it
// "masked" — rotated right by 15 bits plus 0xA282EAD8 — because a CRC of data that itself
// holds CRCs is weak. TensorBoard's reader checks both checksums of every record.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ember::cli {

// Whether this build has Boost.CRC and libprotobuf (cli_curves.cmake); when not, the
// functions below throw the message of tensorboard_unavailable().
bool tensorboard_available();
std::string tensorboard_unavailable();

std::uint32_t crc32c(std::string_view bytes);
std::uint32_t masked_crc32c(std::string_view bytes);
// One record holding `data`, ready to append to an event file.
std::string tfrecord_frame(std::string_view data);

}  // namespace ember::cli
