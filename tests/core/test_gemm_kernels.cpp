// tests/core/test_gemm_kernels.cpp — every CPU GEMM micro-kernel (core/cpu/gemm_kernel_*.cpp
// and the portable one in core/cpu/gemm.cpp) against a naive float64 triple loop.
//
// Tutorial §2.4 (matrix multiplication). test_linalg.cpp checks the GEMM the dispatcher
// picks; this file forces each kernel in turn with EMBER_GEMM_KERNEL (core/cpu/gemm_kernels.h)
// so the portable fallback and the AVX2 kernel are tested on a machine that would otherwise
// always pick AVX-512. Sizes are odd and straddle the register tiles (8 x 32, 6 x 16, 4 x 8)
// and the cache blocks (kc = 256), operands are transposed or strided in both dimensions,
// and alpha/beta cover addmm. A kernel the CPU lacks cannot be run; its case instead checks
// that the support detection agrees with cpuid and that forcing it is a clear error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/error.h>
#include <ember/core/native.h>

namespace {

using namespace ember;

// Sets EMBER_GEMM_KERNEL for the life of the object, then restores the previous value.
class ForcedKernel {
 public:
  explicit ForcedKernel(const std::string& name) {
    const char* old = std::getenv("EMBER_GEMM_KERNEL");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    ::setenv("EMBER_GEMM_KERNEL", name.c_str(), 1);
  }
  ~ForcedKernel() {
    if (had_old_)
      ::setenv("EMBER_GEMM_KERNEL", old_.c_str(), 1);
    else
      ::unsetenv("EMBER_GEMM_KERNEL");
  }
  ForcedKernel(const ForcedKernel&) = delete;
  ForcedKernel& operator=(const ForcedKernel&) = delete;

