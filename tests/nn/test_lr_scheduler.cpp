// tests/nn/test_lr_scheduler.cpp — optim::lr_scheduler against PyTorch
// (tests/reference/gen_lr_scheduler.py -> lr_scheduler.json).
//
// Every schedule runs the reference's 40 steps and must produce PyTorch's float64 lr after
// each one exactly (the same operations in the same order), and its momentum (OneCycleLR
// cycles SGD's momentum / Adam's beta1). At step 20 a second optimizer and scheduler are
// built and given the first ones' state_dicts: they must continue identically. Then the
// checks: PyTorch's constructor messages, and load_state_dict refusing bad state whole.
// Cases with parameter groups (different initial lrs) check every group's lr each step.
#include <catch2/catch.hpp>

#include <memory>

#include <ember/ember.h>
#include <ember/nn/lr_one_cycle.h>
#include <ember/nn/lr_plateau.h>
#include <ember/nn/lr_scheduler.h>

#include "nn_test_helpers.h"

using namespace ember;
using namespace ember::optim::lr_scheduler;
using Catch::Matchers::Contains;
using ember::testing::load_reference;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json value = load_reference("lr_scheduler.json");
  return value;
}

// A case with "group_lrs" gets one parameter group per listed lr (each its own parameter).
std::unique_ptr<optim::Optimizer> make_optimizer(const nlohmann::json& c) {
  std::vector<optim::ParamGroup> groups;
  if (c.contains("group_lrs")) {
    for (const auto& lr : c.at("group_lrs")) groups.push_back({.params = {ember::zeros({2}).requires_grad_()}, .lr = lr.get<double>()});
  } else {
    groups.push_back({.params = {ember::zeros({2}).requires_grad_()}});
  }
  if (c.at("optimizer") == "sgd") {
    return std::make_unique<optim::SGD>(groups, optim::SGDOptions{.lr = c.at("lr").get<double>(),
                                                                  .momentum = c.value("momentum", 0.0)});
  }
  optim::AdamOptions options;
  options.lr = c.at("lr").get<double>();
  return std::make_unique<optim::Adam>(groups, options);
}

// Every group's lr as the optimizer holds it.
std::vector<double> group_lrs(const optim::Optimizer& optimizer) {
  std::vector<double> lrs;
  for (std::size_t g = 0; g < optimizer.param_group_count(); ++g) lrs.push_back(optimizer.group_learning_rate(g));
  return lrs;
}

std::unique_ptr<LRScheduler> make_scheduler(optim::Optimizer& optimizer, const std::string& name,
                                            const nlohmann::json& a) {
  if (name == "StepLR") return std::make_unique<StepLR>(optimizer, a.at("step_size"), a.value("gamma", 0.1));
  if (name == "MultiStepLR") {
    return std::make_unique<MultiStepLR>(optimizer, a.at("milestones").get<std::vector<std::int64_t>>(),
                                         a.value("gamma", 0.1));
  }
  if (name == "ExponentialLR") return std::make_unique<ExponentialLR>(optimizer, a.at("gamma"));
  if (name == "LinearLR") {
    return std::make_unique<LinearLR>(optimizer, a.at("start_factor"), a.at("end_factor"), a.at("total_iters"));
  }
  if (name == "CosineAnnealingLR") {
    return std::make_unique<CosineAnnealingLR>(optimizer, a.at("T_max"), a.value("eta_min", 0.0));
  }
  if (name == "OneCycleLR") {
    OneCycleOptions options;
    options.three_phase = a.value("three_phase", false);
    options.anneal_strategy = a.value("anneal_strategy", std::string("cos"));
    options.pct_start = a.value("pct_start", 0.3);
    options.div_factor = a.value("div_factor", 25.0);
    options.final_div_factor = a.value("final_div_factor", 1e4);
    options.cycle_momentum = a.value("cycle_momentum", true);
    return std::make_unique<OneCycleLR>(optimizer, a.at("max_lr"), a.at("total_steps"), options);
  }
  if (name == "ReduceLROnPlateau") {
    ReduceLROnPlateauOptions options;
    options.mode = a.value("mode", std::string("min"));
    options.factor = a.value("factor", 0.1);
    options.patience = a.value("patience", 10);
    options.cooldown = a.value("cooldown", 0);
    options.min_lr = a.value("min_lr", 0.0);
    options.threshold = a.value("threshold", 1e-4);
    options.threshold_mode = a.value("threshold_mode", std::string("rel"));
    return std::make_unique<ReduceLROnPlateau>(optimizer, options);
  }
  REQUIRE(name == "SequentialLR");
  std::vector<std::unique_ptr<LRScheduler>> parts;
  for (const auto& part : a.at("schedulers")) parts.push_back(make_scheduler(optimizer, part.at("name"), part.at("args")));
  return std::make_unique<SequentialLR>(optimizer, std::move(parts), a.at("milestones").get<std::vector<std::int64_t>>());
}

