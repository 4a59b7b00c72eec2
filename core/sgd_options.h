// core/sgd_options.h — optim::SGDOptions: torch.optim.SGD's hyper-parameters, one object
// from the command line to the kernel.
//
// Issue 18, item 5 ("one hyperparameter object"): `ember train --lr 0.5` fills this struct
// (inside apps/cli's TrainOptions), optim::SGD validates it once with PyTorch's messages
// and keeps it as its param_group (nn/sgd.h), the checkpoint records it, and the fused
// step's plan embeds it whole (SgdPlan in core/fused_plans.h), so the CPU loop and the
// CUDA kernel read `plan.options.lr` — the same field the command line wrote, with no
// field-by-field copies on the way. It lives in core, below autograd and nn, because the
// kernel plan embeds it; it is plain data (a CUDA kernel takes the plan by value).
// docs/architecture.md ("One hyperparameter object") traces the path.
// Usage: ember::optim::SGD optimizer(model->parameters(), {.lr = 0.5, .momentum = 0.9});
#pragma once

namespace ember::optim {

// PyTorch's names, order and defaults (torch.optim.SGD(params, lr=1e-3, momentum=0,
// dampening=0, weight_decay=0, nesterov=False, *, maximize=False, ..., fused=None)).
struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;  // ascend instead of descend
  // One backend pass per parameter (native::sgd_step_: param, grad and buffer each read
  // once), bit-identical to the composite mul_/add_ sequence on the CPU. false runs that
  // composite sequence (also taken for a non-contiguous parameter). PyTorch 2.x has the
  // same option name, with fewer guarantees. Not a param_group entry (PyTorch's fused
  // selects an implementation, not an update).
  bool fused = true;
};

}  // namespace ember::optim