 private:
  bool had_old_ = false;
  std::string old_;
};

// What cpuid says, asked independently of the library.
bool cpu_reports(const std::string& name) {
  __builtin_cpu_init();
  if (name == "avx512") return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  if (name == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return true;
}

// One GEMM case. Each operand lives in a buffer `spread` times larger than needed, with
// element (i, j) at i * row_stride + j * col_stride, so a spread of 2 makes every operand
// non-contiguous in both dimensions (the packing must follow any strides).
struct Case {
  std::int64_t m, n, k;
  bool a_transposed, b_transposed, c_transposed;
  std::int64_t spread;
  double alpha, beta;
};

struct Layout {
  std::int64_t row_stride, col_stride, buffer_size;
};

Layout layout_of(std::int64_t rows, std::int64_t cols, bool transposed, std::int64_t spread) {
  if (transposed) return {spread, rows * spread, rows * cols * spread};
  return {cols * spread, spread, rows * cols * spread};
}

// Runs `c = alpha * a · b + beta * c` through the CPU backend with dtype T and compares
// with the float64 triple loop. Returns the number of wrong elements.
template <class T>
std::int64_t count_mismatches(const Case& test, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const Layout la = layout_of(test.m, test.k, test.a_transposed, test.spread);
  const Layout lb = layout_of(test.k, test.n, test.b_transposed, test.spread);
  const Layout lc = layout_of(test.m, test.n, test.c_transposed, test.spread);
  std::vector<T> a(la.buffer_size), b(lb.buffer_size), c(lc.buffer_size);
  for (T& value : a) value = static_cast<T>(uniform(rng));
  for (T& value : b) value = static_cast<T>(uniform(rng));
  // beta == 0: C starts as NaN, so a kernel that read it would be caught.
  for (T& value : c) value = test.beta == 0.0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(uniform(rng));
  const std::vector<T> c_before = c;

  GemmPlan plan;
  plan.m = test.m;
  plan.n = test.n;
  plan.k = test.k;
  plan.a = a.data();
  plan.row_stride_a = la.row_stride;
  plan.col_stride_a = la.col_stride;
  plan.b = b.data();
  plan.row_stride_b = lb.row_stride;
  plan.col_stride_b = lb.col_stride;
  plan.c = c.data();
  plan.row_stride_c = lc.row_stride;
  plan.col_stride_c = lc.col_stride;
  plan.alpha = test.alpha;
  plan.beta = test.beta;
  plan.dtype = std::is_same_v<T, float> ? kFloat32 : kFloat64;
  backend_for(kCPU).gemm(plan);

  const double relative = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < test.m; ++i) {
    for (std::int64_t j = 0; j < test.n; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (std::int64_t p = 0; p < test.k; ++p) {
        const double product = static_cast<double>(a[i * la.row_stride + p * la.col_stride]) *
                               static_cast<double>(b[p * lb.row_stride + j * lb.col_stride]);
        sum += product;
        magnitude += std::abs(product);
      }
      const std::int64_t at = i * lc.row_stride + j * lc.col_stride;
      const double old_c = test.beta == 0.0 ? 0.0 : static_cast<double>(c_before[at]);
      const double expected = test.alpha * sum + test.beta * old_c;
      const double bound = relative * (std::abs(test.alpha) * magnitude + std::abs(test.beta * old_c)) + 1e-30;
      if (!(std::abs(static_cast<double>(c[at]) - expected) <= bound)) ++bad;
    }
  }
  // Elements of the spread-out buffer that are not part of C must be untouched.
  if (test.spread > 1)
    for (std::size_t at = 0; at < c.size(); ++at)
      if (at % static_cast<std::size_t>(test.spread) != 0 && !(c[at] == c_before[at] || std::isnan(c_before[at])))
        ++bad;
  return bad;
}

// The sizes: 1, tiny, odd primes around every tile width (4, 6, 8, 16, 32) and past kc.
std::vector<Case> odd_size_cases() {
  std::vector<Case> cases;
  const std::vector<std::int64_t> sizes = {1, 3, 7, 17, 33, 65};
  int flip = 0;
  for (std::int64_t m : sizes)
    for (std::int64_t n : sizes)
      for (std::int64_t k : {1L, 7L, 33L}) {
        ++flip;
        cases.push_back({m, n, k, flip % 2 == 0, flip % 3 == 0, false, 1, 1.0, 0.0});
      }
  // Depth past one kc block (256), a column count past nc for the portable kernel (1024).
  cases.push_back({9, 31, 300, false, false, false, 1, 1.0, 0.0});
  cases.push_back({130, 67, 517, true, true, false, 1, 1.0, 0.0});
  cases.push_back({5, 1100, 19, false, true, false, 1, 1.0, 0.0});
  cases.push_back({200, 129, 97, false, false, false, 1, 1.0, 0.0});  // mc (192) plus an edge
  return cases;
}

void check_kernel(const std::string& name) {
  ForcedKernel forced(name);
  REQUIRE(cpu::active_gemm_kernel_name() == name);
  std::mt19937 rng(20261202);
  for (const Case& test : odd_size_cases()) {
    INFO(name << " m " << test.m << " n " << test.n << " k " << test.k << " a_t " << test.a_transposed << " b_t "
              << test.b_transposed);
    CHECK(count_mismatches<float>(test, rng) == 0);
    CHECK(count_mismatches<double>(test, rng) == 0);
  }
}

void check_kernel_strided_and_addmm(const std::string& name) {
  ForcedKernel forced(name);
  std::mt19937 rng(99);
  // Every operand strided in both dimensions, C transposed or not, and addmm's alpha/beta.
  const std::vector<Case> cases = {
      {17, 33, 65, false, false, false, 2, 1.0, 1.0},   {33, 17, 7, true, false, true, 2, 0.5, 2.0},
      {65, 65, 65, false, true, false, 3, -1.5, 0.25},  {7, 129, 33, true, true, true, 2, 1.0, -1.0},
      {128, 10, 128, false, false, false, 2, 1.0, 1.0}, {3, 1, 300, false, true, false, 2, 2.0, 0.0},
  };
  for (const Case& test : cases) {
    INFO(name << " m " << test.m << " n " << test.n << " k " << test.k << " a_t " << test.a_transposed << " b_t "
              << test.b_transposed << " c_t " << test.c_transposed << " spread " << test.spread << " alpha "
              << test.alpha << " beta " << test.beta);
    CHECK(count_mismatches<float>(test, rng) == 0);
    CHECK(count_mismatches<double>(test, rng) == 0);
  }
}

// A kernel this CPU lacks: the detection must agree with cpuid, and forcing it must say why.
void check_unavailable(const std::string& name) {
  CHECK(cpu::gemm_kernel_available(name) == cpu_reports(name));
  ForcedKernel forced(name);
  CHECK_THROWS_AS(cpu::active_gemm_kernel_name(), ValueError);
}

}  // namespace

