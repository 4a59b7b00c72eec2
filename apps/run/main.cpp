// apps/run/main.cpp — `ember-run`: launches a data-parallel job (torchrun's counterpart, §9.3).
//
//   ember-run --nproc-per-node N [--nnodes M --node-rank R --master-addr A --master-port P]
//             [--max-restarts K] [--grace-period S] [--timeout S] [--rdzv-id ID] -- PROGRAM ARGS...
// starts N workers of PROGRAM on this machine with RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (worker_group.h lists them all),
// prefixes each line they print with "[rank R] ", and when one fails stops the others
// and reports which rank failed and how — or, with --max-restarts K, starts the whole group
// again, up to K times. torchrun's underscore spellings (--nproc_per_node=2) work too.
// With --nnodes M > 1 every machine runs its own ember-run with its own --node-rank and the
// same --master-addr (node 0's address or host name; required) and --master-port. Restarts
// stay local to each machine: ember-run has no agent that agrees on them across nodes, as
// torchrun's rendezvous does (docs/distributed.md explains what that means).
// Exit codes:
//   0    every worker exited with 0
//   1    a worker failed (after the last restart); the message names its rank
//   2    the command line is wrong
//   128+S  the launcher got signal S (SIGINT, SIGTERM) and forwarded it to the workers
// --timeout S sets EMBER_TIMEOUT=S for the workers: how long their rendezvous and every
// collective wait for a peer (default 600 s). Every worker also gets TORCHELASTIC_RUN_ID,
// the job's id, so a worker that meets another job's store (two jobs on one --master-port)
// reports the clash instead of joining the wrong job.
// This is the only file that includes CLI11 (a slow header). See docs/cli.md.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "free_port.h"
#include "launch_options.h"
#include "signal_pipe.h"
#include "worker_group.h"

