// tests/distributed/multiprocess.h — running a test scenario in N real processes.
//
// A distributed test needs several processes. Forking the Catch2 process itself is unsafe
// (core's thread pool may be mid-work in the copied address space), so the parent test
// re-executes this very test binary (/proc/self/exe) once per rank, asking Catch2 to run
// one *hidden* test case ("[.worker]") that plays the scenario. Each child gets torchrun's
// environment: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT (a free
// port picked per test). The parent waits with a hard limit and kills stragglers, so no
// test can hang.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ember::testing {

struct WorkerResult {
  int exit_code = -1;    // the child's exit status; -1 when killed by a signal
  int signal = 0;        // the signal that ended it, 0 if it exited
  bool killed_by_limit = false;
  std::string output;    // its stdout + stderr
};

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, close).
int free_port();

// Runs hidden test case `worker_test` in world_size processes; extra_env is added to each.
std::vector<WorkerResult> run_workers(const std::string& worker_test, int world_size,
                                      std::chrono::seconds limit = std::chrono::seconds(60),
                                      const std::map<std::string, std::string>& extra_env = {});

// True when this process is a worker started by run_workers (RANK is set).
bool is_worker();

}  // namespace ember::testing
