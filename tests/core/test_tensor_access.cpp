// tests/core/test_tensor_access.cpp — reading and writing a Tensor's elements directly:
// data_ptr<T>() and its dtype check, item(), x[i] (operator[]), zero_(), and the 64-byte
// alignment of CPU storage (core/tensor.h, core/storage.cpp). Tutorial §2.
//
// The messages are PyTorch's: data_ptr<int64_t>() on a float tensor is libtorch's
// "expected scalar type Long but found Float"; item() and x[i] word their errors as
// `x.item()` and `x[5]` do in Python (PyTorch 2.15, as 1.13).
#include <catch2/catch.hpp>

#include <cstdint>

#include <ember/core/allocator.h>
#include <ember/ember.h>

#include "test_support.h"

using ember::Tensor;
using ember::testing::to_vector;

namespace {
bool aligned_64(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 64 == 0; }
}  // namespace

TEST_CASE("data_ptr<T>() checks T against the dtype with PyTorch's message", "[tensor][data_ptr]") {
  Tensor floats = ember::tensor({1.5f, 2.5f});
  REQUIRE(floats.data_ptr<float>() == floats.data_ptr());
  REQUIRE(floats.data_ptr<float>()[1] == 2.5f);
  REQUIRE_THROWS_WITH(floats.data_ptr<std::int64_t>(), "expected scalar type Long but found Float");
  REQUIRE_THROWS_AS(floats.data_ptr<std::int64_t>(), ember::DTypeError);
  REQUIRE_THROWS_WITH(floats.data_ptr<double>(), "expected scalar type Double but found Float");
  Tensor longs = ember::tensor({1, 2});
  REQUIRE_THROWS_WITH(longs.data_ptr<float>(), "expected scalar type Float but found Long");
  REQUIRE_THROWS_WITH(longs.data_ptr<std::int32_t>(), "expected scalar type Int but found Long");
  REQUIRE_THROWS_WITH(longs.to(ember::kUInt8).data_ptr<bool>(), "expected scalar type Bool but found Byte");
  REQUIRE_THROWS_WITH(ember::tensor({true}).data_ptr<std::uint8_t>(), "expected scalar type Byte but found Bool");
  // A view's pointer starts at its own first element (storage offset included).
  Tensor base = ember::arange(6, ember::kFloat32).reshape({2, 3});
  Tensor row = base[1];
  REQUIRE(row.data_ptr<float>() == base.data_ptr<float>() + 3);
  REQUIRE(*row.data_ptr<float>() == 3.0f);
}

TEST_CASE("item() needs exactly one element", "[tensor][item]") {
  REQUIRE(ember::tensor(2.5).item<double>() == 2.5);
  REQUIRE(ember::tensor({{7}}).item<std::int64_t>() == 7);  // one element, any number of dims
  REQUIRE(ember::tensor({true}).item<bool>());
  Tensor pair = ember::tensor({1.0, 2.0});
  REQUIRE_THROWS_WITH(pair.item(), "a Tensor with 2 elements cannot be converted to Scalar");
  REQUIRE_THROWS_AS(pair.item(), ember::Error);
  REQUIRE_THROWS_WITH(ember::zeros({2, 3}).item<float>(), "a Tensor with 6 elements cannot be converted to Scalar");
  REQUIRE_THROWS_WITH(ember::zeros({0, 3}).item(), "a Tensor with 0 elements cannot be converted to Scalar");
  // A strided single element reads the right memory.
  Tensor base = ember::arange(6, ember::kFloat32).reshape({2, 3});
  REQUIRE(base.t()[2][1].item<float>() == 5.0f);
}

