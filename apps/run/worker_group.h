// apps/run/worker_group.h — starts one group of workers and watches it until it is over.
//
// One "group" is nproc_per_node processes of the same command, started together, each with
// torchrun's environment (tutorial §9.3):
//   RANK              global rank: node_rank * nproc_per_node + LOCAL_RANK
//   WORLD_SIZE        nnodes * nproc_per_node
//   LOCAL_RANK        index on this machine (which GPU to use)
//   LOCAL_WORLD_SIZE  nproc_per_node
//   GROUP_RANK        node_rank
//   MASTER_ADDR, MASTER_PORT          where rank 0 serves the rendezvous store
//   TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS
//   TORCHELASTIC_RUN_ID  the job's id (--rdzv-id): the store refuses workers of another job
//   EMBER_TIMEOUT        --timeout, when given: the rendezvous and collective timeout, seconds
// and OMP_NUM_THREADS=1 when several workers share the machine and it is unset (as
// torchrun does: N workers each starting one thread per core would oversubscribe it).
// Every worker runs in its own process group with stdin from /dev/null; its stdout and
// stderr come back through pipes and are copied, line by line and prefixed "[rank R] ",
// to the launcher's stdout and stderr.
//
// The group ends when every worker has exited. The first worker that fails (non-zero exit
// code or killed by a signal) makes the launcher stop the others: SIGTERM to their process
// groups, then SIGKILL after the grace period. SIGINT/SIGTERM sent to the launcher are
// forwarded the same way. Restarting is the caller's business (main.cpp).
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

#include "launch_options.h"
#include "signal_pipe.h"

namespace ember::run {

struct WorkerExit {
  int rank = 0;
  int local_rank = 0;
  pid_t pid = 0;
  bool signaled = false;  // true: killed by signal `code`; false: exited with code `code`
  int code = 0;
  bool failed() const { return signaled || code != 0; }
  // "exit code 3" or "signal 9 (SIGKILL)".
  std::string describe() const;
};

struct GroupOutcome {
  enum class Result { Succeeded, Failed, Interrupted };
  Result result = Result::Succeeded;
  std::optional<WorkerExit> first_failure;  // set when Failed
  int interrupt_signal = 0;                 // set when Interrupted
};

// Runs the group to its end. `restart_count` is how many times it was restarted before.
GroupOutcome run_worker_group(const LaunchOptions& options, int master_port, int restart_count, SignalPipe& signals);

// "SIGKILL", "SIGSEGV", ... or "signal N" for the rest.
std::string signal_name(int number);

}  // namespace ember::run
