// benchmarks/cpu_bench.cpp — ember's CPU kernels against the peers a user would otherwise use.
//
// Issue 8, tutorial appendix (performance). In one process, interleaved (ember, peer,
// ember, peer, ...) so that noise from other jobs on a shared machine hits both alike:
//   * sgemm: ember's GEMM (core/cpu/gemm.cpp, called through the backend on raw buffers)
//     against OpenBLAS cblas_sgemm, square n = 128..2048 and the Fashion-MNIST MLP's
//     forward (batch x in · in x out) and backward (the transposed) products; GFLOP/s, ratio;
//   * large elementwise add / mul / relu against a plain memcpy of the same size: GB/s of
//     memory traffic and the fraction of the copy's bandwidth;
//   * the per-op overhead of a 1-element add with autograd off, in ns;
//   * one MLP training step's ops each alone (its GEMMs in their real layouts, the small ops
//     between them), in us.
// Each number is the median of several repetitions after a warm-up; a repetition repeats
// the op until it has run for at least ~20 ms. Both sides use the same thread count.
//
//   cpu_bench [--threads N] [--reps R] [--quick] [--only gemm,elementwise,overhead,stepops] [--shape S]
// (--only: the tables to run, all by default; --shape S: only GEMM shapes whose label contains S.)
//
// OpenBLAS is linked into this program only (benchmarks/CMakeLists.txt), never into ember;
// without it the GEMM table shows ember alone.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <ember/core/allocator.h>
#include <ember/core/backend.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cpu_allocator.h>
#include <ember/core/native.h>
#include <ember/core/parallel.h>
#include <ember/ember.h>

#ifdef EMBER_HAVE_OPENBLAS
#include <cblas.h>

#include "openblas_core_type.h"
#endif

namespace {

using namespace ember;
using Clock = std::chrono::steady_clock;

int repetitions = 7;
bool quick = false;

// Seconds per call of `body`: how many calls fill ~20 ms is found during the warm-up.
std::int64_t calls_per_repetition(const std::function<void()>& body) {
  body();  // first touch: page faults, pool start-up, packing buffers
  std::int64_t calls = 1;
  for (;;) {
    auto start = Clock::now();
    for (std::int64_t i = 0; i < calls; ++i) body();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds >= (quick ? 0.005 : 0.02) || calls > (1 << 26)) return calls;
    calls *= 2;
  }
}

double seconds_per_call(const std::function<void()>& body, std::int64_t calls) {
  auto start = Clock::now();
  for (std::int64_t i = 0; i < calls; ++i) body();
  return std::chrono::duration<double>(Clock::now() - start).count() / static_cast<double>(calls);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// Median seconds per call of `first` and `second`, measured alternately.
std::pair<double, double> interleaved(const std::function<void()>& first, const std::function<void()>& second) {
  const std::int64_t first_calls = calls_per_repetition(first);
  const std::int64_t second_calls = second ? calls_per_repetition(second) : 0;
  std::vector<double> first_times, second_times;
  for (int rep = 0; rep < repetitions; ++rep) {
    first_times.push_back(seconds_per_call(first, first_calls));
    if (second) second_times.push_back(seconds_per_call(second, second_calls));
  }
  return {median(first_times), second ? median(second_times) : 0.0};
}

// Two effects of this virtual machine decide GEMM timings as much as the kernels do, so each
// timed repetition starts from the same state for both libraries:
//   * OpenBLAS's pool threads busy-wait after each call (2^28 TSC cycles, ~0.1 s here) so its
//     next call finds them awake. Timed right after OpenBLAS, ember shared the two cores with
//     those spinning threads (measured: ember at n = 1024 ran at one thread's speed);
//   * a core left idle for a while comes back slowly: for the first ~30-50 ms after a 250 ms
//     pause, ember's two threads ran at the speed of one.
// So before every timed repetition the library about to be timed runs untimed for
// kGemmWarmUp, long enough for OpenBLAS's spinning to expire and for both cores to be busy,
// as they are in a loop of GEMMs (a training step). Within a repetition each library runs
// back to back, with its own threads behaving as they do in a real loop.
constexpr double kGemmWarmUp = 0.15;  // seconds

void run_for(const std::function<void()>& body, double seconds) {
  const auto start = Clock::now();
  do body();
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds);
}

