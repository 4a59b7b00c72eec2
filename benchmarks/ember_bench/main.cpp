// benchmarks/ember_bench/main.cpp — `ember-bench`: CPU vs GPU vs peers, op by op and end to end.
//
// Issue 9. For every figure of the catalogue (workloads.cpp) that matches --filter, on the
// CPU and on every CUDA device (--device), it times ember (ember_runner.cpp), the library
// peers (OpenBLAS / cuBLAS sgemm, memcpy / cudaMemcpy as bandwidth ceilings) and, when a
// Python with torch is found, the same workloads in PyTorch (benchmarks/peers/
// pytorch_peer.py). Then it derives the figures (report.cpp), prints a table and writes
// --json / --csv. Without a GPU it measures the CPU and says so; it is the third way ember
// is used, after the tutorial programs and the `ember` trainer (docs/benchmarks.md).
//
// `--compare BASE.json NEW.json` (issue 23, compare.cpp) runs nothing: it compares two such
// reports. Usage errors, here and there, exit 2.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <ember/core/cpu_allocator.h>
#include <ember/core/parallel.h>
#include <ember/ember.h>

#include "compare.h"
#include "cpu_peers.h"
#include "cuda_support.h"
#include "ember_runner.h"
#include "json_io.h"
#include "machine_info.h"
#include "pytorch_peer.h"
#include "report.h"
#include "workloads.h"

