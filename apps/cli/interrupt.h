// apps/cli/interrupt.h — Ctrl-C (SIGINT) and SIGTERM stop training cleanly at the next batch boundary.
//
// SIGTERM is what `timeout`, `kill`, batch schedulers and `ember-run` (stopping a job)
// send; it is handled exactly like Ctrl-C. The first signal only sets a flag; the training
// loop checks it after every optimiser step, so the step under way (and a checkpoint being
// written) finishes, and the run stops without writing a checkpoint for the unfinished
// epoch: the last completed checkpoint on disk stays intact (checkpoints are also written
// atomically, and temporary files of a writer killed harder are removed by the next save).
// The exit code is the shell's convention, 128 + the signal: 130 for SIGINT, 143 for SIGTERM.
// A second signal falls back to the default action and ends the process at once.
// Work that runs long without an optimiser step (the final evaluation) checks the flag in
// its own loop and throws Interrupted, which train_command.cpp turns into that exit code.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

namespace ember::cli {

struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted"; }
};

// Installs the handler for SIGINT and SIGTERM (idempotent). Call before training starts.
void install_interrupt_handler();
bool interrupt_requested();
// The first signal received (SIGINT or SIGTERM); 0 when none.
int interrupt_signal();
// 128 + that signal (130 or 143).
int interrupted_exit_code();
// How the stop is told: "interrupted" (Ctrl-C) or "terminated by SIGTERM".
std::string interrupted_word();

// Test seam: with EMBER_TEST_INTERRUPT_AT_STEP=N in the environment, raises SIGINT (through
// the real handler) when called with step N, so a test can stop a run at a known optimiser
// step — the exact mid-epoch --resume tests need one; a real Ctrl-C lands wherever it
// lands. The training loop calls it after each step. Not for production use.
void interrupt_at_test_step(std::int64_t step);

}  // namespace ember::cli
