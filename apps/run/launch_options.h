// apps/run/launch_options.h — what `ember-run` was asked to do, as a plain struct.
//
// main.cpp fills it from the command line; worker_group.cpp only reads it. The names follow
// torchrun's flags (--nproc-per-node, --nnodes, --node-rank, --master-addr, --master-port,
// --max-restarts), so the tutorial's `torchrun --nproc_per_node=2 script.py` (§9.3) reads
// `ember-run --nproc-per-node 2 -- program`.
#pragma once

#include <string>
#include <vector>

namespace ember::run {

struct LaunchOptions {
  int nproc_per_node = 1;   // workers started on this machine
  int nnodes = 1;           // machines taking part
  int node_rank = 0;        // this machine's index among them
  std::string master_addr = "127.0.0.1";  // where rank 0 serves the rendezvous store
  int master_port = 0;      // 0: pick a free port (only allowed with nnodes == 1)
  int max_restarts = 0;     // how many times a failed group is started again
  double grace_period_s = 5.0;  // SIGTERM -> SIGKILL delay when stopping workers
  std::vector<std::string> command;  // PROGRAM ARGS...
  // --timeout SECONDS, as given: passed to the workers as EMBER_TIMEOUT (empty: not given,
  // the workers' own EMBER_TIMEOUT or their default applies).
  std::string timeout_text;
  // TORCHELASTIC_RUN_ID for the workers (--rdzv-id): the same on every node of one job.
  // Default: a random id on one node, "none" with several (each node's launcher would
  // otherwise draw its own).
  std::string run_id;

  int world_size() const { return nnodes * nproc_per_node; }
  // The global rank of this machine's local_rank-th worker (torchrun: node_rank * nproc + local).
  int global_rank(int local_rank) const { return node_rank * nproc_per_node + local_rank; }
};

}  // namespace ember::run
