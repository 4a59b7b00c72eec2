// tests/distributed/test_ddp_robustness.cpp — DDP when things go wrong, in one process.
//
// DistributedDataParallel takes any ProcessGroup, so these tests give it a LocalGroup (a
// world of one, no network, test_groups.h) whose all-reduce can be told to fail. They
// check what must hold however many ranks there are: gradients are reduced as soon as they
// exist, a backward cut short by an exception leaves DDP usable, an unused parameter is
// named, and a DDP object that goes away takes its hooks with it.
#include <catch2/catch.hpp>

#include <ember/core/autograd_meta.h>
#include <ember/ember.h>

#include "ddp_test_model.h"
#include "test_groups.h"

namespace dist = ember::distributed;
using ember::Tensor;
using ember::testing::LocalGroup;
using ember::testing::ThreeLayers;

namespace {

Tensor step_loss(ember::nn::Module& model, ember::Generator& data) {
  Tensor inputs = ember::randn({4, 64}, {}, &data);
  Tensor targets = ember::randn({4, 2}, {}, &data);
  return ember::mse_loss(model(inputs), targets);
}

void require_same_parameters(ember::nn::Module& a, ember::nn::Module& b) {
  auto left = a.parameters();
  auto right = b.parameters();
  REQUIRE(left.size() == right.size());
  for (std::size_t i = 0; i < left.size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(left[i].equal(right[i]));
  }
}

}  // namespace

TEST_CASE("ddp: a bucket is reduced before backward reaches the first layer, even when an old graph "
          "keeps the gradient accumulators alive", "[distributed][ddp]") {
  // An AccumulateGrad node is shared by every graph its leaf is in. Keeping step 0's loss
  // alive keeps step 0's accumulators, created before any node of step 1's graph: ordered
  // by creation they would run after all of step 1's backward, and so would DDP's hooks.
  // With PyTorch's priority (the highest), they run as soon as their gradient is ready.
  LocalGroup group;
  ember::manual_seed(3);
  auto model = std::make_shared<ThreeLayers>();
  dist::DistributedDataParallel ddp(model, &group, ThreeLayers::kSplitCapMb);
  ddp.set_communication_overlap(false);  // reduce inline: the order is then deterministic
  REQUIRE(ddp.bucket_layout() == std::vector<std::vector<std::size_t>>{{5, 4, 3, 2}, {1}, {0}});
  int reduced_when_first_layer_began = -1;
  model->on_first_layer_gradient = [&] { reduced_when_first_layer_began = group.all_reduces.load(); };
  ember::Generator data(1);
  Tensor kept_loss;  // what `losses.push_back(loss)` does by mistake in many training loops
  for (int step = 0; step < 3; ++step) {
    INFO("step " << step);
    const int before = group.all_reduces.load();
    Tensor loss = step_loss(ddp, data);
    loss.backward();
    REQUIRE(reduced_when_first_layer_began - before == 1);  // the first bucket, and only it
    REQUIRE(group.all_reduces.load() - before == 3);
    if (step == 0) kept_loss = loss;
  }
}

TEST_CASE("ddp: a failed all-reduce ends backward with its error and the next forward starts clean",
          "[distributed][ddp]") {
  for (bool overlap : {true, false}) {
    INFO("overlap " << overlap);
    LocalGroup group;
    ember::manual_seed(4);
    auto model = std::make_shared<ThreeLayers>();
    ember::manual_seed(4);
    auto reference = std::make_shared<ThreeLayers>();
    dist::DistributedDataParallel ddp(model, &group, ThreeLayers::kSplitCapMb);
    ddp.set_communication_overlap(overlap);
    ember::Generator data(2), reference_data(2);

    group.fail_next_all_reduce = true;  // the first bucket's all-reduce fails
    REQUIRE_THROWS_WITH(step_loss(ddp, data).backward(), Catch::Contains("LocalGroup all_reduce failed on rank 0"));
    step_loss(*reference, reference_data);  // the same data, consumed
    ddp.zero_grad();

    // Training goes on; in a world of one, averaging changes nothing, so DDP's model
    // follows the plain one bit for bit — which it could not if a bucket were off by one.
    ember::optim::SGD optimizer(ddp.parameters(), {.lr = 0.05});
    ember::optim::SGD reference_optimizer(reference->parameters(), {.lr = 0.05});
    const auto reductions = ddp.reductions();
    for (int step = 0; step < 2; ++step) {
      optimizer.zero_grad();
      step_loss(ddp, data).backward();
      optimizer.step();
      reference_optimizer.zero_grad();
      step_loss(*reference, reference_data).backward();
      reference_optimizer.step();
    }
    REQUIRE(ddp.reductions() - reductions == 2 * 3);
    require_same_parameters(*model, *reference);
  }
}

