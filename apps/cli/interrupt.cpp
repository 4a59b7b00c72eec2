// apps/cli/interrupt.cpp — the SIGINT / SIGTERM flag (see interrupt.h).
#include "interrupt.h"

#include <signal.h>

#include <cstdlib>
#include <string>

namespace ember::cli {

namespace {
// sig_atomic_t is the one type a signal handler may portably write. 0: no signal yet.
volatile sig_atomic_t received_signal = 0;

extern "C" void on_stop_signal(int number) {
  if (received_signal == 0) received_signal = number;
  // A second Ctrl-C or SIGTERM kills the process at once: both back to their default action.
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(SIGINT, &fallback, nullptr);  // async-signal-safe, unlike std::signal's guarantees
  sigaction(SIGTERM, &fallback, nullptr);
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a signal during a blocking write (a checkpoint, the log) must not fail it with EINTR.
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupt_requested() { return received_signal != 0; }
int interrupt_signal() { return received_signal; }
int interrupted_exit_code() { return 128 + (received_signal != 0 ? received_signal : SIGINT); }
std::string interrupted_word() { return received_signal == SIGTERM ? "terminated by SIGTERM" : "interrupted"; }

void interrupt_at_test_step(std::int64_t step) {
  static const std::int64_t test_step = [] {
    const char* text = std::getenv("EMBER_TEST_INTERRUPT_AT_STEP");
    return text != nullptr ? std::strtoll(text, nullptr, 10) : -1;
  }();
  if (step == test_step) raise(SIGINT);
}

}  // namespace ember::cli
