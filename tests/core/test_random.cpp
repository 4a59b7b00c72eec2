// tests/core/test_random.cpp — ember's RNG against PyTorch's CPU generator, bit for bit.
//
// tests/reference/gen_random.py recorded each "recipe" with torch 2.15; here each recipe is
// replayed with ember's functions and every value is compared by its bits (not within a
// tolerance): initialisation, dropout and shuffling only match PyTorch if the streams do.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <test_support.h>

using namespace ember;
using nlohmann::json;

namespace {

const json& reference() {
  static const json data = testing::load_reference("random.json");
  return data;
}

// Compares every element's bits. Values are read in ember's dtype, and the JSON number is
// converted to that dtype first (a float32 in JSON is the exact double of the float).
void require_same_bits(const Tensor& actual, const json& expected) {
  Tensor contiguous_actual = actual;
  REQUIRE(actual.sizes() == expected["shape"].get<Shape>());
  REQUIRE(dtype_name(actual.dtype()) == expected["dtype"].get<std::string>());
  const auto& data = expected["data"];
  REQUIRE(static_cast<std::int64_t>(data.size()) == actual.numel());
  // Walk the tensor in row-major logical order (it may be non-contiguous).
  const std::int64_t ndim = actual.dim();
  std::vector<std::int64_t> index(static_cast<std::size_t>(ndim), 0);
  for (std::size_t n = 0; n < data.size(); ++n) {
    std::int64_t offset = 0;
    for (std::int64_t d = 0; d < ndim; ++d) offset += index[d] * actual.stride(d);
    INFO("element " << n);
    EMBER_DISPATCH_ALL(actual.dtype(), {
      scalar_t got = static_cast<const scalar_t*>(actual.data_ptr())[offset];
      scalar_t want;
      if constexpr (std::is_same_v<scalar_t, bool>) want = data[n].get<bool>();
      else if constexpr (std::is_floating_point_v<scalar_t>) want = static_cast<scalar_t>(data[n].get<double>());
      else want = static_cast<scalar_t>(data[n].get<std::int64_t>());
      REQUIRE(std::memcmp(&got, &want, sizeof(scalar_t)) == 0);
    });
    for (std::int64_t d = ndim - 1; d >= 0; --d) {
      if (++index[d] < actual.size(d)) break;
      index[d] = 0;
    }
  }
}

// Runs fn(case) for every reference case of one recipe; returns how many ran.
template <class Fn>
int for_each_case(const std::string& recipe, Fn fn) {
  int count = 0;
  for (const auto& item : reference()["cases"]) {
    if (item["recipe"] != recipe) continue;
    INFO(recipe << " seed=" << item["seed"] << " params=" << item["params"].dump());
    fn(item, item["params"]);
    ++count;
  }
  return count;
}

// Same dtype, sizes and bits (without native::equal, so this file needs core only).
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.is_contiguous() && b.is_contiguous() &&
         std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<std::size_t>(a.numel()) * a.element_size()) == 0;
}

Generator seeded(const json& item) { return Generator(item["seed"].get<std::uint64_t>()); }

}  // namespace

TEST_CASE("rand matches torch.rand bit for bit (float32, float64, many sizes)", "[random]") {
  int n = for_each_case("rand", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = rand({params["size"].get<std::int64_t>()}, testing::dtype_from_name(params["dtype"]), &gen);
    require_same_bits(t, item["result"]);
  });
  REQUIRE(n > 0);
}

TEST_CASE("randn matches torch.randn on both paths (< 16 and >= 16 elements)", "[random]") {
  int n = for_each_case("randn", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = randn({params["size"].get<std::int64_t>()}, testing::dtype_from_name(params["dtype"]), &gen);
    require_same_bits(t, item["result"]);
  });
  REQUIRE(n > 0);
}

