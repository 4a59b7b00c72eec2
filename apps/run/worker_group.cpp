// apps/run/worker_group.cpp — see worker_group.h.
#include "worker_group.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>
#include <vector>

#include "line_prefixer.h"

extern char** environ;

namespace ember::run {
namespace {

using Clock = std::chrono::steady_clock;

struct Worker {
  int local_rank = 0;
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int stdout_fd = -1;
  int stderr_fd = -1;
  LinePrefixer stdout_lines;
  LinePrefixer stderr_lines;
  Worker(int local, int global)
      : local_rank(local), rank(global), stdout_lines("[rank " + std::to_string(global) + "] "),
        stderr_lines("[rank " + std::to_string(global) + "] ") {}
};

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t count = ::write(fd, text.data() + done, text.size() - done);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return;  // a closed terminal: nothing sensible left to do with the text
    done += static_cast<std::size_t>(count);
  }
}

void launcher_message(const std::string& text) { write_all(STDERR_FILENO, "ember-run: " + text + "\n"); }

// The parent's environment with torchrun's variables for one worker put on top.
std::vector<std::string> worker_environment(const LaunchOptions& options, int local_rank, int master_port,
                                            int restart_count) {
  std::map<std::string, std::string> overrides = {
      {"RANK", std::to_string(options.global_rank(local_rank))},
      {"WORLD_SIZE", std::to_string(options.world_size())},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(options.nproc_per_node)},
      {"GROUP_RANK", std::to_string(options.node_rank)},
      {"MASTER_ADDR", options.master_addr},
      {"MASTER_PORT", std::to_string(master_port)},
      {"TORCHELASTIC_RESTART_COUNT", std::to_string(restart_count)},
      {"TORCHELASTIC_MAX_RESTARTS", std::to_string(options.max_restarts)},
      // The job's identity: a worker that reaches another job's store (a port clash) says so.
      {"TORCHELASTIC_RUN_ID", options.run_id},
  };
  // --timeout: the workers' rendezvous and collective timeout (ember train reads it).
  if (!options.timeout_text.empty()) overrides["EMBER_TIMEOUT"] = options.timeout_text;
  if (options.nproc_per_node > 1 && std::getenv("OMP_NUM_THREADS") == nullptr) overrides["OMP_NUM_THREADS"] = "1";
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string assignment = *entry;
    std::string name = assignment.substr(0, assignment.find('='));
    if (overrides.count(name) == 0) environment.push_back(assignment);
  }
  for (const auto& [name, value] : overrides) environment.push_back(name + "=" + value);
  return environment;
}

// fork + exec of one worker; the pipes' read ends stay with the launcher.
void start_worker(Worker& worker, const LaunchOptions& options, int master_port, int restart_count) {
  // Everything exec needs is built before fork: the child only calls async-signal-safe functions.
  std::vector<std::string> environment = worker_environment(options, worker.local_rank, master_port, restart_count);
  std::vector<char*> envp, argv;
  for (auto& assignment : environment) envp.push_back(assignment.data());
  envp.push_back(nullptr);
  std::vector<std::string> command = options.command;
  for (auto& argument : command) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const std::string exec_error = "ember-run: cannot start '" + command[0] + "': ";

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2() failed: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error(std::string("pipe2() failed: ") + std::strerror(errno));
  }
  pid_t launcher = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork() failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Own process group: a Ctrl-C in the terminal reaches only the launcher, which forwards
    // it once, and stopping a worker also stops whatever it started (kill(-pgid)).
    ::setpgid(0, 0);
#ifdef __linux__
    // If the launcher itself is killed (SIGKILL cannot be forwarded), take the worker down too.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != launcher) ::_exit(127);
#endif
    SignalPipe::restore_defaults_in_child();
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::execvpe(argv[0], argv.data(), envp.data());
    int error = errno;
    [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, exec_error.data(), exec_error.size());
    const char* reason = std::strerror(error);
    ignored = ::write(STDERR_FILENO, reason, std::strlen(reason));
    ignored = ::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);  // the shell's "command not found"
  }
  ::setpgid(pid, pid);  // also from the parent, so it holds before we might signal the group
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  worker.pid = pid;
  worker.running = true;
  worker.stdout_fd = out_pipe[0];
  worker.stderr_fd = err_pipe[0];
}

// Copies what is waiting in one pipe; closes it (and flushes the last line) at end of stream.
void pump(int& fd, LinePrefixer& lines, int destination) {
  if (fd < 0) return;
  char buffer[65536];
  for (;;) {
    ssize_t count = ::read(fd, buffer, sizeof buffer);
    if (count > 0) {
      write_all(destination, lines.feed(buffer, static_cast<std::size_t>(count)));
      continue;
    }
    if (count < 0 && errno == EINTR) continue;
    if (count < 0 && errno == EAGAIN) return;
    write_all(destination, lines.flush());  // end of stream (or an error: treat alike)
    ::close(fd);
    fd = -1;
    return;
  }
}

void pump_worker(Worker& worker) {
  pump(worker.stdout_fd, worker.stdout_lines, STDOUT_FILENO);
  pump(worker.stderr_fd, worker.stderr_lines, STDERR_FILENO);
}

