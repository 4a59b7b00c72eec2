// benchmarks/ember_bench/cpu_peers.cpp — OpenBLAS cblas_sgemm and a multi-threaded memcpy.
#include "cpu_peers.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#ifdef EMBER_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace ember_bench {

#ifdef EMBER_BENCH_HAVE_OPENBLAS
bool openblas_built() { return true; }
std::string openblas_version() { return openblas_get_config(); }
void set_peer_threads(int threads) { openblas_set_num_threads(threads); }
Measurement openblas_sgemm(std::int64_t m, std::int64_t k, std::int64_t n, const Policy& policy) {
  std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n);
  auto timer = make_cpu_timer();
  return measure(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                    static_cast<int>(k), 1.0f, a.data(), static_cast<int>(k), b.data(), static_cast<int>(n), 0.0f,
                    c.data(), static_cast<int>(n));
      },
      policy, *timer);
}
#else
bool openblas_built() { return false; }
std::string openblas_version() { return ""; }
void set_peer_threads(int) {}
Measurement openblas_sgemm(std::int64_t, std::int64_t, std::int64_t, const Policy&) {
  throw std::runtime_error("OpenBLAS peer not built (libopenblas not found at configure time)");
}
#endif

Measurement host_memcpy(std::size_t bytes, int threads, const Policy& policy) {
  std::vector<char> source(bytes, 1), target(bytes);
  const int parts = bytes < (1u << 20) ? 1 : std::max(1, threads);
  auto copy_part = [&](int part) {
    const std::size_t begin = bytes * part / parts, end = bytes * (part + 1) / parts;
    std::memcpy(target.data() + begin, source.data() + begin, end - begin);
  };
  auto timer = make_cpu_timer();
  return measure(
      [&] {
        if (parts == 1) return copy_part(0);
        std::vector<std::jthread> workers;
        for (int part = 1; part < parts; ++part) workers.emplace_back(copy_part, part);
        copy_part(0);
      },
      policy, *timer);
}

}  // namespace ember_bench
