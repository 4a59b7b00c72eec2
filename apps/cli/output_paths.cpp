// apps/cli/output_paths.cpp — see output_paths.h.
#include "output_paths.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <ember/core/error.h>

namespace ember::cli {

void check_output_path(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code error;
  EMBER_CHECK(!fs::is_directory(path, error), IOError, flag, " ", path, ": is a directory (expected a file name)");
  fs::path parent = fs::path(path).parent_path();
  std::string directory = parent.empty() ? "." : parent.string();
  EMBER_CHECK(fs::exists(directory, error), IOError, flag, " ", path, ": directory ", directory, " does not exist");
  EMBER_CHECK(fs::is_directory(directory, error), IOError, flag, " ", path, ": ", directory, " is not a directory");
  // access() asks the kernel with this process's rights (also: read-only file systems).
  EMBER_CHECK(access(directory.c_str(), W_OK) == 0, IOError, flag, " ", path, ": directory ", directory,
              " is not writable (", std::strerror(errno), ")");
  EMBER_CHECK(!fs::exists(path, error) || access(path.c_str(), W_OK) == 0, IOError, flag, " ", path,
              ": the file is not writable (", std::strerror(errno), ")");
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error) && !error;
}

}  // namespace ember::cli
