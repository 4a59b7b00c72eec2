// benchmarks/ember_bench/cpu_peers.h — the CPU peers: OpenBLAS sgemm and a host memcpy.
//
// OpenBLAS is linked into ember-bench only (never into ember). Both run with the same
// thread count as ember (--threads), so the ratios compare like with like.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness.h"

namespace ember_bench {

bool openblas_built();
std::string openblas_version();  // openblas_get_config(), or "" when not built
void set_peer_threads(int threads);
Measurement openblas_sgemm(std::int64_t m, std::int64_t k, std::int64_t n, const Policy& policy);
// memcpy of `bytes`, split over `threads` threads above 1 MiB: the host's copy bandwidth.
Measurement host_memcpy(std::size_t bytes, int threads, const Policy& policy);

}  // namespace ember_bench
