// tests/core/test_gemm_kernels.cpp — every CPU GEMM micro-kernel (core/cpu/gemm_kernel_*.cpp
// and the portable one in core/cpu/gemm.cpp) against a naive float64 triple loop.
//
// Tutorial §2.4 (matrix multiplication). test_linalg.cpp checks the GEMM the dispatcher
// picks; this file forces each kernel in turn with EMBER_GEMM_KERNEL (core/cpu/gemm_kernels.h)
// so the portable fallback and the AVX2 kernel are tested on a machine that would otherwise
// always pick AVX-512. Sizes are odd and straddle the register tiles (12 x 32, 6 x 16, 4 x 8)
// and the cache blocks (kc = 256), operands are transposed or strided in both dimensions,
// and alpha/beta cover addmm. The planner's paths are each reached on purpose: operands read
// in place (thin products) and packed (wide ones), vectorised copy and transpose packing,
// edge tiles, the swapped orientation, batches, several threads (bit-identical to one) and
// products whose packed B is split into several phases. A kernel the CPU lacks cannot be run;
// its case instead checks that the support detection agrees with cpuid and that forcing it is
// a clear error.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ember/core/allocator.h>
#include <ember/core/backend.h>
#include <ember/core/cpu/gemm_kernels.h>
#include "forced_gemm_kernel.h"
#include "row_major_gemm_plan.h"
#include <ember/core/error.h>
#include <ember/core/native.h>
#include <ember/core/parallel.h>

namespace {

using namespace ember;

using testing::ForcedKernel;

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
  std::int64_t batch = 1;
};

struct Layout {
  std::int64_t row_stride, col_stride, buffer_size;
};

Layout layout_of(std::int64_t rows, std::int64_t cols, bool transposed, std::int64_t spread) {
  if (transposed) return {spread, rows * spread, rows * cols * spread};
  return {cols * spread, spread, rows * cols * spread};
}

// The operands of one case, filled with random values (C with NaN when beta == 0, so a
// kernel that read it would be caught). Batch entry b of each operand starts b * (one
// operand's buffer) further on.
template <class T>
struct Operands {
  Layout la, lb, lc;
  CpuAlignedVector<T> a, b, c, c_before;  // cache-line aligned, like a tensor's data

  Operands(const Case& test, std::mt19937& rng)
      : la(layout_of(test.m, test.k, test.a_transposed, test.spread)),
        lb(layout_of(test.k, test.n, test.b_transposed, test.spread)),
        lc(layout_of(test.m, test.n, test.c_transposed, test.spread)),
        a(la.buffer_size * test.batch),
        b(lb.buffer_size * test.batch),
        c(lc.buffer_size * test.batch) {
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (T& value : a) value = static_cast<T>(uniform(rng));
    for (T& value : b) value = static_cast<T>(uniform(rng));
    for (T& value : c) value = test.beta == 0.0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(uniform(rng));
    c_before = c;
  }

  // c = alpha * a · b + beta * c through the CPU backend (whatever kernel and threads are set).
  void run(const Case& test) {
    GemmPlan plan;
    plan.batch = test.batch;
    plan.m = test.m;
    plan.n = test.n;
    plan.k = test.k;
    plan.a = a.data();
    plan.batch_stride_a = la.buffer_size;
    plan.row_stride_a = la.row_stride;
    plan.col_stride_a = la.col_stride;
    plan.b = b.data();
    plan.batch_stride_b = lb.buffer_size;
    plan.row_stride_b = lb.row_stride;
    plan.col_stride_b = lb.col_stride;
    plan.c = c.data();
    plan.batch_stride_c = lc.buffer_size;
    plan.row_stride_c = lc.row_stride;
    plan.col_stride_c = lc.col_stride;
    plan.alpha = test.alpha;
    plan.beta = test.beta;
    plan.dtype = std::is_same_v<T, float> ? kFloat32 : kFloat64;
    gemm_kernel(kCPU, plan);
  }