TEST_CASE("x[i] selects along dim 0 as a view, with PyTorch's index errors", "[tensor][indexing]") {
  Tensor base = ember::arange(12, ember::kFloat32).reshape({3, 4});
  Tensor row = base[1];
  REQUIRE(row.sizes() == ember::Shape{4});
  REQUIRE(to_vector(row) == std::vector<double>{4, 5, 6, 7});
  REQUIRE(row.storage() == base.storage());  // a view: no copy
  REQUIRE(row.storage_offset() == 4);
  REQUIRE(to_vector(base[-1]) == std::vector<double>{8, 9, 10, 11});  // negative: from the end
  REQUIRE(to_vector(base[-3]) == to_vector(base[0]));
  REQUIRE(base[2][-1].item<float>() == 11.0f);
  REQUIRE(base.t()[1].strides() == ember::Shape{4});  // a column of the base
  REQUIRE(to_vector(base.t()[1]) == std::vector<double>{1, 5, 9});

  // Writing through the view changes the base, and the other way round.
  row.fill_(-1.0);
  REQUIRE(to_vector(base[1]) == std::vector<double>{-1, -1, -1, -1});
  base[1][2].fill_(3.0);
  REQUIRE(row[2].item<float>() == 3.0f);

  REQUIRE_THROWS_WITH(base[3], "index 3 is out of bounds for dimension 0 with size 3");
  REQUIRE_THROWS_WITH(ember::arange(3)[5], "index 5 is out of bounds for dimension 0 with size 3");
  REQUIRE_THROWS_WITH(ember::arange(3)[-4], "index -4 is out of bounds for dimension 0 with size 3");
  REQUIRE_THROWS_AS(ember::arange(3)[5], ember::IndexError);
  REQUIRE_THROWS_WITH(ember::zeros({0, 3})[0], "index 0 is out of bounds for dimension 0 with size 0");
  REQUIRE_THROWS_WITH(ember::tensor(1.0)[0],
                      "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                      "to convert a 0-dim tensor to a number");
  REQUIRE_THROWS_AS(ember::tensor(1.0)[0], ember::IndexError);
}

TEST_CASE("zero_() clears every element in place, views included", "[tensor][zero_]") {
  Tensor x = ember::arange(6, ember::kFloat32).reshape({2, 3}) + 1.0;
  const void* data = x.data_ptr();
  const std::uint64_t version = x.version();
  Tensor& result = x.zero_();
  REQUIRE(&result == &x);  // returns self, like every in-place op
  REQUIRE(x.data_ptr() == data);
  REQUIRE(x.version() > version);
  REQUIRE(to_vector(x) == std::vector<double>(6, 0.0));

  // Through a non-contiguous view only the viewed elements change.
  Tensor y = ember::arange(1, 7, 1, ember::kInt64).reshape({2, 3});
  Tensor column = y.t()[1];
  column.zero_();
  REQUIRE(to_vector(y) == std::vector<double>{1, 0, 3, 4, 0, 6});
  REQUIRE(y.dtype() == ember::kInt64);

  Tensor flags = ember::tensor({true, true});
  flags.zero_();
  REQUIRE(to_vector(flags) == std::vector<double>{0, 0});
  Tensor scalar = ember::tensor(4.5);
  scalar.zero_();
  REQUIRE(scalar.item<double>() == 0.0);
  Tensor nothing = ember::empty({0, 3});
  REQUIRE_NOTHROW(nothing.zero_());
  REQUIRE(nothing.numel() == 0);
}

TEST_CASE("CPU storage is 64-byte aligned", "[tensor][storage]") {
  REQUIRE(ember::kCpuAlignment == 64);
  // Sizes that are not multiples of 64 bytes, and every dtype: each fresh storage starts on a
  // cache-line boundary (what AVX-512 loads and the GEMM packing rely on).
  for (std::int64_t n : {1, 3, 7, 15, 16, 17, 100, 1000, 4097}) {
    for (ember::DType dtype : {ember::kBool, ember::kUInt8, ember::kInt32, ember::kInt64, ember::kFloat32,
                               ember::kFloat64}) {
      INFO(n << " elements of " << ember::dtype_name(dtype));
      REQUIRE(aligned_64(ember::empty({n}, dtype).data_ptr()));
      REQUIRE(aligned_64(ember::zeros({n}, dtype).storage()->data()));
    }
  }
  Tensor base = ember::arange(24, ember::kFloat32).reshape({2, 3, 4});
  REQUIRE(aligned_64(base.data_ptr()));
  REQUIRE(aligned_64(base.permute({2, 0, 1}).contiguous().data_ptr()));  // a copy gets fresh storage
  REQUIRE(aligned_64(base.clone().data_ptr()));
  REQUIRE(aligned_64(ember::tensor({1.0, 2.0, 3.0}).data_ptr()));
  REQUIRE(aligned_64(ember::ones({5, 7}).to(ember::kFloat64).data_ptr()));
  // A view points into its base's storage (offset 1 float = 4 bytes): the storage stays aligned.
  Tensor shifted = base.flatten().narrow(0, 1, 5);
  REQUIRE(aligned_64(shifted.storage()->data()));
  REQUIRE(reinterpret_cast<std::uintptr_t>(shifted.data_ptr()) % 64 == 4);
}
