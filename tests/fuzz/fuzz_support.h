// tests/fuzz/fuzz_support.h — what every harness of tests/fuzz/ shares.
//
// The readers of data/ and apps/cli/ take a path, not bytes, so a harness writes its input
// to a scratch file (one per process and name, overwritten on every run: libFuzzer runs one
// input at a time) and hands the reader that path. `finding` is how a harness reports a
// broken contract that is not a crash: it prints why and aborts, which libFuzzer records as
// a crash with the input that caused it.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <typeinfo>

#include <ember/core/error.h>

// UBSan stops at its first report, with the stack that led to it: every report is a finding.
extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }

namespace ember::fuzz {

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\nFUZZ FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// A scratch file under $TMPDIR (else /dev/shm, else /tmp), removed when the process ends normally.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name) {
    // /dev/shm when there is one: memory, so the writers' fsync costs nothing.
    const char* tmpdir = std::getenv("TMPDIR");
    std::string dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
    if (tmpdir == nullptr && ::access("/dev/shm", W_OK) == 0) dir = "/dev/shm";
    path_ = dir + "/ember-fuzz-" + std::to_string(::getpid()) + "-" + name;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's content with `bytes` and returns its path.
  const std::string& write(const void* bytes, std::size_t size) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
    out.close();
    if (!out) finding("cannot write the scratch file " + path_);
    return path_;
  }
  const std::string& write(const std::string& bytes) { return write(bytes.data(), bytes.size()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Turns any exception that is not the documented ember error into a finding. Use as
//   try { ... } catch (const ember::IOError&) { } catch (...) { unexpected_exception(); }
[[noreturn]] inline void unexpected_exception() {
  try {
    throw;
  } catch (const std::exception& error) {
    finding(std::string("an exception that is not the documented ember error escaped: ") + typeid(error).name() +
            ": " + error.what());
  } catch (...) {
    finding("a non-std exception escaped");
  }
}

// What `read()` returns, or nothing when it throws the documented ember::IOError; any other
// exception is a finding.
template <class Read>
auto load_or_ioerror(Read read) -> std::optional<decltype(read())> {
  try {
    return read();
  } catch (const ember::IOError&) {
    return std::nullopt;
  } catch (...) {
    unexpected_exception();
  }
}

}  // namespace ember::fuzz
