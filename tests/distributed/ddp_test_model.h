// tests/distributed/ddp_test_model.h — a three-layer network that reports when backward
// reaches its first layer.
//
// fc0 (64 -> 256), fc1 (256 -> 32), fc2 (32 -> 2). With bucket_cap_mb = kSplitCapMb the
// DDP buckets are {fc2.bias, fc2.weight, fc1.bias, fc1.weight}, {fc0.bias}, {fc0.weight}:
// the first bucket holds exactly the parameters whose gradients backward computes before
// it reaches fc0. on_first_layer_gradient runs when the gradient w.r.t. fc0's output
// arrives, i.e. before fc0's backward computes anything — the moment by which DDP must
// already have started the first bucket's all-reduce if it overlaps communication with
// backward.
#pragma once

#include <functional>
#include <memory>

#include <ember/ember.h>

namespace ember::testing {

struct ThreeLayers : nn::Module {
  // fc2 + fc1 = 8 + 256 + 128 + 32768 = 33160 bytes fit; adding fc0.bias (1024) does not.
  static constexpr double kSplitCapMb = 33554.0 / (1024.0 * 1024.0);

  std::shared_ptr<nn::Linear> fc0, fc1, fc2;
  std::function<void()> on_first_layer_gradient;

  ThreeLayers() {
    fc0 = register_module("fc0", std::make_shared<nn::Linear>(64, 256));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(256, 32));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(32, 2));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h0 = (*fc0)(x);
    if (on_first_layer_gradient && h0.requires_grad()) {
      h0.register_hook([this](const Tensor&) {
        on_first_layer_gradient();
        return Tensor();
      });
    }
    return (*fc2)(relu((*fc1)(relu(h0))));
  }
};

}  // namespace ember::testing
