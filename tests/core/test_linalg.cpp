// tests/core/test_linalg.cpp — mm / bmm / addmm / matmul (core/linalg.cpp) against PyTorch
// (tests/reference/linalg.json, from gen_linalg.py), and the CPU GEMM (core/cpu/gemm.cpp)
// against a naive float64 triple loop: odd sizes, transposed operands, batches, alpha/beta.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <ember/core/backend.h>
#include <ember/core/cpu_allocator.h>
#include <ember/core/native.h>
#include <ember/core/parallel.h>

#include "test_support.h"

namespace {

using namespace ember;
using nlohmann::json;

// Values of a CPU tensor of any strides, row-major, as doubles (reads memory directly).
std::vector<double> strided_values(const Tensor& t) {
  std::vector<double> values;
  for (std::int64_t linear = 0; linear < t.numel(); ++linear) {
    std::int64_t rest = linear, offset = 0;
    for (std::int64_t d = t.dim() - 1; d >= 0; --d) {
      offset += (rest % t.sizes()[d]) * t.strides()[d];
      rest /= t.sizes()[d];
    }
    EMBER_DISPATCH_ALL(t.dtype(), {
      values.push_back(static_cast<double>(static_cast<const scalar_t*>(t.data_ptr())[offset]));
    });
  }
  return values;
}

// An operand as stored in linalg.json: "t" means stored with the last two dims swapped.
Tensor operand_from_json(const json& stored, const std::string& layout) {
  Tensor t = testing::tensor_from_json(stored);
  return layout == "t" ? native::transpose(t, -1, -2) : t;
}

Scalar scalar_from_json(const json& value) {
  if (value.is_number_integer()) return Scalar(value.get<std::int64_t>());
  return Scalar(value.get<double>());
}

Tensor run(const std::string& op, const std::vector<Tensor>& in, Scalar beta = 1, Scalar alpha = 1) {
  if (op == "mm") return native::mm(in[0], in[1]);
  if (op == "bmm") return native::bmm(in[0], in[1]);
  if (op == "matmul") return native::matmul(in[0], in[1]);
  if (op == "addmm") return native::addmm(in[0], in[1], in[2], beta, alpha);
  throw std::runtime_error("unknown op " + op);
}

// |ember - torch| <= atol + rtol * |torch| elementwise (float32 sums differ in order).
void check_close(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(actual[i] - expected[i]) <= tolerance * (1.0 + std::abs(expected[i])));
  }
}

// A random matrix stored row-major in a vector, for the GEMM tests.
std::vector<double> random_values(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(count);
  for (double& v : values) v = uniform(rng);
  return values;
}

}  // namespace

TEST_CASE("mm, bmm, addmm and matmul match PyTorch", "[linalg]") {
  const json reference = testing::load_reference("linalg.json");
  REQUIRE(reference["cases"].size() > 25);
  for (const json& c : reference["cases"]) {
    std::vector<Tensor> inputs;
    std::string shapes;
    for (std::size_t i = 0; i < c["inputs"].size(); ++i) {
      inputs.push_back(operand_from_json(c["inputs"][i], c["layouts"][i]));
      shapes += shape_to_string(inputs.back().sizes()) + (inputs.back().is_contiguous() ? " " : "(strided) ");
    }
    INFO(c["op"].get<std::string>() << " " << shapes << inputs[0].dtype());
    Tensor out = run(c["op"], inputs, scalar_from_json(c["beta"]), scalar_from_json(c["alpha"]));
    CHECK(out.sizes() == c["output"]["shape"].get<Shape>());
    CHECK(dtype_name(out.dtype()) == c["output"]["dtype"].get<std::string>());
    CHECK(out.is_contiguous());
    const double tolerance = out.dtype() == kFloat32 ? 1e-5 : 1e-12;
    check_close(strided_values(out), c["output"]["data"].get<std::vector<double>>(), tolerance);
  }
}

