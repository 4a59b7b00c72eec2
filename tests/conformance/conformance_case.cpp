// tests/conformance/conformance_case.cpp — see conformance_case.h.
#include "conformance_case.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <type_traits>

#include <ember/core/native.h>

#include "test_support.h"

namespace ember::conformance {

const json& reference() {
  static const json file = testing::load_reference("conformance.json");
  return file;
}

std::string case_key(const json& c) {
  return c.at("op").get<std::string>() + " " + c.at("dtype").get<std::string>() + " " +
         c.at("layout").get<std::string>() + " " + c.at("params").dump();
}

std::vector<Tensor> make_inputs(const json& c, Device device, bool requires_grad) {
  std::vector<Tensor> inputs;
  for (const json& input : c.at("inputs")) {
    Tensor storage = native::to_device(testing::tensor_from_json(input.at("storage")), device);
    Tensor view = native::as_strided(storage, input.at("size").get<Shape>(), input.at("stride").get<Shape>(),
                                     input.at("offset").get<std::int64_t>());
    if (requires_grad && view.dtype() == kFloat64) view.requires_grad_(true);
    inputs.push_back(view);
  }
  return inputs;
}

namespace {

// The distance in ulps between two finite floats of the same sign.
template <class T>
std::int64_t ulps_apart(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  Bits x, y;
  std::memcpy(&x, &a, sizeof(T));
  std::memcpy(&y, &b, sizeof(T));
  return x > y ? static_cast<std::int64_t>(x) - y : static_cast<std::int64_t>(y) - x;
}

template <class T>
bool same_element(T got, T want, int ulps) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(want)) return std::isnan(got);  // payloads are not semantics
    if (ulps > 0 && std::isfinite(want) && want != 0 && std::isfinite(got) &&
        std::signbit(got) == std::signbit(want))
      return ulps_apart(got, want) <= ulps;
  }
  return std::memcmp(&got, &want, sizeof(T)) == 0;
}

}  // namespace

bool same_bits(const Tensor& actual, const Tensor& expected, int ulps, std::string* why) {
  std::ostringstream out;
  if (actual.dtype() != expected.dtype()) {
    out << "dtype " << dtype_name(actual.dtype()) << ", want " << dtype_name(expected.dtype());
    *why = out.str();
    return false;
  }
  if (actual.sizes() != expected.sizes()) {
    out << "shape " << nlohmann::json(actual.sizes()).dump() << ", want " << nlohmann::json(expected.sizes()).dump();
    *why = out.str();
    return false;
  }
  const Tensor got = native::contiguous(native::to_device(actual, kCPU));
  const Tensor want = native::contiguous(native::to_device(expected, kCPU));
  bool same = true;
  EMBER_DISPATCH_ALL(want.dtype(), {
    const auto* g = got.data_ptr<scalar_t>();
    const auto* w = want.data_ptr<scalar_t>();
    for (std::int64_t i = 0; i < want.numel() && same; ++i) {
      if (!same_element(g[i], w[i], ulps)) {
        out << "element " << i << ": got " << std::setprecision(17) << +g[i] << ", want " << +w[i];
        if constexpr (std::is_floating_point_v<scalar_t>) {
          if (std::isfinite(g[i]) && std::isfinite(w[i]) && std::signbit(g[i]) == std::signbit(w[i]))
            out << " (" << ulps_apart(g[i], w[i]) << " ulps)";
        }
        same = false;
      }
    }
  });
  *why = out.str();
  return same;
}

std::string describe_inputs(const json& c) {
  std::string text = c.at("inputs").dump();
  return text.size() > 600 ? text.substr(0, 600) + "..." : text;
}

}  // namespace ember::conformance