namespace {

using namespace ember_bench;

struct Options {
  bool quick = false;
  bool list = false;
  std::string filter = ".*";
  std::string device = "all";
  int threads = 0;
  std::string json_path, csv_path;
  std::string python = "auto";
  std::string script = EMBER_BENCH_PEERS_DIR "/pytorch_peer.py";
  int reps = 0;
  double max_seconds = 0;
  std::vector<std::string> compare_paths;  // BASE.json NEW.json
  std::string fail_on_regression;          // a percentage, parsed by parse_regression_percent
};

Record make_record(const Workload& w, const std::string& device, const std::string& implementation) {
  Record record;
  record.workload = w;
  record.device = device;
  record.implementation = implementation;
  return record;
}

void fill(Record& record, const Measurement& m) {
  record.samples = m.samples;
  record.calls_per_sample = m.calls_per_sample;
  record.cold_single_sample = m.cold_single_sample;
}

// Runs one implementation, turning any exception into a "skipped: failed" record.
template <class Run>
Record attempt(const Workload& w, const std::string& device, const std::string& implementation, Run run) {
  Record record = make_record(w, device, implementation);
  if (isatty(STDERR_FILENO))  // a progress line, overwritten in place
    std::fprintf(stderr, "  %-30s %-7s %-11s\r", w.id.c_str(), device.c_str(), implementation.c_str());
  // ember's own tensors go through its allocators, whose peak statistics say how much the
  // figure held at once (the peers allocate elsewhere: not measured).
  const bool ember_memory = implementation == "ember";
  const int cuda_index = device.rfind("cuda:", 0) == 0 ? std::stoi(device.substr(5)) : -1;
  std::size_t live_before = 0;
  if (ember_memory && cuda_index < 0) {
    ember::cpu::reset_peak_memory_stats();
    live_before = ember::cpu::memory_stats().allocated_bytes;
  } else if (ember_memory) {
    ember::cuda::reset_peak_memory_stats(cuda_index);
    live_before = ember::cuda::memory_allocated(cuda_index);
  }
  try {
    fill(record, run());
    if (ember_memory) {
      const std::size_t peak = cuda_index < 0 ? ember::cpu::memory_stats().max_allocated_bytes
                                              : ember::cuda::max_memory_allocated(cuda_index);
      record.peak_memory_bytes = static_cast<std::int64_t>(peak > live_before ? peak - live_before : 0);
    }
  } catch (const std::exception& error) {
    record.skipped = std::string("failed: ") + error.what();
  }
  return record;
}

// The library peers that apply to a figure on a device.
void run_peers(const Workload& w, const std::string& device, int cuda_index, int threads, const Policy& policy,
               std::vector<Record>& records) {
  const bool cpu = cuda_index < 0;
  const std::size_t bytes = w.dims.empty() ? 0 : 4 * static_cast<std::size_t>(w.dims[0]);
  if (w.group == "gemm") {
    if (cpu && openblas_built())
      records.push_back(attempt(w, device, "openblas", [&] { return openblas_sgemm(w.dims[0], w.dims[1], w.dims[2], policy); }));
    if (!cpu && cuda_peers_built())
      records.push_back(attempt(w, device, "cublas", [&] {
        return cublas_sgemm(cuda_index, w.dims[0], w.dims[1], w.dims[2], policy);
      }));
  } else if (w.group == "copy") {
    if (cpu) records.push_back(attempt(w, device, "memcpy", [&] { return host_memcpy(bytes, threads, policy); }));
    else if (cuda_peers_built())
      records.push_back(attempt(w, device, "cuda_memcpy", [&] { return cuda_memcpy(cuda_index, "d2d", bytes, policy); }));
  } else if ((w.group == "train_step" || w.group == "train_epoch" || w.group == "conv2d") && w.model != "gpt" &&
             w.precision == "fp32") {
    // The ceiling of a training or convolution figure: its GEMMs alone, at the BLAS's speed
    // (not drawn for the GPT yet: its plan would need the attention's products too).
    if (cpu && openblas_built())
      records.push_back(attempt(w, device, "openblas", [&] {
        return w.group == "conv2d" ? openblas_gemm_plan(w, policy) : openblas_training_gemms(w, policy);
      }));
    if (!cpu && cuda_peers_built())
      records.push_back(attempt(w, device, "cublas", [&] { return cublas_gemm_plan(cuda_index, w, policy); }));
  } else if (w.group == "attention" && !cpu && cuda_peers_built() && w.flops > 0) {
    // The ceiling of an attention figure on a GPU: its FLOPs at the device's fp32 peak
    // (computed from the device's properties, not measured: report.cpp names it so).
    if (const std::optional<DevicePeak> peak = cuda_fp32_peak(cuda_index))
      records.push_back(attempt(w, device, "fp32_peak", [&] {
        return Measurement{std::vector<double>(5, w.flops / peak->flops_per_second)};
      }));
  } else if (w.group == "dataloader") {
    // The ceiling of a DataLoader pass: its shuffle and row gathers, nothing else.
    records.push_back(attempt(w, device, "memcpy", [&] { return host_gather(w, threads, policy); }));
  } else if ((w.group == "h2d" || w.group == "d2h") && !cpu && cuda_peers_built()) {
    records.push_back(attempt(w, device, "cuda_memcpy", [&] { return cuda_memcpy(cuda_index, w.group, bytes, policy); }));
  }
}

std::string command_line(int argc, char** argv) {
  std::string text;
  for (int i = 0; i < argc; ++i) text += (i ? " " : "") + std::string(argv[i]);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  openblas_use_best_core_type(argv);
  Options options;
  CLI::App app{"ember-bench: ember on the CPU and on every CUDA device, against OpenBLAS, cuBLAS, "
               "memory-copy ceilings and PyTorch (docs/benchmarks.md)"};
  // The options of a run; --compare runs nothing, so it excludes them all.
  const std::vector<CLI::Option*> run_options = {
      app.add_flag("--quick", options.quick, "small sizes only: the whole run takes under a minute"),
      app.add_flag("--list", options.list, "print the figures (after --filter) and exit"),
      app.add_option("--filter", options.filter, "ECMAScript regex matched against figure ids, e.g. '^gemm/square'"),
      app.add_option("--device", options.device, "cpu, cuda or all")->check(CLI::IsMember({"cpu", "cuda", "all"})),
      app.add_option("--threads", options.threads,
                     "CPU threads for ember, OpenBLAS, memcpy and PyTorch (0: ember's default)")
          ->check(CLI::NonNegativeNumber),
      app.add_option("--json", options.json_path, "write every sample and the run's metadata as JSON"),
      app.add_option("--csv", options.csv_path, "write one row per figure (samples ';'-separated) as CSV"),
      app.add_option("--python", options.python, "interpreter for the PyTorch peer: auto, none or a path"),
      app.add_option("--pytorch-script", options.script, "the PyTorch peer script"),
      app.add_option("--reps", options.reps, "samples per figure (default 10, --quick 3)")->check(CLI::PositiveNumber),
      app.add_option("--max-seconds", options.max_seconds, "sampling time budget per figure (default 2, --quick 0.15)")
          ->check(CLI::PositiveNumber)};
  CLI::Option* compare =
      app.add_option("--compare", options.compare_paths,
                     "compare two --json reports, figure by figure, against their noise; runs no benchmark")
          ->expected(2)
          ->type_name("BASE.json NEW.json");
  for (CLI::Option* option : run_options) compare->excludes(option);
  // Taken as text so that a bad value gets --compare's own message and exit status.
  app.add_option("--fail-on-regression", options.fail_on_regression,
                 "with --compare: exit 1 when a significant slowdown exceeds PCT percent")
      ->type_name("PCT")
      ->needs(compare);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version exit 0; every malformed command line exits 2, as ember-bench's
    // other usage errors do.
    return app.exit(error) == 0 ? 0 : 2;
  }

