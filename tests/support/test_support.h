// tests/support/test_support.h — helpers shared by every test binary.
//
// Reference values come from PyTorch via the scripts in tests/reference/ (run with
// Debian's python3-torch: `/usr/bin/python3 tests/reference/gen_X.py`). Their JSON output
// is committed, so tests never need PyTorch. A tensor in JSON is
//   {"shape": [2, 3], "dtype": "float32", "data": [flat row-major values]}
// (non-finite floats are the strings "nan", "inf", "-inf").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/core/tensor.h>

namespace ember::testing {

// Loads tests/reference/<name> (e.g. "rng.json").
nlohmann::json load_reference(const std::string& name);
// The dtype PyTorch names "float32", "int64", "bool", ... (without "torch."); throws on others.
DType dtype_from_name(const std::string& name);
// Builds a CPU tensor from the JSON form above.
Tensor tensor_from_json(const nlohmann::json& value);
// Flat row-major values of any tensor as doubles (copied to the CPU, any strides).
std::vector<double> to_vector(const Tensor& tensor);
// Runs a program from build/bin with arguments and returns its standard output;
// `exit_code` receives its status.
std::string run_program(const std::string& name, const std::string& arguments, int* exit_code = nullptr);
// Reads a whole file.
std::string read_file(const std::string& path);

// Records that the running test case is skipped, with the reason (skip_listener.cpp). A run
// in which every test case skipped exits with code 4, CTest's SKIP_RETURN_CODE here, so
// CTest lists such a test as skipped rather than passed. Use EMBER_SKIP, which also returns.
void mark_skipped(const std::string& reason);

// Whether the suite runs under CI (CI=true, as .ci/run sets): what .ci/run installs (cairo,
// libprotobuf, a python3 with safetensors or tensorboard) must then be there.
bool running_in_ci();

// The interpreter for an interop test: $EMBER_PYTHON when set (and only it), otherwise the
// first of `python3` on PATH (where .ci/run installs safetensors and tensorboard) and
// Debian's /usr/bin/python3 that can `import modules`; nullopt when none can.
std::optional<std::string> find_python(const std::string& modules);

}  // namespace ember::testing

#define EMBER_SKIP(reason)                   \
  do {                                       \
    ::ember::testing::mark_skipped(reason);  \
    return;                                  \
  } while (false)

// Skips the test case, with `reason`, unless `available`; under CI fails instead, since CI
// installs what the test needs (an optional library of the build, a Python reader).
#define EMBER_REQUIRE_IN_CI(available, reason)                                   \
  do {                                                                           \
    if (!(available)) {                                                          \
      if (::ember::testing::running_in_ci()) FAIL(std::string("CI=true: ") + (reason)); \
      EMBER_SKIP(reason);                                                        \
    }                                                                            \
  } while (false)
