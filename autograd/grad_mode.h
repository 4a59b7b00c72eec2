// autograd/grad_mode.h — switching recording off and on: NoGradGuard, AutoGradMode.
//
// Tutorial §4 (and §5's `with torch.no_grad():`). The flag itself lives in core
// (ember::is_grad_enabled / set_grad_enabled, core/autograd_meta.h) and is thread-local,
// so a guard in one thread never changes recording in another. The guards are RAII: the
// previous mode comes back when the guard goes out of scope, even through an exception.
#pragma once

#include <ember/core/autograd_meta.h>

namespace ember {

// Sets grad mode to `enabled` for the guard's lifetime (torch.set_grad_enabled as a context).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : previous_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~AutoGradMode() { set_grad_enabled(previous_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

// `with torch.no_grad():` — ops run but record nothing.
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

// `with torch.enable_grad():` — recording back on inside a no_grad region.
class EnableGradGuard : public AutoGradMode {
 public:
  EnableGradGuard() : AutoGradMode(true) {}
};

}  // namespace ember
