// core/profiler_report.cpp — what a Profile says: key_averages(), the table, the Chrome trace.
//
// The table follows PyTorch's key_averages().table(): one row per op name, sorted by self
// time; "self" is an event's time minus that of the events nested in it, and the shares are
// of all recorded self time (every thread's), so the Self % column adds up to 100 %.
// Recording is core/profiler.cpp.
#include <ember/core/profiler.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include <ember/core/error.h>

namespace ember::profiler {

namespace {

std::string shapes_text(const std::vector<std::vector<std::int64_t>>& shapes) {
  std::string text = "[";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) text += ", ";
    text += "[";
    for (std::size_t d = 0; d < shapes[i].size(); ++d) {
      if (d > 0) text += ", ";
      text += std::to_string(shapes[i][d]);
    }
    text += "]";
  }
  return text + "]";
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// 12.345ms, 67.890us, 1.234s: PyTorch's table units.
std::string duration_text(std::int64_t ns) {
  if (ns >= 1'000'000'000) return format("%.3fs", static_cast<double>(ns) / 1e9);
  if (ns >= 1'000'000) return format("%.3fms", static_cast<double>(ns) / 1e6);
  return format("%.3fus", static_cast<double>(ns) / 1e3);
}

std::string bytes_text(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (std::int64_t{1} << 30)) return format("%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  if (bytes >= (std::int64_t{1} << 20)) return format("%.2f MiB", b / (1024.0 * 1024.0));
  if (bytes >= (std::int64_t{1} << 10)) return format("%.2f KiB", b / 1024.0);
  return std::to_string(bytes) + " B";
}

std::string percent_text(double part, double whole) { return whole > 0 ? format("%.2f%%", 100.0 * part / whole) : "-"; }

// Pads (or cuts) a cell to `width`, names left-aligned, numbers right-aligned.
std::string cell(const std::string& text, std::size_t width, bool left) {
  std::string shown = text.size() > width ? text.substr(0, width - 3) + "..." : text;
  const std::string pad(width - shown.size(), ' ');
  return left ? shown + pad : pad + shown;
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// The row an event counts in: numbered blocks of one kind ("ProfilerStep#12") share the row
// "ProfilerStep#*", whose average is then the time per step.
std::string row_name(const Event& event) {
  if (event.kind != EventKind::Annotation) return event.name;
  const std::size_t hash = event.name.rfind('#');
  if (hash == std::string::npos || hash + 1 == event.name.size()) return event.name;
  const bool numbered = std::all_of(event.name.begin() + static_cast<std::ptrdiff_t>(hash) + 1, event.name.end(),
                                    [](char c) { return c >= '0' && c <= '9'; });
  return numbered ? event.name.substr(0, hash + 1) + "*" : event.name;
}

std::string microseconds(std::int64_t ns) { return format("%.3f", static_cast<double>(ns) / 1e3); }

}  // namespace

std::vector<Average> Profile::key_averages(bool group_by_input_shape) const {
  std::vector<Average> rows;
  std::map<std::tuple<std::string, EventKind, std::string>, std::size_t> row_of;
  // The names open around each event on its thread, to count a recursive call's time once.
  std::vector<const std::string*> enclosing;
  std::uint32_t thread = UINT32_MAX;
  for (const Event& event : events) {
    if (event.thread != thread) {
      thread = event.thread;
      enclosing.clear();
    }
    enclosing.resize(std::min<std::size_t>(enclosing.size(), static_cast<std::size_t>(event.depth)));
    const bool recursive = std::any_of(enclosing.begin(), enclosing.end(),
                                       [&](const std::string* name) { return *name == event.name; });
    enclosing.push_back(&event.name);

    const std::string shapes = group_by_input_shape ? shapes_text(event.input_sizes) : std::string();
    const std::string name = row_name(event);
    auto [found, inserted] = row_of.try_emplace({name, event.kind, shapes}, rows.size());
    if (inserted) rows.push_back(Average{name, event.kind, shapes});
    Average& row = rows[found->second];
    row.calls += 1;
    row.self_ns += event.self_ns;
    if (!recursive) row.total_ns += event.duration_ns;
    row.flops += event.flops;
    row.bytes += event.input_bytes + event.self_allocated_bytes;
    row.self_allocated_bytes += event.self_allocated_bytes;
    if (!recursive) row.allocated_bytes += event.allocated_bytes;
    if (event.device_ns >= 0) {
      row.on_device = true;
      row.device_self_ns += std::max<std::int64_t>(0, event.device_self_ns);
      if (!recursive) row.device_total_ns += event.device_ns;
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Average& a, const Average& b) { return a.self_ns > b.self_ns; });
  return rows;
}

std::string Profile::table(const TableOptions& options) const {
  const std::vector<Average> rows = key_averages(options.group_by_input_shape);
  std::int64_t all_self_ns = 0;
  for (const Average& row : rows) all_self_ns += row.self_ns;

  std::size_t name_width = 12;
  for (const Average& row : rows) name_width = std::max(name_width, row.name.size());
  name_width = std::min<std::size_t>(name_width, 40);
  const bool shapes = options.group_by_input_shape;
  const bool device = std::any_of(rows.begin(), rows.end(), [](const Average& row) { return row.on_device; });
  const bool flop_peak = options.peak_flops_per_second.has_value() && *options.peak_flops_per_second > 0;
  const bool byte_peak = options.peak_bytes_per_second.has_value() && *options.peak_bytes_per_second > 0;

  std::vector<std::pair<std::string, std::size_t>> header = {
      {"Name", name_width}, {"Self %", 8}, {"Self", 12}, {"Total %", 8}, {"Total", 12},
      {"Avg", 12},          {"Calls", 7},  {"GFLOP/s", 9}};
  if (flop_peak) header.push_back({"% peak", 7});
  header.push_back({"GB/s", 8});
  if (byte_peak) header.push_back({"% peak", 7});
  header.push_back({"Self alloc", 11});
  header.push_back({"Alloc", 11});
  if (device) {
    header.push_back({"CUDA self", 12});
    header.push_back({"CUDA total", 12});
  }
  if (shapes) header.push_back({"Input shapes", 40});

  std::ostringstream out;
  std::string rule;
  for (const auto& [title, width] : header) rule += std::string(width, '-') + "  ";
  rule.resize(rule.size() - 2);
  out << rule << "\n";
  for (std::size_t i = 0; i < header.size(); ++i) {
    out << cell(header[i].first, header[i].second, i == 0 || header[i].first == "Input shapes")
        << (i + 1 < header.size() ? "  " : "\n");
  }
  out << rule << "\n";
  const std::size_t shown = options.row_limit == 0 ? rows.size() : std::min(rows.size(), options.row_limit);
  for (std::size_t r = 0; r < shown; ++r) {
    const Average& row = rows[r];
    const double self_seconds = static_cast<double>(row.self_ns) / 1e9;
    // FLOPs belong to whatever ran the kernel (an op, or a backward node calling native code
    // directly); bytes are estimated for ops only (a node records no inputs).
    const double flop_rate = self_seconds > 0 && row.flops > 0 ? row.flops / self_seconds : 0;
    const double byte_rate =
        row.kind == EventKind::Op && self_seconds > 0 && row.bytes > 0 ? static_cast<double>(row.bytes) / self_seconds : 0;
    std::vector<std::string> cells = {
        row.name,
        percent_text(static_cast<double>(row.self_ns), static_cast<double>(all_self_ns)),
        duration_text(row.self_ns),
        percent_text(static_cast<double>(row.total_ns), static_cast<double>(all_self_ns)),
        duration_text(row.total_ns),
        duration_text(row.calls > 0 ? row.total_ns / row.calls : 0),
        std::to_string(row.calls),
        flop_rate > 0 ? format("%.2f", flop_rate / 1e9) : "-"};
    if (flop_peak) cells.push_back(flop_rate > 0 ? percent_text(flop_rate, *options.peak_flops_per_second) : "-");
    cells.push_back(byte_rate > 0 ? format("%.2f", byte_rate / 1e9) : "-");
    if (byte_peak) cells.push_back(byte_rate > 0 ? percent_text(byte_rate, *options.peak_bytes_per_second) : "-");
    cells.push_back(bytes_text(row.self_allocated_bytes));
    cells.push_back(bytes_text(row.allocated_bytes));
    if (device) {
      cells.push_back(row.on_device ? duration_text(row.device_self_ns) : "-");
      cells.push_back(row.on_device ? duration_text(row.device_total_ns) : "-");
    }
    if (shapes) cells.push_back(row.input_shapes);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out << cell(cells[i], header[i].second, i == 0 || header[i].first == "Input shapes")
          << (i + 1 < cells.size() ? "  " : "\n");
    }
  }
  out << rule << "\n";
  if (shown < rows.size()) out << "(" << rows.size() - shown << " more rows)\n";
  out << "Self time total: " << duration_text(all_self_ns) << " over " << thread_names.size() << " thread"
      << (thread_names.size() == 1 ? "" : "s") << ", in " << duration_text(duration_ns) << " of wall clock\n";
  for (const auto& [device, peak] : peak_memory_bytes) {
    out << "Peak live tensor memory on " << device << ": " << bytes_text(peak) << "\n";
  }
  if (flop_peak) out << "Peak FLOP/s used for % peak: " << format("%.1f", *options.peak_flops_per_second / 1e9) << " GFLOP/s\n";
  if (byte_peak) out << "Peak bandwidth used for % peak: " << format("%.1f", *options.peak_bytes_per_second / 1e9) << " GB/s\n";
  return out.str();
}

std::string Profile::chrome_trace() const {
  const long pid = static_cast<long>(::getpid());
  std::ostringstream out;
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto separator = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (std::size_t thread = 0; thread < thread_names.size(); ++thread) {
    separator();
    out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << pid << ", \"tid\": " << thread
        << ", \"args\": {\"name\": " << json_string(thread_names[thread]) << "}}";
  }
  // The GPUs' tracks, after the threads': an event whose device time has a place on the
  // profile's clock appears there too, as the span the GPU spent on it.
  std::set<std::int32_t> gpus;
  for (const Event& event : events) {
    if (event.gpu >= 0 && event.device_start_ns >= 0) gpus.insert(event.gpu);
  }
  const auto gpu_track = [&](std::int32_t gpu) { return thread_names.size() + static_cast<std::size_t>(gpu); };
  for (const std::int32_t gpu : gpus) {
    separator();
    out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << pid << ", \"tid\": " << gpu_track(gpu)
        << ", \"args\": {\"name\": " << json_string("CUDA stream (cuda:" + std::to_string(gpu) + ")") << "}}";
  }
  for (const Event& event : events) {
    if (event.gpu < 0 || event.device_start_ns < 0 || event.device_ns < 0) continue;
    separator();
    out << "{\"ph\": \"X\", \"cat\": \"gpu\", \"name\": " << json_string(event.name) << ", \"pid\": " << pid
        << ", \"tid\": " << gpu_track(event.gpu) << ", \"ts\": " << microseconds(event.device_start_ns)
        << ", \"dur\": " << microseconds(event.device_ns) << ", \"args\": {\"Device\": "
        << json_string("cuda:" + std::to_string(event.gpu)) << "}}";
  }
  for (const Event& event : events) {
    separator();
    out << "{\"ph\": \"X\", \"cat\": " << json_string(kind_name(event.kind)) << ", \"name\": " << json_string(event.name)
        << ", \"pid\": " << pid << ", \"tid\": " << event.thread << ", \"ts\": " << microseconds(event.start_ns)
        << ", \"dur\": " << microseconds(event.duration_ns) << ", \"args\": {";
    out << "\"Input Dims\": " << shapes_text(event.input_sizes) << ", \"Input type\": [";
    for (std::size_t i = 0; i < event.input_dtypes.size(); ++i) out << (i > 0 ? ", " : "") << json_string(event.input_dtypes[i]);
    out << "]";
    if (!event.device.empty()) out << ", \"Device\": " << json_string(event.device);
    if (event.flops > 0) out << ", \"FLOPs\": " << format("%.0f", event.flops);
    if (event.allocated_bytes > 0) out << ", \"Allocated bytes\": " << event.allocated_bytes;
    if (event.device_ns >= 0) out << ", \"CUDA time us\": " << microseconds(event.device_ns);
    if (event.sequence_nr >= 0) {
      out << ", \"Sequence number\": " << event.sequence_nr << ", \"Autograd node\": " << json_string(event.autograd_node);
    }
    out << "}}";
  }
  out << "\n], \"peakMemoryBytes\": {";
  bool first_device = true;
  for (const auto& [device, peak] : peak_memory_bytes) {
    out << (first_device ? "" : ", ") << json_string(device) << ": " << peak;
    first_device = false;
  }
  out << "}}\n";
  return out.str();
}

void Profile::export_chrome_trace(const std::string& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  EMBER_CHECK(file.good(), IOError, "cannot write the trace to '", path, "'");
  file << chrome_trace();
  file.close();
  EMBER_CHECK(!file.fail(), IOError, "writing the trace to '", path, "' failed");
}

}  // namespace ember::profiler