void signal_running(std::vector<Worker>& workers, int number) {
  for (Worker& worker : workers) {
    if (worker.running) ::kill(-worker.pid, number);
  }
}

}  // namespace

std::string signal_name(int number) {
  switch (number) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGPIPE: return "SIGPIPE";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(number);
  }
}

std::string WorkerExit::describe() const {
  if (signaled) return "signal " + std::to_string(code) + " (" + signal_name(code) + ")";
  return "exit code " + std::to_string(code);
}

GroupOutcome run_worker_group(const LaunchOptions& options, int master_port, int restart_count, SignalPipe& signals) {
  std::vector<Worker> workers;
  workers.reserve(static_cast<std::size_t>(options.nproc_per_node));
  for (int local_rank = 0; local_rank < options.nproc_per_node; ++local_rank) {
    workers.emplace_back(local_rank, options.global_rank(local_rank));
  }
  GroupOutcome outcome;
  try {
    for (Worker& worker : workers) start_worker(worker, options, master_port, restart_count);
  } catch (...) {
    signal_running(workers, SIGKILL);
    for (Worker& worker : workers) {
      if (worker.running) ::waitpid(worker.pid, nullptr, 0);
    }
    throw;
  }

  const auto grace = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.grace_period_s));
  bool stopping = false, killed = false;
  Clock::time_point kill_deadline{};
  std::optional<Clock::time_point> drain_deadline;
  auto begin_stop = [&](int number) {
    stopping = true;
    signal_running(workers, number);
    kill_deadline = Clock::now() + grace;
  };

  for (;;) {
    // 1. Reap the workers that exited.
    for (Worker& worker : workers) {
      if (!worker.running) continue;
      int status = 0;
      pid_t done = ::waitpid(worker.pid, &status, WNOHANG);
      if (done != worker.pid) continue;
      worker.running = false;
      WorkerExit exit{worker.rank, worker.local_rank, worker.pid, WIFSIGNALED(status) != 0,
                      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status)};
      if (exit.failed() && !stopping) {
        pump_worker(worker);  // its last words come before the launcher's verdict
        outcome.result = GroupOutcome::Result::Failed;
        outcome.first_failure = exit;
        std::string others = options.nproc_per_node > 1 ? "; stopping the other workers" : "";
        launcher_message("rank " + std::to_string(exit.rank) + " (local rank " + std::to_string(exit.local_rank) +
                         ", pid " + std::to_string(exit.pid) + ") failed with " + exit.describe() + others);
        begin_stop(SIGTERM);
      }
    }
    bool any_running = std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return w.running; });
    bool any_open = std::any_of(workers.begin(), workers.end(),
                                [](const Worker& w) { return w.stdout_fd >= 0 || w.stderr_fd >= 0; });
    if (!any_running) {
      if (!any_open) break;
      // A worker's own children may still hold its pipes: give them a moment, then stop reading.
      if (!drain_deadline) drain_deadline = Clock::now() + std::chrono::seconds(1);
      if (Clock::now() >= *drain_deadline) break;
    }
    // 2. Past the grace period: SIGKILL whoever ignored SIGTERM.
    if (stopping && !killed && Clock::now() >= kill_deadline) {
      signal_running(workers, SIGKILL);
      killed = true;
    }

    // 3. Wait for output, a signal, or the next deadline.
    std::vector<pollfd> fds;
    fds.push_back({signals.read_fd(), POLLIN, 0});
    for (const Worker& worker : workers) {
      if (worker.stdout_fd >= 0) fds.push_back({worker.stdout_fd, POLLIN, 0});
      if (worker.stderr_fd >= 0) fds.push_back({worker.stderr_fd, POLLIN, 0});
    }
    int timeout_ms = 200;  // also a safety net should a SIGCHLD ever be missed
    if (stopping && !killed) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_deadline - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, timeout_ms));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll() failed: ") + std::strerror(errno));
    }

    // 4. Signals: SIGCHLD is handled by the reaping above; SIGINT/SIGTERM are forwarded.
    for (int number : signals.take()) {
      if (number != SIGINT && number != SIGTERM) continue;
      if (!stopping) {
        launcher_message("received " + signal_name(number) + ", forwarding it to the workers");
        outcome.result = GroupOutcome::Result::Interrupted;
        outcome.interrupt_signal = number;
        begin_stop(number);
      } else if (!killed) {
        launcher_message("received " + signal_name(number) + " again, killing the workers");
        signal_running(workers, SIGKILL);
        killed = true;
      }
    }
    // 5. Output.
    for (Worker& worker : workers) pump_worker(worker);
  }
  for (Worker& worker : workers) {  // pipes still held by a worker's leftover children
    if (worker.stdout_fd >= 0) ::close(worker.stdout_fd);
    if (worker.stderr_fd >= 0) ::close(worker.stderr_fd);
    write_all(STDOUT_FILENO, worker.stdout_lines.flush());
    write_all(STDERR_FILENO, worker.stderr_lines.flush());
  }
  return outcome;
}

}  // namespace ember::run
