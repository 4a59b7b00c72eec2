// tests/cuda/test_cuda_random.cpp — random fills of CUDA tensors run Philox on the device
// (core/random.cpp -> random_fill_kernel -> cuda/kernels/philox.cuh), on a real GPU.
//
// rand / randn / uniform_ / normal_ / bernoulli_ / dropout on a CUDA tensor: reproducible
// under manual_seed, equal to the kernel's formula computed on the host (bit for bit for
// uniforms), advancing the generator's Philox offset by ceil(n/2), and never touching the
// CPU's mt19937 stream. Needs a CUDA build and a GPU; reports itself skipped otherwise.
#include <cmath>
#include <string>

#include <ember/ember.h>

#include "cuda_test_support.h"

#include <ember/cuda/kernels/philox.cuh>

#if defined(EMBER_HAVE_CUDA_BACKEND)
#include <ember/cuda/cuda_random.h>
#endif

namespace {
using namespace ember;
namespace gpu = ember::cuda::kernels;
constexpr std::uint64_t kTorchDefaultSeed = 67280421310721ULL;
}  // namespace

TEST_CASE("cuda random: rand and randn on a GPU are reproducible under manual_seed", "[cuda][gpu][random]") {
  EMBER_REQUIRE_GPU();
  auto draw = [](std::uint64_t seed) {
    manual_seed(seed);
    Tensor u = ember::rand({1001}, TensorOptions().device(kCUDA));
    Tensor n = ember::randn({33, 7}, TensorOptions().device(kCUDA).dtype(kFloat64));
    return std::make_pair(u.cpu(), n.cpu());
  };
  auto a = draw(7), b = draw(7), c = draw(8);
  REQUIRE(a.first.equal(b.first));
  REQUIRE(a.second.equal(b.second));
  REQUIRE(!a.first.equal(c.first));
  REQUIRE(!a.second.equal(c.second));
}

TEST_CASE("cuda random: a GPU fill is the Philox formula at the generator's seed and offset", "[cuda][gpu][random]") {
  EMBER_REQUIRE_GPU();
  manual_seed(2024);
  REQUIRE(default_generator().philox_offset() == 0);
  Tensor first = ember::rand({9}, TensorOptions().device(kCUDA));           // counters 0..4
  REQUIRE(default_generator().philox_offset() == philox_counters(9));
  Tensor second = ember::empty({6}, TensorOptions().device(kCUDA).dtype(kFloat64));
  ember::uniform_(second, -2.0, 3.0);                                        // counters 5..7
  REQUIRE(default_generator().philox_offset() == 5 + 3);
  Tensor normal = ember::randn({1000}, TensorOptions().device(kCUDA));      // counters 8..507
  Tensor f = first.cpu(), s = second.cpu(), n = normal.cpu();
  for (std::int64_t e = 0; e < 9; ++e)  // uniforms: plain arithmetic, the same bits on host and device
    REQUIRE(f.data_ptr<float>()[e] == gpu::philox_value<float>(2024, 0, e, gpu::RandomKind::Uniform, 0.0, 1.0));
  for (std::int64_t e = 0; e < 6; ++e)
    REQUIRE(s.data_ptr<double>()[e] == gpu::philox_value<double>(2024, 5, e, gpu::RandomKind::Uniform, -2.0, 3.0));
  for (std::int64_t e = 0; e < 1000; ++e) {  // normals: device log/cos differ from libm in the last bits
    const float want = gpu::philox_value<float>(2024, 8, e, gpu::RandomKind::Normal, 0.0, 1.0);
    REQUIRE(std::fabs(n.data_ptr<float>()[e] - want) <= 1e-5f * (1.0f + std::fabs(want)));
  }
}

TEST_CASE("cuda random: GPU fills leave the CPU stream exactly where it was", "[cuda][gpu][random]") {
  EMBER_REQUIRE_GPU();
  manual_seed(3);
  Tensor alone = ember::rand({50});
  manual_seed(3);
  (void)ember::randn({100000}, TensorOptions().device(kCUDA));
  Tensor mask = ember::empty({64}, TensorOptions().device(kCUDA));
  ember::bernoulli_(mask, 0.5);
  Tensor after_gpu_fills = ember::rand({50});
  REQUIRE(alone.equal(after_gpu_fills));
}