  // Wrong elements against a float64 triple loop (and elements outside C that changed).
  std::int64_t mismatches(const Case& test) const {
    const double relative = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    std::int64_t bad = 0;
    for (std::int64_t batch = 0; batch < test.batch; ++batch) {
      const T* a_b = a.data() + batch * la.buffer_size;
      const T* b_b = b.data() + batch * lb.buffer_size;
      const std::int64_t c_b = batch * lc.buffer_size;
      for (std::int64_t i = 0; i < test.m; ++i) {
        for (std::int64_t j = 0; j < test.n; ++j) {
          double sum = 0.0, magnitude = 0.0;
          for (std::int64_t p = 0; p < test.k; ++p) {
            const double product = static_cast<double>(a_b[i * la.row_stride + p * la.col_stride]) *
                                   static_cast<double>(b_b[p * lb.row_stride + j * lb.col_stride]);
            sum += product;
            magnitude += std::abs(product);
          }
          const std::int64_t at = c_b + i * lc.row_stride + j * lc.col_stride;
          const double old_c = test.beta == 0.0 ? 0.0 : static_cast<double>(c_before[at]);
          const double expected = test.alpha * sum + test.beta * old_c;
          const double bound = relative * (std::abs(test.alpha) * magnitude + std::abs(test.beta * old_c)) + 1e-30;
          if (!(std::abs(static_cast<double>(c[at]) - expected) <= bound)) ++bad;
        }
      }
    }
    // Elements of the spread-out buffer that are not part of C must be untouched.
    if (test.spread > 1)
      for (std::size_t at = 0; at < c.size(); ++at)
        if (at % static_cast<std::size_t>(test.spread) != 0 && !(c[at] == c_before[at] || std::isnan(c_before[at])))
          ++bad;
    return bad;
  }
};

