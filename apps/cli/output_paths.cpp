// apps/cli/output_paths.cpp — see output_paths.h.
#include "output_paths.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include <ember/core/error.h>
#include <ember/nn/atomic_file.h>

#include "datasets.h"
#include "gpt_training.h"
#include "usage_error.h"

namespace ember::cli {

namespace {

namespace fs = std::filesystem;

// The directory checks shared by both outputs: `target` is the path after symlinks.
void check_directory(const std::string& path, const std::string& target, const std::string& flag) {
  std::error_code error;
  fs::path parent = fs::path(target).parent_path();
  std::string directory = parent.empty() ? "." : parent.string();
  EMBER_CHECK(fs::exists(directory, error), IOError, flag, " ", path, ": directory ", directory, " does not exist");
  EMBER_CHECK(fs::is_directory(directory, error), IOError, flag, " ", path, ": ", directory, " is not a directory");
  // access() asks the kernel with this process's rights (also: read-only file systems).
  EMBER_CHECK(access(directory.c_str(), W_OK) == 0, IOError, flag, " ", path, ": directory ", directory,
              " is not writable (", std::strerror(errno), ")");
}

std::string kind_of(fs::file_type type) {
  switch (type) {
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// The file a path names: its symlinks followed, then made absolute and normal, so two
// spellings of one path compare equal even when the file does not exist yet.
fs::path resolved(const std::string& path) {
  std::error_code error;
  // Absolute first: weakly_canonical leaves a relative path with no existing prefix as it is.
  fs::path result = fs::weakly_canonical(fs::absolute(resolve_symlinks(path)), error);
  return error ? fs::absolute(path).lexically_normal() : result;
}

bool same_target(const std::string& a, const std::string& b) { return same_file(a, b) || resolved(a) == resolved(b); }

struct Role {
  std::string name;  // "the --data file", "--resume checkpoint"
  std::string path;
};

// The files `ember train` reads: the data set's files and the --resume checkpoint.
std::vector<Role> inputs(const TrainOptions& options) {
  std::vector<Role> roles;
  const std::string& spec = options.data.spec;
  if (spec.rfind("csv:", 0) == 0) roles.push_back({"the --data " + spec + " file", spec.substr(4)});
  if (spec.rfind("text:", 0) == 0) roles.push_back({"the --data " + spec + " file", spec.substr(5)});
  if (spec == "text") roles.push_back({"the --data text file", kDefaultTextCorpus});
  const std::string idx_directory = idx_directory_of(spec);
  if (!idx_directory.empty()) {
    for (const char* prefix : {"train", "t10k"}) {
      for (const char* kind : {"-images-idx3-ubyte", "-labels-idx1-ubyte"}) {
        for (const char* suffix : {"", ".gz"}) {
          std::string file = idx_directory + "/" + prefix + kind + suffix;
          std::error_code error;
          if (fs::exists(file, error)) roles.push_back({"the --data " + spec + " file", file});
        }
      }
    }
  }
  if (!options.resume_path.empty()) roles.push_back({"the --resume checkpoint", options.resume_path});
  return roles;
}

[[noreturn]] void refuse_same(const std::string& flag, const std::string& path, const Role& other,
                              const std::string& consequence) {
  throw UsageError(make_message(flag, " ", path, " is the same file as ", other.name, " ", other.path, ": ", consequence,
                                "; choose another path"));
}

}  // namespace

void check_save_path(const std::string& path, const std::string& flag) {
  std::error_code error;
  if (fs::is_directory(path, error)) throw UsageError(make_message(flag, " ", path, ": is a directory (expected a file name)"));
  const std::string target = resolve_symlinks(path);
  fs::file_status status = fs::status(target, error);
  if (!error && status.type() != fs::file_type::not_found && status.type() != fs::file_type::regular) {
    throw UsageError(make_message(flag, " ", path, ": is ", kind_of(status.type()),
                                  ", not a regular file (a checkpoint replaces its file, so it must be a regular file "
                                  "or a new name)"));
  }
  check_directory(path, target, flag);
  EMBER_CHECK(!fs::exists(target, error) || access(target.c_str(), W_OK) == 0, IOError, flag, " ", path,
              ": the file is not writable (", std::strerror(errno), ")");
  try {
    check_atomic_write(path);
  } catch (const IOError& failure) {
    throw IOError(make_message(flag, " ", path, ": ", failure.what()));
  }
}

void check_log_path(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) throw UsageError(make_message("--log ", path, ": is a directory (expected a file name)"));
  fs::file_status status = fs::status(path, error);  // follows symlinks: the log is opened, not replaced
  const fs::file_type type = error ? fs::file_type::not_found : status.type();
  if (type == fs::file_type::block || type == fs::file_type::socket || type == fs::file_type::unknown) {
    throw UsageError(make_message("--log ", path, ": is ", kind_of(type),
                                  " (expected a regular file, a character device such as /dev/stdout, or a FIFO)"));
  }
  if (type == fs::file_type::not_found) {
    check_directory(path, resolve_symlinks(path), "--log");
    return;
  }
  // An existing file, device or FIFO is written in place: only its own permission matters.
  EMBER_CHECK(access(path.c_str(), W_OK) == 0, IOError, "--log ", path, ": the file is not writable (",
              std::strerror(errno), ")");
}

void check_distinct_paths(const TrainOptions& options) {
  const std::string& save = options.save_path;
  const std::string& log = options.log_path;
  if (!save.empty() && !log.empty() && same_target(save, log)) {
    refuse_same("--log", log, {"the --save checkpoint", save},
                "the metrics log and the checkpoint would overwrite each other");
  }
  const std::string& best = options.save_best_path;
  if (!best.empty() && !save.empty() && same_target(best, save)) {
    refuse_same("--save-best", best, {"the --save checkpoint", save},
                "the best model and the latest checkpoint would overwrite each other");
  }
  if (!best.empty() && !log.empty() && same_target(best, log)) {
    refuse_same("--log", log, {"the --save-best checkpoint", best},
                "the metrics log and the best checkpoint would overwrite each other");
  }
  // --profile-out: the trace, written at the end, must not replace any other output.
  const std::string& trace = options.profile_out;
  const std::vector<Role> outputs = {{"the --save checkpoint", save}, {"the --save-best checkpoint", best},
                                     {"the --log file", log}};
  for (const Role& output : outputs) {
    if (!trace.empty() && !output.path.empty() && same_target(trace, output.path)) {
      refuse_same("--profile-out", trace, output, "the trace would overwrite it");
    }
  }
  for (const Role& input : inputs(options)) {
    if (!trace.empty() && same_file(trace, input.path)) refuse_same("--profile-out", trace, input, "the trace would replace it");
    if (!best.empty() && same_file(best, input.path)) refuse_same("--save-best", best, input, "the best model would replace it");
    if (!log.empty() && same_file(log, input.path)) {
      refuse_same("--log", log, input, "the metrics log would overwrite it");
    }
    // --save onto --resume continues a run in place (output_paths.h).
    bool is_resume = !options.resume_path.empty() && input.path == options.resume_path;
    if (!save.empty() && !is_resume && same_file(save, input.path)) {
      refuse_same("--save", save, input, "the checkpoint would replace it");
    }
  }
}

int check_stdout_written(int exit_code) {
  std::cout.flush();  // std::cout shares stdio's buffer (sync_with_stdio): stdout's state covers both
  errno = 0;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout;
  if (!failed || exit_code != 0) return exit_code;
  const int reason = errno;
  std::cerr << "ember: error: cannot write to stdout (" << (reason != 0 ? std::strerror(reason) : "write failed")
            << ")\n";
  return 1;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error) && !error;
}

}  // namespace ember::cli