TEST_CASE("ddp: an exception thrown mid-backward by something else leaves DDP usable", "[distributed][ddp]") {
  LocalGroup group;
  ember::manual_seed(5);
  auto model = std::make_shared<ThreeLayers>();
  ember::manual_seed(5);
  auto reference = std::make_shared<ThreeLayers>();
  dist::DistributedDataParallel ddp(model, &group, ThreeLayers::kSplitCapMb);
  // A user's gradient hook on fc1.weight throws once: backward stops after fc2's gradients
  // and fc1's bias have arrived (the first bucket is three quarters full).
  bool thrown = false;
  model->fc1->weight.register_hook([&thrown](const Tensor&) -> Tensor {
    if (thrown) return Tensor();
    thrown = true;
    throw ember::ValueError("a hook gave up");
  });
  ember::Generator data(6), reference_data(6);
  REQUIRE_THROWS_WITH(step_loss(ddp, data).backward(), "a hook gave up");
  step_loss(*reference, reference_data);
  ddp.zero_grad();

  ember::optim::SGD optimizer(ddp.parameters(), {.lr = 0.05});
  ember::optim::SGD reference_optimizer(reference->parameters(), {.lr = 0.05});
  for (int step = 0; step < 2; ++step) {
    optimizer.zero_grad();
    REQUIRE_NOTHROW(step_loss(ddp, data).backward());  // no complaint about the cut-short backward
    optimizer.step();
    reference_optimizer.zero_grad();
    step_loss(*reference, reference_data).backward();
    reference_optimizer.step();
  }
  REQUIRE(ddp.reductions() == 2 * 3);
  require_same_parameters(*model, *reference);
}

namespace {
struct WithUnusedLayer : ember::nn::Module {
  std::shared_ptr<ember::nn::Linear> used, unused;
  WithUnusedLayer() {
    used = register_module("used", std::make_shared<ember::nn::Linear>(3, 2));
    unused = register_module("unused", std::make_shared<ember::nn::Linear>(3, 2));
  }
  Tensor forward(const Tensor& x) override { return (*used)(x); }
};
}  // namespace

TEST_CASE("ddp: an unused parameter is named at the next forward", "[distributed][ddp]") {
  LocalGroup group;
  auto model = std::make_shared<WithUnusedLayer>();
  dist::DistributedDataParallel ddp(model, &group, /*bucket_cap_mb=*/0.00001);  // one bucket per parameter
  Tensor input = ember::ones({4, 3});
  ember::sum(ddp(input)).backward();
  try {
    ddp(input);
    FAIL("the forward after an incomplete backward did not complain");
  } catch (const dist::DistributedError& error) {
    const std::string message = error.what();
    INFO(message);
    REQUIRE_THAT(message, Catch::StartsWith("DistributedDataParallel: the previous backward did not produce gradients "
                                            "for every parameter (unused parameters are not supported)"));
    REQUIRE_THAT(message, Catch::EndsWith("parameters without a gradient: unused.bias, unused.weight. Gradients "
                                          "were not synchronized."));
  }
}

TEST_CASE("ddp: destroying DDP takes its hooks off the parameters and the module trains on", "[distributed][ddp]") {
  LocalGroup group;
  auto model = std::make_shared<ThreeLayers>();
  auto hook_count = [&model] {
    std::size_t count = 0;
    for (const Tensor& parameter : model->parameters())
      if (const ember::AutogradMeta* meta = parameter.autograd_meta()) count += meta->post_accumulate_hooks.size();
    return count;
  };
  ember::PostAccumulateGradHook escaped;
  {
    dist::DistributedDataParallel ddp(model, &group);
    REQUIRE(hook_count() == 6);
    escaped = model->fc0->weight.autograd_meta()->post_accumulate_hooks.at(0);
  }
  REQUIRE(hook_count() == 0);
  // A copy that escaped holds the DDP object weakly: calling it now does nothing (under
  // ASan, a hook holding a raw pointer would be a use after free here).
  escaped(model->fc0->weight);
  // The module lives on without DDP, and can be wrapped again.
  ember::Generator data(8);
  step_loss(*model, data).backward();
  REQUIRE(model->fc0->weight.grad().defined());
  dist::DistributedDataParallel again(model, &group);
  REQUIRE(hook_count() == 6);
  model->zero_grad();
  step_loss(again, data).backward();
  REQUIRE(again.reductions() == 1);  // default 25 MB cap: one bucket
}