// Runs one case with dtype T and returns the number of wrong elements.
template <class T>
std::int64_t count_mismatches(const Case& test, std::mt19937& rng) {
  Operands<T> operands(test, rng);
  operands.run(test);
  return operands.mismatches(test);
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

// Shapes that steer the planner (core/cpu/gemm.cpp) down each of its paths.
void check_kernel_planner_paths(const std::string& name) {
  ForcedKernel forced(name);
  std::mt19937 rng(31);
  const std::vector<Case> cases = {
      // Thin products: A and B read in place (row- and column-major A), B's edge panel masked
      // (SIMD) or copied (portable).
      {5, 40, 300, false, false, false, 1, 1.0, 0.0}, {11, 45, 70, true, false, false, 1, 1.0, 0.5},
      // Wide products: every pack (A and B copied or transposed), rows not a multiple of MR,
      // depth not a multiple of 16 or of kc, C accumulating over k slices with beta.
      {29, 140, 37, false, false, false, 1, 1.0, 0.0}, {29, 140, 37, true, true, false, 1, 1.0, 0.0},
      {50, 150, 77, false, true, false, 1, 1.0, 0.0}, {50, 150, 77, true, false, false, 1, 1.0, 0.0},
      {40, 70, 530, false, true, false, 1, 0.5, 0.5},
      // Narrow C (the swapped orientation), column-major C, matrix-vector and dot products.
      {100, 3, 64, false, false, false, 1, 1.0, 0.0}, {100, 3, 64, true, true, true, 1, 1.0, 2.0},
      {70, 1, 90, false, false, false, 1, 1.0, 0.0}, {1, 70, 90, true, true, false, 1, 1.0, 0.0},
      {1, 1, 300, false, true, false, 1, 2.0, 0.0},
      // Short k (no B prefetch), whole tiles of a row in one kernel call, row-major A in
      // place: the logits layer's input gradient, then with beta and an edge panel.
      {128, 128, 10, false, false, false, 1, 1.0, 0.0}, {30, 200, 3, false, false, false, 1, 1.0, 1.0},
      // A row-major C whose rows are closer than its tiles are wide, read for beta (addmm's
      // bias under a narrow layer): narrower than a vector, every row of a tile is read before
      // any is stored (the toy MLP's 2 outputs, a classifier's 10); wider (the toy's 20 and
      // 30, 12 doubles), each row is read before the row above it is stored.
      {128, 10, 64, false, true, false, 1, 1.0, 1.0}, {37, 2, 20, false, true, false, 1, 0.5, -2.0},
      {29, 5, 33, true, false, false, 1, 2.0, 0.5},   {50, 30, 40, false, true, false, 1, 1.0, 1.0},
      {43, 20, 7, false, false, false, 1, -1.0, 0.5}, {45, 12, 25, false, true, false, 1, 1.0, 2.0},
      // Batches (bmm), thin and wide.
      {7, 9, 5, false, true, false, 1, 1.0, 0.0, 3}, {40, 90, 60, true, false, false, 1, 1.0, 1.0, 3},
      // Packed B larger than one phase's buffer (16 MiB): two column phases, then two batch
      // phases (for the AVX-512 kernel; the others may choose another orientation).
      {3, 4100, 1100, false, true, false, 1, 1.0, 0.0}, {3, 700, 2100, false, true, false, 1, 1.0, 1.0, 3},
  };
  for (const Case& test : cases) {
    INFO(name << " m " << test.m << " n " << test.n << " k " << test.k << " batch " << test.batch << " a_t "
              << test.a_transposed << " b_t " << test.b_transposed << " c_t " << test.c_transposed);
    CHECK(count_mismatches<float>(test, rng) == 0);
    CHECK(count_mismatches<double>(test, rng) == 0);
  }
}

// Sets the pool's thread count for the life of the object, then restores it.
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : old_(get_num_threads()) { set_num_threads(threads); }
  ~ThreadCount() { set_num_threads(old_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int old_;
};

// Products large enough to be shared between threads (core/cpu/gemm.cpp: from 64^3
// multiply-adds; fixed units below 6.3 M when B is read in place, fixed units with private B
// below 512^3 when B is packed and C's rows start on cache lines, claimed units otherwise):
// correct, and bit-identical to the one-thread result (each C element is summed over k in
// the same order by exactly one thread).
template <class T>
void check_threads_match_one_thread(const Case& test, std::mt19937& rng) {
  Operands<T> operands(test, rng);
  {
    ThreadCount one(1);
    operands.run(test);
  }
  const CpuAlignedVector<T> serial = operands.c;
  operands.c = operands.c_before;
  {
    ThreadCount three(3);  // more threads than this machine's cores, and an odd count
    operands.run(test);
  }
  CHECK(operands.mismatches(test) == 0);
  CHECK(std::memcmp(serial.data(), operands.c.data(), serial.size() * sizeof(T)) == 0);
}

void check_kernel_threads(const std::string& name) {
  ForcedKernel forced(name);
  std::mt19937 rng(5);
  const std::vector<Case> cases = {
      {150, 170, 260, false, false, false, 1, 1.0, 0.0}, {150, 170, 260, true, true, false, 1, 1.0, 0.0},
      {200, 110, 300, false, true, false, 1, 1.0, 0.5},  {60, 100, 150, true, false, false, 1, 1.0, 0.0, 8},
      {500, 30, 500, false, false, true, 1, 1.0, 0.0},
      // Fixed units: cut along rows; along columns (few rows, rows on cache lines: n = 160);
      // rows again when the rows do not start on cache lines (n = 150); batches of units.
      {100, 90, 40, false, false, false, 1, 1.0, 0.0},  {100, 90, 40, true, true, false, 1, 1.0, 0.5},
      {20, 160, 128, false, false, false, 1, 1.0, 0.0}, {20, 160, 128, false, true, false, 1, 2.0, 0.5},
      {20, 150, 128, false, false, false, 1, 1.0, 0.0}, {40, 64, 50, false, false, false, 1, 1.0, 0.0, 4},
      // Private B (packed B below 512^3, rows on cache lines): each thread packs its own
      // columns, slice by slice. The MLP's forward (B transposed, k over four kc slices, the
      // last 16 deep), with beta; its weight gradient (B copied, the last panel half full,
      // units of unequal width); a unit wider than one nc block.
      {128, 256, 784, false, true, false, 1, 1.0, 0.0}, {128, 256, 784, false, true, false, 1, 1.0, 0.5},
      {256, 784, 128, true, false, false, 1, 1.0, 0.0}, {13, 3200, 300, false, true, false, 1, 2.0, 1.0},
  };
  for (const Case& test : cases) {
    INFO(name << " m " << test.m << " n " << test.n << " k " << test.k << " batch " << test.batch);
    check_threads_match_one_thread<float>(test, rng);
    check_threads_match_one_thread<double>(test, rng);
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

TEST_CASE("gemm kernels: every planner path, on every kernel the CPU has", "[gemm]") {
  for (const std::string name : {"portable", "avx2", "avx512"}) {
    if (!cpu_reports(name)) continue;
    check_kernel_planner_paths(name);
  }
}

TEST_CASE("gemm kernels: several threads give the one-thread bits, on every kernel", "[gemm]") {
  for (const std::string name : {"portable", "avx2", "avx512"}) {
    if (!cpu_reports(name)) continue;
    check_kernel_threads(name);
  }
}

TEST_CASE("gemm kernels: a large GEMM inside a parallel region runs inline", "[gemm]") {
  // Nested parallel_for calls run inline (core/parallel.h); the GEMM's threads must then not
  // wait for helpers that never come. Two large products, one per chunk, each checked.
  ThreadCount two(2);
  std::mt19937 rng(11);
  const Case test{150, 170, 260, false, true, false, 1, 1.0, 0.0};
  Operands<float> first(test, rng), second(test, rng);
  parallel_for(0, 2, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t chunk = begin; chunk < end; ++chunk) (chunk == 0 ? first : second).run(test);
  });
  CHECK(first.mismatches(test) == 0);
  CHECK(second.mismatches(test) == 0);
}

// Memory that ends where an unreadable page begins: an operand placed at its end makes any
// read or write past the operand's last element a fault, so a kernel that loaded a whole
// vector across the end of a narrow matrix would crash the test instead of passing it.
template <class T>
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t count) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    bytes_ = (count * sizeof(T) + page - 1) / page * page + page;
    base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(base_ != MAP_FAILED);
    char* guard = static_cast<char*>(base_) + bytes_ - page;
    REQUIRE(mprotect(guard, page, PROT_NONE) == 0);
    data_ = reinterpret_cast<T*>(guard) - count;
  }
  ~GuardedBuffer() { munmap(base_, bytes_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  T* data() const { return data_; }

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  T* data_ = nullptr;
};

// Row-major A (m x k), B (k x n) and C (m x n), each ending at a guard page; C = A·B, checked
// against a float64 triple loop. Returns the number of wrong elements.
template <class T>
std::int64_t guarded_mismatches(std::int64_t m, std::int64_t n, std::int64_t k, std::mt19937& rng) {
  GuardedBuffer<T> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
      c(static_cast<std::size_t>(m * n));
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (std::int64_t i = 0; i < m * k; ++i) a.data()[i] = static_cast<T>(uniform(rng));
  for (std::int64_t i = 0; i < k * n; ++i) b.data()[i] = static_cast<T>(uniform(rng));
  gemm_kernel(kCPU, testing::row_major_gemm_plan(m, n, k, a.data(), b.data(), c.data(),
                                                 std::is_same_v<T, float> ? kFloat32 : kFloat64));
  const double relative = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double product = static_cast<double>(a.data()[i * k + p]) * static_cast<double>(b.data()[p * n + j]);
        sum += product;
        magnitude += std::abs(product);
      }
      if (!(std::abs(static_cast<double>(c.data()[i * n + j]) - sum) <= relative * magnitude + 1e-30)) ++bad;
    }
  return bad;
}

