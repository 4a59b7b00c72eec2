// apps/run/signal_pipe.h — the launcher's signals, turned into bytes its poll loop can read.
//
// ember-run waits in poll() on its workers' output. Three signals matter to it: SIGCHLD
// (a worker exited), and SIGINT / SIGTERM (the user or a scheduler wants the job stopped;
// they are forwarded to the workers). A signal handler may do almost nothing safely, so it
// only writes the signal's number into a pipe (the "self-pipe trick"); poll() then wakes
// up on that pipe and the loop handles the signal in ordinary code.
#pragma once

#include <vector>

namespace ember::run {

class SignalPipe {
 public:
  // Installs the handlers for SIGCHLD, SIGINT and SIGTERM and ignores SIGPIPE (a closed
  // terminal must not kill the launcher while workers still run). One per process.
  SignalPipe();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  int read_fd() const { return read_fd_; }
  // The signals received since the last call, in order (non-blocking).
  std::vector<int> take();
  // Puts the handlers back to the defaults; what a forked worker does before exec.
  static void restore_defaults_in_child();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace ember::run
