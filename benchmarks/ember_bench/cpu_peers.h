// benchmarks/ember_bench/cpu_peers.h — the CPU peers: OpenBLAS sgemm, a host memcpy, and the
// ceilings of the end-to-end figures.
//
// OpenBLAS is linked into ember-bench only (never into ember). All run with the same
// thread count as ember (--threads), so the ratios compare like with like. The copies use
// ember's own thread pool (started once), not threads started per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness.h"

namespace ember_bench {

bool openblas_built();
std::string openblas_version();  // openblas_get_config(), or "" when not built
// Runs ember-bench again with OPENBLAS_CORETYPE set where OpenBLAS fell back to its generic
// kernels on a CPU it does not know (benchmarks/openblas_core_type.h); first thing in main.
void openblas_use_best_core_type(char** argv);
void set_peer_threads(int threads);
Measurement openblas_sgemm(std::int64_t m, std::int64_t k, std::int64_t n, const Policy& policy);
// memcpy of `bytes`, split over `threads` threads above 1 MiB: the host's copy bandwidth.
Measurement host_memcpy(std::size_t bytes, int threads, const Policy& policy);
// The GEMMs of a training step (train_step) or of every step of an epoch (train_epoch) of
// the workload's MLP (a CNN: openblas_gemm_plan), run by OpenBLAS back to back and nothing else: forward X·Wᵀ, weight
// gradient dYᵀ·X, input gradient dY·W (not for the first layer, whose input needs none).
// The time a step would take if it were all GEMM at the BLAS's speed: its ceiling.
Measurement openblas_training_gemms(const Workload& w, const Policy& policy);
// The GEMMs of a conv2d figure, or of a CNN's training step or epoch (gemm_plan.h), run by
// OpenBLAS back to back: the figure's ceiling. Each GEMM has its own operand buffers.
Measurement openblas_gemm_plan(const Workload& w, const Policy& policy);
// A DataLoader pass reduced to its data movement: shuffle the indices, gather each batch's
// rows (features and labels) into a reused batch buffer, batches split over `threads`.
Measurement host_gather(const Workload& w, int threads, const Policy& policy);

}  // namespace ember_bench