void step(optim::Optimizer& optimizer, LRScheduler& scheduler, const nlohmann::json& c, std::size_t k) {
  optimizer.step();
  if (auto* plateau = dynamic_cast<ReduceLROnPlateau*>(&scheduler)) {
    plateau->step(c.at("metrics")[k].get<double>());
  } else {
    scheduler.step();
  }
}

}  // namespace

TEST_CASE("lr schedulers produce PyTorch's lr and momentum sequences exactly, also after a state_dict round trip",
          "[nn][lr_scheduler]") {
  const std::size_t steps = reference().at("steps"), resume_at = reference().at("resume_at");
  for (const auto& c : reference().at("cases")) {
    INFO(c.at("name").get<std::string>() << " " << c.at("args").dump() << " on " << c.at("optimizer").get<std::string>());
    auto optimizer = make_optimizer(c);
    auto scheduler = make_scheduler(*optimizer, c.at("name"), c.at("args"));
    const auto lrs = c.at("lrs").get<std::vector<double>>();
    const auto momenta = c.at("momenta").get<std::vector<double>>();
    CHECK(scheduler->get_last_lr().at(0) == lrs[0]);
    CHECK(optimizer->learning_rate() == lrs[0]);
    CHECK(optimizer->momentum() == momenta[0]);
    if (c.contains("group_lr_steps")) CHECK(group_lrs(*optimizer) == c.at("group_lr_steps")[0].get<std::vector<double>>());
    std::unique_ptr<optim::Optimizer> optimizer2;
    std::unique_ptr<LRScheduler> scheduler2;
    for (std::size_t k = 0; k < steps; ++k) {
      INFO("step " << k + 1);
      if (k == resume_at) {
        // PyTorch's resume: new objects, then the saved states (here through the optimizer's
        // own state_dict, which holds lr and momentum, and the scheduler's).
        optimizer2 = make_optimizer(c);
        scheduler2 = make_scheduler(*optimizer2, c.at("name"), c.at("args"));
        optimizer2->load_state_dict(optimizer->state_dict());
        scheduler2->load_state_dict(scheduler->state_dict());
      }
      step(*optimizer, *scheduler, c, k);
      CHECK(scheduler->get_last_lr().at(0) == lrs[k + 1]);
      CHECK(optimizer->learning_rate() == lrs[k + 1]);
      CHECK(optimizer->momentum() == momenta[k + 1]);
      if (c.contains("group_lr_steps")) {
        const auto expected = c.at("group_lr_steps")[k + 1].get<std::vector<double>>();
        CHECK(scheduler->get_last_lr() == expected);
        CHECK(group_lrs(*optimizer) == expected);
        CHECK(optimizer->group_momentum(optimizer->param_group_count() - 1) == momenta[k + 1]);
      }
      if (k >= resume_at) {
        step(*optimizer2, *scheduler2, c, k);
        CHECK(scheduler2->get_last_lr().at(0) == lrs[k + 1]);
        CHECK(optimizer2->momentum() == momenta[k + 1]);
        if (c.contains("group_lr_steps")) CHECK(group_lrs(*optimizer2) == c.at("group_lr_steps")[k + 1].get<std::vector<double>>());
      }
    }
  }
}

TEST_CASE("restore_optimizer_values puts back the lr and OneCycleLR's momentum without the optimizer's param_groups",
          "[nn][lr_scheduler]") {
  std::vector<Tensor> parameters = {ember::zeros({2}).requires_grad_()};
  optim::SGD optimizer(parameters, {.lr = 0.1, .momentum = 0.9});
  OneCycleLR scheduler(optimizer, 0.1, 40);
  for (int k = 0; k < 7; ++k) {
    optimizer.step();
    scheduler.step();
  }
  optim::SGD fresh(parameters, {.lr = 0.1, .momentum = 0.9});
  OneCycleLR resumed(fresh, 0.1, 40);
  resumed.load_state_dict(scheduler.state_dict());
  CHECK(fresh.learning_rate() != optimizer.learning_rate());  // load_state_dict leaves the optimizer alone
  resumed.restore_optimizer_values();
  CHECK(fresh.learning_rate() == optimizer.learning_rate());
  CHECK(fresh.momentum() == optimizer.momentum());
  optimizer.step();
  scheduler.step();
  fresh.step();
  resumed.step();
  CHECK(fresh.learning_rate() == optimizer.learning_rate());
}

