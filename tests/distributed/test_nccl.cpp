// tests/distributed/test_nccl.cpp — the NCCL process group, world size 1, in this process.
//
// Compiled only in a build with CUDA and NCCL (EMBER_HAVE_NCCL). A machine without a GPU
// skips it with exit code 4 (SKIP_RETURN_CODE); CTest runs each test case alone, so the
// exit ends only this test. The CPU build checks instead that init_process_group("nccl")
// explains that NCCL is not built in (test_collectives.cpp).
#include <catch2/catch.hpp>

#ifdef EMBER_HAVE_NCCL
#include <cstdlib>
#include <iostream>

#include <ember/ember.h>

namespace dist = ember::distributed;
using ember::Tensor;

TEST_CASE("nccl: collectives on CUDA tensors in a world of one process", "[distributed][nccl][gpu]") {
  if (!ember::cuda::is_available()) {
    std::cout << "SKIPPED: no GPU visible\n";
    std::exit(4);
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
#endif
