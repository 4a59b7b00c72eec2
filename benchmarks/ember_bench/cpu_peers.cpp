// benchmarks/ember_bench/cpu_peers.cpp — OpenBLAS cblas_sgemm, a multi-threaded memcpy, and
// the ceilings of the training and DataLoader figures (docs/benchmarks.md, "derived figures").
#include "cpu_peers.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include <ember/core/allocator.h>
#include <ember/core/parallel.h>

#ifdef EMBER_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "../openblas_core_type.h"
#include "gemm_plan.h"

namespace ember_bench {

#ifdef EMBER_BENCH_HAVE_OPENBLAS
bool openblas_built() { return true; }
std::string openblas_version() { return openblas_get_config(); }
void openblas_use_best_core_type(char** argv) { rerun_with_openblas_core_type(argv, openblas_get_corename()); }
void set_peer_threads(int threads) { openblas_set_num_threads(threads); }
// One MLP's buffers for the GEMMs of its steps, sized for the workload's batch.
struct MlpGemms {
  std::vector<std::int64_t> layers;
  // Cache-line aligned, as ember's tensors are (core/allocator.h).
  std::vector<ember::CpuAlignedVector<float>> weights, weight_grads, activations, activation_grads;

  MlpGemms(const std::vector<std::int64_t>& widths, std::int64_t batch) : layers(widths) {
    for (std::size_t i = 0; i + 1 < layers.size(); ++i) {
      weights.emplace_back(layers[i] * layers[i + 1], 0.01f);
      weight_grads.emplace_back(layers[i] * layers[i + 1]);
    }
    for (std::int64_t width : layers) {
      activations.emplace_back(batch * width, 0.5f);
      activation_grads.emplace_back(batch * width, 0.25f);
    }
  }

  // The GEMMs of one step over `batch` examples (row-major, as nn.Linear: W is out x in).
  void step(std::int64_t batch) {
    const int b = static_cast<int>(batch);
    for (std::size_t i = 0; i + 1 < layers.size(); ++i) {  // forward: Y = X · Wᵀ
      const int in = static_cast<int>(layers[i]), out = static_cast<int>(layers[i + 1]);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, out, in, 1.0f, activations[i].data(), in,
                  weights[i].data(), in, 0.0f, activations[i + 1].data(), out);
    }
    for (std::size_t i = layers.size() - 1; i-- > 0;) {  // backward, last layer first
      const int in = static_cast<int>(layers[i]), out = static_cast<int>(layers[i + 1]);
      // dW = dYᵀ · X
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, b, 1.0f, activation_grads[i + 1].data(), out,
                  activations[i].data(), in, 0.0f, weight_grads[i].data(), in);
      // dX = dY · W, except for the first layer: the input needs no gradient
      if (i > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, in, out, 1.0f, activation_grads[i + 1].data(), out,
                    weights[i].data(), in, 0.0f, activation_grads[i].data(), in);
    }
  }
};

// Operand buffers for each GEMM of a plan, sized for its largest batch (the first).
struct PlanBuffers {
  std::vector<ember::CpuAlignedVector<float>> a, b, c;

  explicit PlanBuffers(const std::vector<GemmCall>& plan) {
    for (const auto& call : plan) {
      a.emplace_back(call.m * call.k, 0.5f);
      b.emplace_back(call.k * call.n, 0.25f);
      c.emplace_back(call.m * call.n);
    }
  }

  void run(const std::vector<GemmCall>& plan) {
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const GemmCall& g = plan[i];
      const int m = static_cast<int>(g.m), k = static_cast<int>(g.k), n = static_cast<int>(g.n);
      for (std::int64_t repeat = 0; repeat < g.count; ++repeat)
        cblas_sgemm(CblasRowMajor, g.transpose_a ? CblasTrans : CblasNoTrans, g.transpose_b ? CblasTrans : CblasNoTrans,
                    m, n, k, 1.0f, a[i].data(), g.transpose_a ? m : k, b[i].data(), g.transpose_b ? k : n, 0.0f,
                    c[i].data(), n);
    }
  }
};