  if (!options.compare_paths.empty()) {
    std::optional<double> fail_percent;
    if (app.count("--fail-on-regression")) {
      fail_percent = parse_regression_percent(options.fail_on_regression);
      if (!fail_percent) {
        std::fprintf(stderr, "ember-bench: --fail-on-regression takes a percentage >= 0, got '%s'\n",
                     options.fail_on_regression.c_str());
        return kCompareUsageError;
      }
    }
    return compare_reports(options.compare_paths[0], options.compare_paths[1], fail_percent, std::cout, std::cerr);
  }

  std::regex filter;
  try {
    filter = std::regex(options.filter);
  } catch (const std::regex_error& error) {
    std::fprintf(stderr, "ember-bench: --filter is not a valid regex: %s\n", error.what());
    return 2;
  }
  std::vector<Workload> workloads;
  for (auto& w : build_workloads(options.quick))
    if (std::regex_search(w.id, filter)) workloads.push_back(std::move(w));
  if (options.list) {
    for (const auto& w : workloads) std::printf("%-30s %s\n", w.id.c_str(), w.shape.c_str());
    return 0;
  }
  if (workloads.empty()) {
    std::fprintf(stderr, "ember-bench: no figure matches --filter '%s' (see --list)\n", options.filter.c_str());
    return 2;
  }

  if (options.threads > 0) ember::set_num_threads(options.threads);
  const int threads = ember::get_num_threads();
  set_peer_threads(threads);
  Policy policy;
  policy.reps = options.reps ? options.reps : (options.quick ? 3 : 10);
  policy.warmup = options.quick ? 1 : 2;
  policy.min_sample_seconds = options.quick ? 0.0005 : 0.002;
  policy.min_warmup_seconds = options.quick ? 0.02 : 0.15;
  policy.max_seconds = options.max_seconds > 0 ? options.max_seconds : (options.quick ? 0.15 : 2.0);

  // Devices: the CPU unless --device cuda; every CUDA device unless --device cpu.
  std::vector<int> devices;  // -1 = CPU, otherwise a CUDA index
  if (options.device != "cuda") devices.push_back(-1);
  const int gpus = ember::cuda::device_count();
  if (options.device != "cpu")
    for (int index = 0; index < gpus; ++index) devices.push_back(index);
  if (options.device == "cuda" && gpus == 0) {
    std::fprintf(stderr, "ember-bench: --device cuda but no CUDA device is available (%s)\n",
                 ember::cuda::is_built() ? "built with CUDA, no GPU visible" : "this build has no CUDA backend");
    return 2;
  }

