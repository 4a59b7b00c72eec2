// benchmarks/ember_bench/report.cpp — derived figures, the readable table, the CSV file.
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <tuple>

#include "harness.h"

namespace ember_bench {
namespace {

bool measured(const Record& r) { return r.skipped.empty() && !r.samples.empty(); }

// The implementation a GPU record is compared with on the CPU.
std::string cpu_counterpart(const std::string& implementation) {
  if (implementation == "cublas") return "openblas";
  if (implementation == "cuda_memcpy") return "memcpy";
  return implementation;
}

bool bandwidth_bound(const std::string& group) {
  return group == "elementwise" || group == "reduction" || group == "copy" || group == "softmax" ||
         group == "cross_entropy" || group == "sgd" || group == "max_pool2d" || group == "batch_norm" ||
         group == "layer_norm" || group == "embedding";
}

std::string format_rate(double rate, const std::string& unit) {
  char text[64];
  if (unit == "tokens/s") {
    std::snprintf(text, sizeof text, "%.1fK tok/s", rate / 1e3);
  } else if (unit == "examples/s") {
    if (rate >= 1e6) std::snprintf(text, sizeof text, "%.2fM ex/s", rate / 1e6);
    else if (rate >= 1e3) std::snprintf(text, sizeof text, "%.1fK ex/s", rate / 1e3);
    else std::snprintf(text, sizeof text, "%.0f ex/s", rate);
  } else {
    std::snprintf(text, sizeof text, "%.2f %s", rate, unit.c_str());
  }
  return text;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

std::string format_seconds(double seconds) {
  char text[32];
  if (seconds >= 1) std::snprintf(text, sizeof text, "%.3f s", seconds);
  else if (seconds >= 1e-3) std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  else std::snprintf(text, sizeof text, "%.2f us", seconds * 1e6);
  return text;
}

void derive(std::vector<Record>& records) {
  for (auto& r : records) {
    if (!measured(r)) continue;
    r.median = median(r.samples);
    const Workload& w = r.workload;
    const double seconds = std::max(r.median, 1e-12);
    if (w.unit == "GFLOP/s") r.rate = w.flops / seconds / 1e9;
    else if (w.unit == "GB/s") r.rate = w.bytes / seconds / 1e9;
    else r.rate = w.items / seconds;
    if (w.flops > 0) r.gflops = w.flops / seconds / 1e9;
  }
  // Index: (id, device, implementation) -> record, and each device's copy-peer records.
  std::map<std::tuple<std::string, std::string, std::string>, const Record*> index;
  std::vector<const Record*> copy_peers;
  for (const auto& r : records) {
    if (!measured(r)) continue;
    index[{r.workload.id, r.device, r.implementation}] = &r;
    if (r.implementation == "memcpy" || r.implementation == "cuda_memcpy") copy_peers.push_back(&r);
  }
  // The copy ceiling for a figure: the copy peer (`group` copy, h2d or d2h) on the same
  // device whose element count is nearest (in log scale) to the figure's, so that a figure
  // that fits in cache is compared with a copy that fits in cache too.
  auto nearest_copy = [&](const std::string& device, const std::string& group, double size) -> const Record* {
    const Record* best = nullptr;
    double best_distance = 0;
    for (const Record* peer : copy_peers) {
      if (peer->device != device || peer->workload.group != group || peer->rate <= 0) continue;
      const double distance = std::abs(std::log(peer->workload.size / std::max(size, 1.0)));
      if (!best || distance < best_distance) best = peer, best_distance = distance;
    }
    return best;
  };
  auto find = [&](const std::string& id, const std::string& device, const std::string& implementation) -> const Record* {
    auto found = index.find({id, device, implementation});
    return found == index.end() ? nullptr : found->second;
  };
  for (auto& r : records) {
    if (!measured(r)) continue;
    const Workload& w = r.workload;
    const bool is_peer_library = r.implementation == "openblas" || r.implementation == "cublas" ||
                                 r.implementation == "memcpy" || r.implementation == "cuda_memcpy" ||
                                 r.implementation == "fp32_peak";
    if (w.group == "gemm" && !is_peer_library) {
      const std::string library = r.device == "cpu" ? "openblas" : "cublas";
      if (const Record* peer = find(w.id, r.device, library)) {
        r.fraction_of_ceiling = r.rate / peer->rate;
        r.ceiling = library + " sgemm";
      }
    } else if ((w.group == "train_step" || w.group == "train_epoch" || w.group == "conv2d") && !is_peer_library) {
      // The step's (or epoch's, or convolution's im2col) GEMMs alone at the BLAS's speed,
      // measured in this run (gemm_plan.h): the time the figure would take if everything else
      // — im2col, bias, ReLU, pooling, loss, autograd, SGD, allocation, dispatch — were free.
      const std::string library = r.device == "cpu" ? "openblas" : "cublas";
      if (const Record* peer = find(w.id, r.device, library); peer && peer->rate > 0) {
        r.fraction_of_ceiling = r.rate / peer->rate;
        const char* whose = w.group == "train_step" ? "step's" : w.group == "train_epoch" ? "epoch's" : "convolution's";
        r.ceiling = library + " sgemm of the " + whose + " GEMMs alone (" + format_seconds(peer->median) + ")";
      }
    } else if (w.group == "attention" && !is_peer_library) {
      // On a GPU: the figure's FLOPs at the device's fp32 peak (main.cpp, cuda_support.h), a
      // computed bound — FlashAttention's exp and bookkeeping keep real kernels well below it.
      if (const Record* peak = find(w.id, r.device, "fp32_peak"); peak && peak->rate > 0) {
        r.fraction_of_ceiling = r.rate / peak->rate;
        r.ceiling = "the device's fp32 peak (computed, not measured)";
      }
    } else if (w.group == "dataloader" && !is_peer_library) {
      // The pass's data movement alone: shuffle + gather of every row (cpu_peers.h: host_gather).
      if (const Record* peer = find(w.id, r.device, "memcpy"); peer && peer->rate > 0) {
        r.fraction_of_ceiling = r.rate / peer->rate;
        r.ceiling = "shuffled gather of the same rows (" + format_seconds(peer->median) + ")";
      }
    } else if (bandwidth_bound(w.group) || w.group == "h2d" || w.group == "d2h") {
      const std::string source = (w.group == "h2d" || w.group == "d2h") ? w.group : "copy";
      if (const Record* peer = nearest_copy(r.device, source, w.size); peer && peer != &r) {
        r.fraction_of_ceiling = r.rate / peer->rate;
        r.ceiling = peer->implementation + " " + peer->workload.id + " (" + number(peer->rate) + " GB/s)";
      }
    }
    if (r.device != "cpu")
      if (const Record* cpu = find(w.id, "cpu", cpu_counterpart(r.implementation)); cpu && cpu->rate > 0)
        r.speedup_over_cpu = r.rate / cpu->rate;
    if (r.implementation == "ember")
      for (const auto& other : records)
        if (measured(other) && other.implementation != "ember" && other.device == r.device &&
            other.workload.id == w.id && other.rate > 0)
          r.ratio_to_peer[other.implementation] = r.rate / other.rate;
  }
}

void print_table(std::ostream& out, const RunInfo& info, const std::vector<Record>& records) {
  char line[512];
  out << "ember-bench  " << info.date << "\n";
  for (const auto& [key, value] : info.machine) out << "  " << key << ": " << value << "\n";
  for (const auto& gpu : info.gpus) out << "  gpu " << gpu.at("index") << ": " << gpu.at("name") << "\n";
  for (const auto& [key, value] : info.versions) out << "  " << key << ": " << value << "\n";
  for (const auto& [key, value] : info.peers) out << "  peer " << key << ": " << value << "\n";
  std::string group;
  for (const auto& r : records) {
    if (r.workload.group != group) {
      group = r.workload.group;
      std::snprintf(line, sizeof line, "\n== %s\n%-34s %-8s %-11s %4s %11s %17s %8s %8s %10s  %s\n", group.c_str(),
                    "figure", "device", "impl", "n", "median", "rate", "ceiling", "GPU/CPU", "peak mem", "ember/peer");
      out << line;
    }
    if (!measured(r)) {
      std::snprintf(line, sizeof line, "%-34s %-8s %-11s  skipped: %s\n", r.workload.id.c_str(), r.device.c_str(),
                    r.implementation.c_str(), r.skipped.c_str());
      out << line;
      continue;
    }
    std::string ratios;
    for (const auto& [peer, ratio] : r.ratio_to_peer) {
      char text[64];
      std::snprintf(text, sizeof text, "%s %.2f  ", peer.c_str(), ratio);
      ratios += text;
    }
    char fraction[32] = "-", speedup[32] = "-", memory[32] = "-";
    if (r.fraction_of_ceiling) std::snprintf(fraction, sizeof fraction, "%.1f%%", 100 * *r.fraction_of_ceiling);
    if (r.speedup_over_cpu) std::snprintf(speedup, sizeof speedup, "%.2fx", *r.speedup_over_cpu);
    if (r.peak_memory_bytes) {
      const double bytes = static_cast<double>(*r.peak_memory_bytes);
      if (bytes >= 1024.0 * 1024.0) std::snprintf(memory, sizeof memory, "%.1f MiB", bytes / (1024.0 * 1024.0));
      else std::snprintf(memory, sizeof memory, "%.1f KiB", bytes / 1024.0);
    }
    std::snprintf(line, sizeof line, "%-34s %-8s %-11s %4zu %11s %17s %8s %8s %10s  %s%s\n", r.workload.id.c_str(),
                  r.device.c_str(), r.implementation.c_str(), r.samples.size(), format_seconds(r.median).c_str(),
                  format_rate(r.rate, r.workload.unit).c_str(), fraction, speedup, memory, ratios.c_str(),
                  r.cold_single_sample ? "(single cold sample)" : "");
    out << line;
  }
}

void write_csv(const std::string& path, const RunInfo& info, const std::vector<Record>& records) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  // Metadata as '#' comment lines (pandas: read_csv(..., comment='#')).
  out << "# ember-bench " << info.date << "\n# command: " << info.command << "\n";
  for (const auto& [key, value] : info.machine) out << "# machine." << key << ": " << value << "\n";
  for (const auto& gpu : info.gpus) out << "# gpu." << gpu.at("index") << ": " << gpu.at("name") << "\n";
  for (const auto& [key, value] : info.versions) out << "# version." << key << ": " << value << "\n";
  for (const auto& [key, value] : info.peers) out << "# peer." << key << ": " << value << "\n";
  out << "id,group,op,shape,size,device,implementation,unit,median_s,rate,gflops,fraction_of_ceiling,ceiling,"
         "speedup_over_cpu,ratio_to_peer,calls_per_sample,samples_s,skipped,peer_setting\n";
  for (const auto& r : records) {
    const bool ok = measured(r);
    std::string ratios, samples;
    for (const auto& [peer, ratio] : r.ratio_to_peer) {
      if (!ratios.empty()) ratios += ';';
      ratios.append(peer).append("=").append(number(ratio));
    }
    for (double s : r.samples) {
      if (!samples.empty()) samples += ';';
      samples.append(number(s));
    }
    out << csv_field(r.workload.id) << "," << r.workload.group << "," << r.workload.op << "," << csv_field(r.workload.shape)
        << "," << number(r.workload.size) << "," << r.device << "," << r.implementation << "," << r.workload.unit << ","
        << (ok ? number(r.median) : "") << "," << (ok ? number(r.rate) : "") << ","
        << (ok && r.workload.flops > 0 ? number(r.gflops) : "") << ","
        << (r.fraction_of_ceiling ? number(*r.fraction_of_ceiling) : "") << "," << csv_field(r.ceiling) << ","
        << (r.speedup_over_cpu ? number(*r.speedup_over_cpu) : "") << "," << ratios << "," << r.calls_per_sample << ","
        << samples << "," << csv_field(r.skipped) << "," << csv_field(r.peer_setting) << "\n";
  }
}

}  // namespace ember_bench
