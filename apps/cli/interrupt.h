// apps/cli/interrupt.h — Ctrl-C stops training cleanly at the next batch boundary.
//
// The first SIGINT only sets a flag; the training loop checks it after every optimiser
// step and stops without writing a checkpoint for the unfinished epoch, so the last
// completed checkpoint on disk stays intact (checkpoints are also written atomically).
// A second Ctrl-C falls back to the default action and ends the process at once.
// Work that runs long without an optimiser step (the final evaluation) checks the flag in
// its own loop and throws Interrupted, which train_command.cpp turns into exit code 130.
#pragma once

#include <exception>

namespace ember::cli {

struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted"; }
};

// Installs the handler (idempotent). Call before training starts.
void install_interrupt_handler();
bool interrupt_requested();

}  // namespace ember::cli
