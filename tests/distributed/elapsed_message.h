// tests/distributed/elapsed_message.h — reads the time a distributed error says it spent.
//
// Every failed collective or rendezvous reports "<what> after N ms (timeout T ms...": N the
// time really spent, T the timeout. Tests compare N with the time they measured around the
// call, so a message that claims the full timeout for a failure after a few milliseconds
// (the old "after timeout 600000 ms") fails them.
#pragma once

#include <regex>
#include <string>

namespace ember::testing {

// N in "<what> after N ms (timeout <timeout_ms> ms", or -1 when the message has no such part.
inline long long reported_elapsed_ms(const std::string& message, const std::string& what, long long timeout_ms) {
  std::smatch match;
  const std::regex pattern(std::regex_replace(what, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                           " after (\\d+) ms \\(timeout " + std::to_string(timeout_ms) + " ms");
  if (!std::regex_search(message, match, pattern)) return -1;
  return std::stoll(match[1].str());
}

}  // namespace ember::testing
