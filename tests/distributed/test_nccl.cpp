// tests/distributed/test_nccl.cpp — the NCCL process group, world size 1, in this process.
//
// Compiled only in a build with CUDA and NCCL (EMBER_HAVE_NCCL). A machine without a GPU
// reports it skipped (EMBER_SKIP, tests/support/skip_listener.cpp). The CPU build checks
// instead that init_process_group("nccl") explains that NCCL is not built in
// (test_collectives.cpp). The DDP case is the tutorial's §9.3 program on one GPU: select
// the GPU, create the group, wrap a CUDA model.
#include <catch2/catch.hpp>

#ifdef EMBER_HAVE_NCCL
#include <cstdlib>
#include <iostream>
#include <thread>

#include <cuda_runtime_api.h>

#include <ember/ember.h>

#include "ddp_test_model.h"
#include "test_support.h"

namespace dist = ember::distributed;
using ember::Tensor;

TEST_CASE("nccl: collectives on CUDA tensors in a world of one process", "[distributed][nccl][gpu]") {
  if (!ember::cuda::is_available()) {
    EMBER_SKIP("no GPU visible");
  }
  auto store = std::make_shared<dist::TCPStore>("127.0.0.1", 0, /*is_master=*/true, std::chrono::seconds(10));
  dist::ProcessGroupNCCL group(store, 0, 1, std::chrono::seconds(10));
  REQUIRE(group.backend() == "nccl");
  const ember::Device gpu("cuda:" + std::to_string(group.device_index()));

  for (ember::DType dtype : {ember::kFloat32, ember::kFloat64, ember::kInt64}) {
    INFO("dtype " << ember::dtype_name(dtype));
    Tensor host = ember::arange(1000, ember::TensorOptions(dtype));
    Tensor value = host.to(gpu);
    group.all_reduce(value, dist::ReduceOp::Sum);
    REQUIRE(value.to(ember::Device("cpu")).equal(host));
    group.all_reduce(value, dist::ReduceOp::Max);
    group.all_reduce(value, dist::ReduceOp::Min);
    REQUIRE(value.to(ember::Device("cpu")).equal(host));
    if (ember::is_floating_point(dtype)) {
      group.all_reduce(value, dist::ReduceOp::Avg);
      REQUIRE(value.to(ember::Device("cpu")).equal(host));
    }
    group.broadcast(value, 0);
    std::vector<Tensor> gathered{ember::zeros({1000}, ember::TensorOptions(dtype).device(gpu))};
    group.all_gather(gathered, value);
    REQUIRE(gathered[0].to(ember::Device("cpu")).equal(host));
    Tensor scattered = ember::zeros({1000}, ember::TensorOptions(dtype).device(gpu));
    group.reduce_scatter(scattered, {value}, dist::ReduceOp::Sum);
    REQUIRE(scattered.to(ember::Device("cpu")).equal(host));
  }
  // A non-contiguous CUDA view is reduced in place through a contiguous copy.
  Tensor matrix = ember::arange(12, ember::TensorOptions(ember::kFloat32)).reshape({3, 4}).to(gpu);
  Tensor transposed = matrix.t();
  group.all_reduce(transposed, dist::ReduceOp::Sum);
  REQUIRE(matrix.to(ember::Device("cpu")).equal(ember::arange(12, ember::TensorOptions(ember::kFloat32)).reshape({3, 4})));
  group.barrier();

  Tensor on_cpu = ember::ones({2});
  REQUIRE_THROWS_WITH(group.all_reduce(on_cpu), "all_reduce: the nccl backend needs CUDA tensors, got cpu");
}
TEST_CASE("nccl: DDP on a CUDA model in a world of one process trains like the plain model",
          "[distributed][nccl][gpu][ddp]") {
  if (!ember::cuda::is_available()) {
    EMBER_SKIP("no GPU visible");
  }
  // As ddp_setup does with the rank's LOCAL_RANK: the current device first, then the group,
  // whose communicator binds to it.
  ember::cuda::set_device(0);
  auto store = std::make_shared<dist::TCPStore>("127.0.0.1", 0, /*is_master=*/true, std::chrono::seconds(10));
  dist::ProcessGroupNCCL group(store, 0, 1, std::chrono::seconds(30));
  REQUIRE(group.device_index() == ember::cuda::current_device());
  const ember::Device gpu("cuda:0");

  ember::manual_seed(7);
  auto model = std::make_shared<ember::testing::ThreeLayers>();
  model->to(gpu);
  ember::manual_seed(7);
  auto reference = std::make_shared<ember::testing::ThreeLayers>();
  reference->to(gpu);
  // Three buckets, all-reduced by NCCL on DDP's communication thread during backward.
  dist::DistributedDataParallel ddp(model, &group, ember::testing::ThreeLayers::kSplitCapMb);
  REQUIRE(ddp.bucket_layout().size() == 3);
  ember::optim::SGD optimizer(ddp.parameters(), {.lr = 0.05});
  ember::optim::SGD reference_optimizer(reference->parameters(), {.lr = 0.05});
  ember::Generator data(9);
  for (int step = 0; step < 3; ++step) {
    Tensor inputs = ember::randn({8, 64}, {}, &data).to(gpu);
    Tensor targets = ember::randn({8, 2}, {}, &data).to(gpu);
    optimizer.zero_grad();
    ember::mse_loss(ddp(inputs), targets).backward();
    optimizer.step();
    reference_optimizer.zero_grad();
    ember::mse_loss((*reference)(inputs), targets).backward();
    reference_optimizer.step();
  }
  REQUIRE(ddp.reductions() == 3 * 3);
  REQUIRE(ddp.last_reduction_thread() != std::this_thread::get_id());
  // A sum over one rank divided by one is the gradient itself.
  const auto trained = model->parameters();
  const auto expected = reference->parameters();
  for (std::size_t i = 0; i < trained.size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(trained[i].is_cuda());
    REQUIRE(trained[i].to(ember::Device("cpu")).allclose(expected[i].to(ember::Device("cpu")), 0.0, 1e-6));
  }
}

TEST_CASE("nccl: a collective leaves no \"not ready\" error behind for the next kernel launch",
          "[distributed][nccl][gpu]") {
  if (!ember::cuda::is_available()) {
    EMBER_SKIP("no GPU visible");
  }
  auto store = std::make_shared<dist::TCPStore>("127.0.0.1", 0, /*is_master=*/true, std::chrono::seconds(10));
  dist::ProcessGroupNCCL group(store, 0, 1, std::chrono::seconds(30));
  const ember::Device gpu("cuda:" + std::to_string(group.device_index()));
  // A matmul queued just before keeps the GPU busy, so the host's first polls of the
  // collective's "done" event find it not ready (cudaErrorNotReady) — the error the
  // runtime also leaves in this thread's last-error slot unless the poll clears it.
  Tensor square = ember::ones({2048, 2048}, ember::TensorOptions(ember::kFloat32).device(gpu));
  Tensor value = ember::ones({1 << 20}, ember::TensorOptions(ember::kFloat32).device(gpu));
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    Tensor busy = ember::matmul(square, square);
    group.all_reduce(value, dist::ReduceOp::Sum);
    REQUIRE(cudaPeekAtLastError() == cudaSuccess);
    Tensor next = value + 1.0;  // a kernel launch right after the collective
    REQUIRE(next.to(ember::Device("cpu")).equal(ember::full({1 << 20}, 2.0, ember::TensorOptions(ember::kFloat32))));
  }
}
#endif
