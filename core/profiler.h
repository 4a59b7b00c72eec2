// core/profiler.h — where a step's time goes: every op call and every backward node, timed.
//
// Issue 23. The model is PyTorch's autograd profiler (torch.profiler.profile and its
// key_averages() table, record_function, the Chrome trace):
//
//     ember::profiler::ProfileGuard guard;            // recording starts
//     train_step();
//     ember::profiler::Profile profile = guard.stop(); // recording stops
//     std::cout << profile.table();                    // one row per op name, by self time
//     profile.export_chrome_trace("trace.json");       // chrome://tracing or ui.perfetto.dev
//
// What is recorded, and where:
//   - ops: each public op (autograd/*_ops.cpp) opens a RecordScope named for it, with its
//     tensor inputs (EMBER_RECORD_FUNCTION). An op that calls another op nests: `linear`
//     contains `addmm`; a scope named like the one already open on the thread (an overload
//     forwarding to another) is not recorded twice;
//   - backward nodes: the engine opens a scope named for each node it runs (MmBackward0),
//     so the ops a formula calls nest inside it; the node's sequence number links it to the
//     forward op that recorded it (PyTorch's "Sequence number" in the trace);
//   - annotations: anything a caller wants to see as one block (RecordScope with
//     EventKind::Annotation): the optimizer's step, the DataLoader's next batch, the
//     trainer's "ProfilerStep#N";
//   - FLOPs: the kernels that know them (mm, bmm, addmm, conv, attention) add them to the
//     innermost open scope (add_flops);
//   - memory: every Storage reports its bytes when made and freed (record_allocation); an
//     event counts what was allocated while it was open, and the profile keeps each device's
//     peak of live tensor bytes.
// Time is the recording thread's wall clock (steady_clock), as PyTorch's "CPU time" is.
//
// Off, each of those points costs one relaxed atomic load and a branch. On, a scope costs a
// few hundred nanoseconds (docs/performance.md measures both); recording is per thread, under
// a lock only that thread and stop() take, so DataLoader workers record on their own tracks.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::profiler {

enum class EventKind : std::uint8_t {
  Op,          // an op call (mm, relu, ...)
  Backward,    // a backward node the engine ran (MmBackward0, AccumulateGrad)
  Annotation,  // a block a caller named (Optimizer.step#SGD.step, ProfilerStep#3)
};
const char* kind_name(EventKind kind);  // "op", "backward", "annotation"

// One recorded call. Times are nanoseconds from the profile's start.
struct Event {
  std::string name;
  EventKind kind = EventKind::Op;
  std::uint32_t thread = 0;       // index into Profile::thread_names
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  std::int64_t self_ns = 0;       // duration minus that of the events nested in it
  std::int32_t depth = 0;         // how many events enclose it on its thread
  std::vector<std::vector<std::int64_t>> input_sizes;  // one per tensor input (undefined: [])
  std::vector<std::string> input_dtypes;               // "float32", ... ("" when undefined)
  std::string device;             // the first defined input's device ("" when none)
  double flops = 0;               // what the kernels run directly inside it reported (0: unknown)
  std::int64_t input_bytes = 0;   // bytes of its tensor inputs (0 for views: they read nothing)
  std::int64_t self_allocated_bytes = 0;  // tensor bytes allocated directly inside it
  std::int64_t allocated_bytes = 0;       // ... including the events nested in it
  std::int64_t allocations = 0;           // tensors allocated directly inside it
  std::int64_t sequence_nr = -1;  // the autograd node it recorded (an op) or ran (a backward)
  std::string autograd_node;      // that node's name ("" when none)
  // On a GPU (the first input on cuda:N): CUDA events recorded on the device's stream when
  // the event opened and closed, read when the profile stops. device_ns is the GPU's time
  // between them: its kernels, and any time the GPU waited for the host to launch them.
  // -1 when not on a GPU (or no event could be made).
  std::int32_t gpu = -1;
  std::int64_t device_ns = -1;
  std::int64_t device_self_ns = -1;   // minus the device time of the events nested in it
  std::int64_t device_start_ns = -1;  // when the GPU reached it, on the profile's clock
};