  RunInfo info;
  info.date = utc_now();
  info.command = command_line(argc, argv);
  info.machine = describe_cpu();
  // The CPU's computed fp32 peak for the threads measured (core/profiler.h: cores x FMA lanes
  // x 2 units x 2 FLOPs x the clock measured with turbo): the roofline's flat line. Written
  // again after the run with the clock measured then too (the highest seen): a VM's cores
  // change speed during a run, and a peak taken at a slow moment would sit below its figures.
  const auto record_cpu_peak = [&info, threads] {
    if (const std::optional<double> peak = ember::profiler::cpu_fp32_peak_flops(threads)) {
      char text[64];
      std::snprintf(text, sizeof text, "%.1f", *peak / 1e9);
      info.machine["cpu_fp32_peak_gflops"] = text;
      std::snprintf(text, sizeof text, "%.2f", ember::profiler::cpu_clock_hz().value_or(0) / 1e9);
      info.machine["cpu_clock_ghz"] = text;
    }
    // The bfloat16 figures' roof: the peak of the kernel ember's bfloat16 GEMM runs (AMX tiles
    // or vdpbf16ps); absent on a CPU with neither.
    if (const std::optional<double> peak = ember::profiler::cpu_bf16_peak_flops(threads)) {
      char text[64];
      std::snprintf(text, sizeof text, "%.1f", *peak / 1e9);
      info.machine["cpu_bf16_peak_gflops"] = text;
    }
  };
  record_cpu_peak();
  info.gpus = describe_gpus();
  info.versions = {{"ember", EMBER_BENCH_VERSION},
                   {"compiler", compiler_version()},
                   {"build_type", EMBER_BENCH_BUILD_TYPE},
                   {"cuda_backend", ember::cuda::is_built() ? "built" : "not built"}};
  if (cuda_peers_built()) info.versions["cuda_runtime"] = cuda_runtime_version();
  if (openblas_built()) info.versions["openblas"] = openblas_version();
  if (const char* core = std::getenv("OPENBLAS_CORETYPE"); openblas_built() && core != nullptr)
    info.versions["openblas_coretype"] = core;  // set by the user, or by ember-bench for a CPU OpenBLAS does not know
  info.peers["openblas"] = openblas_built() ? "ok" : "not built (libopenblas not found)";
  info.peers["memcpy"] = "ok";
  info.peers["cublas"] = cuda_peers_built() ? (gpus ? "ok" : "built, no GPU visible") : "not built (CPU-only build)";
  info.peers["cuda_memcpy"] = info.peers["cublas"];
  for (int index = 0; index < gpus; ++index) {  // the attention figures' ceiling, with its arithmetic
    if (const std::optional<DevicePeak> peak = cuda_fp32_peak(index)) {
      char text[160];
      std::snprintf(text, sizeof text, "%.1f TFLOP/s (%s)", peak->flops_per_second / 1e12, peak->formula.c_str());
      info.peers["fp32_peak cuda:" + std::to_string(index)] = text;
    }
  }
  info.options = {{"quick", options.quick ? "true" : "false"}, {"filter", options.filter},
                  {"device", options.device},                {"threads", std::to_string(threads)},
                  {"reps", std::to_string(policy.reps)},      {"warmup", std::to_string(policy.warmup)},
                  {"max_seconds", std::to_string(policy.max_seconds)},
                  {"min_sample_seconds", std::to_string(policy.min_sample_seconds)},
                  {"min_warmup_seconds", std::to_string(policy.min_warmup_seconds)}};
  if (gpus == 0) std::fprintf(stderr, "ember-bench: no CUDA device visible: measuring the CPU only\n");

