// apps/cli/usage_error.h — a command line that cannot be run as given: exit code 2.
//
// Most usage errors are found while parsing (CLI11, main.cpp). Some need the file system
// or the environment to be seen — two flags naming the same file, a --save path that is a
// device node, an EMBER_TIMEOUT that is not a number — and are found when the command
// starts. They throw UsageError, which main.cpp prints as "ember: error: ..." with exit
// code 2, like the parser's, rather than 1 (a failed run).
#pragma once

#include <ember/core/error.h>

namespace ember::cli {

class UsageError : public Error {
  using Error::Error;
};

}  // namespace ember::cli