namespace {

using namespace ember::run;

constexpr int kUsageError = 2;

// Whether `program` can be executed: a path is checked directly, a bare name on $PATH
// (the same search execvp does), so a typo is one clear error before any worker starts.
bool is_executable(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string directories = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    std::size_t end = directories.find(':', start);
    std::string directory = directories.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (directory.empty()) directory = ".";
    if (::access((directory + "/" + program).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) return false;
    start = end + 1;
  }
}

// --timeout: seconds in (0, 365 days], the same rule `ember train --timeout` applies.
std::string check_timeout(const std::string& text) {
  std::size_t used = 0;
  double seconds = 0;
  try {
    seconds = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) return "expected a number of seconds, got '" + text + "'";
  if (!(seconds > 0 && seconds <= 365.0 * 24 * 3600)) return "must be in (0, 31536000] seconds, got " + text;
  return "";
}

// A fresh job id: 16 random hex digits.
std::string random_run_id() {
  std::random_device entropy;
  std::uniform_int_distribution<int> digit(0, 15);
  std::string id;
  for (int i = 0; i < 16; ++i) id += "0123456789abcdef"[digit(entropy)];
  return id;
}

int usage_error(const std::string& message) {
  std::cerr << "ember-run: error: " << message << "\n"
            << "Usage: ember-run --nproc-per-node N [OPTIONS] -- PROGRAM ARGS...  (ember-run --help lists the options)\n";
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ember-run — start the workers of a data-parallel job (torchrun's contract)", "ember-run"};
  app.footer("Usage: ember-run --nproc-per-node N [OPTIONS] -- PROGRAM ARGS...");
  LaunchOptions options;
  app.add_option("--nproc-per-node,--nproc_per_node", options.nproc_per_node, "Workers to start on this machine")
      ->check(CLI::Range(1, 1024));
  app.add_option("--nnodes", options.nnodes, "Machines taking part in the job")->check(CLI::Range(1, 65536));
  app.add_option("--node-rank,--node_rank", options.node_rank, "This machine's index, 0 .. nnodes-1")
      ->check(CLI::NonNegativeNumber);
  CLI::Option* address_option =
      app.add_option("--master-addr,--master_addr", options.master_addr,
                     "Host name or address of the machine that runs rank 0 (default 127.0.0.1: this machine; "
                     "required with --nnodes > 1)");
  CLI::Option* port_option = app.add_option("--master-port,--master_port", options.master_port,
                                            "Port of rank 0's rendezvous store (default: a free one; "
                                            "required with --nnodes > 1)")
                                 ->check(CLI::Range(1, 65535));
  app.add_option("--max-restarts,--max_restarts", options.max_restarts,
                 "Start the whole group again up to K times after a failure")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--grace-period", options.grace_period_s, "Seconds between SIGTERM and SIGKILL when stopping workers")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--timeout", options.timeout_text,
                 "Seconds the workers' rendezvous and collectives wait for a peer (EMBER_TIMEOUT; default 600)")
      ->check(CLI::Validator(check_timeout, "SECONDS"));
  CLI::Option* run_id_option = app.add_option("--rdzv-id,--rdzv_id", options.run_id,
                                              "The job's id, the same on every node (default: random on one node)");

  // Everything after the first "--" is the worker command, untouched by option parsing.
  // Without "--", parsing stops at the first word that is not an option of ember-run.
  int split = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      split = i;
      options.command.assign(argv + i + 1, argv + argc);
      break;
    }
  }
  std::vector<std::string> launcher_arguments(argv + 1, argv + split);
  std::reverse(launcher_arguments.begin(), launcher_arguments.end());  // CLI11 takes them last-first
  app.prefix_command();
  try {
    app.parse(launcher_arguments);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    return usage_error(error.what());
  }
  if (options.command.empty()) options.command = app.remaining();
  else if (!app.remaining().empty()) return usage_error("unexpected argument '" + app.remaining().front() + "' before '--'");

  if (options.command.empty()) return usage_error("no program to run: ember-run --nproc-per-node N -- PROGRAM ARGS...");
  if (options.node_rank >= options.nnodes) {
    return usage_error("--node-rank " + std::to_string(options.node_rank) + " is out of range: with --nnodes " +
                                std::to_string(options.nnodes) + " it must be in [0, " +
                                std::to_string(options.nnodes - 1) + "]");
  }
  bool port_given = port_option->count() > 0;
  if (options.nnodes > 1 && address_option->count() == 0) {
    return usage_error("--master-addr is required with --nnodes > 1: the default " + options.master_addr +
                       " reaches only this machine, so the other nodes could never meet rank 0; give the address "
                       "or host name of node 0 (the same on every node)");
  }
  if (options.nnodes > 1 && !port_given) {
    return usage_error("--master-port is required with --nnodes > 1: every machine must meet rank 0 at the same port");
  }
  if (run_id_option->count() == 0) options.run_id = options.nnodes > 1 ? "none" : random_run_id();
  if (!is_executable(options.command.front())) {
    std::cerr << "ember-run: error: cannot run '" << options.command.front() << "': not an executable file"
              << (options.command.front().find('/') == std::string::npos ? " on PATH" : "") << "\n";
    return kUsageError;
  }

  if (options.nnodes > 1 && options.max_restarts > 0) {
    // Restarts are decided by each node's launcher alone (docs/distributed.md, "When a rank dies").
    std::cerr << "ember-run: note: with --nnodes > 1, --max-restarts restarts only this node's workers; the "
                 "nodes are not coordinated (a failure elsewhere reaches them as a failed collective)\n";
  }
  try {
    SignalPipe signals;
    for (int restart = 0;; ++restart) {
      int port = port_given ? options.master_port : find_free_port();
      GroupOutcome outcome = run_worker_group(options, port, restart, signals);
      if (outcome.result == GroupOutcome::Result::Succeeded) return 0;
      if (outcome.result == GroupOutcome::Result::Interrupted) return 128 + outcome.interrupt_signal;
      const WorkerExit& failure = *outcome.first_failure;
      if (restart < options.max_restarts) {
        std::cerr << "ember-run: restarting the worker group (restart " << restart + 1 << " of "
                  << options.max_restarts << ")\n";
        continue;
      }
      std::cerr << "ember-run: error: worker group failed: rank " << failure.rank << " (local rank "
                << failure.local_rank << ") exited with " << failure.describe();
      if (options.max_restarts > 0) std::cerr << " after " << options.max_restarts << " restart(s)";
      std::cerr << "\n";
      return 1;
    }
  } catch (const std::exception& error) {
    std::cerr << "ember-run: error: " << error.what() << "\n";
    return 1;
  }
}
