// distributed/process_group_nccl.h — the GPU process group, on NVIDIA's NCCL library.
//
// Tutorial §9.3 (backend="nccl"). Compiled only when ember is built with CUDA and NCCL is
// found (EMBER_HAVE_NCCL); otherwise init_process_group("nccl") throws "Distributed package
// doesn't have NCCL built in". The same collectives as ProcessGroupGloo, on CUDA tensors:
//   - rendezvous: rank 0 creates an ncclUniqueId (an opaque 128-byte token naming the
//     job) and publishes it in the TCPStore; every other rank reads it, then all call
//     ncclCommInitRank. One communicator per process, bound to one GPU: the current CUDA
//     device at construction (set it from LOCAL_RANK first, as in PyTorch scripts);
//   - every collective runs on this group's own CUDA stream, ordered after the work
//     already queued on ember's stream (an event) and before anything queued later;
//   - failure: the host waits for completion polling ncclCommGetAsyncError; an NCCL error,
//     or the timeout expiring, aborts the communicator (ncclCommAbort) and throws
//     DistributedError naming the operation, the rank and the timeout. An aborted group
//     cannot be used again (as in PyTorch, the job must restart).
// NCCL's and CUDA's headers stay inside process_group_nccl.cpp.
#pragma once

#include <memory>

#include <ember/distributed/process_group.h>

namespace ember::distributed {

class ProcessGroupNCCL : public ProcessGroup {
 public:
  ProcessGroupNCCL(std::shared_ptr<TCPStore> store, int rank, int size, Milliseconds timeout);
  ~ProcessGroupNCCL() override;

  std::string backend() const override { return "nccl"; }
  // The CUDA device index this group's communicator is bound to.
  int device_index() const;
  void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum) override;
  // Queued on this group's stream with its own "done" event; ember's stream waits on that
  // event only in Work::wait(), so kernels queued meanwhile run alongside the collective.
  std::unique_ptr<Work> all_reduce_async(Tensor& tensor, ReduceOp op = ReduceOp::Sum) override;
  void broadcast(Tensor& tensor, int src = 0) override;
  void all_gather(std::vector<Tensor>& outputs, const Tensor& input) override;
  void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::Sum) override;
  void barrier() override;

  struct State;  // communicator, stream, events: defined and used only in process_group_nccl.cpp

 private:
  std::unique_ptr<State> state_;
  std::shared_ptr<TCPStore> store_;
};

}  // namespace ember::distributed
