// apps/run/line_prefixer.cpp — see line_prefixer.h.
#include "line_prefixer.h"

namespace ember::run {

std::string LinePrefixer::feed(const char* data, std::size_t size) {
  std::string lines;
  for (std::size_t i = 0; i < size; ++i) {
    pending_ += data[i];
    if (data[i] == '\n') {
      lines += prefix_;
      lines += pending_;
      pending_.clear();
    } else if (pending_.size() >= kMaxPending) {
      lines += prefix_;
      lines += pending_;
      lines += '\n';
      pending_.clear();
    }
  }
  return lines;
}

std::string LinePrefixer::flush() {
  if (pending_.empty()) return "";
  std::string line = prefix_ + pending_ + "\n";
  pending_.clear();
  return line;
}

}  // namespace ember::run
