// data/text_corpus.h — character-level text for language models (issue 21's `--data text:FILE`).
//
// The simplest tokenizer there is, the one nanoGPT's shakespeare_char uses: every distinct
// character of the text is a token, numbered in sorted order. "Characters" are Unicode code
// points (the file is read as UTF-8), as Python's sorted(set(text)) sees them, so a PyTorch
// program that reads the same file gets the same ids (the default corpus, Debian's
// /usr/share/dict/words, has "é" and "Å" besides ASCII).
//
//   CharVocabulary vocab = CharVocabulary::from_text(text);   // sorted distinct code points
//   std::vector<std::int64_t> ids = vocab.encode("abc");        // text -> ids
//   std::string text = vocab.decode(ids);                       // ids -> text
//
// read_text_corpus splits the encoded file as nanoGPT does: the first int(0.9 · n) tokens
// train, the rest validate. A file that is missing, not a regular file, empty or not valid
// UTF-8 is an IOError naming the file and the byte where decoding failed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::data {

// Decodes UTF-8 into code points; IOError("... invalid UTF-8 at byte N") on a malformed,
// overlong or surrogate sequence (`what` names the source in the message).
std::u32string decode_utf8(std::string_view bytes, const std::string& what);
// Encodes code points as UTF-8.
std::string encode_utf8(std::u32string_view code_points);

class CharVocabulary {
 public:
  CharVocabulary() = default;
  // The sorted distinct code points of `text`.
  static CharVocabulary from_text(std::u32string_view text);
  // From the characters themselves, sorted and distinct (a checkpoint's saved vocabulary);
  // ValueError when they are not.
  static CharVocabulary from_characters(std::u32string characters);

  std::int64_t size() const { return static_cast<std::int64_t>(characters_.size()); }
  const std::u32string& characters() const { return characters_; }
  // ValueError naming the first character the vocabulary does not have (a prompt with a
  // letter the training text never used).
  std::vector<std::int64_t> encode(std::u32string_view text) const;
  std::vector<std::int64_t> encode_utf8(std::string_view text) const;
  // IndexError for an id outside [0, size()).
  std::string decode(const std::vector<std::int64_t>& ids) const;

 private:
  std::u32string characters_;  // sorted, distinct: id i is characters_[i]
};

struct TextCorpus {
  CharVocabulary vocabulary;
  Tensor train;  // int64 [n_train]: the first int(train_fraction · n) token ids
  Tensor val;    // int64 [n - n_train]: the rest
};

// Reads and encodes a whole UTF-8 file. train_fraction in (0, 1].
TextCorpus read_text_corpus(const std::string& path, double train_fraction = 0.9);

}  // namespace ember::data
