// tests/nn/test_serialize_fuzz.cpp — a bounded fuzz of the safetensors reader: thousands of
// random mutations of valid files, each of which must either load or throw an ember error
// (never crash, hang, or throw anything else). Run under the sanitizer build it also proves
// no mutation reads out of bounds or overflows.
//
// Two mutators, both driven by a fixed-seed engine so a failure reproduces:
//   bytes   flips, overwrites, inserts, deletes and truncates raw bytes (mostly breaks the
//           JSON, exercising the framing checks);
//   fields  parses the header and rewrites one field with an "interesting" value (sizes
//           near 2^31, 2^32, 2^62, 2^63, 2^64, negative, fractional, wrong types, swapped
//           offsets, unknown dtypes), then re-frames it — this reaches the size and offset
//           checks that a random byte flip rarely gets past the JSON parser to.
// A file that does load is saved again and must load back equal: the reader never
// accepts something the writer would describe differently.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using OrderedJson = nlohmann::ordered_json;

namespace {

nn::StateDict seed_tensors() {
  nn::StateDict tensors;
  tensors.insert("weight", ember::tensor({{1.5, -2.0, 3.25}, {0.0, 4.0, -1.0}}));
  tensors.insert("steps", ember::tensor({1, 2, 3}));
  tensors.insert("flags", ember::tensor({true, false}));
  tensors.insert("scalar", ember::tensor(2.5, kFloat64));
  tensors.insert("empty", ember::zeros({0, 4}));
  return tensors;
}

std::string frame(const std::string& header, const std::string& data) {
  std::string bytes;
  const std::uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  return bytes + header + data;
}

// Splits a valid file into its header text and data section.
void split(const std::string& file, std::string& header, std::string& data) {
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= static_cast<std::uint64_t>(static_cast<unsigned char>(file[i])) << (8 * i);
  header = file.substr(8, length);
  data = file.substr(8 + length);
}

std::string mutate_bytes(std::string bytes, std::mt19937_64& engine) {
  static const char kInteresting[] = {'\0', '\xff', '{', '}', '[', ']', '"', ',', ':', '-', '0', '9', ' ', '\x7f'};
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(engine); };
  const int edits = 1 + static_cast<int>(pick(4));
  for (int e = 0; e < edits && !bytes.empty(); ++e) {
    const std::size_t at = pick(bytes.size());
    switch (pick(6)) {
      case 0: bytes[at] = static_cast<char>(bytes[at] ^ (1 << pick(8))); break;
      case 1: bytes[at] = kInteresting[pick(sizeof kInteresting)]; break;
      case 2: bytes.insert(at, 1, kInteresting[pick(sizeof kInteresting)]); break;
      case 3: bytes.erase(at, 1 + pick(8)); break;
      case 4: bytes.resize(at); break;
      default:  // rewrite one byte of the length prefix
        bytes[pick(std::min<std::size_t>(8, bytes.size()))] = static_cast<char>(pick(256));
    }
  }
  return bytes;
}

OrderedJson interesting_value(std::mt19937_64& engine) {
  static const std::vector<OrderedJson> kValues = {
      0, 1, 2, 7, 8, 255, 2147483648ULL, 4294967296ULL, 4611686018427387904ULL, 2305843009213693952ULL,
      9223372036854775807ULL, 9223372036854775808ULL, 18446744073709551615ULL, -1, -9223372036854775807LL - 1, 1.5,
      1e30, "8", nullptr, true, OrderedJson::array(), OrderedJson::object(), OrderedJson::array({1, 2, 3})};
  return kValues[std::uniform_int_distribution<std::size_t>(0, kValues.size() - 1)(engine)];
}

std::string mutate_fields(const std::string& file, std::mt19937_64& engine) {
  std::string header_text, data;
  split(file, header_text, data);
  OrderedJson header = OrderedJson::parse(header_text);
  std::vector<std::string> names;
  for (const auto& item : header.items())
    if (item.key() != "__metadata__") names.push_back(item.key());
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(engine); };
  OrderedJson& info = header[names[pick(names.size())]];
  switch (pick(7)) {
    case 0: {  // one shape entry (or append one)
      auto& shape = info["shape"];
      if (shape.empty() || pick(3) == 0) shape.push_back(interesting_value(engine));
      else shape[pick(shape.size())] = interesting_value(engine);
      break;
    }
    case 1: info["data_offsets"][pick(2)] = interesting_value(engine); break;
    case 2: std::swap(info["data_offsets"][0], info["data_offsets"][1]); break;
    case 3: {
      static const char* const kDtypes[] = {"F32", "F64", "U8", "BOOL", "I64", "I32", "F16", "BF16", "C64", "X", ""};
      info["dtype"] = kDtypes[pick(std::size(kDtypes))];
      break;
    }
    case 4: info[pick(2) ? "shape" : "data_offsets"] = interesting_value(engine); break;
    case 5: {  // a huge shape whose byte count wraps, with offsets that match the wrap
      info["shape"] = OrderedJson::array({interesting_value(engine), interesting_value(engine)});
      break;
    }
    default: header["__metadata__"] = OrderedJson::object({{"k", interesting_value(engine)}});
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string result = frame(text, data);
  if (pick(4) == 0) result = mutate_bytes(result, engine);  // sometimes both
  return result;
}

// Loads `bytes`; true if it loaded. Anything thrown that is not an ember::Error fails.
bool load_or_reject(const std::string& bytes) {
  try {
    nn::StateDict loaded = load_from_bytes(bytes, nullptr, "fuzz.safetensors");
    // Accepted input: the writer's description of it must read back to the same tensors.
    nn::StateDict again = load_from_bytes(save_to_bytes(loaded), nullptr, "fuzz-again.safetensors");
    REQUIRE(again.size() == loaded.size());
    for (const auto& [name, tensor] : loaded) {
      REQUIRE(again.at(name).sizes() == tensor.sizes());
      REQUIRE(again.at(name).equal(tensor));
    }
    return true;
  } catch (const ember::IOError&) {
    return false;
  }
  // Any other exception escapes and fails the test (and a crash fails the process).
}

}  // namespace

TEST_CASE("fuzz: mutated safetensors files load or raise IOError, never crash", "[nn][serialize][fuzz]") {
  const std::string valid = save_to_bytes(seed_tensors(), {{"format", "pt"}});
  REQUIRE(load_or_reject(valid));
  std::mt19937_64 engine(20240611);
  int loaded = 0, rejected = 0;
  constexpr int kIterations = 4000;  // bounded: about a second in the sanitizer build
  for (int i = 0; i < kIterations; ++i) {
    const bool structured = i % 2 == 0;
    const std::string input = structured ? mutate_fields(valid, engine) : mutate_bytes(valid, engine);
    INFO("iteration " << i << (structured ? " (fields)" : " (bytes)"));
    (load_or_reject(input) ? loaded : rejected) += 1;
  }
  // Both outcomes occur, so the mutations reach past the framing checks and the reader
  // is not simply rejecting everything.
  REQUIRE(loaded > 0);
  REQUIRE(rejected > kIterations / 2);
}
