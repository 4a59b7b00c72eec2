// tests/support/test_support.cpp — see test_support.h.
#include "test_support.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>
#include <sys/wait.h>

#include <ember/core/factories.h>
#include <ember/core/native.h>

namespace ember::testing {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json load_reference(const std::string& name) {
  return nlohmann::json::parse(read_file(std::string(EMBER_REFERENCE_DIR) + "/" + name));
}

namespace {
double json_number(const nlohmann::json& value) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("bad number in reference: " + text);
  }
  if (value.is_boolean()) return value.get<bool>() ? 1.0 : 0.0;
  return value.get<double>();
}

}  // namespace

DType dtype_from_name(const std::string& name) {
  for (DType dtype : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64, kFloat16, kBFloat16}) {
    if (dtype_name(dtype) == name) return dtype;
  }
  throw std::runtime_error("unknown dtype in reference: " + name);
}

Tensor tensor_from_json(const nlohmann::json& value) {
  Shape shape = value.at("shape").get<Shape>();
  DType dtype = dtype_from_name(value.at("dtype").get<std::string>());
  Tensor result = empty(shape, dtype);
  const auto& data = value.at("data");
  if (static_cast<std::int64_t>(data.size()) != result.numel()) throw std::runtime_error("reference size mismatch");
  EMBER_DISPATCH_ALL_AND_REDUCED(dtype, {
    auto* out = result.data_ptr<scalar_t>();
    for (std::size_t i = 0; i < data.size(); ++i) {
      if constexpr (std::is_integral_v<scalar_t>) {
        using integer_t = std::conditional_t<std::is_integral_v<scalar_t>, scalar_t, std::int64_t>;  // (compiled for all)
        out[i] = data[i].is_boolean() ? static_cast<scalar_t>(data[i].get<bool>())
                                      : static_cast<scalar_t>(data[i].get<integer_t>());
      } else {
        out[i] = static_cast<scalar_t>(json_number(data[i]));
      }
    }
  });
  return result;
}

std::vector<double> to_vector(const Tensor& tensor) {
  Tensor host = native::contiguous(native::to_device(tensor, kCPU));
  std::vector<double> values(static_cast<std::size_t>(host.numel()));
  EMBER_DISPATCH_ALL_AND_REDUCED(host.dtype(), {
    const auto* in = host.data_ptr<scalar_t>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(in[i]);
  });
  return values;
}

std::string run_program(const std::string& name, const std::string& arguments, int* exit_code) {
  std::string command = std::string(EMBER_BIN_DIR) + "/" + name + " " + arguments;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string output;
  std::array<char, 4096> buffer{};
  std::size_t count;
  while ((count = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), count);
  int status = pclose(pipe);
  if (exit_code != nullptr) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

std::optional<std::string> find_python(const std::string& modules) {
  std::vector<std::string> candidates{"python3", "/usr/bin/python3"};
  if (const char* chosen = std::getenv("EMBER_PYTHON"); chosen && *chosen) candidates = {chosen};
  for (const auto& python : candidates) {
    const std::string command = "'" + python + "' -c 'import " + modules + "' > /dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return python;
  }
  return std::nullopt;
}

}  // namespace ember::testing