TEST_CASE("lr scheduler constructors refuse bad arguments with PyTorch's messages", "[nn][lr_scheduler]") {
  std::vector<Tensor> parameters = {ember::zeros({2}).requires_grad_()};
  optim::SGD sgd(parameters, {.lr = 0.1});
  CHECK_THROWS_MATCHES(LinearLR(sgd, 0.0, 1.0, 5), ValueError,
                       Catch::Matchers::Message(
                           "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."));
  CHECK_THROWS_MATCHES(LinearLR(sgd, 0.5, 1.5, 5), ValueError,
                       Catch::Matchers::Message("Ending multiplicative factor expected to be between 0 and 1."));
  CHECK_THROWS_MATCHES(OneCycleLR(sgd, 0.1, 0), ValueError,
                       Catch::Matchers::Message("Expected positive integer total_steps, but got 0"));
  OneCycleOptions bad_pct;
  bad_pct.pct_start = 1.5;
  CHECK_THROWS_MATCHES(OneCycleLR(sgd, 0.1, 10, bad_pct), ValueError,
                       Catch::Matchers::Message("Expected float between 0 and 1 pct_start, but got 1.5"));
  OneCycleOptions bad_anneal;
  bad_anneal.anneal_strategy = "cosine";
  CHECK_THROWS_MATCHES(OneCycleLR(sgd, 0.1, 10, bad_anneal), ValueError,
                       Catch::Matchers::Message("anneal_strategy must be one of 'cos' or 'linear', instead got cosine"));
  CHECK_THROWS_MATCHES(ReduceLROnPlateau(sgd, {.factor = 1.0}), ValueError,
                       Catch::Matchers::Message("Factor should be < 1.0."));
  CHECK_THROWS_MATCHES(ReduceLROnPlateau(sgd, {.mode = "maximum"}), ValueError,
                       Catch::Matchers::Message("mode maximum is unknown!"));
  ReduceLROnPlateau plateau(sgd);
  CHECK_THROWS_AS(plateau.step(), ValueError);
  // OneCycleLR past its total steps: PyTorch's message.
  optim::SGD short_run(parameters, {.lr = 0.1});
  OneCycleLR one_cycle(short_run, 0.1, 2);
  one_cycle.step();
  one_cycle.step();
  CHECK_THROWS_MATCHES(one_cycle.step(), ValueError,
                       Catch::Matchers::Message("Tried to step 3 times. The specified number of total steps is 2"));
  // SequentialLR: ReduceLROnPlateau refused, and the milestone count checked.
  optim::SGD chained(parameters, {.lr = 0.1});
  std::vector<std::unique_ptr<LRScheduler>> parts;
  parts.push_back(std::make_unique<LinearLR>(chained, 0.5, 1.0, 2));
  parts.push_back(std::make_unique<ReduceLROnPlateau>(chained));
  CHECK_THROWS_WITH(SequentialLR(chained, std::move(parts), {2}),
                    Contains("SequentialLR does not support `ReduceLROnPlateau` scheduler"));
  std::vector<std::unique_ptr<LRScheduler>> two;
  two.push_back(std::make_unique<LinearLR>(chained, 0.5, 1.0, 2));
  two.push_back(std::make_unique<ExponentialLR>(chained, 0.9));
  CHECK_THROWS_WITH(SequentialLR(chained, std::move(two), {}),
                    Contains("but got number of schedulers 2 and the number of milestones to be equal to 0"));
}

TEST_CASE("lr scheduler load_state_dict lists every problem and changes nothing", "[nn][lr_scheduler]") {
  std::vector<Tensor> parameters = {ember::zeros({2}).requires_grad_()};
  optim::SGD sgd(parameters, {.lr = 0.1});
  StepLR scheduler(sgd, 3, 0.5);
  for (int k = 0; k < 4; ++k) scheduler.step();
  StateDict good = scheduler.state_dict();
  CHECK(good.find("last_epoch")->item<std::int64_t>() == 4);
  CHECK(good.find("gamma")->item<double>() == 0.5);

  StateDict bad;
  for (const auto& [key, value] : good) {
    if (key == "gamma") continue;                                        // missing
    if (key == "step_size") bad.insert(key, ember::full({}, 2.5, kFloat64));  // not an integer
    else bad.insert(key, value);
  }
  bad.insert("surprise", ember::zeros({}));
  StepLR other(sgd, 7, 0.1);
  try {
    other.load_state_dict(bad);
    FAIL("load_state_dict accepted a damaged state");
  } catch (const ValueError& error) {
    const std::string message = error.what();
    CHECK_THAT(message, Contains("Error(s) in loading state_dict for StepLR:"));
    CHECK_THAT(message, Contains("Missing key(s) in state_dict: \"gamma\""));
    CHECK_THAT(message, Contains("Unexpected key(s) in state_dict: \"surprise\""));
    CHECK_THAT(message, Contains("step_size must be a 0-d integer"));
  }
  CHECK(other.state_dict().find("step_size")->item<std::int64_t>() == 7);
  CHECK(other.last_epoch() == 0);
  other.load_state_dict(good);
  CHECK(other.last_epoch() == 4);
  CHECK(other.state_dict().find("step_size")->item<std::int64_t>() == 3);

  // A one-group scheduler's state does not fit an optimizer of two groups.
  optim::SGD two_groups({{.params = {ember::zeros({2}).requires_grad_()}}, {.params = {ember::zeros({2}).requires_grad_()}}},
                        {.lr = 0.1});
  StepLR grouped(two_groups, 3, 0.5);
  CHECK(grouped.base_lrs().size() == 2);
  CHECK_THROWS_WITH(grouped.load_state_dict(good), Contains("base_lrs and _last_lr must hold one value per parameter group (2)"));
  grouped.load_state_dict(grouped.state_dict());
}
