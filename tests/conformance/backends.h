// tests/conformance/backends.h — the backends the conformance sweep runs every case on.
//
// A backend is a name and a function that runs one op call on the case's inputs and returns
// the result on the CPU. The sweep compares every backend with PyTorch and each with the
// first ("cpu"), bit for bit, so adding a backend (the reference kernels of
// EMBER_KERNELS=reference, a real GPU) is one entry in backends().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/core/tensor.h>

namespace ember::conformance {

struct SweepBackend {
  std::string name;
  // Runs `body` with this backend's kernels on inputs built where `device` says: `body`
  // receives the device to build its inputs on and returns the result.
  std::function<Tensor(const std::function<Tensor(Device)>& body)> run;
  // Ulps added to a case's own allowance where it has one (transcendental functions): a
  // real GPU's math library (expf within 2 ulps, docs/cuda.md) is not the host's.
  int extra_ulps = 0;
};

const std::vector<SweepBackend>& backends();

}  // namespace ember::conformance