TEST_CASE("gemm kernels: a narrow B read in place is never read past its end", "[gemm]") {
  // Few rows of A: B is read in place, and its last panel ends inside the matrix (n is not a
  // multiple of the kernel's panel width). The SIMD kernels load that panel's last vector
  // with a mask (core/cpu/gemm_kernel_simd.h); the portable one is given a padded copy.
  // The toy MLP's products are of this kind (n = 30, 20 or 2, batch 32).
  for (const std::string name : {"portable", "avx2", "avx512"}) {
    if (!cpu_reports(name)) continue;
    ForcedKernel forced(name);
    std::mt19937 rng(41);
    for (std::int64_t m : {1, 5, 32})
      for (std::int64_t n : {1, 2, 7, 20, 30, 47})
        for (std::int64_t k : {2, 20, 40}) {
          INFO(name << " m " << m << " n " << n << " k " << k);
          CHECK(guarded_mismatches<float>(m, n, k, rng) == 0);
          CHECK(guarded_mismatches<double>(m, n, k, rng) == 0);
        }
  }
}

// The AVX-512 kernels run a last vector column that is at most half used at half width
// (core/cpu/gemm_kernel_simd.h, HALF_TAIL). It must change only the speed: the same lanes,
// summed over k in the same order, so the bits of the AVX2 kernel, whose vectors are that
// half (both sum each element over k in order with one FMA per step, within one kc slice).
template <class T>
void check_half_tail_matches_avx2(const Case& test, std::mt19937& rng) {
  Operands<T> operands(test, rng);
  {
    ForcedKernel forced("avx512");
    operands.run(test);
  }
  const CpuAlignedVector<T> wide = operands.c;
  CHECK(operands.mismatches(test) == 0);
  operands.c = operands.c_before;
  {
    ForcedKernel forced("avx2");
    operands.run(test);
  }
  CHECK(std::memcmp(wide.data(), operands.c.data(), wide.size() * sizeof(T)) == 0);
}

