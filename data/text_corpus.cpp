// data/text_corpus.cpp — UTF-8 decoding, the character vocabulary and the train/val split
// (see text_corpus.h).
#include <ember/data/text_corpus.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <ember/core/error.h>
#include <ember/core/factories.h>

namespace ember::data {

namespace {

[[noreturn]] void invalid_utf8(const std::string& what, std::size_t offset) {
  throw IOError(what + ": invalid UTF-8 at byte " + std::to_string(offset));
}

// A character as the user would recognise it in an error message.
std::string describe(char32_t character) {
  std::ostringstream out;
  out << "'" << encode_utf8(std::u32string_view(&character, 1)) << "' (U+" << std::hex << std::uppercase
      << static_cast<std::uint32_t>(character) << ")";
  return out.str();
}

}  // namespace

std::u32string decode_utf8(std::string_view bytes, const std::string& what) {
  std::u32string result;
  result.reserve(bytes.size());
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    if (lead < 0x80) {
      result.push_back(lead);
      ++i;
      continue;
    }
    // The sequence length and the smallest code point it may encode (shorter forms are
    // "overlong" and invalid, as are surrogates and anything above U+10FFFF).
    std::size_t length = 0;
    char32_t code_point = 0, minimum = 0;
    if ((lead & 0xE0) == 0xC0) length = 2, code_point = lead & 0x1F, minimum = 0x80;
    else if ((lead & 0xF0) == 0xE0) length = 3, code_point = lead & 0x0F, minimum = 0x800;
    else if ((lead & 0xF8) == 0xF0) length = 4, code_point = lead & 0x07, minimum = 0x10000;
    else invalid_utf8(what, i);
    if (i + length > bytes.size()) invalid_utf8(what, i);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(bytes[i + k]);
      if ((next & 0xC0) != 0x80) invalid_utf8(what, i);
      code_point = (code_point << 6) | (next & 0x3F);
    }
    if (code_point < minimum || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF))
      invalid_utf8(what, i);
    result.push_back(code_point);
    i += length;
  }
  return result;
}

std::string encode_utf8(std::u32string_view code_points) {
  std::string out;
  for (char32_t c : code_points) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

CharVocabulary CharVocabulary::from_text(std::u32string_view text) {
  std::u32string characters(text);
  std::sort(characters.begin(), characters.end());
  characters.erase(std::unique(characters.begin(), characters.end()), characters.end());
  CharVocabulary vocabulary;
  vocabulary.characters_ = std::move(characters);
  return vocabulary;
}

CharVocabulary CharVocabulary::from_characters(std::u32string characters) {
  EMBER_CHECK(!characters.empty(), ValueError, "a character vocabulary cannot be empty");
  for (std::size_t i = 1; i < characters.size(); ++i)
    EMBER_CHECK(characters[i - 1] < characters[i], ValueError,
                "a character vocabulary must be sorted and distinct; ", describe(characters[i]), " at position ", i,
                " is not");
  CharVocabulary vocabulary;
  vocabulary.characters_ = std::move(characters);
  return vocabulary;
}

std::vector<std::int64_t> CharVocabulary::encode(std::u32string_view text) const {
  std::vector<std::int64_t> ids;
  ids.reserve(text.size());
  for (char32_t c : text) {
    auto found = std::lower_bound(characters_.begin(), characters_.end(), c);
    EMBER_CHECK(found != characters_.end() && *found == c, ValueError, "the character ", describe(c),
                " is not in the vocabulary (", size(), " characters from the training text)");
    ids.push_back(found - characters_.begin());
  }
  return ids;
}

std::vector<std::int64_t> CharVocabulary::encode_utf8(std::string_view text) const {
  return encode(decode_utf8(text, "text"));
}

std::string CharVocabulary::decode(const std::vector<std::int64_t>& ids) const {
  std::u32string text;
  text.reserve(ids.size());
  for (std::int64_t id : ids) {
    EMBER_CHECK(id >= 0 && id < size(), IndexError, "token id ", id, " is out of range for a vocabulary of ",
                size(), " characters");
    text.push_back(characters_[static_cast<std::size_t>(id)]);
  }
  return data::encode_utf8(text);
}

TextCorpus read_text_corpus(const std::string& path, double train_fraction) {
  EMBER_CHECK(train_fraction > 0.0 && train_fraction <= 1.0, ValueError,
              "train_fraction must be in (0, 1], got ", train_fraction);
  const std::string what = "text file " + path;
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) throw IOError(what + ": cannot open it (no such file)");
  if (!std::filesystem::is_regular_file(status)) throw IOError(what + ": not a regular file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw IOError(what + ": cannot open it");
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw IOError(what + ": read failed");
  const std::u32string text = decode_utf8(bytes, what);
  if (text.empty()) throw IOError(what + ": the file is empty");

  TextCorpus corpus;
  corpus.vocabulary = CharVocabulary::from_text(text);
  const std::vector<std::int64_t> ids = corpus.vocabulary.encode(text);
  const auto total = static_cast<std::int64_t>(ids.size());
  // nanoGPT's int(n * 0.9): the double product truncated, as Python computes it.
  const auto train_count = static_cast<std::int64_t>(static_cast<double>(total) * train_fraction);
  auto to_tensor = [&](std::int64_t start, std::int64_t count) {
    Tensor out = empty({count}, TensorOptions().dtype(kLong));
    std::copy_n(ids.begin() + start, count, out.data_ptr<std::int64_t>());
    return out;
  };
  corpus.train = to_tensor(0, train_count);
  corpus.val = to_tensor(train_count, total - train_count);
  return corpus;
}

}  // namespace ember::data
