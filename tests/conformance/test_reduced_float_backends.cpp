// tests/conformance/test_reduced_float_backends.cpp — the 16-bit float elementwise cases and
// casts (tests/reference/reduced_float.json, issue 22) on every backend of the sweep: the
// CPU loops, the reference loops, the CUDA kernels on the emulator (and a real GPU when one
// is visible). Each must give PyTorch's values, and the same bits as the CPU.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <ember/core/factories.h>
#include <ember/core/native.h>

#include "backends.h"
#include "reduced_float_cases.h"
#include "test_support.h"

using namespace ember;
using namespace ember::conformance;
using nlohmann::json;

TEST_CASE("16-bit floats: elementwise ops and casts on every backend", "[conformance][reduced_float]") {
  const json& reference = testing::reduced_float_reference();
  for (const json& c : reference["elementwise"]) {
    const std::string op = c["op"];
    std::vector<Tensor> host_args;
    for (const json& a : c["args"]) host_args.push_back(testing::tensor_from_json(a));
    const Tensor expected = testing::expected_elementwise(c, host_args);
    Tensor first_result;
    for (const SweepBackend& backend : backends()) {
      INFO(op << " on " << dtype_name(host_args[0].dtype()) << ", backend " << backend.name);
      const Tensor result = backend.run([&](Device device) {
        std::vector<Tensor> args;
        for (const Tensor& arg : host_args) args.push_back(native::to_device(arg, device));
        return testing::run_elementwise(op, args);
      });
      testing::require_matches(result, expected, testing::elementwise_ulps(op) + backend.extra_ulps);
      // The emulated CUDA kernels run the CPU's functors on the CPU: the same bits exactly.
      if (first_result.defined() && backend.extra_ulps == 0) testing::require_matches(result, first_result);
      if (!first_result.defined()) first_result = result;
    }
  }
  // Casts: float32 -> 16 bits -> float32 on each backend gives the CPU's bits.
  const Tensor source = native::mul(native::to_dtype(native::reshape(arange(-40, 40, 1, kFloat32), {8, 10}), kFloat32),
                                    scalar_to_tensor(1.0 / 3.0));
  for (DType dtype : {kBFloat16, kFloat16}) {
    const Tensor on_cpu = native::to_dtype(native::transpose(source, 0, 1), dtype);
    for (const SweepBackend& backend : backends()) {
      INFO("cast to " << dtype_name(dtype) << ", backend " << backend.name);
      const Tensor result = backend.run([&](Device device) {
        return native::to_dtype(native::to_dtype(native::transpose(native::to_device(source, device), 0, 1), dtype), kFloat32);
      });
      testing::require_matches(native::to_dtype(result, dtype), on_cpu);
    }
  }
}
