// tests/cuda/test_layer_norm_kernels.cpp — the layer-norm kernels (cuda/kernels/layer_norm.cuh)
// through the emulator, against the CPU backend's kernels (core/cpu/layer_norm_kernels.cpp,
// the same kernel families of core/backend.h, themselves tested against PyTorch in
// tests/nn/test_layer_norm.cpp): the forward (output, mean, rstd) and the backward (the input
// gradient and the parameters' column sums), on row lengths around the warp and block edges
// (1, 31, 33, 257, 1000 values) and row counts from 1 to 70, with and without weight and
// bias, and with only some of the three gradients asked for.
#include <vector>

#include "cuda_test_support.h"
#include "emulator_schedules.h"

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/cuda/kernels/layer_norm.cuh>

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
void compare_with_cpu(std::int64_t rows, std::int64_t row_size, bool affine, double rtol, double atol) {
  const std::int64_t numel = rows * row_size;
  auto x = random_values<T>(numel, -3, 5, 21);
  auto dy = random_values<T>(numel, -1, 1, 22);
  auto weight = random_values<T>(row_size, 0.5, 2, 23);
  auto bias = random_values<T>(row_size, -1, 1, 24);
  struct Outputs {
    std::vector<T> y, mean, rstd, dx, dw, db, dw_only;
  };
  auto run = [&](bool on_gpu) {
    Outputs o;
    o.y.assign(numel, T(-7));
    o.mean.assign(rows, T(-7));
    o.rstd.assign(rows, T(-7));
    LayerNormPlan plan;
    plan.input = x.data();
    plan.output = o.y.data();
    plan.weight = affine ? weight.data() : nullptr;
    plan.bias = affine ? bias.data() : nullptr;
    plan.mean = o.mean.data();
    plan.rstd = o.rstd.data();
    plan.rows = rows;
    plan.row_size = row_size;
    plan.eps = 1e-5;
    plan.dtype = dtype_of<T>::value;
    on_gpu ? gpu::dispatch_layer_norm(plan, nullptr) : cpu::layer_norm(plan);

    o.dx.assign(numel, T(-7));
    o.dw.assign(row_size, T(-7));
    o.db.assign(row_size, T(-7));
    LayerNormBackwardPlan back;
    back.grad_output = dy.data();
    back.input = x.data();
    back.mean = o.mean.data();
    back.rstd = o.rstd.data();
    back.weight = affine ? weight.data() : nullptr;
    back.grad_input = o.dx.data();
    back.grad_weight = o.dw.data();
    back.grad_bias = o.db.data();
    back.rows = rows;
    back.row_size = row_size;
    back.dtype = dtype_of<T>::value;
    on_gpu ? gpu::dispatch_layer_norm_backward(back, nullptr) : cpu::layer_norm_backward(back);

    // Only grad_weight asked for (grad_input and grad_bias nullptr): the same column sums.
    o.dw_only.assign(row_size, T(-7));
    back.grad_input = nullptr;
    back.grad_weight = o.dw_only.data();
    back.grad_bias = nullptr;
    on_gpu ? gpu::dispatch_layer_norm_backward(back, nullptr) : cpu::layer_norm_backward(back);
    return o;
  };
  const Outputs want = run(false), got = run(true);
  check_close(got.y, want.y, rtol, atol);
  check_close(got.mean, want.mean, rtol, atol);
  check_close(got.rstd, want.rstd, rtol, atol);
  check_close(got.dx, want.dx, rtol, atol);
  check_close(got.dw, want.dw, rtol, atol);
  check_close(got.db, want.db, rtol, atol);
  check_close(got.dw_only, got.dw, 0, 0);  // the same kernel, the same sums
}

}  // namespace

TEST_CASE("cuda kernels (emulated): layer norm forward and backward match the CPU kernels", "[cuda][layer_norm]") {
  EMBER_EACH_EMULATOR_SCHEDULE();
  struct Shape2 {
    std::int64_t rows, row_size;
  };
  for (Shape2 s : {Shape2{1, 1}, Shape2{3, 31}, Shape2{2, 33}, Shape2{5, 257}, Shape2{2, 1000}, Shape2{70, 8}}) {
    for (bool affine : {true, false}) {
      INFO("rows " << s.rows << ", row_size " << s.row_size << ", affine " << affine);
      // float: block-tree sums against the CPU's lane sums, both in float.
      compare_with_cpu<float>(s.rows, s.row_size, affine, 1e-4, 1e-5);
      compare_with_cpu<double>(s.rows, s.row_size, affine, 1e-12, 1e-12);
    }
  }
}