TEST_CASE("uniform_ and normal_ with bounds match PyTorch", "[random]") {
  int n = for_each_case("uniform", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = empty({params["size"].get<std::int64_t>()}, testing::dtype_from_name(params["dtype"]));
    uniform_(t, params["low"].get<double>(), params["high"].get<double>(), &gen);
    require_same_bits(t, item["result"]);
  });
  n += for_each_case("normal", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = empty({params["size"].get<std::int64_t>()}, testing::dtype_from_name(params["dtype"]));
    normal_(t, params["mean"].get<double>(), params["std"].get<double>(), &gen);
    require_same_bits(t, item["result"]);
  });
  REQUIRE(n > 0);
}

TEST_CASE("samplers on non-contiguous tensors draw in memory order", "[random]") {
  auto transposed = [](const json& params) {
    Tensor base = empty({params["rows"].get<std::int64_t>(), params["cols"].get<std::int64_t>()},
                        testing::dtype_from_name(params["dtype"]));
    // A transposed view, built from sizes and strides (views are autograd's; core uses make_tensor).
    return make_tensor(base.storage(), {base.size(1), base.size(0)}, {base.stride(1), base.stride(0)}, 0,
                       base.dtype());
  };
  int n = for_each_case("uniform_transposed", [&](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = transposed(params);
    REQUIRE_FALSE(t.is_contiguous());
    uniform_(t, 0.0, 1.0, &gen);
    require_same_bits(t, item["result"]);
  });
  n += for_each_case("normal_transposed", [&](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = transposed(params);
    normal_(t, 0.0, 1.0, &gen);
    require_same_bits(t, item["result"]);
  });
  REQUIRE(n == 8);
}

TEST_CASE("the cached Box-Muller value carries over between randn calls", "[random]") {
  int n = for_each_case("randn_sequence", [](const json& item, const json&) {
    Generator gen = seeded(item);
    Tensor a = randn({3}, kFloat64, &gen);
    Tensor b = randn({3}, kFloat64, &gen);
    Tensor c = randn({20}, kFloat32, &gen);
    Tensor d = randn({1}, kFloat32, &gen);
    // Concatenate by hand (cat is another layer's op) into one float64 tensor.
    Tensor all = empty({27}, kFloat64);
    auto* out = all.data_ptr<double>();
    for (int i = 0; i < 3; ++i) out[i] = a.data_ptr<double>()[i];
    for (int i = 0; i < 3; ++i) out[3 + i] = b.data_ptr<double>()[i];
    for (int i = 0; i < 20; ++i) out[6 + i] = c.data_ptr<float>()[i];
    out[26] = d.data_ptr<float>()[0];
    require_same_bits(all, item["result"]);
  });
  REQUIRE(n == 2);
}

TEST_CASE("randint, random_ and randperm match PyTorch", "[random]") {
  int n = for_each_case("randint", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = randint(params["low"].get<std::int64_t>(), params["high"].get<std::int64_t>(), {25}, {}, &gen);
    REQUIRE(t.dtype() == kInt64);
    require_same_bits(t, item["result"]);
  });
  n += for_each_case("random_full", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = empty({12}, testing::dtype_from_name(params["dtype"]));
    random_(t, &gen);
    require_same_bits(t, item["result"]);
  });
  n += for_each_case("random_from", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = empty({10}, testing::dtype_from_name(params["dtype"]));
    random_(t, params["low"].get<std::int64_t>(), std::nullopt, &gen);
    require_same_bits(t, item["result"]);
  });
  n += for_each_case("random_scalar_int64", [](const json& item, const json&) {
    Generator gen = seeded(item);
    Tensor t = empty({}, kInt64);
    random_(t, &gen);
    require_same_bits(t, item["result"]);
  });
  n += for_each_case("randperm", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    require_same_bits(randperm(params["n"].get<std::int64_t>(), {}, &gen), item["result"]);
  });
  REQUIRE(n > 30);
}

