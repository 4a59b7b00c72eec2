// tests/core/test_copy.cpp — copy_, fill_, contiguous, clone, to(dtype), to(device).
//
// The value cases (casts, contiguous copies of transposed and strided views) run from
// elementwise.json in test_elementwise.cpp's driver; here: copy_/fill_ semantics against
// PyTorch's (values taken from the reference file), version bumps, and error messages.
#include <catch2/catch.hpp>

#include <ember/core/cuda_hooks.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>

#include "test_support.h"

using namespace ember;
using nlohmann::json;

namespace {

Tensor reference_tensor(const std::string& op, std::size_t nth_argument, const std::string& layout = "") {
  static const json reference = testing::load_reference("elementwise.json");
  for (const json& c : reference["cases"]) {
    if (c["op"] != op) continue;
    const json& arg = c["args"][nth_argument];
    if (layout.empty() ? !arg.contains("layout") : (arg.contains("layout") && arg["layout"] == layout)) {
      return testing::tensor_from_json(arg);
    }
  }
  throw std::runtime_error("no reference case for " + op);
}

Tensor counting(std::initializer_list<std::int64_t> sizes) {
  Tensor t = empty(sizes, kFloat32);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data_ptr<float>()[i] = static_cast<float>(i);
  return t;
}

Tensor transposed(const Tensor& t) {
  return make_tensor(t.storage(), {t.sizes()[1], t.sizes()[0]}, {t.strides()[1], t.strides()[0]}, t.storage_offset(),
                     t.dtype());
}

}  // namespace

TEST_CASE("copy: copy_ into a transposed view writes the transposed layout", "[copy]") {
  Tensor stored = counting({3, 4});
  Tensor dst_storage = empty({4, 3}, kFloat32);
  Tensor dst = transposed(dst_storage);  // [3, 4] view, column-major in memory
  native::copy_(dst, stored);
  // Reading dst through its strides gives stored back; its memory holds stored.t().
  CHECK(testing::to_vector(dst) == testing::to_vector(stored));
  CHECK(testing::to_vector(dst_storage) == testing::to_vector(native::contiguous(transposed(stored))));
}

TEST_CASE("copy: copy_ broadcasts and casts the source", "[copy]") {
  Tensor row = reference_tensor("to_dtype", 0);  // [[0.0, 1.7, 2.5], [3.2, 0.4, 9.9]]
  Tensor dst = empty({2, 2, 3}, kInt64);
  native::copy_(dst, row);
  std::vector<double> values = testing::to_vector(dst);
  std::vector<double> truncated = testing::to_vector(native::to_dtype(row, kInt64));  // checked vs PyTorch elsewhere
  REQUIRE(values.size() == 12);
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(values[i] == truncated[i % 6]);
}

TEST_CASE("copy: same-dtype rows of unit stride are copied whole, at every offset", "[copy]") {
  // The CPU copies such rows as bytes (core/cpu/elementwise_kernels.cpp); every element must
  // still come from the right place: a broadcast bias, rows cut from a wider matrix, and a
  // 3-D copy large enough that the threads' chunks start mid-row.
  Tensor bias = arange(30, kFloat32);
  Tensor batch = native::contiguous(native::expand(bias, {32, 30}));
  std::vector<double> values = testing::to_vector(batch);
  for (std::size_t i = 0; i < values.size(); ++i) REQUIRE(values[i] == static_cast<double>(i % 30));

  for (DType dtype : {kInt64, kBool, kBFloat16, kFloat64}) {
    Tensor wide = native::to_dtype(native::reshape(arange(7 * 13, kFloat32), {7, 13}), dtype);
    Tensor block = native::contiguous(native::narrow(native::narrow(wide, 1, 3, 8), 0, 2, 4));  // [4, 8]
    std::vector<double> expected = testing::to_vector(wide), got = testing::to_vector(block);
    REQUIRE(got.size() == 32);
    for (std::size_t r = 0; r < 4; ++r)
      for (std::size_t c = 0; c < 8; ++c) CHECK(got[r * 8 + c] == expected[(r + 2) * 13 + c + 3]);
  }

  // 76416 elements, 199 per row: more than one grain (core/parallel.h), and half of it is not
  // a whole number of rows.
  Tensor source = native::reshape(arange(3 * 128 * 201, kFloat32), {3, 128, 201});
  Tensor cut = native::contiguous(native::narrow(source, 2, 1, 199));
  std::vector<double> all = testing::to_vector(source), rows = testing::to_vector(cut);
  REQUIRE(rows.size() == 76416);
  for (std::size_t i = 0; i < rows.size(); ++i) REQUIRE(rows[i] == all[i / 199 * 201 + i % 199 + 1]);
}

TEST_CASE("copy: copy_ and fill_ bump the version counter shared by views", "[copy]") {
  Tensor base = counting({2, 3});
  Tensor view = transposed(base);
  std::uint64_t version = base.version();
  native::fill_(view, 1.5);
  CHECK(base.version() == version + 1);
  native::copy_(base, counting({3}));
  CHECK(view.version() == version + 2);
  for (double v : testing::to_vector(native::sub(base, counting({3})))) CHECK(v == 0.0);
}

