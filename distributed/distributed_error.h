// distributed/distributed_error.h — the exception a failed or timed-out collective throws.
//
// Tutorial §9.3. In PyTorch a collective whose peer died raises a RuntimeError naming the
// operation and the timeout (e.g. "[Rank 0] Watchdog caught collective operation
// timeout"). ember turns every failure of the communication layer into DistributedError
// with the operation, the rank and the timeout in the message, so a learner sees *which*
// step of *which* process gave up, instead of a hang.
#pragma once

#include <ember/core/error.h>

namespace ember::distributed {

class DistributedError : public Error {
  using Error::Error;
};

}  // namespace ember::distributed