TEST_CASE("bernoulli_ matches PyTorch for several p", "[random]") {
  int n = for_each_case("bernoulli", [](const json& item, const json& params) {
    Generator gen = seeded(item);
    Tensor t = empty({40});
    bernoulli_(t, params["p"].get<double>(), &gen);
    require_same_bits(t, item["result"]);
  });
  REQUIRE(n == 12);
}

TEST_CASE("manual_seed(123) then rand({1, 50}) gives PyTorch's values", "[random]") {
  int n = for_each_case("manual_seed_rand", [](const json& item, const json&) {
    manual_seed(123);
    require_same_bits(rand({1, 50}), item["result"]);
  });
  REQUIRE(n == 1);
}

TEST_CASE("a shuffling DataLoader's first epoch order (3, 1, 0, 2, 4) after manual_seed(123)", "[random]") {
  // What torch.utils.data does on its first pass with shuffle=True: one int64 random_() on a
  // 0-d tensor for the workers' base seed, one more to seed RandomSampler's own generator,
  // then randperm(5) with that generator.
  const json& loader = reference()["dataloader"];
  manual_seed(123);
  Tensor base_seed = empty({}, kInt64);
  random_(base_seed);
  REQUIRE(base_seed.item<std::int64_t>() == loader["base_seed"].get<std::int64_t>());
  Tensor sampler_seed = empty({}, kInt64);
  random_(sampler_seed);
  REQUIRE(sampler_seed.item<std::int64_t>() == loader["sampler_seed"].get<std::int64_t>());
  Generator sampler_generator(static_cast<std::uint64_t>(sampler_seed.item<std::int64_t>()));
  Tensor order = randperm(5, {}, &sampler_generator);
  const auto* values = order.data_ptr<std::int64_t>();
  std::vector<std::int64_t> got(values, values + 5);
  REQUIRE(got == std::vector<std::int64_t>{3, 1, 0, 2, 4});
  REQUIRE(got == loader["order"].get<std::vector<std::int64_t>>());
}

TEST_CASE("generator state round-trips, including the cached normal", "[random]") {
  Generator gen(2024);
  Tensor warm_up = randn({3}, kFloat64, &gen);  // odd count on the scalar path: a value is cached
  std::vector<std::uint8_t> state = gen.get_state();
  Tensor first = randn({5}, kFloat64, &gen);
  Tensor first_uniform = rand({700}, {}, &gen);  // long enough to twist the engine again

  Generator other(1);
  other.set_state(state);
  REQUIRE(other.initial_seed() == 2024);
  Tensor second = randn({5}, kFloat64, &other);
  Tensor second_uniform = rand({700}, {}, &other);
  REQUIRE(same_bits(first, second));
  REQUIRE(same_bits(first_uniform, second_uniform));

  SECTION("a wrong-sized state is rejected") {
    state.pop_back();
    REQUIRE_THROWS_AS(other.set_state(state), ValueError);
  }
}

TEST_CASE("manual_seed restarts the stream and clears the cached normal", "[random]") {
  Generator gen(7);
  Tensor a = randn({1}, kFloat64, &gen);  // leaves a cached value behind
  gen.manual_seed(7);
  REQUIRE_FALSE(gen.take_cached_normal().has_value());
  Tensor b = randn({1}, kFloat64, &gen);
  REQUIRE(same_bits(a, b));
  REQUIRE(gen.initial_seed() == 7);
}

TEST_CASE("random factories handle empty and 0-d shapes and options", "[random]") {
  Generator gen(1);
  REQUIRE(rand({0, 3}, {}, &gen).numel() == 0);
  REQUIRE(randn({0}, {}, &gen).numel() == 0);
  REQUIRE(randperm(0, {}, &gen).numel() == 0);
  Tensor scalar = rand({}, {}, &gen);
  REQUIRE(scalar.dim() == 0);
  REQUIRE(scalar.item<double>() >= 0.0);
  REQUIRE(scalar.item<double>() < 1.0);
  Tensor with_grad = randn({2, 2}, TensorOptions().requires_grad(true), &gen);
  REQUIRE(with_grad.requires_grad());
  REQUIRE(randperm(4, kInt32, &gen).dtype() == kInt32);
  Tensor like = rand_like(empty({2, 3}, kFloat64), &gen);
  REQUIRE(like.dtype() == kFloat64);
  REQUIRE(like.sizes() == Shape{2, 3});
  REQUIRE(randn_like(like, &gen).sizes() == Shape{2, 3});
}