TEST_CASE("linear algebra errors use PyTorch's messages", "[linalg]") {
  const json reference = testing::load_reference("linalg.json");
  REQUIRE(reference["errors"].size() > 30);
  for (const json& c : reference["errors"]) {
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < c["shapes"].size(); ++i) {
      Tensor t = empty(c["shapes"][i].get<Shape>(), testing::dtype_from_name(c["dtypes"][i]));
      if (t.numel() > 0) std::memset(t.data_ptr(), 0, t.numel() * t.element_size());
      inputs.push_back(t);
    }
    INFO(c["op"].get<std::string>() << " " << c["shapes"].dump() << " " << c["dtypes"].dump());
    REQUIRE_THROWS_WITH(run(c["op"], inputs), c["message"].get<std::string>());
    REQUIRE_THROWS_AS(run(c["op"], inputs), ember::Error);
  }
}

TEST_CASE("matmul errors are the precise ember subclasses", "[linalg]") {
  Tensor a = empty({2, 3}), b = empty({2, 3}), d = empty({3, 2}, kFloat64);
  REQUIRE_THROWS_AS(native::mm(a, b), ShapeError);
  REQUIRE_THROWS_AS(native::mm(a, d), DTypeError);
  REQUIRE_THROWS_AS(native::matmul(empty({}), a), ShapeError);
}

TEST_CASE("tutorial section 2: integer matmul", "[linalg]") {
  const json tutorial = testing::load_reference("linalg.json")["tutorial"];
  Tensor tensor2d = testing::tensor_from_json(tutorial["input"]);
  REQUIRE(tensor2d.dtype() == kInt64);
  Tensor product = native::matmul(tensor2d, native::t(tensor2d));
  CHECK(product.dtype() == kInt64);
  CHECK(product.sizes() == Shape{2, 2});
  CHECK(strided_values(product) == tutorial["output"]["data"].get<std::vector<double>>());  // [[14, 32], [32, 77]]
}

TEST_CASE("addmm with beta 0 ignores a NaN bias", "[linalg]") {
  Tensor bias = empty({2, 2});
  for (int i = 0; i < 4; ++i) bias.data_ptr<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  Tensor a = empty({2, 1}), b = empty({1, 2});
  a.data_ptr<float>()[0] = 1.0f;
  a.data_ptr<float>()[1] = 2.0f;
  b.data_ptr<float>()[0] = 3.0f;
  b.data_ptr<float>()[1] = 4.0f;
  Tensor out = native::addmm(bias, a, b, 0, 1);
  // torch.addmm(torch.full((2, 2), nan), [[1], [2]], [[3, 4]], beta=0) == [[3, 4], [6, 8]]
  CHECK(strided_values(out) == std::vector<double>{3, 4, 6, 8});
}

