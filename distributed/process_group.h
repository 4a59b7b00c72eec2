// distributed/process_group.h — a group of processes that run collectives together.
//
// Tutorial §9.3 (torch.distributed). Every process of a data-parallel job runs the same
// program; they differ only by their rank (0 .. world_size-1). A process group lets them
//   all_reduce(t, op)             every rank ends with op(t over all ranks)   (gradients)
//   broadcast(t, src)             every rank ends with src's t                (initial weights)
//   all_gather(outputs, t)        outputs[r] = rank r's t
//   reduce_scatter(out, inputs)   out = op over ranks of inputs[my rank]
//   barrier()                     nobody continues until everybody arrived
// All of them work *in place* on CPU tensors of float32, float64, int64 (and int32), like
// torch.distributed's. Each call has a timeout: a peer that died or hangs makes the call
// throw DistributedError ("Gloo all_reduce failed on rank 0 after 37 ms (timeout 2000 ms;
// ...): ...", the time really spent, then the timeout) instead of blocking for ever.
//
// init_process_group follows torchrun's contract: a rank or world size not given is read
// from the environment variables RANK and WORLD_SIZE; the rendezvous address always comes
// from MASTER_ADDR (a host name or an IPv4/IPv6 address) and MASTER_PORT (defaults
// 127.0.0.1 and 29500 when unset). Rank 0 serves the TCPStore on that port (on every
// interface), unless TORCHELASTIC_USE_AGENT_STORE=True says the launcher already serves it
// (then rank 0 connects like the others). Gloo listens on the local address that routes
// to MASTER_ADDR, so the same code works on one machine or several. A rendezvous that
// fails throws DistributedError naming the rank, the step and the timeout
// (rendezvous_error.h). With backend "nccl", select the process's GPU first
// (ember::cuda::set_device(get_local_rank())): the group binds to the current device.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/distributed/distributed_error.h>
#include <ember/distributed/tcp_store.h>

namespace ember::distributed {

// torch.distributed.ReduceOp. Avg is Sum divided by the world size (floating dtypes only).
enum class ReduceOp { Sum, Avg, Max, Min };
std::string reduce_op_name(ReduceOp op);  // "SUM", "AVG", ... (PyTorch's spelling)

// How long a collective or the rendezvous may wait for a peer before throwing
// DistributedError: 10 minutes (PyTorch's NCCL default; its Gloo default is 30). Tests
// pass a few seconds. The environment variable EMBER_TIMEOUT (seconds; set by
// `ember-run --timeout`) replaces it for an init_process_group that is given no timeout.
constexpr Milliseconds kDefaultTimeout = std::chrono::minutes(10);
// The longest timeout accepted (a year): longer ones would overflow the clock's deadline.
constexpr Milliseconds kMaxTimeout = std::chrono::hours(24 * 365);

// EMBER_TIMEOUT as a timeout: kDefaultTimeout when unset or empty; ValueError "EMBER_TIMEOUT
// must be a number of seconds in (0, 31536000], got 'abc'" when it is not one.
Milliseconds timeout_from_environment();
// A timeout of `seconds` (> 0, at most kMaxTimeout; ValueError otherwise naming `what`),
// rounded up to whole milliseconds.
Milliseconds timeout_from_seconds(double seconds, const std::string& what);

// A collective that has been queued but not yet waited for (PyTorch's Work, returned by a
// collective called with async_op=True).
class Work {
 public:
  virtual ~Work() = default;
  // Makes work queued later on ember's device stream see the result (NCCL: that stream
  // waits on the collective's event; the host polls it for errors and the timeout), and
  // throws DistributedError when the collective failed or timed out.
  virtual void wait() = 0;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual std::string backend() const = 0;  // "gloo" or "nccl"
  int rank() const { return rank_; }
  int size() const { return size_; }
  Milliseconds timeout() const { return timeout_; }

  virtual void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum) = 0;
  virtual void broadcast(Tensor& tensor, int src = 0) = 0;
  // outputs must hold world_size tensors shaped like input (PyTorch's tensor_list).
  virtual void all_gather(std::vector<Tensor>& outputs, const Tensor& input) = 0;
  // inputs holds world_size tensors shaped like output; output = op over ranks of inputs[rank].
  virtual void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::Sum) = 0;
  virtual void barrier() = 0;
  // all_reduce queued without making anyone wait for it, for a contiguous tensor that stays
  // alive until Work::wait(); nullptr where the backend has only the blocking all_reduce
  // (Gloo). DDP uses it on GPUs so that backward's kernels overlap the communication.
  virtual std::unique_ptr<Work> all_reduce_async(Tensor& tensor, ReduceOp op = ReduceOp::Sum) {
    static_cast<void>(tensor);
    static_cast<void>(op);
    return nullptr;
  }

 protected:
  ProcessGroup(int rank, int size, Milliseconds timeout) : rank_(rank), size_(size), timeout_(timeout) {}
  int rank_;
  int size_;
  Milliseconds timeout_;
};

// ------------------------------------------------------------------ the default group
// backend: "gloo" (CPU tensors) or "nccl" (CUDA tensors, one GPU per process; in a build
// without CUDA and NCCL it throws DistributedError "Distributed package doesn't have NCCL built in").
// rank / world_size < 0: read RANK / WORLD_SIZE from the environment. timeout zero (the
// default): timeout_from_environment().
// TORCHELASTIC_RUN_ID (set by ember-run and torchrun) is the job's identity: rank 0 records
// it in the store and every other rank compares, so a rank that reaches another job's store
// (two jobs given one MASTER_PORT) throws "port P is in use by another job" at once instead
// of joining — or disturbing — that job.
void init_process_group(const std::string& backend = "gloo", int rank = -1, int world_size = -1,
                        Milliseconds timeout = Milliseconds::zero());
void destroy_process_group();
bool is_initialized();
// The default group; throws DistributedError("Default process group has not been
// initialized, please make sure to call init_process_group.") when there is none.
ProcessGroup& default_group();
int get_rank();
int get_world_size();
// LOCAL_RANK from the environment (the process's index on its machine), 0 when unset.
int get_local_rank();
std::string get_backend();
// torch.distributed.is_nccl_available() / is_gloo_available(): was this library built with
// the backend? (Answered where the library is compiled, so a program linked to it hears the truth.)
bool is_nccl_available();
bool is_gloo_available();

// Collectives on the default group (or on `group` when given).
void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum, ProcessGroup* group = nullptr);
void broadcast(Tensor& tensor, int src = 0, ProcessGroup* group = nullptr);
void all_gather(std::vector<Tensor>& outputs, const Tensor& input, ProcessGroup* group = nullptr);
void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::Sum,
                    ProcessGroup* group = nullptr);
void barrier(ProcessGroup* group = nullptr);

}  // namespace ember::distributed
