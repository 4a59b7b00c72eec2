// tests/cuda/test_batch_norm_kernels.cpp — the batch-norm kernels (cuda/kernels/batch_norm.cuh)
// through the emulator, against the CPU backend's kernels (core/cpu/batch_norm_kernels.cpp,
// the same kernel families of core/backend.h, themselves tested against PyTorch in
// tests/nn/test_batch_norm.cpp): forward in training (outputs, save_mean/invstd, the running
// statistics) and eval, backward in both, on sizes around the warp and block edges
// (count 2, 31, 33, 257 values per channel; inner 1 and > 1), with and without weight and bias.
#include <vector>

#include "cuda_test_support.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/batch_norm.cuh>

namespace {

using namespace ember;
using namespace ember::testing;
namespace gpu = ember::cuda::kernels;

template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, double rtol, double atol) {
  REQUIRE(got.size() == want.size());
  const std::int64_t bad = first_mismatch(got.data(), want.data(), static_cast<std::int64_t>(got.size()), rtol, atol);
  INFO("first mismatch at " << bad << (bad >= 0 ? ": " + std::to_string(got[bad]) + " vs " + std::to_string(want[bad]) : ""));
  REQUIRE(bad == -1);
}

template <class T>
void compare_with_cpu(std::int64_t batch, std::int64_t channels, std::int64_t inner, bool affine, double rtol,
                      double atol) {
  const std::int64_t numel = batch * channels * inner;
  auto x = random_values<T>(numel, -3, 5, 11);
  auto dy = random_values<T>(numel, -1, 1, 12);
  auto weight = random_values<T>(channels, 0.5, 2, 13);
  auto bias = random_values<T>(channels, -1, 1, 14);
  struct Outputs {
    std::vector<T> y, save_mean, save_invstd, running_mean, running_var, eval_y, dx, dw, db, eval_dx, eval_dw, eval_db;
  };
  auto run = [&](bool on_gpu) {
    Outputs o;
    o.y.assign(numel, T(-7));
    o.eval_y.assign(numel, T(-7));
    o.save_mean.assign(channels, T(-7));
    o.save_invstd.assign(channels, T(-7));
    o.running_mean.assign(channels, T(0.25));
    o.running_var.assign(channels, T(1.5));
    BatchNormPlan plan;
    plan.input = x.data();
    plan.output = o.y.data();
    plan.weight = affine ? weight.data() : nullptr;
    plan.bias = affine ? bias.data() : nullptr;
    plan.running_mean = o.running_mean.data();
    plan.running_var = o.running_var.data();
    plan.save_mean = o.save_mean.data();
    plan.save_invstd = o.save_invstd.data();
    plan.batch = batch;
    plan.channels = channels;
    plan.inner = inner;
    plan.training = true;
    plan.dtype = dtype_of<T>::value;
    on_gpu ? gpu::dispatch_batch_norm(plan, nullptr) : cpu::batch_norm(plan);

    auto backward = [&](bool training, const std::vector<T>& mean, const std::vector<T>& invstd, std::vector<T>& dx,
                        std::vector<T>& dw, std::vector<T>& db) {
      dx.assign(numel, T(-7));
      dw.assign(channels, T(-7));
      db.assign(channels, T(-7));
      BatchNormBackwardPlan back;
      back.grad_output = dy.data();
      back.input = x.data();
      back.weight = affine ? weight.data() : nullptr;
      back.save_mean = mean.data();
      back.save_invstd = invstd.data();
      back.grad_input = dx.data();
      back.grad_weight = dw.data();
      back.grad_bias = db.data();
      back.batch = batch;
      back.channels = channels;
      back.inner = inner;
      back.training = training;
      back.dtype = dtype_of<T>::value;
      on_gpu ? gpu::dispatch_batch_norm_backward(back, nullptr) : cpu::batch_norm_backward(back);
    };
    backward(true, o.save_mean, o.save_invstd, o.dx, o.dw, o.db);

    std::vector<T> eval_mean(channels), eval_invstd(channels);
    BatchNormPlan eval = plan;
    eval.output = o.eval_y.data();
    eval.save_mean = eval_mean.data();
    eval.save_invstd = eval_invstd.data();
    eval.training = false;
    on_gpu ? gpu::dispatch_batch_norm(eval, nullptr) : cpu::batch_norm(eval);
    backward(false, eval_mean, eval_invstd, o.eval_dx, o.eval_dw, o.eval_db);
    return o;
  };
  const Outputs want = run(false), got = run(true);
  check_close(got.y, want.y, rtol, atol);
  check_close(got.save_mean, want.save_mean, rtol, atol);
  check_close(got.save_invstd, want.save_invstd, rtol, atol);
  check_close(got.running_mean, want.running_mean, rtol, atol);
  check_close(got.running_var, want.running_var, rtol, atol);
  check_close(got.eval_y, want.eval_y, rtol, atol);
  check_close(got.dx, want.dx, rtol, atol);
  check_close(got.dw, want.dw, rtol, atol);
  check_close(got.db, want.db, rtol, atol);
  check_close(got.eval_dx, want.eval_dx, rtol, atol);
  check_close(got.eval_dw, want.eval_dw, rtol, atol);
  check_close(got.eval_db, want.eval_db, rtol, atol);
}

}  // namespace

TEST_CASE("cuda kernels (emulated): batch norm forward and backward match the CPU kernels",
          "[cuda][batch_norm]") {
  struct Shape3 {
    std::int64_t batch, channels, inner;
  };
  for (Shape3 s : {Shape3{2, 3, 1}, Shape3{31, 4, 1}, Shape3{3, 5, 11}, Shape3{1, 2, 33}, Shape3{4, 3, 64},
                   Shape3{257, 2, 1}}) {
    for (bool affine : {true, false}) {
      INFO("batch " << s.batch << ", channels " << s.channels << ", inner " << s.inner << ", affine " << affine);
      compare_with_cpu<float>(s.batch, s.channels, s.inner, affine, 1e-5, 1e-5);
      compare_with_cpu<double>(s.batch, s.channels, s.inner, affine, 1e-12, 1e-12);
    }
  }
}
