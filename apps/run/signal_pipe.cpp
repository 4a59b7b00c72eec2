// apps/run/signal_pipe.cpp — see signal_pipe.h.
#include "signal_pipe.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ember::run {
namespace {

volatile sig_atomic_t signal_write_fd = -1;

void on_signal(int number) {
  int saved_errno = errno;  // write() may change errno under the interrupted code's feet
  if (signal_write_fd >= 0) {
    unsigned char byte = static_cast<unsigned char>(number);
    [[maybe_unused]] ssize_t written = ::write(signal_write_fd, &byte, 1);
  }
  errno = saved_errno;
}

void set_handler(int number, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a write() to our stdout interrupted by SIGCHLD just continues.
  action.sa_flags = (number == SIGCHLD) ? (SA_RESTART | SA_NOCLDSTOP) : SA_RESTART;
  if (::sigaction(number, &action, nullptr) != 0) {
    throw std::runtime_error(std::string("sigaction() failed: ") + std::strerror(errno));
  }
}

}  // namespace

SignalPipe::SignalPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw std::runtime_error(std::string("pipe2() failed: ") + std::strerror(errno));
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  signal_write_fd = write_fd_;
  set_handler(SIGCHLD, on_signal);
  set_handler(SIGINT, on_signal);
  set_handler(SIGTERM, on_signal);
  set_handler(SIGPIPE, SIG_IGN);
}

SignalPipe::~SignalPipe() {
  restore_defaults_in_child();
  signal_write_fd = -1;
  ::close(read_fd_);
  ::close(write_fd_);
}

std::vector<int> SignalPipe::take() {
  std::vector<int> received;
  unsigned char buffer[64];
  for (;;) {
    ssize_t count = ::read(read_fd_, buffer, sizeof buffer);
    if (count <= 0) break;  // EAGAIN: nothing more right now
    for (ssize_t i = 0; i < count; ++i) received.push_back(buffer[i]);
  }
  return received;
}

void SignalPipe::restore_defaults_in_child() {
  for (int number : {SIGCHLD, SIGINT, SIGTERM, SIGPIPE}) ::signal(number, SIG_DFL);
}

}  // namespace ember::run
