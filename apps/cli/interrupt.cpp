// apps/cli/interrupt.cpp — the SIGINT flag (see interrupt.h).
#include "interrupt.h"

#include <csignal>

namespace ember::cli {

namespace {
// sig_atomic_t is the one type a signal handler may portably write.
volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_interrupt(int) {
  interrupted = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C kills the process immediately
}
}  // namespace

void install_interrupt_handler() { std::signal(SIGINT, on_interrupt); }
bool interrupt_requested() { return interrupted != 0; }

}  // namespace ember::cli
