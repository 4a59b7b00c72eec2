// tests/distributed/test_ddp_deferred.cpp — DDP with a backend whose all-reduce is queued
// and waited for later (all_reduce_async: NCCL on a GPU), played on the CPU by a fake group.
//
// On a GPU a blocking all-reduce makes ember's stream wait at once, so the rest of backward
// cannot overlap the communication. DDP therefore queues each bucket's average and waits
// for it only when every bucket has been queued, right before writing the gradients back.
// The fake group's Work delivers its result only in wait() (it doubles the buffer), and
// logs when buckets are queued and waited for: the test sees the order and that the
// gradients written back are the waited-for values.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <ember/ember.h>

#include "ddp_test_model.h"

namespace dist = ember::distributed;
using ember::Tensor;

namespace {

class DeferredGroup final : public dist::ProcessGroup {
 public:
  DeferredGroup() : ProcessGroup(0, 1, std::chrono::seconds(10)) {}
  std::string backend() const override { return "deferred"; }
  void all_reduce(Tensor&, dist::ReduceOp) override { ++blocking_calls; }
  void broadcast(Tensor&, int) override {}
  void all_gather(std::vector<Tensor>& outputs, const Tensor& input) override { outputs[0].copy_(input); }
  void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, dist::ReduceOp) override {
    output.copy_(inputs[0]);
  }
  void barrier() override {}

  struct FakeWork final : dist::Work {
    DeferredGroup* group;
    Tensor tensor;
    int bucket;
    void wait() override {
      group->log.push_back("wait " + std::to_string(bucket));
      ember::NoGradGuard no_grad;
      tensor.mul_(2.0);  // the "reduced" values exist only once waited for
    }
  };
  std::unique_ptr<dist::Work> all_reduce_async(Tensor& tensor, dist::ReduceOp op) override {
    ops.push_back(op);
    const int bucket = queued++;
    log.push_back("queue " + std::to_string(bucket));
    auto work = std::make_unique<FakeWork>();
    work->group = this;
    work->tensor = tensor;
    work->bucket = bucket;
    return work;
  }

  int queued = 0, blocking_calls = 0;
  std::vector<dist::ReduceOp> ops;
  std::vector<std::string> log;
};

}  // namespace

TEST_CASE("ddp: a queued all-reduce is waited for only after backward queued every bucket, then written back",
          "[distributed][ddp]") {
  for (bool overlap : {true, false}) {
    INFO("communication thread: " << overlap);
    ember::manual_seed(3);
    auto model = std::make_shared<ember::testing::ThreeLayers>();
    ember::manual_seed(3);
    auto reference = std::make_shared<ember::testing::ThreeLayers>();
    DeferredGroup group;
    dist::DistributedDataParallel ddp(model, &group, ember::testing::ThreeLayers::kSplitCapMb);
    ddp.set_communication_overlap(overlap);
    REQUIRE(ddp.bucket_layout().size() == 3);
    Tensor inputs = ember::randn({4, 64});
    ember::mse_loss(ddp(inputs), ember::zeros({4, 2})).backward();
    ember::mse_loss((*reference)(inputs), ember::zeros({4, 2})).backward();

    // Three buckets queued as averages, no blocking all-reduce, and every wait after the
    // last queue: nothing made the device stream wait while backward was still running.
    REQUIRE(group.log == std::vector<std::string>{"queue 0", "queue 1", "queue 2", "wait 0", "wait 1", "wait 2"});
    REQUIRE(group.blocking_calls == 0);
    REQUIRE(group.ops == std::vector<dist::ReduceOp>(3, dist::ReduceOp::Avg));
    REQUIRE(ddp.reductions() == 3);
    // The gradients are the waited-for buffers (twice the local gradient here).
    const auto trained = model->parameters();
    const auto plain = reference->parameters();
    for (std::size_t i = 0; i < trained.size(); ++i) {
      INFO("parameter " << i);
      REQUIRE(trained[i].grad().allclose(plain[i].grad() * 2.0, 0.0, 1e-6));
    }
  }
}
