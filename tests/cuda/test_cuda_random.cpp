// tests/cuda/test_cuda_random.cpp — GPU Philox fills (cuda/cuda_random.h) on a real GPU.
// Needs a CUDA build and a GPU; reports itself skipped otherwise.
#include <ember/ember.h>

#include "cuda_test_support.h"

#if defined(EMBER_HAVE_CUDA_BACKEND)
#include <ember/cuda/cuda_random.h>
#endif

TEST_CASE("cuda random: philox fills are reproducible under manual_seed and well distributed", "[cuda][gpu][random]") {
#if !defined(EMBER_HAVE_CUDA_BACKEND)
  ember::testing::mark_skipped("ember was built without its CUDA backend");
#else
  EMBER_REQUIRE_GPU();
  using namespace ember;
  auto draw = [](std::uint64_t seed) {
    manual_seed(seed);
    Tensor x = ember::empty({100000}, TensorOptions().device(kCUDA));
    cuda::philox_normal_(x, 1.0, 2.0);
    return x.cpu();
  };
  Tensor a = draw(7), b = draw(7), c = draw(8);
  REQUIRE((a).equal(b));
  REQUIRE(!(a).equal(c));
  REQUIRE(std::fabs(a.mean().item<double>() - 1.0) < 0.05);
  Tensor u = ember::empty({1000}, TensorOptions().device(kCUDA).dtype(kFloat64));
  cuda::philox_uniform_(u, -1.0, 1.0);
  REQUIRE(u.cpu().amin({0}, false).item<double>() >= -1.0);
  REQUIRE(u.cpu().amax({0}, false).item<double>() < 1.0);
  REQUIRE_THROWS_AS(cuda::philox_uniform_(ember::zeros({3})), DeviceError);
#endif
}