Measurement openblas_gemm_plan(const Workload& w, const Policy& policy) {
  const std::vector<std::int64_t> batches = plan_batches(w);
  // One plan per step (an epoch's last one may be smaller); the buffers fit the first.
  std::vector<std::vector<GemmCall>> plans;
  for (std::int64_t batch : batches) plans.push_back(gemm_plan(w, batch));
  PlanBuffers buffers(plans.front());
  auto timer = make_cpu_timer();
  return measure(
      [&] {
        for (const auto& plan : plans) buffers.run(plan);
      },
      policy, *timer);
}

Measurement openblas_training_gemms(const Workload& w, const Policy& policy) {
  if (w.model == "cnn") return openblas_gemm_plan(w, policy);
  MlpGemms mlp(w.layers, w.batch);
  auto timer = make_cpu_timer();
  if (w.group == "train_step") return measure([&] { mlp.step(w.batch); }, policy, *timer);
  // An epoch: full batches, then the last partial one (as the DataLoader, drop_last false).
  return measure(
      [&] {
        for (std::int64_t start = 0; start < w.examples; start += w.batch) mlp.step(std::min(w.batch, w.examples - start));
      },
      policy, *timer);
}

Measurement openblas_sgemm(std::int64_t m, std::int64_t k, std::int64_t n, const Policy& policy) {
  ember::CpuAlignedVector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n);  // aligned as ember's tensors
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
void openblas_use_best_core_type(char**) {}
void set_peer_threads(int) {}
Measurement openblas_sgemm(std::int64_t, std::int64_t, std::int64_t, const Policy&) {
  throw std::runtime_error("OpenBLAS peer not built (libopenblas not found at configure time)");
}
Measurement openblas_training_gemms(const Workload&, const Policy&) {
  throw std::runtime_error("OpenBLAS peer not built (libopenblas not found at configure time)");
}
Measurement openblas_gemm_plan(const Workload&, const Policy&) {
  throw std::runtime_error("OpenBLAS peer not built (libopenblas not found at configure time)");
}
#endif

Measurement host_memcpy(std::size_t bytes, int threads, const Policy& policy) {
  std::vector<char> source(bytes, 1), target(bytes);
  const std::int64_t parts = bytes < (1u << 20) ? 1 : std::max(1, threads);
  auto timer = make_cpu_timer();
  return measure(
      [&] {
        // One slice per thread of ember's pool (grain = a slice), the caller taking the first.
        ember::parallel_for(0, static_cast<std::int64_t>(bytes), static_cast<std::int64_t>(bytes) / parts + 1,
                            [&](std::int64_t begin, std::int64_t end) {
                              std::memcpy(target.data() + begin, source.data() + begin, end - begin);
                            });
      },
      policy, *timer);
}

Measurement host_gather(const Workload& w, int threads, const Policy& policy) {
  const std::int64_t features = w.layers.front(), examples = w.examples, batch = w.batch;
  std::vector<float> dataset(examples * features, 0.5f);
  std::vector<std::int64_t> labels(examples, 3);
  const std::int64_t batches = (examples + batch - 1) / batch;
  std::vector<std::int64_t> order(examples);
  std::mt19937_64 generator(123);
  auto timer = make_cpu_timer();
  return measure(
      [&] {
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), generator);
        const std::int64_t grain = std::max<std::int64_t>(1, batches / std::max(1, threads));
        ember::parallel_for(0, batches, grain, [&](std::int64_t first, std::int64_t last) {
          // One batch buffer per thread, reused (a DataLoader hands each batch out and drops it).
          thread_local std::vector<float> rows;
          thread_local std::vector<std::int64_t> targets;
          rows.resize(batch * features);
          targets.resize(batch);
          for (std::int64_t b = first; b < last; ++b) {
            const std::int64_t begin = b * batch, end = std::min(examples, begin + batch);
            for (std::int64_t i = begin; i < end; ++i) {
              std::memcpy(rows.data() + (i - begin) * features, dataset.data() + order[i] * features,
                          features * sizeof(float));
              targets[i - begin] = labels[order[i]];
            }
          }
        });
      },
      policy, *timer);
}

}  // namespace ember_bench