TEST_CASE("gemm kernels: support detection agrees with cpuid", "[gemm]") {
  CHECK(cpu::gemm_kernel_available("portable"));
  CHECK(cpu::gemm_kernel_available("avx2") == cpu_reports("avx2"));
  CHECK(cpu::gemm_kernel_available("avx512") == cpu_reports("avx512"));
  CHECK_FALSE(cpu::gemm_kernel_available("sse9"));
  // With nothing forced, the best kernel the CPU has is chosen.
  const char* old = std::getenv("EMBER_GEMM_KERNEL");
  if (old == nullptr) {
    const std::string expected = cpu_reports("avx512") ? "avx512" : cpu_reports("avx2") ? "avx2" : "portable";
    CHECK(cpu::active_gemm_kernel_name() == expected);
  }
}

TEST_CASE("gemm kernels: an unknown EMBER_GEMM_KERNEL is a clear error", "[gemm]") {
  ForcedKernel forced("sse9");
  CHECK_THROWS_WITH(cpu::active_gemm_kernel_name(),
                    Catch::Matchers::Contains("EMBER_GEMM_KERNEL must be portable, avx2 or avx512"));
}

TEST_CASE("gemm kernels: portable kernel on odd sizes and transposes", "[gemm]") { check_kernel("portable"); }

TEST_CASE("gemm kernels: portable kernel on strided operands and addmm", "[gemm]") {
  check_kernel_strided_and_addmm("portable");
}

TEST_CASE("gemm kernels: AVX2 kernel on odd sizes and transposes", "[gemm]") {
  if (!cpu_reports("avx2")) {
    check_unavailable("avx2");
    return;
  }
  check_kernel("avx2");
}

TEST_CASE("gemm kernels: AVX2 kernel on strided operands and addmm", "[gemm]") {
  if (!cpu_reports("avx2")) {
    check_unavailable("avx2");
    return;
  }
  check_kernel_strided_and_addmm("avx2");
}

TEST_CASE("gemm kernels: AVX-512 kernel on odd sizes and transposes", "[gemm]") {
  if (!cpu_reports("avx512")) {
    check_unavailable("avx512");
    return;
  }
  check_kernel("avx512");
}

TEST_CASE("gemm kernels: AVX-512 kernel on strided operands and addmm", "[gemm]") {
  if (!cpu_reports("avx512")) {
    check_unavailable("avx512");
    return;
  }
  check_kernel_strided_and_addmm("avx512");
}

TEST_CASE("gemm kernels: addmm through the public op fuses the bias", "[gemm]") {
  // addmm(bias, a, b, beta, alpha) = beta * bias + alpha * a · b with a broadcast bias row,
  // on every kernel this CPU has. [[1,2],[3,4]] · [[1,0],[0,1]] = a; bias [10, 20].
  for (const std::string name : {"portable", "avx2", "avx512"}) {
    if (!cpu_reports(name)) continue;
    ForcedKernel forced(name);
    INFO(name);
    Tensor a = empty({2, 2}), identity = empty({2, 2}), bias = empty({2});
    const float a_values[] = {1, 2, 3, 4}, identity_values[] = {1, 0, 0, 1};
    for (int i = 0; i < 4; ++i) {
      a.data_ptr<float>()[i] = a_values[i];
      identity.data_ptr<float>()[i] = identity_values[i];
    }
    bias.data_ptr<float>()[0] = 10;
    bias.data_ptr<float>()[1] = 20;
    Tensor out = native::addmm(bias, a, identity, 0.5, 2.0);
    // torch.addmm(torch.tensor([10., 20.]), a, torch.eye(2), beta=0.5, alpha=2) = [[7, 14], [11, 18]]
    const float expected[] = {7, 14, 11, 18};
    Tensor contiguous = native::contiguous(out);
    for (int i = 0; i < 4; ++i) CHECK(contiguous.data_ptr<float>()[i] == expected[i]);
  }
}