TEST_CASE("copy: fill_ casts the value like PyTorch", "[copy]") {
  Tensor longs = empty({2}, kInt64);
  native::fill_(longs, 2.7);  // torch.tensor([1, 2]).fill_(2.7) -> [2, 2]
  CHECK(testing::to_vector(longs) == std::vector<double>{2, 2});
  Tensor flags = empty({3}, kBool);
  native::fill_(flags, 2);
  CHECK(testing::to_vector(flags) == std::vector<double>{1, 1, 1});
  Tensor nothing = empty({0, 4}, kFloat32);
  REQUIRE_NOTHROW(native::fill_(nothing, 1.0));
  Tensor scalar = empty({}, kFloat64);
  native::fill_(scalar, -3.25);
  CHECK(scalar.item<double>() == -3.25);
}

TEST_CASE("copy: contiguous, clone and to_dtype share memory only when nothing changes", "[copy]") {
  Tensor t = counting({2, 3});
  CHECK(native::contiguous(t).is_same(t));
  CHECK(native::to_dtype(t, kFloat32).is_same(t));
  CHECK(native::to_device(t, kCPU).is_same(t));
  Tensor copy = native::clone(t);
  CHECK(copy.data_ptr() != t.data_ptr());
  CHECK(native::equal(copy, t));
  Tensor view = transposed(t);
  Tensor dense = native::contiguous(view);
  CHECK(dense.is_contiguous());
  CHECK(!dense.is_same(view));
  CHECK(native::equal(dense, view));
  Tensor doubled = native::to_dtype(view, kFloat64);
  CHECK(doubled.dtype() == kFloat64);
  CHECK(doubled.sizes() == view.sizes());
  Tensor empty_copy = native::clone(empty({0, 3}, kInt32));
  CHECK(empty_copy.sizes() == Shape{0, 3});
  CHECK(empty_copy.dtype() == kInt32);
}

TEST_CASE("copy: shape errors use PyTorch's messages", "[copy][errors]") {
  REQUIRE_THROWS_WITH(native::copy_(empty({2}), counting({3})),
                      "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  REQUIRE_THROWS_WITH(native::copy_(empty({3}), counting({2, 3})), "output with shape [3] doesn't match the broadcast shape [2, 3]");
  REQUIRE_THROWS_AS(native::copy_(empty({3}), counting({2, 3})), ShapeError);
}

TEST_CASE("copy: to_device to CUDA without a GPU says so", "[copy][device]") {
  // In a CPU-only build (or on a machine without a GPU) this is a DeviceError, never a crash.
  for (Device target : {Device(DeviceType::CUDA, 0), kCUDA}) {
    try {
      Tensor on_gpu = native::to_device(counting({2}), target);
      CHECK(on_gpu.is_cuda());  // a CUDA backend and a GPU are present
      CHECK(on_gpu.device().has_index());
      CHECK(native::equal(native::to_device(on_gpu, kCPU), counting({2})));
    } catch (const DeviceError& error) {
      const std::string message = error.what();
      CHECK((message.find("Torch not compiled with CUDA enabled") != std::string::npos ||
             message.find("No CUDA GPUs are available") != std::string::npos ||
             message.find("no CUDA GPU is visible") != std::string::npos));
    }
  }
}

TEST_CASE("copy: to(\"cuda\") names exactly what is missing: the CUDA build, or a GPU", "[copy][device][errors]") {
  if (cuda::is_available()) return;  // a real GPU: tests/cuda covers the copies themselves
  const Tensor x = counting({2, 3});
  if (!cuda::is_built()) {
    // CPU-only build: PyTorch's "not compiled" wording, for every spelling of the device.
    const std::string not_built = "Torch not compiled with CUDA enabled (ember was built without its CUDA backend)";
    REQUIRE_THROWS_WITH(x.to("cuda"), not_built);
    REQUIRE_THROWS_WITH(x.to("cuda:0"), not_built);
    REQUIRE_THROWS_WITH(x.to(Device(DeviceType::CUDA, 1)), not_built);
    REQUIRE_THROWS_WITH(x.cuda(), not_built);
    REQUIRE_THROWS_WITH(empty({2}, TensorOptions().device(kCUDA)), not_built);
  } else {
    // CUDA build on a machine without a GPU: "cuda" has no current device to resolve to;
    // an explicit index reaches the allocator, which says no GPU is visible.
    REQUIRE_THROWS_WITH(x.to("cuda"), "No CUDA GPUs are available");
    REQUIRE_THROWS_WITH(x.cuda(), "No CUDA GPUs are available");
    REQUIRE_THROWS_WITH(x.to("cuda:0"), Catch::Contains("no CUDA GPU is visible"));
  }
  REQUIRE_THROWS_AS(x.to("cuda"), DeviceError);
}
