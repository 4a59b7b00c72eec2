// tests/data/test_text_corpus.cpp — the character-level corpus of `--data text:FILE` (issue 21):
// the vocabulary and ids Python's sorted(set(text)) gives for a UTF-8 fixture and for the
// default corpus /usr/share/dict/words (tests/reference/gen_text_corpus.py), nanoGPT's 90/10
// split, encode/decode round trips, and hostile files: invalid, overlong, surrogate and
// truncated UTF-8, an empty file, a directory, a missing file, unknown characters and ids.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <unistd.h>

#include <ember/ember.h>
#include <ember/data/text_corpus.h>

#include "test_support.h"

using namespace ember;
using Catch::Matchers::Contains;
using ember::testing::load_reference;
using ember::testing::to_vector;

namespace {

std::string fixture(const std::string& name) { return std::string(EMBER_SOURCE_DIR) + "/tests/data/fixtures/" + name; }

std::u32string code_points_of(const nlohmann::json& list) {
  std::u32string out;
  for (const auto& value : list) out.push_back(static_cast<char32_t>(value.get<std::uint32_t>()));
  return out;
}

// A file in the temporary directory, removed at the end of the test.
struct TempText {
  std::string path = (std::filesystem::temp_directory_path() / ("text_" + std::to_string(getpid()))).string();
  explicit TempText(const std::string& bytes) {
    FILE* file = std::fopen(path.c_str(), "wb");
    REQUIRE(file != nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), file);
    std::fclose(file);
  }
  ~TempText() { std::filesystem::remove(path); }
};

void check_against_python(const data::TextCorpus& corpus, const nlohmann::json& expected) {
  REQUIRE(corpus.vocabulary.characters() == code_points_of(expected["code_points"]));
  REQUIRE(corpus.train.dtype() == kLong);
  REQUIRE(corpus.train.numel() == expected["train"].get<std::int64_t>());
  REQUIRE(corpus.val.numel() == expected["val"].get<std::int64_t>());
  const auto train = to_vector(corpus.train);
  const auto first = expected["first_ids"].get<std::vector<double>>();
  for (std::size_t i = 0; i < first.size() && i < train.size(); ++i) REQUIRE(train[i] == first[i]);
  double sum = 0;
  for (double id : train) sum += id;
  for (double id : to_vector(corpus.val)) sum += id;
  REQUIRE(sum == expected["sum_ids"].get<double>());
}

}  // namespace

TEST_CASE("A UTF-8 text's vocabulary, ids and split are Python's", "[data][text]") {
  const auto expected = load_reference("text_corpus.json")["fixture"];
  const auto corpus = data::read_text_corpus(fixture("words-utf8.txt"));
  check_against_python(corpus, expected);
  std::vector<std::int64_t> all;
  for (double id : to_vector(corpus.train)) all.push_back(static_cast<std::int64_t>(id));
  for (double id : to_vector(corpus.val)) all.push_back(static_cast<std::int64_t>(id));
  REQUIRE(all == expected["ids"].get<std::vector<std::int64_t>>());
  // decode(encode(text)) is the file again, byte for byte.
  REQUIRE(corpus.vocabulary.decode(all) == ember::testing::read_file(fixture("words-utf8.txt")));
  REQUIRE(corpus.vocabulary.encode_utf8("café") == corpus.vocabulary.encode(U"café"));
}

TEST_CASE("The default corpus /usr/share/dict/words reads as Python reads it", "[data][text]") {
  EMBER_REQUIRE_IN_CI(std::filesystem::exists("/usr/share/dict/words"),
                      "/usr/share/dict/words is missing (Debian's wamerican, scripts/install-deps.sh)");
  check_against_python(data::read_text_corpus("/usr/share/dict/words"),
                       load_reference("text_corpus.json")["dict_words"]);
}

TEST_CASE("The split keeps int(n * fraction) tokens for training, as nanoGPT", "[data][text]") {
  TempText eleven("abcdefghijk");
  auto corpus = data::read_text_corpus(eleven.path);
  REQUIRE(corpus.train.numel() == 9);  // int(11 * 0.9) = int(9.9)
  REQUIRE(corpus.val.numel() == 2);
  corpus = data::read_text_corpus(eleven.path, 1.0);
  REQUIRE(corpus.val.numel() == 0);
  REQUIRE_THROWS_WITH(data::read_text_corpus(eleven.path, 0.0), Contains("train_fraction must be in (0, 1]"));
}

TEST_CASE("Malformed UTF-8 is an error naming the byte", "[data][text]") {
  struct Case {
    std::string bytes, offset;
  };
  for (const Case& bad : {Case{"ab\xFF", "2"}, Case{"a\xC0\xAF", "1"},  // invalid lead, overlong '/'
                          Case{"\xED\xA0\x80", "0"},                      // a UTF-16 surrogate
                          Case{"xy\xE2\x82", "2"},                        // truncated at the end
                          Case{"\xC3(", "0"},                             // bad continuation
                          Case{"\xF4\x90\x80\x80", "0"}}) {               // above U+10FFFF
    INFO(bad.offset);
    TempText file(bad.bytes);
    REQUIRE_THROWS_WITH(data::read_text_corpus(file.path), Contains("invalid UTF-8 at byte " + bad.offset));
  }
}

TEST_CASE("Empty, missing and non-regular text files are IOErrors", "[data][text]") {
  TempText empty("");
  REQUIRE_THROWS_AS(data::read_text_corpus(empty.path), IOError);
  REQUIRE_THROWS_WITH(data::read_text_corpus(empty.path), Contains("the file is empty"));
  REQUIRE_THROWS_WITH(data::read_text_corpus("/nonexistent/words.txt"), Contains("no such file"));
  REQUIRE_THROWS_WITH(data::read_text_corpus(std::filesystem::temp_directory_path().string()),
                      Contains("not a regular file"));
}

TEST_CASE("Unknown characters and ids are clear errors; vocabularies must be sorted", "[data][text]") {
  const auto vocabulary = data::CharVocabulary::from_text(U"hello");
  REQUIRE(vocabulary.characters() == U"ehlo");
  REQUIRE(vocabulary.encode(U"hole") == std::vector<std::int64_t>{1, 3, 2, 0});
  REQUIRE_THROWS_WITH(vocabulary.encode(U"help"), Contains("'p' (U+70) is not in the vocabulary"));
  REQUIRE_THROWS_AS(vocabulary.decode({0, 4}), IndexError);
  REQUIRE_THROWS_WITH(vocabulary.decode({-1}), Contains("token id -1 is out of range"));
  REQUIRE(data::CharVocabulary::from_characters(U"ab").size() == 2);
  REQUIRE_THROWS_WITH(data::CharVocabulary::from_characters(U"ba"), Contains("sorted and distinct"));
  REQUIRE_THROWS_WITH(data::CharVocabulary::from_characters(U""), Contains("cannot be empty"));
}
