// tests/distributed/multiprocess.h — running a test scenario in N real processes.
//
// A distributed test needs several processes. The parent test re-executes this very test
// binary (/proc/self/exe, through posix_spawn: no fork of a process that may already run
// threads) once per rank, asking Catch2 to run one *hidden* test case ("[.worker]") that
// plays the scenario. Each child gets torchrun's environment: RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT.
//
// Ports: the parent itself serves the rendezvous TCPStore, bound to port 0 so the kernel
// picks a free port, and passes that real port on with TORCHELASTIC_USE_AGENT_STORE=True
// (torchrun's way of saying "the launcher hosts the store; rank 0 only connects"). No
// port is ever guessed, so tests running in parallel cannot collide. The parent waits
// with a hard limit and kills stragglers, so no test can hang.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ember::testing {

struct WorkerResult {
  int exit_code = -1;    // the child's exit status; -1 when killed by a signal
  int signal = 0;        // the signal that ended it, 0 if it exited
  bool killed_by_limit = false;
  double seconds = 0;    // wall time from start to exit (for messages, never asserted tightly)
  std::string output;    // its stdout + stderr
};

// "exit code 0" / "killed by signal 13 (Broken pipe)" / "killed after the limit", then the output.
std::string describe(const WorkerResult& result);

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, close).
// Only for tests that need a port nobody serves.
int free_port();

// One worker process started on its own (spawn_worker), for tests that must act on it
// while it runs: stop it with SIGSTOP, kill it. Its output goes to `log`.
struct SpawnedWorker {
  int pid = -1;
  std::string log;
  ~SpawnedWorker();  // SIGKILLs and reaps the process if it still runs, removes the log
};

// Starts hidden test case `worker_test` in one process with this process's environment,
// EMBER_TEST_WORKER=1 and `env` on top.
std::unique_ptr<SpawnedWorker> spawn_worker(const std::string& worker_test, const std::map<std::string, std::string>& env);

// Runs hidden test case `worker_test` in world_size processes; extra_env is added to each.
std::vector<WorkerResult> run_workers(const std::string& worker_test, int world_size,
                                      std::chrono::seconds limit = std::chrono::seconds(40),
                                      const std::map<std::string, std::string>& extra_env = {});

// REQUIREs that every worker exited with code 0 (with its output in the message).
void require_all_passed(const std::vector<WorkerResult>& results);

// True when this process is a worker started by run_workers.
bool is_worker();

}  // namespace ember::testing