TEST_CASE("gemm kernels: a half-used last vector gives the full-width bits", "[gemm]") {
  if (!cpu_reports("avx512") || !cpu_reports("avx2")) return;  // nothing to compare on this CPU
  std::mt19937 rng(77);
  // Last-vector lanes on both sides of half a vector (8 floats, 4 doubles), one and two
  // vector columns, edge and full row tiles, A row- and column-major, addmm's beta.
  for (std::int64_t n : {1, 3, 4, 5, 8, 9, 16, 17, 20, 24, 25, 31, 32})
    for (std::int64_t m : {1, 12, 13, 32})
      for (std::int64_t k : {1, 20, 37})
        for (bool a_transposed : {false, true}) {
          const Case test{m, n, k, a_transposed, false, false, 1, 1.0, a_transposed ? 1.0 : 0.0};
          INFO("m " << m << " n " << n << " k " << k << " a_t " << a_transposed);
          check_half_tail_matches_avx2<float>(test, rng);
          check_half_tail_matches_avx2<double>(test, rng);
        }
}

TEST_CASE("gemm kernels: k == 0 scales C by beta", "[gemm]") {
  std::mt19937 rng(3);
  CHECK(count_mismatches<float>({5, 7, 0, false, false, false, 1, 1.0, 0.0}, rng) == 0);  // C = 0
  CHECK(count_mismatches<float>({5, 7, 0, false, false, true, 2, 1.0, 2.0}, rng) == 0);   // C = 2 C
}

TEST_CASE("gemm kernels: addmm's bias row fills C by doubling copies, the bits of a full bias", "[gemm]") {
  // One bias row over a dense C is copied into 1, 2, 4, ... rows at a time (core/cpu/gemm.cpp);
  // a full [m, n] bias takes one copy per row. The products must agree bit for bit, for row
  // counts on both sides of each power of two.
  std::mt19937 rng(21);
  std::normal_distribution<float> normal;
  auto random = [&](IntArrayRef sizes) {
    Tensor t = empty(sizes);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data_ptr<float>()[i] = normal(rng);
    return t;
  };
  for (std::int64_t m : {1, 2, 3, 5, 8, 31, 32, 33, 64}) {
    for (std::int64_t n : {1, 2, 30}) {
      CAPTURE(m, n);
      Tensor a = random({m, 7}), b = random({7, n}), bias = random({n});
      Tensor full_bias = native::contiguous(native::expand(bias, {m, n}));
      Tensor from_row = native::addmm(bias, a, b, 0.5, 2.0), from_full = native::addmm(full_bias, a, b, 0.5, 2.0);
      REQUIRE(from_row.is_contiguous());
      std::int64_t differ = 0;
      for (std::int64_t i = 0; i < m * n; ++i) differ += from_row.data_ptr<float>()[i] != from_full.data_ptr<float>()[i];
      CHECK(differ == 0);
      // And against the definition, to rounding: 0.5 * bias + 2 * a · b.
      Tensor product = native::mm(a, b);
      double worst = 0.0;
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          worst = std::max(worst, std::abs(static_cast<double>(from_row.data_ptr<float>()[i * n + j]) -
                                           (0.5 * bias.data_ptr<float>()[j] + 2.0 * product.data_ptr<float>()[i * n + j])));
      CHECK(worst < 1e-4);
    }
  }
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