std::pair<double, double> gemm_interleaved(const std::function<void()>& ember_call,
                                           const std::function<void()>& peer_call) {
  const std::int64_t ember_calls = calls_per_repetition(ember_call);
  const std::int64_t peer_calls = peer_call ? calls_per_repetition(peer_call) : 0;
  std::vector<double> ember_times, peer_times;
  for (int rep = 0; rep < repetitions; ++rep) {
    run_for(ember_call, quick ? 0.03 : kGemmWarmUp);
    ember_times.push_back(seconds_per_call(ember_call, ember_calls));
    if (!peer_call) continue;
    run_for(peer_call, quick ? 0.03 : kGemmWarmUp);
    peer_times.push_back(seconds_per_call(peer_call, peer_calls));
  }
  return {median(ember_times), peer_call ? median(peer_times) : 0.0};
}

std::string gemm_filter;     // --shape S: only GEMM rows whose label contains S

// One GEMM shape: C[m x n] = op(A) · op(B), row-major buffers, like cblas_sgemm's arguments.
struct GemmShape {
  std::string label;
  std::int64_t m, n, k;
  bool a_transposed, b_transposed;
};

void fill_random(CpuAlignedVector<float>& values, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& value : values) value = uniform(rng);
}

void run_gemm(const GemmShape& shape, std::mt19937& rng) {
  const std::int64_t m = shape.m, n = shape.n, k = shape.k;
  // Cache-line aligned, as a tensor's data is, for both libraries (core/allocator.h).
  CpuAlignedVector<float> a(m * k), b(k * n), c_ember(m * n), c_peer(m * n);
  fill_random(a, rng);
  fill_random(b, rng);
  // op(A) is m x k: stored k x m when transposed. op(B) is k x n: stored n x k when transposed.
  const std::int64_t lda = shape.a_transposed ? m : k, ldb = shape.b_transposed ? k : n;
  GemmPlan plan;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  plan.a = a.data();
  plan.row_stride_a = shape.a_transposed ? 1 : lda;
  plan.col_stride_a = shape.a_transposed ? lda : 1;
  plan.b = b.data();
  plan.row_stride_b = shape.b_transposed ? 1 : ldb;
  plan.col_stride_b = shape.b_transposed ? ldb : 1;
  plan.c = c_ember.data();
  plan.row_stride_c = n;
  plan.col_stride_c = 1;
  plan.dtype = kFloat32;
  auto ember_call = [&] { gemm_kernel(kCPU, plan); };
  std::function<void()> peer_call;
#ifdef EMBER_HAVE_OPENBLAS
  peer_call = [&] {
    cblas_sgemm(CblasRowMajor, shape.a_transposed ? CblasTrans : CblasNoTrans,
                shape.b_transposed ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a.data(), static_cast<int>(lda), b.data(), static_cast<int>(ldb), 0.0f,
                c_peer.data(), static_cast<int>(n));
  };
#endif
  auto [ember_seconds, peer_seconds] = gemm_interleaved(ember_call, peer_call);
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double ember_gflops = flops / ember_seconds * 1e-9;
  // Both results must agree, or the speed means nothing.
  double worst = 0.0;
  if (peer_call)
    for (std::size_t i = 0; i < c_ember.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::abs(c_ember[i] - c_peer[i])));
  if (peer_call) {
    const double peer_gflops = flops / peer_seconds * 1e-9;
    std::printf("| %-28s | %5lld | %5lld | %5lld | %8.1f | %8.1f | %5.2f | %.1e |\n", shape.label.c_str(),
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), ember_gflops,
                peer_gflops, ember_gflops / peer_gflops, worst);
  } else {
    std::printf("| %-28s | %5lld | %5lld | %5lld | %8.1f | %8s | %5s | %7s |\n", shape.label.c_str(),
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), ember_gflops, "-",
                "-", "-");
  }
  std::fflush(stdout);
}