// key_averages(): the events with one name (and, when grouped so, one list of input sizes).
// Numbered annotations share a row: "ProfilerStep#3" and "ProfilerStep#4" are "ProfilerStep#*".
struct Average {
  std::string name;
  EventKind kind = EventKind::Op;
  std::string input_shapes;  // "[[32, 784], [784, 128]]" when grouped by input shape, else ""
  std::int64_t calls = 0;
  std::int64_t self_ns = 0;
  std::int64_t total_ns = 0;  // a recursive call's time counts once (the outermost call's)
  double flops = 0;
  std::int64_t bytes = 0;     // estimated bytes moved: inputs read + new tensors written
  std::int64_t self_allocated_bytes = 0;
  std::int64_t allocated_bytes = 0;
  bool on_device = false;  // some event of the row has GPU time (then the two below count)
  std::int64_t device_self_ns = 0;
  std::int64_t device_total_ns = 0;
};

struct TableOptions {
  std::size_t row_limit = 25;         // 0: every row
  bool group_by_input_shape = false;
  // With a peak, the table adds each row's achieved fraction of it (ember::profiler::
  // cpu_peak gives the CPU's; ember train passes the device's).
  std::optional<double> peak_flops_per_second;
  std::optional<double> peak_bytes_per_second;
};

class Profile {
 public:
  std::vector<Event> events;               // by thread, then start time
  std::vector<std::string> thread_names;   // "main", "DataLoader worker 0", ...
  std::map<std::string, std::int64_t> peak_memory_bytes;  // by device ("cpu", "cuda:0")
  std::int64_t duration_ns = 0;            // from start to stop

  // One row per name (and input shapes), sorted by self time, largest first.
  std::vector<Average> key_averages(bool group_by_input_shape = false) const;
  // Those rows as a text table: self and total time, their share of all recorded time,
  // calls, GFLOP/s, GB/s and allocated memory (and the GPU's self and total time when any
  // event ran on one); then the peaks of memory.
  std::string table(const TableOptions& options = {}) const;
  // The Chrome trace-event JSON: chrome://tracing, ui.perfetto.dev. One track per thread,
  // and one per GPU for the events with device times ("CUDA stream (cuda:N)").
  std::string chrome_trace() const;
  void export_chrome_trace(const std::string& path) const;  // throws IOError
};

struct ProfileOptions {
  bool record_shapes = true;  // input sizes and dtypes on each event
};

// Records from construction until stop() (or destruction, which discards the profile).
// One profile at a time: a second guard while one records throws ValueError.
class ProfileGuard {
 public:
  explicit ProfileGuard(ProfileOptions options = {});
  ~ProfileGuard();
  ProfileGuard(const ProfileGuard&) = delete;
  ProfileGuard& operator=(const ProfileGuard&) = delete;
  Profile stop();  // a second call returns an empty profile
  bool recording() const { return recording_; }

 private:
  bool recording_ = false;
};

namespace detail {
extern std::atomic<bool> enabled;
// The profile the event was opened in (its generation), or 0 when none was (one of the same
// name is already innermost). end_scope closes it only if that profile is still the thread's.
std::uint64_t begin_scope(const char* name, EventKind kind, const Tensor* const* inputs, std::size_t count,
                          bool is_view);
void end_scope(std::uint64_t generation);
void add_flops_slow(double flops);
void record_allocation_slow(Device device, std::int64_t bytes);
void note_recorded_node_slow(const std::string& name, std::uint64_t sequence_nr);
// The tensors an op names as its inputs, gathered only while recording.
struct InputList {
  std::vector<const Tensor*> tensors;
  void add(const Tensor& tensor) { tensors.push_back(&tensor); }
  void add(const std::vector<Tensor>& list) {
    for (const Tensor& tensor : list) tensors.push_back(&tensor);
  }
  void add(const std::optional<Tensor>& tensor) {
    if (tensor) tensors.push_back(&*tensor);
  }
};
}  // namespace detail

inline bool is_enabled() { return detail::enabled.load(std::memory_order_relaxed); }

// One recorded block, from construction to destruction. Costs a flag check when off.
class RecordScope {
 public:
  struct View {};  // tags a view op's scope: its inputs are recorded, their bytes not counted as read
  static constexpr View kView{};

