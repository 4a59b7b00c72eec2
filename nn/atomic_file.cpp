// nn/atomic_file.cpp — temporary file + fsync + rename, through symlinks (see atomic_file.h).
#include <ember/nn/atomic_file.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include <ember/core/error.h>

namespace ember {
namespace {

namespace fs = std::filesystem;

// Temporary files this process is writing right now: a stale-file sweep must not take
// them for leftovers (their pid is alive — it is ours).
std::mutex in_flight_mutex;
std::set<std::string> in_flight;

struct InFlight {
  explicit InFlight(std::string path) : path_(std::move(path)) {
    std::lock_guard<std::mutex> lock(in_flight_mutex);
    in_flight.insert(path_);
  }
  ~InFlight() {
    std::lock_guard<std::mutex> lock(in_flight_mutex);
    in_flight.erase(path_);
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  std::string path_;
};

bool is_in_flight(const std::string& path) {
  std::lock_guard<std::mutex> lock(in_flight_mutex);
  return in_flight.count(path) > 0;
}

fs::path directory_of(const fs::path& target) {
  return target.has_parent_path() ? target.parent_path() : fs::path(".");
}

// ".<name>.tmp.<pid>.<n>" next to the target; n counts this process's writes.
std::string next_temporary_path(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  std::string name = ".";
  name += target.filename().string();
  name += ".tmp.";
  name += std::to_string(::getpid());
  name += ".";
  name += std::to_string(counter++);
  return (directory_of(target) / name).string();
}

// "a character device", "a FIFO", ... for an existing path that is not a regular file.
std::string kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// IOError when the resolved target exists and is not a regular file.
void check_replaceable(const std::string& path, const std::string& target) {
  std::error_code error;
  fs::file_status status = fs::status(target, error);
  if (error || status.type() == fs::file_type::not_found || status.type() == fs::file_type::regular) return;
  std::string shown = target == path ? path : path + " (-> " + target + ")";
  throw IOError("cannot save to " + shown + ": it is " + kind_of(status) +
                ", not a regular file; a checkpoint replaces its file, so give a path to a regular file");
}

// The pid in a temporary name of `target_name`, or -1 when the name is not one.
long temporary_pid(const std::string& file_name, const std::string& target_name) {
  const std::string prefix = "." + target_name + ".tmp.";
  if (file_name.size() <= prefix.size() || file_name.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string rest = file_name.substr(prefix.size());
  const std::size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 == rest.size() || dot > 9) return -1;
  if (rest.find_first_not_of("0123456789") != dot) return -1;
  if (rest.find_first_not_of("0123456789", dot + 1) != std::string::npos) return -1;
  return std::stol(rest.substr(0, dot));
}

// Removes the temporary files of earlier writes to `target` whose writer no longer runs
// (killed during a save). Best effort: a file that cannot be removed stays.
void remove_stale_temporaries(const fs::path& target) {
  std::error_code error;
  const std::string target_name = target.filename().string();
  for (fs::directory_iterator entry(directory_of(target), error), end; !error && entry != end;
       entry.increment(error)) {
    const std::string name = entry->path().filename().string();
    const long pid = temporary_pid(name, target_name);
    if (pid < 0) continue;
    const bool ours = pid == static_cast<long>(::getpid());
    const bool writer_gone = ours ? !is_in_flight(entry->path().string())
                                  : (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
    if (writer_gone) ::unlink(entry->path().c_str());
  }
}

}  // namespace

bool is_temporary_name_of(const std::string& file_name, const std::string& target_name) {
  return temporary_pid(file_name, target_name) >= 0;
}

std::string resolve_symlinks(const std::string& path) {
  fs::path current(path);
  // 40 links: Linux's own limit (ELOOP) for path resolution.
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(current, error)) || error) return current.string();
    fs::path link = fs::read_symlink(current, error);
    if (error) throw IOError("cannot read the symlink " + current.string() + ": " + error.message());
    current = link.is_absolute() ? link : directory_of(current) / link;
  }
  throw IOError("cannot save to " + path + ": too many levels of symbolic links");
}

void check_atomic_write(const std::string& path) {
  const std::string target = resolve_symlinks(path);
  check_replaceable(path, target);
  const std::string temporary = next_temporary_path(target);
  // The real temporary name: a name too long once ".tmp.<pid>.<n>" is added, or a directory
  // that refuses new files (/proc, /sys, a read-only mount), fails here, before training.
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw IOError("cannot save to " + path + ": cannot create the temporary file " + temporary + " next to it (" +
                  std::strerror(errno) + ")");
  }
  ::close(fd);
  ::unlink(temporary.c_str());
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const fs::path target(resolve_symlinks(path));
  check_replaceable(path, target.string());
  remove_stale_temporaries(target);
  const std::string temporary = next_temporary_path(target);
  InFlight marker(temporary);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IOError("cannot create " + temporary + ": " + std::strerror(errno));
  try {
    std::size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw IOError("cannot write " + temporary + ": " + std::strerror(errno));
      if (n == 0) throw IOError("cannot write " + temporary + ": no bytes written (device full?)");
      written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) throw IOError("cannot fsync " + temporary + ": " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  // Some filesystems (NFS) report a failed write only at close: check it too.
  if (::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw IOError("cannot close " + temporary + ": " + reason);
  }
  // rename() within one directory is atomic: readers see the old file or the new one.
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw IOError("cannot rename " + temporary + " to " + target.string() + ": " + reason);
  }
  // Make the rename itself durable (best effort: some filesystems refuse fsync on dirs).
  const int dir_fd = ::open(directory_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace ember