// The backend GEMM against a float64 triple loop. Every combination of odd sizes, row- or
// column-major A and B (transposed operands = swapped strides), a strided C, batches and
// alpha/beta. beta == 0 fills C with NaN first: a GEMM that read C would leak it.
TEST_CASE("CPU GEMM matches a naive float64 triple loop", "[linalg][gemm]") {
  std::mt19937 rng(1234);
  const std::vector<std::int64_t> sizes = {1, 7, 31, 33, 65, 129};
  struct Config { std::int64_t batch, m, n, k; bool a_t, b_t; double alpha, beta; };
  std::vector<Config> configs;
  for (std::int64_t m : sizes)
    for (std::int64_t n : {1L, 33L, 129L})
      for (std::int64_t k : {1L, 31L, 65L, 300L})  // 300 > one kc block of 256
        configs.push_back({1, m, n, k, (m + k) % 2 == 0, (n + k) % 2 == 1, 1.0, 0.0});
  configs.push_back({3, 33, 65, 7, true, true, 0.5, 2.0});
  configs.push_back({2, 129, 1100, 31, false, true, -1.5, 1.0});  // n > one nc block of 1024
  configs.push_back({4, 7, 31, 65, true, false, 1.0, -0.5});
  configs.push_back({2, 65, 33, 129, false, false, 2.0, 0.0});

  for (const Config& config : configs) {
    for (DType dtype : {kFloat32, kFloat64}) {
      INFO("batch " << config.batch << " m " << config.m << " n " << config.n << " k " << config.k << " a_t "
                    << config.a_t << " b_t " << config.b_t << " alpha " << config.alpha << " beta " << config.beta
                    << " " << dtype);
      const auto [batch, m, n, k, a_t, b_t, alpha, beta] = config;
      std::vector<double> a = random_values(batch * m * k, rng), b = random_values(batch * k * n, rng);
      std::vector<double> c0 = random_values(batch * m * n, rng);
      // C is column-major inside each batch (a strided output).
      Tensor ta = empty({batch * m * k}, dtype), tb = empty({batch * k * n}, dtype), tc = empty({batch * m * n}, dtype);
      EMBER_DISPATCH_FLOATING(dtype, {
        for (std::size_t i = 0; i < a.size(); ++i) ta.data_ptr<scalar_t>()[i] = static_cast<scalar_t>(a[i]);
        for (std::size_t i = 0; i < b.size(); ++i) tb.data_ptr<scalar_t>()[i] = static_cast<scalar_t>(b[i]);
        for (std::size_t i = 0; i < c0.size(); ++i)
          tc.data_ptr<scalar_t>()[i] = beta == 0.0 ? std::numeric_limits<scalar_t>::quiet_NaN()
                                                   : static_cast<scalar_t>(c0[i]);
      });
      GemmPlan plan;
      plan.batch = batch;
      plan.m = m;
      plan.n = n;
      plan.k = k;
      plan.a = ta.data_ptr();
      plan.batch_stride_a = m * k;
      plan.row_stride_a = a_t ? 1 : k;  // a_t: stored k x m, read as its transpose
      plan.col_stride_a = a_t ? m : 1;
      plan.b = tb.data_ptr();
      plan.batch_stride_b = k * n;
      plan.row_stride_b = b_t ? 1 : n;
      plan.col_stride_b = b_t ? k : 1;
      plan.c = tc.data_ptr();
      plan.batch_stride_c = m * n;
      plan.row_stride_c = 1;
      plan.col_stride_c = m;
      plan.alpha = alpha;
      plan.beta = beta;
      plan.dtype = dtype;
      gemm_kernel(kCPU, plan);

      // The value each element is allowed to differ by: 1e-5 of the sum of |terms| (float32),
      // so cancellation in the sum does not make a correct result look wrong.
      const double relative = dtype == kFloat32 ? 1e-5 : 1e-12;
      std::vector<double> actual = strided_values(tc);
      std::int64_t bad = 0;
      for (std::int64_t bi = 0; bi < batch; ++bi) {
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < n; ++j) {
            double sum = 0.0, magnitude = 0.0;
            for (std::int64_t p = 0; p < k; ++p) {
              double av = a[bi * m * k + (a_t ? p * m + i : i * k + p)];
              double bv = b[bi * k * n + (b_t ? j * k + p : p * n + j)];
              sum += av * bv;
              magnitude += std::abs(av * bv);
            }
            const std::int64_t at = bi * m * n + j * m + i;
            double expected = alpha * sum + (beta == 0.0 ? 0.0 : beta * c0[at]);
            double bound = relative * (std::abs(alpha) * magnitude + std::abs(beta * c0[at]) + 1e-30);
            if (!(std::abs(actual[at] - expected) <= bound)) ++bad;
          }
        }
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("CPU GEMM integer types and k = 0", "[linalg][gemm]") {
  // int64 2x3 · 3x2 with alpha 2, beta 0: [[1,2,3],[4,5,6]] · [[1,4],[2,5],[3,6]] = [[14,32],[32,77]].
  Tensor a = empty({2, 3}, kInt64), out = empty({2, 2}, kInt64);
  for (int i = 0; i < 6; ++i) a.data_ptr<std::int64_t>()[i] = i + 1;
  GemmPlan plan;
  plan.m = 2;
  plan.n = 2;
  plan.k = 3;
  plan.a = a.data_ptr();
  plan.row_stride_a = 3;
  plan.col_stride_a = 1;
  plan.b = a.data_ptr();  // B = A^T: the same memory with swapped strides
  plan.row_stride_b = 1;
  plan.col_stride_b = 3;
  plan.c = out.data_ptr();
  plan.row_stride_c = 2;
  plan.col_stride_c = 1;
  plan.alpha = 2.0;
  plan.dtype = kInt64;
  gemm_kernel(kCPU, plan);
  CHECK(strided_values(out) == std::vector<double>{28, 64, 64, 154});

  // k = 0 with beta 0 writes zeros over garbage; with beta 3 it scales C.
  plan.k = 0;
  plan.alpha = 1.0;
  for (int i = 0; i < 4; ++i) out.data_ptr<std::int64_t>()[i] = 99;
  gemm_kernel(kCPU, plan);
  CHECK(strided_values(out) == std::vector<double>{0, 0, 0, 0});
  for (int i = 0; i < 4; ++i) out.data_ptr<std::int64_t>()[i] = i;
  plan.beta = 3.0;
  gemm_kernel(kCPU, plan);
  CHECK(strided_values(out) == std::vector<double>{0, 3, 6, 9});
}

TEST_CASE("matmul of non-contiguous views reads them in place", "[linalg]") {
  // A row slice with step 2 and a transposed matrix: nothing needs copying first.
  Tensor base = empty({4, 3});
  for (int i = 0; i < 12; ++i) base.data_ptr<float>()[i] = static_cast<float>(i);
  Tensor rows = native::slice(base, 0, 0, std::nullopt, 2);  // rows 0 and 2: [[0,1,2],[6,7,8]]
  Tensor product = native::mm(rows, native::t(rows));
  // torch: x = torch.arange(12.).view(4, 3)[::2]; x @ x.t() == [[5, 23], [23, 149]]
  CHECK(strided_values(product) == std::vector<double>{5, 23, 23, 149});
}

TEST_CASE("CPU GEMM gives the same bits on one thread and on many", "[linalg][gemm]") {
  // Each thread owns whole blocks of C and sums in the same order, so splitting the work
  // must not change a single bit (a race or a shared buffer would).
  std::mt19937 rng(7);
  Tensor a = empty({300, 170}), b = empty({170, 1100});
  std::vector<double> av = random_values(300 * 170, rng), bv = random_values(170 * 1100, rng);
  for (std::size_t i = 0; i < av.size(); ++i) a.data_ptr<float>()[i] = static_cast<float>(av[i]);
  for (std::size_t i = 0; i < bv.size(); ++i) b.data_ptr<float>()[i] = static_cast<float>(bv[i]);
  const int threads = get_num_threads();
  set_num_threads(1);
  Tensor serial = native::mm(a, b);
  set_num_threads(std::max(threads, 4));
  Tensor parallel = native::mm(a, b);
  set_num_threads(threads);
  CHECK(std::memcmp(serial.data_ptr(), parallel.data_ptr(), serial.numel() * sizeof(float)) == 0);
}

TEST_CASE("batched matmul reads permuted and broadcast batch dims in place", "[linalg][strided_batch]") {
  // Transformer heads: x [B, T, H*D] viewed as [B, T, H, D] and transposed to [B, H, T, D]
  // (strides T*H*D, D, H*D, 1): B and H cannot merge, so there is no [B*H, T, D] view. The
  // product runs one strided-batch GEMM per b and allocates nothing but its result.
  const std::int64_t batch = 3, time = 5, heads = 2, head_dim = 4;
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  auto filled = [&](Shape sizes) {
    Tensor t = empty(sizes, TensorOptions().dtype(DType::Float64));
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data_ptr<double>()[i] = normal(rng);
    return t;
  };
  Tensor x = filled({batch, time, 2 * heads * head_dim});
  auto head = [&](std::int64_t i) {
    Tensor part = native::narrow(x, 2, i * heads * head_dim, heads * head_dim);
    return native::transpose(native::view(part, {batch, time, heads, head_dim}), 1, 2);
  };
  Tensor q = head(0), k = head(1);
  Tensor k_t = native::transpose(k, -2, -1);
  REQUIRE_FALSE(native::matmul_batch_is_one_stride(q, k_t));
  // The common layouts are one strided batch: contiguous q times a transposed contiguous k.
  Tensor q_dense = native::contiguous(q), k_dense = native::contiguous(k);
  REQUIRE(native::matmul_batch_is_one_stride(q_dense, native::transpose(k_dense, -2, -1)));

  const std::size_t cache = cpu::cache_limit();
  cpu::set_cache_limit(0);
  cpu::reset_peak_memory_stats();
  const std::size_t before = cpu::memory_stats().allocated_bytes;
  Tensor scores = native::matmul(q, k_t);
  CHECK(cpu::memory_stats().max_allocated_bytes - before ==
        cpu::allocation_size(static_cast<std::size_t>(batch * heads * time * time) * 8));
  cpu::set_cache_limit(cache);
  Tensor expected = native::matmul(q_dense, native::transpose(k_dense, -2, -1));
  CHECK(strided_values(scores) == strided_values(expected));

  // Three batch dims, none mergeable with its neighbour ([3, 2, 2] stored, permuted to
  // [2, 3, 2]), and batch dims that are all 1 (no group at all).
  Tensor stored = filled({3, 2, 2, time, head_dim});
  Tensor permuted = native::permute(stored, {1, 0, 2, 3, 4});
  Tensor right_side = filled({2, 3, 2, head_dim, 3});
  REQUIRE_FALSE(native::matmul_batch_is_one_stride(permuted, right_side));
  Tensor product = native::matmul(permuted, right_side);
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t l = 0; l < 2; ++l) {
        auto at = [&](const Tensor& t) { return native::select(native::select(native::select(t, 0, i), 0, j), 0, l); };
        CHECK(strided_values(at(product)) == strided_values(native::mm(at(permuted), at(right_side))));
      }
  Tensor single = filled({1, 1, time, head_dim}), single_right = filled({1, head_dim, 2});
  Tensor single_product = native::matmul(single, single_right);
  REQUIRE(single_product.sizes() == Shape{1, 1, time, 2});
  CHECK(strided_values(single_product) ==
        strided_values(native::mm(native::view(single, {time, head_dim}), native::view(single_right, {head_dim, 2}))));

  // Broadcast batch dims beside real ones: [H, T, D] against [B, H, D, T] (stride 0 on B),
  // and a [B, 1, T, D] against [H, D, T]: every batch element as a separate 2-D product.
  Tensor per_head = native::contiguous(native::select(k_dense, 0, 1));  // [H, T, D]
  Tensor left = native::matmul(per_head, native::transpose(q_dense, -2, -1));
  Tensor one_head = native::narrow(q_dense, 1, 1, 1);  // [B, 1, T, D]
  Tensor right = native::matmul(one_head, native::transpose(per_head, -2, -1));
  REQUIRE(left.sizes() == Shape{batch, heads, time, time});
  REQUIRE(right.sizes() == Shape{batch, heads, time, time});
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t h = 0; h < heads; ++h) {
      Tensor q_bh = native::select(native::select(q_dense, 0, b), 0, h);
      Tensor k_h = native::select(per_head, 0, h);
      CHECK(strided_values(native::select(native::select(left, 0, b), 0, h)) ==
            strided_values(native::mm(k_h, native::t(q_bh))));
      Tensor q_b1 = native::select(native::select(q_dense, 0, b), 0, 1);
      CHECK(strided_values(native::select(native::select(right, 0, b), 0, h)) ==
            strided_values(native::mm(q_b1, native::t(k_h))));
    }
  }
}

