// benchmarks/ember_bench/bench_types.h — the data ember-bench passes around (issue 9).
//
// A Workload is one figure, described without a device ("GEMM 1024x1024x1024", "one
// training step of the Fashion-MNIST MLP at batch 256"): the same description is run by
// ember on every device, by the library peers (OpenBLAS, cuBLAS, memcpy) and, through a JSON
// spec, by benchmarks/peers/pytorch_peer.py. A Record is one (workload, device,
// implementation) measurement with every timed sample; report.cpp derives the figures
// (rate, fraction of the ceiling, GPU-over-CPU speedup, ember-over-peer ratios) from them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ember_bench {

struct Workload {
  std::string id;     // unique and device-independent, e.g. "gemm/square/1024"; --filter matches it
  std::string group;  // gemm, gemm_bf16, elementwise, reduction, softmax, cross_entropy, sgd, copy, h2d, d2h,
                      // conv2d, max_pool2d, batch_norm, attention, layer_norm, embedding, train_step,
                      // train_epoch, dataloader
  std::string op;     // matmul, add, mul, relu, sum, softmax, cross_entropy, sgd, clone, to_device,
                      // to_host, step, epoch, load; conv2d/max_pool2d/batch_norm/attention: forward or
                      // forward_backward
  std::string shape;  // human-readable, e.g. "128x784x256" or "batch 256"
  std::vector<std::int64_t> dims;    // gemm: M,K,N; elementwise/sum/copy: n; softmax, CE: rows,cols;
                                     // conv2d: N,Cin,H,W,Cout,kH,kW,stride,padding,dilation,groups;
                                     // max_pool2d: N,C,H,W,kernel,stride; batch_norm: N,C,H,W;
                                     // attention: B,H,T,D,causal,fused (1 fused kernel, 0 composite);
                                     // layer_norm: rows,C; embedding: V,C,tokens; the GPT: V,T,L,heads,C;
                                     // the CNN's train figures: C,H,W (one example), C1,C2
  std::vector<std::int64_t> layers;  // MLP widths for sgd / train / dataloader (input first); the
                                     // CNN: its Linear head (flattened features first)
  std::string model;                 // "toy", "fmnist", "wide" (sgd, train), "cnn" (train)
  std::string precision = "fp32";    // train_step: "bf16" runs forward and loss under autocast
  std::int64_t batch = 0;
  std::int64_t examples = 0;  // epoch and dataloader dataset size
  std::int64_t workers = 0;   // dataloader
  double size = 0;            // the x axis of the charts (n, elements, batch, workers)
  double flops = 0;           // per call (0 when not meaningful)
  double bytes = 0;           // minimum memory traffic per call
  double items = 0;           // examples per call (train, dataloader)
  std::string unit;           // GFLOP/s, GB/s, examples/s or tokens/s (the GPT): how `rate` is computed
  double footprint_bytes = 0; // memory the workload needs on its device (capped per device)
  bool cpu_only = false;      // dataloader: host work, measured once
  bool cuda_only = false;     // h2d, d2h
};

// How a figure is timed: `warmup` untimed calls (lasting at least `min_warmup_seconds`), then up to `reps` samples, each at least
// `min_sample_seconds` long (short calls are repeated inside one sample and divided), stopping
// early once `max_seconds` of sampling have passed (keeping at least 3 samples). A figure whose
// single call already exceeds `max_seconds` keeps that first call as its only sample.
struct Policy {
  int warmup = 2;
  double min_warmup_seconds = 0.15;  // warm-up lasts at least this long (quick: 0.02)
  int reps = 10;
  double min_sample_seconds = 0.002;
  double max_seconds = 2.0;
};

struct Record {
  Workload workload;
  std::string device;          // "cpu", "cuda:0", ...
  std::string implementation;  // ember, openblas, cublas, memcpy, cuda_memcpy, pytorch
  std::vector<double> samples; // seconds per call
  int calls_per_sample = 1;
  bool cold_single_sample = false;  // the first call exceeded max_seconds and is the only sample
  std::string skipped;              // non-empty: why it was not measured (no samples then)
  // A peer run under several settings (pytorch_peer.h): the one whose median was fastest,
  // which this record is, and every setting's median (skipped settings absent).
  std::string peer_setting;
  std::map<std::string, double> setting_medians;
  // ember's records: the most tensor memory the figure held at once beyond what was live
  // before it (the CPU caching allocator's, or the device's, peak statistic).
  std::optional<std::int64_t> peak_memory_bytes;
  // Derived by report.cpp.
  double median = 0;
  double rate = 0;           // in workload.unit
  double gflops = 0;         // when workload.flops > 0 (also for training steps)
  std::optional<double> fraction_of_ceiling;
  std::string ceiling;       // what the fraction is measured against
  std::optional<double> speedup_over_cpu;     // GPU records: this rate / the CPU rate, same impl
  std::map<std::string, double> ratio_to_peer;  // ember records: ember rate / peer rate
};

// Everything known about the run, for the JSON/CSV headers.
struct RunInfo {
  std::string date;     // ISO 8601, UTC
  std::string command;  // the command line
  std::map<std::string, std::string> machine;   // cpu_model, cpu_cores, memory_bytes
  std::vector<std::map<std::string, std::string>> gpus;
  std::map<std::string, std::string> versions;  // ember, compiler, openblas, cuda_runtime, pytorch, python
  std::map<std::string, std::string> peers;     // peer name -> status ("ok", "absent: ...", "not built")
  std::map<std::string, std::string> options;
};

// A record as read back from a --json report, for `ember-bench --compare` (compare.h): only
// what the comparison needs. Older reports lack "repeats"; it is then the number of samples.
struct SavedRecord {
  std::string id, implementation, device, unit;
  std::string skipped;          // non-empty: not measured in that run (why)
  double median = 0;            // median_s (seconds per call)
  std::vector<double> samples;  // samples_s
  int repeats = 0;              // timed samples behind the median
};

// A --json report read back: where it came from and its records, in file order.
struct SavedRun {
  std::string path, date;
  std::string cpu_model, cpu_cores;  // machine.cpu_model / machine.cpu_cores ("" if absent)
  std::vector<std::string> gpu_names;  // machine.gpus[].name
  std::vector<SavedRecord> records;
};

}  // namespace ember_bench
