// tests/distributed/test_groups.h — process groups made for tests (DDP takes any ProcessGroup*).
//
//   RecordingGroup  forwards to a real group and counts the all-reduces that have *started*
//                   (entered, on whichever thread), so a test can see when DDP launched one.
//   LocalGroup      a world of one process, no network: collectives leave tensors as they
//                   are (what any reduction over one rank does), and the next all-reduce can
//                   be told to throw, as a dead peer would make it.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <ember/distributed/process_group.h>

namespace ember::testing {

class RecordingGroup : public distributed::ProcessGroup {
 public:
  explicit RecordingGroup(distributed::ProcessGroup& inner)
      : ProcessGroup(inner.rank(), inner.size(), inner.timeout()), inner_(inner) {}
  std::string backend() const override { return inner_.backend(); }
  void all_reduce(Tensor& tensor, distributed::ReduceOp op) override {
    all_reduces_started.fetch_add(1);
    inner_.all_reduce(tensor, op);
  }
  void broadcast(Tensor& tensor, int src) override { inner_.broadcast(tensor, src); }
  void all_gather(std::vector<Tensor>& outputs, const Tensor& input) override { inner_.all_gather(outputs, input); }
  void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, distributed::ReduceOp op) override {
    inner_.reduce_scatter(output, inputs, op);
  }
  void barrier() override { inner_.barrier(); }

  std::atomic<int> all_reduces_started{0};

 private:
  distributed::ProcessGroup& inner_;
};

class LocalGroup : public distributed::ProcessGroup {
 public:
  LocalGroup() : ProcessGroup(0, 1, std::chrono::seconds(1)) {}
  std::string backend() const override { return "local"; }
  void all_reduce(Tensor&, distributed::ReduceOp) override {
    ++all_reduces;
    if (fail_next_all_reduce) {
      fail_next_all_reduce = false;
      throw distributed::DistributedError("LocalGroup all_reduce failed on rank 0 after timeout 1000 ms (test)");
    }
  }
  void broadcast(Tensor&, int) override {}
  void all_gather(std::vector<Tensor>& outputs, const Tensor& input) override { outputs.at(0).copy_(input); }
  void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, distributed::ReduceOp) override {
    output.copy_(inputs.at(0));
  }
  void barrier() override {}

  std::atomic<int> all_reduces{0};
  std::atomic<bool> fail_next_all_reduce{false};
};

}  // namespace ember::testing
