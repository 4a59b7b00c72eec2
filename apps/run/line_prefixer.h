// apps/run/line_prefixer.h — turns a worker's raw output into lines tagged "[rank R] ".
//
// Workers write whenever they like, in chunks that need not end at a line break, and the
// launcher copies all of them onto one terminal. Copying chunks as they come would splice
// half a line of rank 0 into a line of rank 1; instead each stream keeps its unfinished
// line here and only whole lines, each with its rank's prefix, are written out.
#pragma once

#include <cstddef>
#include <string>

namespace ember::run {

class LinePrefixer {
 public:
  explicit LinePrefixer(std::string prefix) : prefix_(std::move(prefix)) {}

  // Adds a chunk of output; returns the complete lines it finished, each prefixed and
  // ending in '\n'. A line longer than kMaxPending is cut (and continued on a new line)
  // so a worker printing without newlines cannot make the launcher's memory grow.
  std::string feed(const char* data, std::size_t size);
  // The unfinished last line (prefixed, with a '\n' added), or "" — for end of stream.
  std::string flush();

  static constexpr std::size_t kMaxPending = 64 * 1024;

 private:
  std::string prefix_;
  std::string pending_;
};

}  // namespace ember::run