TEST_CASE("in-place samplers bump the version counter", "[random]") {
  Tensor t = empty({4});
  auto before = t.version();
  uniform_(t);
  normal_(t);
  bernoulli_(t, 0.5);
  REQUIRE(t.version() == before + 3);
}

TEST_CASE("random errors use PyTorch's messages", "[random]") {
  Tensor f = empty({3});
  Tensor l = empty({3}, kInt64);
  REQUIRE_THROWS_WITH(uniform_(f, 1.0, 0.0), "uniform_ expects to return a [from, to) range, but found from=1 > to=0");
  REQUIRE_THROWS_AS(uniform_(f, 1.0, 0.0), ValueError);
  REQUIRE_THROWS_WITH(normal_(f, 0.0, -1.0), "normal expects std >= 0.0, but found std -1");
  REQUIRE_THROWS_WITH(uniform_(l), "\"check_uniform_bounds\" not implemented for 'Long'");
  REQUIRE_THROWS_AS(uniform_(l), DTypeError);
  REQUIRE_THROWS_WITH(normal_(l), "\"normal_kernel_cpu\" not implemented for 'Long'");
  REQUIRE_THROWS_WITH(rand({3}, kInt64), "\"check_uniform_bounds\" not implemented for 'Long'");
  REQUIRE_THROWS_WITH(randn({3}, kInt64), "\"normal_kernel_cpu\" not implemented for 'Long'");
  REQUIRE_THROWS_WITH(bernoulli_(f, 1.5), "bernoulli_ expects p to be in [0, 1], but got p=1.5");
  REQUIRE_THROWS_WITH(random_(f, 5, 5), "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
  REQUIRE_THROWS_WITH(randint(5, 5, {3}), "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
  REQUIRE_THROWS_WITH(randperm(-1), "Trying to create tensor with negative dimension -1: [-1]");
  REQUIRE_THROWS_AS(randperm(-1), ShapeError);
  REQUIRE_THROWS_WITH(rand({-1}), "Trying to create tensor with negative dimension -1: [-1]");
}

TEST_CASE("generator: the Philox offset for device fills is reserved, saved, restored and reset", "[random][philox]") {
  Generator gen(99);
  REQUIRE(gen.philox_offset() == 0);
  REQUIRE(gen.reserve_philox_counters(philox_counters(7)) == 0);  // 7 values: 4 counters
  REQUIRE(gen.reserve_philox_counters(philox_counters(1)) == 4);
  REQUIRE(gen.philox_offset() == 5);

  std::vector<std::uint8_t> state = gen.get_state();
  Generator other(1);
  other.set_state(state);
  REQUIRE(other.philox_offset() == 5);

  // A state saved before the offset existed (8 bytes shorter) still loads, with offset 0.
  state.resize(state.size() - 8);
  other.set_state(state);
  REQUIRE(other.philox_offset() == 0);
  REQUIRE(other.initial_seed() == 99);

  gen.manual_seed(99);
  REQUIRE(gen.philox_offset() == 0);
}

TEST_CASE("generator: device fills never touch the CPU stream", "[random][philox]") {
  // Reserving Philox counters (what a rand/randn/dropout on a GPU does) leaves the mt19937
  // stream exactly where it was, so CPU results stay PyTorch's bit for bit.
  Generator plain(123), with_device_fills(123);
  with_device_fills.reserve_philox_counters(1000);
  Tensor a = rand({40}, {}, &plain);
  with_device_fills.reserve_philox_counters(3);
  Tensor b = rand({40}, {}, &with_device_fills);
  REQUIRE(same_bits(a, b));
}