void gemm_table() {
  std::printf("\n## sgemm (float32), kernel %s\n\n", cpu::active_gemm_kernel_name().c_str());
  std::printf("| shape                        |     m |     n |     k | ember GFLOP/s | OpenBLAS GFLOP/s | ratio | max |diff| |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  std::mt19937 rng(42);
  std::vector<GemmShape> shapes;
  for (std::int64_t n : {128, 256, 512, 1024, 2048}) {
    if (quick && n > 512) continue;
    shapes.push_back({"square " + std::to_string(n), n, n, n, false, false});
  }
  // Fashion-MNIST MLP 784-256-128-10, batch 128. Forward y = x · W^T (nn.Linear stores W as
  // out x in); backward dX = dY · W and dW = dY^T · X.
  const std::int64_t batch = 128;
  const std::int64_t layers[][2] = {{784, 256}, {256, 128}, {128, 10}};
  for (const auto& layer : layers) {
    const std::int64_t in = layer[0], out = layer[1];
    const std::string name = std::to_string(in) + "->" + std::to_string(out);
    shapes.push_back({"fwd x.W^T " + name, batch, out, in, false, true});
    shapes.push_back({"bwd dY.W " + name, batch, in, out, false, false});
    shapes.push_back({"bwd dY^T.X " + name, out, in, batch, true, false});
  }
  // The toy MLP 2-30-20-2 at batch 32 (ember-bench's train_step/toy/b32): products so small
  // that a tile's last vector is partly used (--shape toy; docs/performance.md, "fifth pass").
  const std::int64_t toy_layers[][2] = {{2, 30}, {30, 20}, {20, 2}};
  for (const auto& layer : toy_layers) {
    const std::int64_t in = layer[0], out = layer[1];
    const std::string name = std::to_string(in) + "->" + std::to_string(out);
    shapes.push_back({"toy fwd x.W^T " + name, 32, out, in, false, true});
    shapes.push_back({"toy bwd dY.W " + name, 32, in, out, false, false});
    shapes.push_back({"toy bwd dY^T.X " + name, out, in, 32, true, false});
  }
  for (const GemmShape& shape : shapes)
    if (shape.label.find(gemm_filter) != std::string::npos) run_gemm(shape, rng);
}

// The same bytes copied by every thread at once (ember's pool, one slice per thread) into a
// buffer that is reused: the honest ceiling for a multi-threaded elementwise op. A
// single-threaded memcpy is printed too; on this machine it stays far below what one
// elementwise loop per core moves, so it would flatter every fraction.
void threaded_copy(float* target, const float* source, std::int64_t count) {
  const std::int64_t threads = get_num_threads();
  const std::int64_t grain = std::max<std::int64_t>(count / threads, 1);
  parallel_for(0, count, grain, [&](std::int64_t begin, std::int64_t end) {
    std::memcpy(target + begin, source + begin, static_cast<std::size_t>(end - begin) * sizeof(float));
  });
}

// Elementwise ops on `count` floats against the copy ceilings, GB/s of traffic.
void elementwise_table() {
  // 64 Mi floats = 256 MiB per tensor, well past the last-level cache (on this class of CPU up
  // to ~100 MiB, shared with other guests: at 64 MiB a quiet host let the copy run partly
  // from cache, at 50 GB/s instead of memory's ~30, and the fractions measured the host).
  const std::int64_t count = quick ? (1 << 22) : (1 << 26);
  std::printf("\n## elementwise, %lld float32 elements (%.0f MiB per tensor), %d threads\n\n",
              static_cast<long long>(count), count * 4.0 / (1 << 20), get_num_threads());
  NoGradGuard no_grad;
  Tensor a = ember::rand({count}), b = ember::rand({count}), out = ember::empty_like(a);
  std::vector<float> copy_destination(count);
  const float* source = a.data_ptr<float>();
  auto one_thread_copy = [&] { std::memcpy(copy_destination.data(), source, count * sizeof(float)); };
  auto all_threads_copy = [&] { threaded_copy(copy_destination.data(), source, count); };
  const double bytes = static_cast<double>(count) * sizeof(float);
  auto [memcpy_seconds, copy_seconds] = interleaved(one_thread_copy, all_threads_copy);
  const double memcpy_rate = 2.0 * bytes / memcpy_seconds * 1e-9;
  std::printf("ceilings: memcpy (1 thread) %.1f GB/s, threaded copy (%d threads) %.1f GB/s\n\n", memcpy_rate,
              get_num_threads(), 2.0 * bytes / copy_seconds * 1e-9);
  struct Op {
    const char* name;
    double tensors_moved;  // reads + writes, in tensors of `count` floats
    std::function<void()> run;
  };
  const std::vector<Op> ops = {
      {"add (new output)", 3, [&] { Tensor r = native::add(a, b); }},
      {"mul (new output)", 3, [&] { Tensor r = native::mul(a, b); }},
      {"relu (new output)", 2, [&] { Tensor r = native::relu(a); }},
      {"clone (new output)", 2, [&] { Tensor r = native::clone(a); }},
      {"add_ (in place)", 3, [&] { native::add_(out, b); }},
      {"copy_ (into existing)", 2, [&] { native::copy_(out, a); }},
  };
  std::printf("| op | ember GB/s | threaded copy GB/s | fraction of threaded copy | fraction of 1-thread memcpy |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const Op& op : ops) {
    // The ceiling is measured again, alternating with each op, so both see the same load.
    auto [op_seconds, ceiling_seconds] = interleaved(op.run, all_threads_copy);
    const double op_rate = op.tensors_moved * bytes / op_seconds * 1e-9;
    const double copy_rate = 2.0 * bytes / ceiling_seconds * 1e-9;
    std::printf("| %s | %.1f | %.1f | %.2f | %.2f |\n", op.name, op_rate, copy_rate, op_rate / copy_rate,
                op_rate / memcpy_rate);
    std::fflush(stdout);
  }
  const cpu::CpuMemoryStats stats = cpu::memory_stats();
  std::printf("\nCPU caching allocator: %llu hits, %llu misses, %.0f MiB cached (limit %.0f MiB)\n",
              static_cast<unsigned long long>(stats.cache_hits), static_cast<unsigned long long>(stats.cache_misses),
              stats.cached_bytes / 1048576.0, cpu::cache_limit() / 1048576.0);
}

// The fixed cost of one op: a 1-element add with autograd off, through the public API.
void overhead_table() {
  std::printf("\n## per-op overhead (1-element float32, autograd off)\n\n| op | ns per call |\n|---|---|\n");
  NoGradGuard no_grad;
  Tensor a = ember::rand({1}), b = ember::rand({1});
  Tensor row = ember::rand({4, 1}), column = ember::rand({1, 4});
  struct Op {
    const char* name;
    std::function<void()> run;
  };
  const std::vector<Op> ops = {
      {"ember::add(a, b)", [&] { Tensor r = ember::add(a, b); }},
      {"a + b", [&] { Tensor r = a + b; }},
      {"native::add(a, b)", [&] { Tensor r = native::add(a, b); }},
      {"a.add_(b)", [&] { native::add_(a, b); }},
      {"ember::empty({1})", [&] { Tensor r = ember::empty({1}); }},
      {"a.relu()", [&] { Tensor r = a.relu(); }},
      {"[4,1] + [1,4] (broadcast)", [&] { Tensor r = row + column; }},
      {"a.sum()", [&] { Tensor r = a.sum(); }},
  };
  for (const Op& op : ops) {
    auto [seconds, unused] = interleaved(op.run, nullptr);
    (void)unused;
    std::printf("| %s | %.0f |\n", op.name, seconds * 1e9);
  }
}

// One training step of the Fashion-MNIST MLP (784-256-128-10, batch 128), op by op, each alone:
// the GEMMs in the layouts autograd hands them (nn.Linear's forward is X·Wᵀ, a transposed
// view; the weight gradient is Gᵀ·X), and the small ops between them. Set against the
// same ops inside `ember train --profile-steps` (docs/performance.md), it shows what the
// step's context costs each op.
void step_ops_table() {
  std::printf("\n## a training step's ops, each alone (MLP, batch 128, autograd off)\n\n| op | us per call | GFLOP/s |\n|---|---|---|\n");
  NoGradGuard no_grad;
  manual_seed(7);
  Tensor x = ember::randn({128, 784}), w1 = ember::randn({256, 784}), b1 = ember::randn({256});
  Tensor h1 = ember::randn({128, 256}), w2 = ember::randn({128, 256}), b2 = ember::randn({128});
  Tensor g1 = ember::randn({128, 256}), g2 = ember::randn({128, 128});
  Tensor gradient = ember::randn({128, 256}), result = ember::relu(ember::randn({128, 256}));
  Tensor logits = ember::randn({128, 10}), targets = ember::randint(0, 10, {128});
  Tensor tokens = ember::randn({2048, 512});
  struct Op {
    const char* name;
    double flops;
    std::function<void()> run;
  };
  const double layer1 = 2.0 * 128 * 784 * 256, layer2 = 2.0 * 128 * 256 * 128;
  const std::vector<Op> ops = {
      {"addmm(b1, X, W1ᵀ) 128x784x256 (forward)", layer1, [&] { Tensor r = ember::addmm(b1, x, w1.t()); }},
      {"mm(G1ᵀ, X) 256x128x784 (weight gradient)", layer1, [&] { Tensor r = ember::mm(g1.t(), x); }},
      {"addmm(b2, H1, W2ᵀ) 128x256x128 (forward)", layer2, [&] { Tensor r = ember::addmm(b2, h1, w2.t()); }},
      {"mm(G2, W2) 128x128x256 (input gradient)", layer2, [&] { Tensor r = ember::mm(g2, w2); }},
      {"mm(G2ᵀ, H1) 128x128x256 (weight gradient)", layer2, [&] { Tensor r = ember::mm(g2.t(), h1); }},
      {"sum over dim 0 of [128, 256] (a bias gradient)", 0, [&] { Tensor r = native::sum(gradient, {0}, false); }},
      {"sum over dim 0 of [2048, 512] (the GPT's MLP bias gradient)", 0, [&] { Tensor r = native::sum(tokens, {0}, false); }},
      {"relu of [128, 256]", 0, [&] { Tensor r = gradient.relu(); }},
      {"relu_backward of [128, 256]", 0, [&] { Tensor r = native::relu_backward(gradient, result); }},
      {"cross_entropy of [128, 10]", 0, [&] { Tensor r = nn::functional::cross_entropy(logits, targets); }},
  };
  for (const Op& op : ops) {
    auto [seconds, unused] = interleaved(op.run, nullptr);
    (void)unused;
    if (op.flops > 0) std::printf("| %s | %.2f | %.0f |\n", op.name, seconds * 1e6, op.flops / seconds * 1e-9);
    else std::printf("| %s | %.2f | |\n", op.name, seconds * 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
#ifdef EMBER_HAVE_OPENBLAS
  ember_bench::rerun_with_openblas_core_type(argv, openblas_get_corename());
#endif
  int threads = 0;
  std::string only = "gemm,elementwise,overhead,stepops";  // which tables to print
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (argument == "--reps" && i + 1 < argc) repetitions = std::max(1, std::atoi(argv[++i]));
    else if (argument == "--quick") quick = true;
    else if (argument == "--only" && i + 1 < argc) only = argv[++i];
    else if (argument == "--shape" && i + 1 < argc) gemm_filter = argv[++i];
    else {
      std::fprintf(stderr, "usage: cpu_bench [--threads N] [--reps R] [--quick] [--only gemm,elementwise,overhead,stepops] [--shape S]\n");
      return 2;
    }
  }
  if (threads > 0) set_num_threads(threads);
  threads = get_num_threads();
#ifdef EMBER_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
  std::printf("# cpu_bench: %d threads for ember and OpenBLAS (%s), median of %d repetitions\n", threads,
              openblas_get_config(), repetitions);
#else
  std::printf("# cpu_bench: %d threads, median of %d repetitions (built without OpenBLAS)\n", threads, repetitions);
#endif
  if (only.find("gemm") != std::string::npos) gemm_table();
  if (only.find("elementwise") != std::string::npos) elementwise_table();
  if (only.find("overhead") != std::string::npos) overhead_table();
  if (only.find("stepops") != std::string::npos) step_ops_table();
  return 0;
}
