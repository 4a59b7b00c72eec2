// tests/support/profile_table.h — reading the op profiler's text table (core/profiler.h) in
// tests: the library's own table (tests/nn/test_profiler.cpp) and `ember train
// --profile-steps`'s (tests/apps/test_cli_profile.cpp).
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ember::testing {

// The Calls column of the row named `name` (Name, Self %, Self, Total %, Total, Avg, Calls,
// ...; the cells are separated by spaces and a name has none), or nullopt when no row has it.
inline std::optional<std::string> profile_table_calls(const std::string& table, const std::string& name) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) != 0) continue;
    std::istringstream cells(line);
    std::vector<std::string> words;
    for (std::string word; cells >> word;) words.push_back(word);
    if (words.size() > 6) return words[6];
  }
  return std::nullopt;
}

}  // namespace ember::testing