  std::vector<Record> records;
  std::vector<PytorchJob> pytorch_jobs;
  int failures = 0;
  for (int cuda_index : devices) {
    const bool cpu = cuda_index < 0;
    const ember::Device device = cpu ? ember::kCPU : ember::Device(ember::DeviceType::CUDA, cuda_index);
    const std::string name = device.str();
    if (!cpu) ember::cuda::set_device(cuda_index);
    std::unique_ptr<Timer> timer = cpu ? make_cpu_timer() : make_cuda_timer(cuda_index);
    if (!timer) timer = make_cpu_timer();  // a CUDA backend without the bench's CUDA part: synchronising wall clock
    for (std::size_t number = 0; number < workloads.size(); ++number) {
      const Workload& w = workloads[number];
      if ((w.cpu_only && !cpu) || (w.cuda_only && cpu)) continue;
      if (!isatty(STDERR_FILENO))  // a log line per figure for long runs (scripts/gpu-check.sh)
        std::fprintf(stderr, "ember-bench: [%zu/%zu] %s on %s\n", number + 1, workloads.size(), w.id.c_str(), name.c_str());
      // Memory cap: a quarter of the host's available memory, half of the GPU's free memory.
      if (!cpu) ember::cuda::empty_cache();
      const auto free_gpu = cpu ? std::nullopt : cuda_free_memory(cuda_index);
      const double cap = cpu ? available_host_memory() / 4.0
                             : (free_gpu ? *free_gpu / 2.0 : ember::cuda::get_device_properties(cuda_index).total_memory / 4.0);
      if (w.footprint_bytes > cap) {
        Record record = make_record(w, name, "ember");
        record.skipped = "needs " + std::to_string(static_cast<long long>(w.footprint_bytes / 1048576)) +
                         " MiB, over the memory cap of " + std::to_string(static_cast<long long>(cap / 1048576)) + " MiB";
        records.push_back(record);
        continue;
      }
      Record ember_record = attempt(w, name, "ember", [&] { return run_ember(w, device, policy, *timer); });
      if (!ember_record.skipped.empty()) ++failures;
      else pytorch_jobs.push_back({w, name});
      records.push_back(std::move(ember_record));
      run_peers(w, name, cuda_index, threads, policy, records);
    }
    if (!cpu) ember::cuda::empty_cache();
  }
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "%-60s\r", "");

  const std::string python = find_python_with_torch(options.python);
  if (options.python == "none") {
    info.peers["pytorch"] = "disabled (--python none)";
  } else if (python.empty()) {
    info.peers["pytorch"] = options.python == "auto" ? "absent: no python3 (tried python3, /usr/bin/python3) imports torch"
                                                     : "absent: " + options.python + " cannot import torch";
  } else if (!pytorch_jobs.empty()) {
    std::fprintf(stderr, "ember-bench: running the PyTorch peer (%s) on %zu figures\n", python.c_str(),
                 pytorch_jobs.size());
    const bool cpu_figures = std::any_of(pytorch_jobs.begin(), pytorch_jobs.end(),
                                         [](const PytorchJob& job) { return job.device == "cpu"; });
    PytorchOutcome outcome =
        run_pytorch_peer(pytorch_jobs, policy, pytorch_settings(threads, cpu_figures), python, options.script);
    info.peers["pytorch"] = outcome.status;
    if (outcome.status == "ok") {
      info.versions["pytorch"] = outcome.torch_version;
      info.versions["python"] = outcome.python_version + " (" + python + ")";
      info.options["pytorch_threads"] = std::to_string(outcome.torch_threads);
    }
    std::string tried;
    for (const auto& setting : outcome.settings) tried += (tried.empty() ? "" : "; ") + setting;
    info.options["pytorch_settings"] = tried;
    for (auto& record : outcome.records) records.push_back(std::move(record));
  }
  // Group the table by figure: stable sort by (catalogue order, device order).
  std::map<std::string, std::size_t> order;
  for (std::size_t i = 0; i < workloads.size(); ++i) order[workloads[i].id] = i;
  std::stable_sort(records.begin(), records.end(), [&](const Record& a, const Record& b) {
    return order[a.workload.id] < order[b.workload.id];
  });

  ember::profiler::remeasure_cpu_clock_hz();  // the clock after the run; the peak uses the highest seen
  record_cpu_peak();
  derive(records);
  print_table(std::cout, info, records);
  try {
    if (!options.json_path.empty()) write_json_report(options.json_path, info, records);
    if (!options.csv_path.empty()) write_csv(options.csv_path, info, records);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ember-bench: %s\n", error.what());
    return 1;
  }
  if (failures) {
    std::fprintf(stderr, "ember-bench: %d ember figure(s) failed (see 'skipped: failed' above)\n", failures);
    return 1;
  }
  return 0;
}
