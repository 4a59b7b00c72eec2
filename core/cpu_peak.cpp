// core/cpu_peak.cpp — the CPU's computed fp32 peak, the ceiling the profiler's table and
// ember train's MFU divide by.
//
// peak = cores × FLOPs per cycle × clock, with FLOPs per cycle = 2 FMA units × the float
// lanes of the unit's datapath × 2 (an FMA is a multiply and an add). The datapath is the
// widest vector ISA the CPU runs (cpuid), except that AMD's Zen 2–4 (family 0x17 and 0x19)
// execute AVX-512 as two 256-bit halves. The clock is the higher of the one the OS reports
// (sysfs cpuinfo_max_freq, else the largest "cpu MHz" in /proc/cpuinfo, in a VM the nominal
// one) and the one measured on the calling core with turbo (cpu_clock_hz), so the peak is a
// ceiling: all cores at one core's turbo clock. A long run measures again at its end
// (remeasure_cpu_clock_hz) and keeps the highest clock seen, since a VM's core changes speed.
// The bfloat16 peak is that of the kernel core/cpu/gemm_kernel_bf16_avx512.cpp runs: AMX
// tiles' 1024 FLOPs a cycle per core where it uses them, else twice the float32 peak
// (AVX512-BF16's vdpbf16ps).
#include <ember/core/profiler.h>

#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/error.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <cstdint>
#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ember::profiler {

namespace {

std::optional<double> clock_hz() {
  if (std::ifstream max_freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); max_freq) {
    double khz = 0;
    if (max_freq >> khz && khz > 0) return khz * 1e3;
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  double best_mhz = 0;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    try {
      best_mhz = std::max(best_mhz, std::stod(line.substr(colon + 1)));
    } catch (const std::exception&) {
    }
  }
  if (best_mhz > 0) return best_mhz * 1e6;
  return std::nullopt;
}

// Floats one FMA unit multiplies and adds per cycle.
int datapath_lanes() {
#if defined(__x86_64__)
  int bits = 128;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) bits = 256;
  if (__builtin_cpu_supports("avx512f")) bits = 512;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) && ebx == 0x68747541 /* "Auth"enticAMD */ &&
      __get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    const unsigned family = ((eax >> 8) & 0xF) + ((eax >> 20) & 0xFF);
    if (family < 0x1A) bits = std::min(bits, 256);
  }
  return bits / 32;
#else
  return 4;
#endif
}

// The clock the calling core runs at now, turbo included: a chain of dependent integer adds
// (one per cycle on every x86 core since the Pentium 4's successors) timed for about 20 ms.
// The OS's figure is the nominal clock in a VM, which a busy core exceeds.
std::optional<double> measured_clock_hz() {
#if defined(__x86_64__)
  using Clock = std::chrono::steady_clock;
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {  // the fastest of three: the core may be ramping up
    constexpr std::uint64_t kIterations = 2'000'000;
    std::uint64_t value = 0;
    const Clock::time_point start = Clock::now();
    for (std::uint64_t i = 0; i < kIterations; ++i) {
      // Ten adds, each waiting for the one before: ten cycles. The loop's own counter and
      // branch run beside them on other ports. Register adds (x += x), not adds of a
      // constant: Intel's Golden Cove cores (Sapphire Rapids and later) fold a chain of small
      // constant adds in the renamer, and such a chain "measured" 9-12 GHz on one.
      asm volatile(
          "add %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\t"
          "add %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0"
          : "+r"(value));
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds > 0) best = std::max(best, static_cast<double>(kIterations) * 10.0 / seconds);
  }
  if (best > 0) return best;
#endif
  return std::nullopt;
}

}  // namespace

namespace {
// The highest clock seen so far, in Hz (0: none yet). Only ever raised: in a VM the host
// moves a core between speeds from one second to the next (this project's Emerald Rapids
// guest measured 2.44 GHz at the start of an ember-bench run and 3.68 GHz in another, and the
// run's GEMMs reached 3.3 GHz worth of FMAs), and a peak taken at a slow moment is no ceiling.
std::atomic<double> highest_clock_hz{0};
}  // namespace

std::optional<double> remeasure_cpu_clock_hz() {
  const std::optional<double> reported = clock_hz(), measured = measured_clock_hz();
  const double candidate = std::max(reported.value_or(0), measured.value_or(0));
  double current = highest_clock_hz.load();
  while (candidate > current && !highest_clock_hz.compare_exchange_weak(current, candidate)) {
  }
  const double hz = highest_clock_hz.load();
  return hz > 0 ? std::optional<double>(hz) : std::nullopt;
}

std::optional<double> cpu_clock_hz() {
  static std::once_flag first_measurement;
  std::call_once(first_measurement, [] { remeasure_cpu_clock_hz(); });
  const double hz = highest_clock_hz.load();
  return hz > 0 ? std::optional<double>(hz) : std::nullopt;
}

std::optional<double> cpu_fp32_peak_flops(int threads) {
  const std::optional<double> hz = cpu_clock_hz();
  if (!hz || threads <= 0) return std::nullopt;
  const double flops_per_cycle = 2.0 /* FMA units */ * datapath_lanes() * 2.0 /* multiply + add */;
  return threads * flops_per_cycle * *hz;
}

std::optional<double> cpu_bf16_peak_flops(int threads) {
#if defined(__x86_64__)
  bool amx = false;
  try {
    amx = cpu::amx_bfloat16_usable();
  } catch (const ValueError&) {  // a bad EMBER_AMX: the GEMM reports it; the peak is the vector one
  }
  if (amx) {
    // tdpbf16ps: a 16 x 16 float tile += 16 x 32 by 32 x 16 bfloat16, 8192 multiply-adds, one
    // issued every 16 cycles per core.
    const std::optional<double> hz = cpu_clock_hz();
    if (!hz || threads <= 0) return std::nullopt;
    return threads * 1024.0 * *hz;
  }
  // vdpbf16ps: each 32-bit lane multiplies a pair of bfloat16 and adds both products, so the
  // same units do twice the float32 FMA's multiply-adds per cycle.
  if (!__builtin_cpu_supports("avx512bf16")) return std::nullopt;
  const std::optional<double> fp32 = cpu_fp32_peak_flops(threads);
  if (!fp32) return std::nullopt;
  return 2.0 * *fp32;
#else
  (void)threads;
  return std::nullopt;
#endif
}

}  // namespace ember::profiler