TEST_CASE("batched matmul with k = 0 over batch dims that do not merge gives zeros", "[linalg][fuzz]") {
  // The API fuzzer found an offset applied to the null data pointer of such empty operands
  // (UBSan: "applying non-zero offset to null pointer"; tests/fuzz/corpus/api/
  // known-12-batched-matmul-k0-null-base replays it under UBSan in scripts/fuzz.sh).
  for (auto [a_sizes, b_sizes] : {std::pair<ember::Shape, ember::Shape>{{2, 1, 4, 0}, {1, 3, 0, 5}},
                                  std::pair<ember::Shape, ember::Shape>{{3, 2, 4, 0}, {2, 0, 5}}}) {
    ember::Tensor a = ember::empty(a_sizes), b = ember::empty(b_sizes);
    ember::Tensor out = native::matmul(a.transpose(0, 1).transpose(0, 1), b);
    ember::Shape expected = a_sizes;
    expected.back() = b_sizes.back();
    if (b_sizes.size() == 4) expected[1] = b_sizes[1];
    REQUIRE(out.sizes() == expected);
    REQUIRE(native::matmul(a, b).abs().sum().item<float>() == 0.0f);
    REQUIRE(out.abs().sum().item<float>() == 0.0f);
  }
}

TEST_CASE("mm_transposed: op(a)·op(b) from the stored matrices, in the layout asked for", "[linalg]") {
  // Against mm of explicit transposed views, bit for bit: the GEMM picks the same
  // orientation for C as for its transpose (core/cpu/gemm.cpp), so the sums are the same.
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  auto random_matrix = [&](std::int64_t rows, std::int64_t cols, DType dtype) {
    Tensor t = empty({rows, cols}, TensorOptions().dtype(dtype));
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      EMBER_DISPATCH_FLOATING(dtype, t.data_ptr<scalar_t>()[i] = static_cast<scalar_t>(normal(rng)));
    }
    return t;
  };
  const std::vector<std::array<std::int64_t, 3>> shapes = {{1, 1, 1}, {3, 5, 2}, {32, 2, 30}, {17, 30, 20},
                                                           {0, 4, 3}, {4, 0, 3}, {4, 3, 0}};
  for (DType dtype : {kFloat32, kFloat64}) {
    for (const auto& [m, k, n] : shapes) {
      for (int flags = 0; flags < 8; ++flags) {
        const bool transpose_a = flags & 1, transpose_b = flags & 2, transposed_result = flags & 4;
        CAPTURE(dtype, m, k, n, transpose_a, transpose_b, transposed_result);
        const Tensor a = transpose_a ? random_matrix(k, m, dtype) : random_matrix(m, k, dtype);
        const Tensor b = transpose_b ? random_matrix(n, k, dtype) : random_matrix(k, n, dtype);
        const Tensor op_a = transpose_a ? native::t(a) : a, op_b = transpose_b ? native::t(b) : b;
        const Tensor result = native::mm_transposed(a, transpose_a, b, transpose_b, transposed_result);
        // What the autograd formulas computed before: mm of views, transposed back for the layout.
        const Tensor expected =
            transposed_result ? native::t(native::mm(native::t(op_b), native::t(op_a))) : native::mm(op_a, op_b);
        REQUIRE(result.sizes() == Shape{m, n});
        CHECK(result.strides() == expected.strides());  // (n, 1) or (1, m), PyTorch's 1 for an empty dim
        CHECK(result.storage_offset() == 0);
        CHECK(result.storage().get() != a.storage().get());
        CHECK(strided_values(result) == strided_values(expected));
      }
    }
  }
  // A strided operand (every other column of a wider matrix) is read in place.
  const Tensor wide = random_matrix(6, 8, kFloat32);
  const Tensor every_other = native::slice(wide, 1, 0, 8, 2);  // [6, 4], column stride 2
  const Tensor b = random_matrix(6, 3, kFloat32);
  CHECK(strided_values(native::mm_transposed(every_other, true, b, false, false)) ==
        strided_values(native::mm(native::t(every_other), b)));
}

TEST_CASE("mm_transposed: mm's errors, worded for the transposed operands", "[linalg]") {
  auto zeros = [](IntArrayRef sizes, DType dtype = kFloat32) {
    Tensor t = empty(sizes, TensorOptions().dtype(dtype));
    native::fill_(t, 0);
    return t;
  };
  const Tensor a = zeros({2, 3}), b = zeros({4, 5});
  // op(a) is 3x2 and op(b) is 4x5: the message names the shapes being multiplied.
  CHECK_THROWS_WITH(native::mm_transposed(a, true, b, false, false),
                    "mm: mat1 and mat2 shapes cannot be multiplied (3x2 and 4x5)");
  CHECK_THROWS_AS(native::mm_transposed(a, false, zeros({3}), false, false), ShapeError);
  CHECK_THROWS_AS(native::mm_transposed(a, false, zeros({3, 2}, kFloat64), false, false), DTypeError);
  CHECK_THROWS_AS(native::mm_transposed(zeros({2, 2}, kBool), false, zeros({2, 2}, kBool), false, false), DTypeError);
}
