// tests/apps/launch_test_helpers.h — helpers for the multi-process tests (ember-run, §9.3).
//
// These tests start several processes that meet over TCP. Two rules keep them safe under a
// parallel ctest: they never use a fixed port (ember-run picks a free one; a program run on
// its own gets MASTER_PORT from free_port()), and every command runs under coreutils'
// `timeout`, so a hung rendezvous fails the test after kCommandTimeoutSeconds instead of
// blocking the suite.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.h"

namespace ember::testing::launch {

constexpr int kCommandTimeoutSeconds = 120;

inline std::string bin(const std::string& name) { return std::string(EMBER_BIN_DIR) + "/" + name; }

// Single quotes for /bin/sh.
inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs a shell command line (stdout and stderr together) under a timeout; exit code 124
// means the timeout struck.
inline std::string run_shell(const std::string& command, int* exit_code) {
  std::string line = "timeout -k 10 " + std::to_string(kCommandTimeoutSeconds) + " /bin/sh -c " +
                     shell_quote(command) + " 2>&1";
  FILE* pipe = popen(line.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + line);
  std::string output;
  char buffer[4096];
  std::size_t count;
  while ((count = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, count);
  int status = pclose(pipe);
  if (exit_code != nullptr) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

// A TCP port that is free right now (the kernel's choice for port 0).
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw std::runtime_error("cannot bind a free port");
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The lines ember-run tagged "[rank R] ", in order, with the tag removed.
inline std::vector<std::string> rank_lines(const std::string& output, int rank) {
  const std::string prefix = "[rank " + std::to_string(rank) + "] ";
  std::vector<std::string> lines;
  for (const std::string& line : split_lines(output)) {
    if (line.rfind(prefix, 0) == 0) lines.push_back(line.substr(prefix.size()));
  }
  return lines;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace ember::testing::launch
