// tests/core/test_print.cpp — ember::to_string against PyTorch's repr, character for character.
//
// tests/reference/gen_print.py stored ~100 tensors with the text repr() gives for each
// (modes, widths, wrapping, summarisation, empty and 0-d tensors, dtype and autograd
// suffixes, print options). Each is rebuilt here and printed with ember.
#include <catch2/catch.hpp>

#include <sstream>

#include <ember/core/autograd_meta.h>
#include <ember/core/factories.h>
#include <ember/core/print.h>
#include <test_support.h>

using namespace ember;
using nlohmann::json;

namespace {

// A stand-in graph node: core only needs a node's name to print grad_fn=<...>.
class NamedGradFn final : public GradFn {
 public:
  explicit NamedGradFn(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }

 private:
  std::string name_;
};

// Restores the default print options when a test ends, even if it fails.
struct PrintOptionsGuard {
  PrintOptionsGuard() = default;
  explicit PrintOptionsGuard(const PrintOptions& options) { set_printoptions(options); }
  ~PrintOptionsGuard() { set_printoptions(PrintOptions{}); }
};

PrintOptions options_from_json(const json& value) {
  PrintOptions options;
  if (value.contains("precision")) options.precision = value["precision"].get<int>();
  if (value.contains("threshold")) options.threshold = value["threshold"].get<std::int64_t>();
  if (value.contains("edgeitems")) options.edgeitems = value["edgeitems"].get<int>();
  if (value.contains("linewidth")) options.linewidth = value["linewidth"].get<int>();
  if (value.contains("sci_mode")) options.sci_mode = value["sci_mode"].get<bool>();
  return options;
}

// The tensor a case prints: its input, maybe transposed (a strided view), with the flags.
Tensor build_case(const json& item) {
  Tensor t = testing::tensor_from_json(item["input"]);
  if (item["transpose"].get<bool>()) {
    t = make_tensor(t.storage(), {t.size(1), t.size(0)}, {t.stride(1), t.stride(0)}, t.storage_offset(), t.dtype());
    REQUIRE_FALSE(t.is_contiguous());
  }
  if (item["requires_grad"].get<bool>()) t.requires_grad_(true);
  if (!item["grad_fn"].is_null()) {
    AutogradMeta& meta = t.ensure_autograd_meta();
    meta.requires_grad = true;
    meta.grad_fn = std::make_shared<NamedGradFn>(item["grad_fn"].get<std::string>());
  }
  return t;
}

int check_cases(const std::function<bool(const std::string&)>& selected) {
  static const json reference = testing::load_reference("print.json");
  int count = 0;
  for (const auto& item : reference["cases"]) {
    const std::string name = item["name"].get<std::string>();
    if (!selected(name)) continue;
    INFO("case: " << name);
    PrintOptionsGuard guard(options_from_json(item["options"]));
    Tensor t = build_case(item);
    REQUIRE(to_string(t) == item["repr"].get<std::string>());
    ++count;
  }
  return count;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("integer and bool tensors print like PyTorch", "[print]") {
  int n = check_cases([](const std::string& name) {
    return starts_with(name, "int") || starts_with(name, "uint8") || starts_with(name, "bool");
  });
  REQUIRE(n == 17);
}

TEST_CASE("floating tensors: fixed, integer-valued and scientific modes", "[print]") {
  int n = check_cases([](const std::string& name) { return starts_with(name, "float"); });
  REQUIRE(n == 45);
}

TEST_CASE("empty tensors show size and dtype suffixes", "[print]") {
  int n = check_cases([](const std::string& name) { return starts_with(name, "empty"); });
  REQUIRE(n == 7);
}

TEST_CASE("large tensors are summarised with ...", "[print]") {
  int n = check_cases([](const std::string& name) { return starts_with(name, "summarize"); });
  REQUIRE(n == 11);
}

TEST_CASE("non-contiguous tensors print in logical order", "[print]") {
  int n = check_cases([](const std::string& name) { return starts_with(name, "transposed"); });
  REQUIRE(n == 3);
}

TEST_CASE("requires_grad and grad_fn suffixes, wrapped past the line width", "[print]") {
  int n = check_cases([](const std::string& name) {
    return starts_with(name, "requires_grad") || starts_with(name, "grad_fn");
  });
  REQUIRE(n == 13);
}

TEST_CASE("size_string prints torch.Size", "[print]") {
  static const json reference = testing::load_reference("print.json");
  for (const auto& [key, sizes] : reference["sizes"].items()) {
    INFO(key);
    REQUIRE(size_string(sizes.get<Shape>()) == reference["size_strings"][key].get<std::string>());
  }
  REQUIRE(size_string({2, 3}) == "torch.Size([2, 3])");
}

TEST_CASE("operator<< writes the same text as to_string, and printoptions round-trip", "[print]") {
  Tensor t = tensor({{1, 2}, {3, 4}});
  std::ostringstream out;
  out << t;
  REQUIRE(out.str() == to_string(t));
  REQUIRE(to_string(Tensor()) == "[ Tensor (undefined) ]");

  PrintOptions options;
  options.precision = 2;
  options.sci_mode = false;
  PrintOptionsGuard guard(options);
  REQUIRE(get_printoptions().precision == 2);
  REQUIRE(get_printoptions().sci_mode == std::optional<bool>(false));
}

TEST_CASE("a 0-d view with a storage offset prints its own element", "[print]") {
  // Element 2 of [10, 20, 30] as a 0-d tensor: printing must honour the offset.
  Tensor base = tensor({10, 20, 30});
  Tensor element = make_tensor(base.storage(), {}, {}, 2, kInt64);
  REQUIRE(to_string(element) == "tensor(30)");
}
