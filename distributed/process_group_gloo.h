// distributed/process_group_gloo.h — the CPU process group, on Facebook's Gloo library.
//
// Tutorial §9.3 (backend="gloo"). Construction is the rendezvous: every rank opens a TCP
// "device" on its interface address (the one that routes to MASTER_ADDR), publishes that
// address in the TCPStore and connects to every other rank (a full mesh). A failure on
// the way is a DistributedError naming the rank, the step and the timeout. Collectives then call gloo::allreduce,
// gloo::broadcast, gloo::allgather, gloo::barrier with this group's timeout.
// Gloo's headers stay inside process_group_gloo.cpp (pimpl): users never include them.
#pragma once

#include <memory>
#include <string>

#include <ember/distributed/process_group.h>

namespace ember::distributed {

class ProcessGroupGloo : public ProcessGroup {
 public:
  // store: the rendezvous store (shared, kept alive by the group). interface_address: the
  // address this rank listens on for its peers (127.0.0.1 for a single machine).
  ProcessGroupGloo(std::shared_ptr<TCPStore> store, int rank, int size, Milliseconds timeout,
                   const std::string& interface_address = "127.0.0.1");
  ~ProcessGroupGloo() override;

  std::string backend() const override { return "gloo"; }
  void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum) override;
  void broadcast(Tensor& tensor, int src = 0) override;
  void all_gather(std::vector<Tensor>& outputs, const Tensor& input) override;
  void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::Sum) override;
  void barrier() override;

 private:
  struct State;  // the Gloo context and device (process_group_gloo.cpp)
  std::unique_ptr<State> state_;
  std::shared_ptr<TCPStore> store_;
};

}  // namespace ember::distributed