TEST_CASE("cuda random: distributions, strided outputs, bernoulli and dropout on a GPU", "[cuda][gpu][random]") {
  EMBER_REQUIRE_GPU();
  manual_seed(11);
  Tensor x = ember::randn({200000}, TensorOptions().device(kCUDA));
  REQUIRE(std::fabs(x.mean().item<double>()) < 0.02);
  REQUIRE(std::fabs((x * x).mean().item<double>() - 1.0) < 0.02);  // variance (mean ≈ 0)

  // A transposed (non-contiguous) output is filled in place, every element in range.
  Tensor t = ember::empty({40, 30}, TensorOptions().device(kCUDA)).t();
  ember::uniform_(t, 2.0, 5.0);
  REQUIRE(t.amin({0, 1}, false).item<double>() >= 2.0);
  REQUIRE(t.amax({0, 1}, false).item<double>() < 5.0);

  Tensor bits = ember::empty({100000}, TensorOptions().device(kCUDA).dtype(kUInt8));
  ember::bernoulli_(bits, 0.25);
  const double rate = bits.to(kFloat64).mean().item<double>();
  REQUIRE(std::fabs(rate - 0.25) < 0.01);
  REQUIRE(bits.amax({0}, false).item<std::int64_t>() == 1);

  nn::Dropout dropout(0.5);
  dropout.train();
  Tensor ones = ember::ones({100000}, TensorOptions().device(kCUDA));
  manual_seed(5);
  Tensor dropped = dropout.forward(ones);
  manual_seed(5);
  REQUIRE(dropout.forward(ones).cpu().equal(dropped.cpu()));  // reproducible masks
  const double kept = (dropped > 0).to(kFloat64).mean().item<double>();
  REQUIRE(std::fabs(kept - 0.5) < 0.01);
  REQUIRE(dropped.amax({0}, false).item<double>() == 2.0);  // kept values scaled by 1/(1-p)
}

TEST_CASE("cuda random: 16-bit fills on a GPU are the float32 fill of the same counters, rounded",
          "[cuda][gpu][random]") {
  // The Philox kernels write float32; a bfloat16/float16 tensor gets that fill rounded once
  // (core/random_tensors.cpp, fill_on_device), the generator advancing as for float32, and a
  // uniform value that rounds up to `to` becomes `from` (the range stays [from, to)).
  EMBER_REQUIRE_GPU();
  for (DType dtype : {kBFloat16, kFloat16}) {
    INFO(dtype_name(dtype));
    const TensorOptions wide_options = TensorOptions().device(kCUDA).dtype(kFloat32);
    const TensorOptions options = TensorOptions().device(kCUDA).dtype(dtype);
    manual_seed(5);
    const Tensor wide = ember::rand({4096}, wide_options);
    const std::uint64_t offset = default_generator().philox_offset();
    manual_seed(5);
    const Tensor narrow = ember::rand({4096}, options);
    REQUIRE(default_generator().philox_offset() == offset);
    Tensor expected = wide.to(dtype).cpu();
    expected = ember::where(expected == 1.0, ember::zeros_like(expected), expected);
    REQUIRE(narrow.cpu().equal(expected));
    REQUIRE(narrow.cpu().max().item<double>() < 1.0);

    manual_seed(6);
    const Tensor wide_normal = ember::randn({40}, wide_options);
    manual_seed(6);
    REQUIRE(ember::randn({40}, options).cpu().equal(wide_normal.to(dtype).cpu()));

    // Dropout's mask in 16 bits drops the elements the float32 mask drops.
    const Tensor ones = ember::ones({256}, options);
    manual_seed(7);
    const Tensor dropped = nn::functional::dropout(ones, 0.5, /*training=*/true).cpu();
    manual_seed(7);
    const Tensor dropped_wide = nn::functional::dropout(ember::ones({256}, wide_options), 0.5, true).cpu();
    REQUIRE((dropped == 0.0).equal(dropped_wide == 0.0));
  }
}

TEST_CASE("cuda random: philox_uniform_ / philox_normal_ are the GPU-only spelling", "[cuda][gpu][random]") {
#if !defined(EMBER_HAVE_CUDA_BACKEND)
  ember::testing::mark_skipped("ember was built without its CUDA backend");
#else
  EMBER_REQUIRE_GPU();
  manual_seed(kTorchDefaultSeed);
  Tensor a = ember::empty({1000}, TensorOptions().device(kCUDA));
  cuda::philox_normal_(a, 1.0, 2.0);
  manual_seed(kTorchDefaultSeed);
  Tensor b = ember::empty({1000}, TensorOptions().device(kCUDA));
  ember::normal_(b, 1.0, 2.0);
  REQUIRE(a.cpu().equal(b.cpu()));
  REQUIRE_THROWS_AS(cuda::philox_uniform_(ember::zeros({3})), DeviceError);
  REQUIRE_THROWS_AS(cuda::philox_uniform_(ember::zeros({3}, TensorOptions().device(kCUDA).dtype(kInt64))), DTypeError);
#endif
}
