// tests/apps/xml_reader.h — a small, strict XML reader for the `ember plot` SVG tests.
//
// It checks well-formedness — one root element, every start tag closed by its own end tag,
// attribute values quoted, no text outside the root — and returns the element tree, so a
// test can look at the root and find elements by name and attribute. It skips the XML
// declaration, comments, processing instructions and CDATA; it does not resolve entities
// (the tests only compare names and numbers). A malformed document throws
// std::runtime_error saying where.
#pragma once

#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::testing::xml {

struct Element {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<Element> children;

  // Every element named `name` in this subtree (this one included), in document order.
  void find_all(const std::string& wanted, std::vector<const Element*>& found) const {
    if (name == wanted) found.push_back(this);
    for (const Element& child : children) child.find_all(wanted, found);
  }
};

class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  Element parse_document() {
    skip_misc();
    if (!starts_with("<")) fail("expected the root element");
    Element root = parse_element();
    skip_misc();
    if (pos_ != text_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML: " + what + " at offset " + std::to_string(pos_));
  }
  bool starts_with(const char* prefix) const { return text_.compare(pos_, std::char_traits<char>::length(prefix), prefix) == 0; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void skip_past(const char* end) {
    const std::size_t found = text_.find(end, pos_);
    if (found == std::string::npos) fail(std::string("unterminated construct (no '") + end + "')");
    pos_ = found + std::char_traits<char>::length(end);
  }
  // Whitespace, comments, processing instructions and a DOCTYPE between elements.
  void skip_misc() {
    for (;;) {
      skip_space();
      if (starts_with("<?")) skip_past("?>");
      else if (starts_with("<!--")) skip_past("-->");
      else if (starts_with("<!DOCTYPE")) skip_past(">");
      else return;
    }
  }
  std::string parse_name() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == ':' ||
                                   text_[pos_] == '_' || text_[pos_] == '-' || text_[pos_] == '.')) {
      ++pos_;
    }
    if (pos_ == start) fail("expected a name");
    return text_.substr(start, pos_ - start);
  }
  Element parse_element() {
    ++pos_;  // '<'
    Element element;
    element.name = parse_name();
    for (;;) {
      skip_space();
      if (starts_with("/>")) {
        pos_ += 2;
        return element;
      }
      if (starts_with(">")) {
        ++pos_;
        break;
      }
      const std::string attribute = parse_name();
      skip_space();
      if (!starts_with("=")) fail("attribute " + attribute + " has no value");
      ++pos_;
      skip_space();
      if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'')) fail("unquoted attribute " + attribute);
      const char quote = text_[pos_++];
      const std::size_t end = text_.find(quote, pos_);
      if (end == std::string::npos) fail("unterminated attribute " + attribute);
      const std::string value = text_.substr(pos_, end - pos_);
      if (value.find('<') != std::string::npos) fail("'<' in attribute " + attribute);
      if (!element.attributes.emplace(attribute, value).second) fail("attribute " + attribute + " given twice");
      pos_ = end + 1;
    }
    // Content: text, child elements, comments, CDATA, then the matching end tag.
    for (;;) {
      if (pos_ >= text_.size()) fail("element <" + element.name + "> is not closed");
      if (starts_with("</")) {
        pos_ += 2;
        if (parse_name() != element.name) fail("end tag does not match <" + element.name + ">");
        skip_space();
        if (!starts_with(">")) fail("malformed end tag");
        ++pos_;
        return element;
      }
      if (starts_with("<!--")) skip_past("-->");
      else if (starts_with("<![CDATA[")) skip_past("]]>");
      else if (starts_with("<?")) skip_past("?>");
      else if (starts_with("<")) element.children.push_back(parse_element());
      else ++pos_;  // character data
    }
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

inline Element parse(const std::string& text) { return Reader(text).parse_document(); }

}  // namespace ember::testing::xml