  template <class... Inputs>
  explicit RecordScope(const char* name, const Inputs&... inputs) {
    if (is_enabled()) [[unlikely]] open(name, EventKind::Op, false, inputs...);
  }
  template <class... Inputs>
  RecordScope(EventKind kind, const char* name, const Inputs&... inputs) {
    if (is_enabled()) [[unlikely]] open(name, kind, false, inputs...);
  }
  template <class... Inputs>
  RecordScope(View, const char* name, const Inputs&... inputs) {
    if (is_enabled()) [[unlikely]] open(name, EventKind::Op, true, inputs...);
  }
  ~RecordScope() {
    if (generation_ != 0) detail::end_scope(generation_);
  }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

 private:
  template <class... Inputs>
  void open(const char* name, EventKind kind, bool is_view, const Inputs&... inputs) {
    detail::InputList list;
    (list.add(inputs), ...);
    generation_ = detail::begin_scope(name, kind, list.tensors.data(), list.tensors.size(), is_view);
  }
  std::uint64_t generation_ = 0;  // the profile its event belongs to; 0: none opened
};

// A kernel adds the FLOPs it runs to the innermost open scope on its thread.
inline void add_flops(double flops) {
  if (is_enabled()) [[unlikely]] detail::add_flops_slow(flops);
}
// Storage reports each tensor allocation (bytes > 0) and release (bytes < 0).
inline void record_allocation(Device device, std::int64_t bytes) {
  if (is_enabled()) [[unlikely]] detail::record_allocation_slow(device, bytes);
}
// autograd::record reports the node an op made; it becomes the open op's autograd_node.
inline void note_recorded_node(const std::string& name, std::uint64_t sequence_nr) {
  if (is_enabled()) [[unlikely]] detail::note_recorded_node_slow(name, sequence_nr);
}
// Names the calling thread's track in later profiles ("DataLoader worker 2").
void set_thread_name(std::string name);

// The CPU's fp32 peak for `threads` cores: cores × the FMA's float lanes (16 with AVX-512,
// 8 with AVX2, 4 otherwise; 8 for AVX-512 on AMD's Zen 2-4, whose units are 256 bits wide)
// × 2 FMA units × 2 FLOPs × cpu_clock_hz(). Computed from the clock, not measured FLOPs;
// nullopt when no clock is known.
std::optional<double> cpu_fp32_peak_flops(int threads);
// The CPU's bfloat16 peak for `threads` cores, for the kernel ember's bfloat16 GEMM runs:
// AMX tiles where it uses them (cpu::amx_bfloat16_usable(): tdpbf16ps, 16 x 16 x 32
// multiply-adds per 16 cycles, 1024 FLOPs a cycle per core × cpu_clock_hz()); else twice the
// fp32 peak where the CPU has AVX512-BF16 (vdpbf16ps: a pair of products per float lane);
// nullopt without either (ember then multiplies bfloat16 in float32, at the fp32 peak).
std::optional<double> cpu_bf16_peak_flops(int threads);
// The highest clock seen: the higher of the clock the OS reports (sysfs, else /proc/cpuinfo)
// and the one measured on the calling core (a dependent chain of register adds, one per
// cycle, about 20 ms the first time), raised by every remeasure_cpu_clock_hz().
std::optional<double> cpu_clock_hz();
// Measures the clock again now (about 20 ms) and keeps the higher of it and every earlier
// figure; returns the new cpu_clock_hz(). For the end of a long run (ember-bench, ember
// train's summary): a VM's cores change speed during it, and the peak must stay a ceiling.
std::optional<double> remeasure_cpu_clock_hz();

}  // namespace ember::profiler

// Opens a RecordScope named `name` for the rest of the enclosing block, with the op's tensor
// inputs (Tensor, std::vector<Tensor> or std::optional<Tensor>).
#define EMBER_RECORD_FUNCTION(name, ...) \
  const ::ember::profiler::RecordScope ember_record_function_scope_(name __VA_OPT__(, ) __VA_ARGS__)
// The same for a view op, whose inputs are not read.
#define EMBER_RECORD_VIEW(name, ...)                                                                  \
  const ::ember::profiler::RecordScope ember_record_function_scope_(::ember::profiler::RecordScope::kView, \
                                                                    name __VA_OPT__(, ) __VA_ARGS__)
