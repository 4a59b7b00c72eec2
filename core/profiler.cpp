// core/profiler.cpp — recording: per-thread event buffers, scopes, FLOPs and memory.
//
// Each thread that records gets a buffer (its events and its stack of open events) the first
// time it opens a scope while a profile runs. Only that thread and stop() touch a buffer, so
// its mutex is never contended while recording. A profile has a generation number; a buffer
// holding another generation's events is cleared before it records again, and a scope that
// ends after its profile stopped is dropped.
//
// The report (key_averages, table, Chrome trace) is core/profiler_report.cpp; the CPU's
// computed peak is core/cpu_peak.cpp.
#include <ember/core/profiler.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include <ember/core/cpu_allocator.h>
#include <ember/core/cuda_hooks.h>
#include <ember/core/error.h>

namespace ember::profiler {

namespace detail {
std::atomic<bool> enabled{false};
}  // namespace detail

const char* kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Op: return "op";
    case EventKind::Backward: return "backward";
    case EventKind::Annotation: return "annotation";
  }
  return "op";
}

namespace {

using Clock = std::chrono::steady_clock;

struct OpenEvent {
  std::size_t index;               // into ThreadBuffer::events
  std::int64_t child_ns = 0;       // time of the events closed directly inside it
  std::int64_t child_allocated = 0;
};

// The CUDA events around an event on a GPU (Event::gpu), resolved into times at stop().
struct GpuMarks {
  std::size_t index;  // into ThreadBuffer::events
  int device;
  void* start;
  void* end = nullptr;
};

void destroy_marks(std::vector<GpuMarks>& marks) {
  for (const GpuMarks& mark : marks) {
    cuda::destroy_timing_event(mark.start);
    cuda::destroy_timing_event(mark.end);
  }
  marks.clear();
}

struct ThreadBuffer {
  std::mutex mutex;
  std::thread::id id = std::this_thread::get_id();
  std::string name;                // set_thread_name's, "" for none
  std::uint64_t generation = 0;    // the profile its events belong to (0: none)
  std::vector<Event> events;
  std::vector<OpenEvent> open;
  std::vector<GpuMarks> marks;
};

struct Session {
  std::mutex mutex;  // buffers, the memory counters, starting and stopping
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  std::atomic<std::uint64_t> generation{0};  // the running (or last) profile's
  std::atomic<std::int64_t> start_ns{0};     // Clock's time at its start
  std::atomic<bool> record_shapes{true};  // the running profile's ProfileOptions
  std::thread::id starter;
  std::map<std::string, std::int64_t> live_bytes, peak_bytes;
  // Per GPU, an event recorded at the start after the device went idle, and the profile
  // clock's time then: a GPU time measured from it lands on the same clock as the CPU's.
  std::map<int, std::pair<void*, std::int64_t>> anchors;
};

// Never destroyed: a thread (or EMBER_PROFILE's report at exit) may still reach it while
// other statics are torn down.
Session& session() {
  static Session* instance = new Session;
  return *instance;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Set when the thread's buffer handle is destroyed at the thread's exit: a tensor freed later
// in that exit (or, on the main thread, by a static destructor) records nothing. A bool has no
// destructor, so it can still be read then.
thread_local bool buffer_released = false;

struct BufferHandle {
  std::shared_ptr<ThreadBuffer> buffer;
  ~BufferHandle() { buffer_released = true; }
};

// The calling thread's buffer, made and registered on first use; nullptr once the thread is
// exiting.
ThreadBuffer* this_thread_buffer() {
  if (buffer_released) return nullptr;
  thread_local BufferHandle handle;
  if (!handle.buffer) {
    handle.buffer = std::make_shared<ThreadBuffer>();
    Session& s = session();
    std::lock_guard lock(s.mutex);
    // Threads that ended since (DataLoader workers come and go each epoch) leave buffers only
    // the registry holds; outside a profile they hold nothing to keep.
    if (!detail::enabled.load(std::memory_order_relaxed)) {
      std::erase_if(s.buffers, [](const std::shared_ptr<ThreadBuffer>& old) { return old.use_count() == 1; });
    }
    s.buffers.push_back(handle.buffer);
  }
  return handle.buffer.get();
}

// Called with the buffer's lock held: starts the running profile's events.
void join_current_profile(ThreadBuffer& buffer, std::uint64_t generation) {
  if (buffer.generation == generation) return;
  buffer.generation = generation;
  buffer.events.clear();
  buffer.open.clear();
  destroy_marks(buffer.marks);
}

// "cuda:3" -> 3; -1 for any other device.
int cuda_index(const std::string& device) {
  if (device.rfind("cuda:", 0) != 0) return -1;
  try {
    return std::stoi(device.substr(5));
  } catch (const std::exception&) {
    return -1;
  }
}

// The events' device times from their marks, while `events` still has the buffer's indices.
void resolve_marks(std::vector<Event>& events, std::vector<GpuMarks>& marks,
                   const std::map<int, std::pair<void*, std::int64_t>>& anchors) {
  for (const GpuMarks& mark : marks) {
    Event& event = events[mark.index];
    try {
      const std::optional<double> span = cuda::elapsed_milliseconds(mark.start, mark.end);
      if (!span) continue;
      event.device_ns = static_cast<std::int64_t>(*span * 1e6);
      if (auto anchor = anchors.find(mark.device); anchor != anchors.end()) {
        if (const std::optional<double> since = cuda::elapsed_milliseconds(anchor->second.first, mark.start)) {
          event.device_start_ns = anchor->second.second + static_cast<std::int64_t>(*since * 1e6);
        }
      }
    } catch (const std::exception&) {
      event.device_ns = -1;  // the device failed: the CPU times stand alone
    }
  }
  destroy_marks(marks);
}

// device_self_ns: each event's device time minus its children's, over `events` sorted by
// thread and start.
void subtract_nested_device_time(std::vector<Event>& events) {
  std::vector<Event*> enclosing;
  std::vector<std::int64_t> children_ns;  // device time of the events closed inside each
  auto close_to = [&](std::size_t depth) {
    while (enclosing.size() > depth) {
      Event* done = enclosing.back();
      if (done->device_ns >= 0) done->device_self_ns = std::max<std::int64_t>(0, done->device_ns - children_ns.back());
      enclosing.pop_back();
      children_ns.pop_back();
    }
  };
  std::uint32_t thread = UINT32_MAX;
  for (Event& event : events) {
    if (event.thread != thread) {
      close_to(0);
      thread = event.thread;
    }
    close_to(static_cast<std::size_t>(event.depth));
    if (!children_ns.empty() && event.device_ns >= 0) children_ns.back() += event.device_ns;
    enclosing.push_back(&event);
    children_ns.push_back(0);
  }
  close_to(0);
}

}  // namespace

namespace detail {

std::uint64_t begin_scope(const char* name, EventKind kind, const Tensor* const* inputs, std::size_t count,
                          bool is_view) {
  Session& s = session();
  const std::uint64_t generation = s.generation.load(std::memory_order_acquire);
  const std::int64_t start = now_ns() - s.start_ns.load(std::memory_order_relaxed);
  ThreadBuffer* found = this_thread_buffer();
  if (found == nullptr || generation == 0) return 0;
  ThreadBuffer& buffer = *found;
  std::lock_guard lock(buffer.mutex);
  join_current_profile(buffer, generation);
  // An overload forwarding to another of the same name (add(Tensor, Scalar) -> add) is one call.
  if (kind == EventKind::Op && !buffer.open.empty() && buffer.events[buffer.open.back().index].name == name) {
    return 0;
  }
  Event event;
  event.name = name;
  event.kind = kind;
  event.start_ns = start;
  event.duration_ns = -1;  // open
  event.depth = static_cast<std::int32_t>(buffer.open.size());
  for (std::size_t i = 0; i < count; ++i) {
    const Tensor& tensor = *inputs[i];
    if (s.record_shapes.load(std::memory_order_relaxed)) {
      event.input_sizes.emplace_back(tensor.defined() ? std::vector<std::int64_t>(tensor.sizes().begin(), tensor.sizes().end()) : std::vector<std::int64_t>{});
      event.input_dtypes.push_back(tensor.defined() ? dtype_name(tensor.dtype()) : std::string());
    }
    if (!tensor.defined()) continue;
    if (event.device.empty()) event.device = tensor.device().str();
    if (!is_view) event.input_bytes += tensor.numel() * static_cast<std::int64_t>(tensor.element_size());
  }
  // On a GPU: an event on the device's stream before the op launches anything.
  const int device = cuda_index(event.device);
  void* gpu_start = device >= 0 ? cuda::record_timing_event(device) : nullptr;
  if (gpu_start != nullptr) event.gpu = device;
  buffer.events.push_back(std::move(event));
  buffer.open.push_back(OpenEvent{buffer.events.size() - 1});
  if (gpu_start != nullptr) buffer.marks.push_back(GpuMarks{buffer.events.size() - 1, device, gpu_start});
  return generation;
}

void end_scope(std::uint64_t generation) {
  Session& s = session();
  const std::int64_t end = now_ns() - s.start_ns.load(std::memory_order_relaxed);
  ThreadBuffer* found = this_thread_buffer();
  if (found == nullptr) return;
  ThreadBuffer& buffer = *found;
  std::lock_guard lock(buffer.mutex);
  // The profile stopped (and perhaps another started, whose events this thread may already
  // be recording) since this scope opened: its buffer was harvested or cleared, and the
  // scope is dropped.
  if (buffer.generation != generation || generation != s.generation.load(std::memory_order_acquire) ||
      buffer.open.empty()) {
    return;
  }
  const OpenEvent closing = buffer.open.back();
  buffer.open.pop_back();
  Event& event = buffer.events[closing.index];
  event.duration_ns = std::max<std::int64_t>(0, end - event.start_ns);
  event.self_ns = std::max<std::int64_t>(0, event.duration_ns - closing.child_ns);
  event.allocated_bytes = event.self_allocated_bytes + closing.child_allocated;
  if (event.gpu >= 0) {  // and one after everything it launched
    for (auto mark = buffer.marks.rbegin(); mark != buffer.marks.rend(); ++mark) {
      if (mark->index != closing.index) continue;
      mark->end = cuda::record_timing_event(mark->device);
      break;
    }
  }
  if (!buffer.open.empty()) {
    buffer.open.back().child_ns += event.duration_ns;
    buffer.open.back().child_allocated += event.allocated_bytes;
  }
}

void add_flops_slow(double flops) {
  ThreadBuffer* found = this_thread_buffer();
  if (found == nullptr) return;
  ThreadBuffer& buffer = *found;
  std::lock_guard lock(buffer.mutex);
  if (buffer.generation != session().generation.load(std::memory_order_acquire) || buffer.open.empty()) return;
  buffer.events[buffer.open.back().index].flops += flops;
}

void note_recorded_node_slow(const std::string& name, std::uint64_t sequence_nr) {
  ThreadBuffer* found = this_thread_buffer();
  if (found == nullptr) return;
  ThreadBuffer& buffer = *found;
  std::lock_guard lock(buffer.mutex);
  if (buffer.generation != session().generation.load(std::memory_order_acquire) || buffer.open.empty()) return;
  Event& event = buffer.events[buffer.open.back().index];
  if (event.sequence_nr >= 0) return;  // the first node an op records is the one it made
  event.sequence_nr = static_cast<std::int64_t>(sequence_nr);
  event.autograd_node = name;
}

void record_allocation_slow(Device device, std::int64_t bytes) {
  Session& s = session();
  {
    std::lock_guard lock(s.mutex);
    const std::string key = device.str();
    std::int64_t& live = s.live_bytes[key];
    live += bytes;
    std::int64_t& peak = s.peak_bytes[key];
    peak = std::max(peak, live);
  }
  if (bytes <= 0) return;
  ThreadBuffer* found = this_thread_buffer();
  if (found == nullptr) return;
  ThreadBuffer& buffer = *found;
  std::lock_guard lock(buffer.mutex);
  if (buffer.generation != s.generation.load(std::memory_order_acquire) || buffer.open.empty()) return;
  Event& event = buffer.events[buffer.open.back().index];
  event.self_allocated_bytes += bytes;
  event.allocations += 1;
}

}  // namespace detail

void set_thread_name(std::string name) {
  ThreadBuffer* found = this_thread_buffer();
  if (found == nullptr) return;
  ThreadBuffer& buffer = *found;
  std::lock_guard lock(buffer.mutex);
  buffer.name = std::move(name);
}

ProfileGuard::ProfileGuard(ProfileOptions options) {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  EMBER_CHECK(!detail::enabled.load(), ValueError,
              "a profile is already being recorded (one at a time; is EMBER_PROFILE set?)");
  s.record_shapes.store(options.record_shapes, std::memory_order_relaxed);
  s.starter = std::this_thread::get_id();
  // Live tensor bytes start from what is allocated now, so the peak is the process's.
  s.live_bytes.clear();
  s.live_bytes["cpu"] = static_cast<std::int64_t>(cpu::memory_stats().allocated_bytes);
  for (int device = 0; device < cuda::device_count(); ++device) {
    s.live_bytes["cuda:" + std::to_string(device)] = static_cast<std::int64_t>(cuda::memory_allocated(device));
  }
  s.peak_bytes = s.live_bytes;
  s.start_ns.store(now_ns(), std::memory_order_relaxed);
  // Each GPU's anchor, once the device has finished what it was doing. A device that fails
  // here still times its ops, without a place on the GPU tracks.
  for (auto& [device, anchor] : s.anchors) cuda::destroy_timing_event(anchor.first);
  s.anchors.clear();
  for (int device = 0; device < cuda::device_count(); ++device) {
    try {
      const int current = cuda::current_device();
      cuda::set_device(device);
      cuda::synchronize();
      cuda::set_device(current);
      if (void* anchor = cuda::record_timing_event(device)) {
        s.anchors[device] = {anchor, now_ns() - s.start_ns.load(std::memory_order_relaxed)};
      }
    } catch (const std::exception&) {
    }
  }
  s.generation.fetch_add(1, std::memory_order_acq_rel);
  detail::enabled.store(true, std::memory_order_release);
  recording_ = true;
}

ProfileGuard::~ProfileGuard() {
  if (recording_) stop();
}

Profile ProfileGuard::stop() {
  Profile profile;
  if (!recording_) return profile;
  recording_ = false;
  detail::enabled.store(false, std::memory_order_release);
  Session& s = session();
  std::lock_guard lock(s.mutex);
  const std::uint64_t generation = s.generation.load();
  profile.duration_ns = now_ns() - s.start_ns.load();
  std::size_t unnamed = 0;
  for (const std::shared_ptr<ThreadBuffer>& buffer : s.buffers) {
    std::lock_guard buffer_lock(buffer->mutex);
    if (buffer->generation != generation) continue;
    buffer->generation = 0;  // a scope still open ends without touching these events
    resolve_marks(buffer->events, buffer->marks, s.anchors);  // one wait per event, at the end
    std::vector<Event> events = std::move(buffer->events);
    buffer->events.clear();
    buffer->open.clear();
    const auto thread = static_cast<std::uint32_t>(profile.thread_names.size());
    bool any = false;
    for (Event& event : events) {
      if (event.duration_ns < 0) continue;  // still open at stop(): incomplete
      event.thread = thread;
      profile.events.push_back(std::move(event));
      any = true;
    }
    if (!any) continue;
    if (!buffer->name.empty()) profile.thread_names.push_back(buffer->name);
    else if (buffer->id == s.starter) profile.thread_names.push_back("main");
    else profile.thread_names.push_back("thread " + std::to_string(++unnamed));
  }
  // Buffers of threads that have ended (only the registry holds them) go.
  std::erase_if(s.buffers, [](const std::shared_ptr<ThreadBuffer>& buffer) { return buffer.use_count() == 1; });
  std::stable_sort(profile.events.begin(), profile.events.end(), [](const Event& a, const Event& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.start_ns < b.start_ns;
  });
  subtract_nested_device_time(profile.events);
  for (auto& [device, anchor] : s.anchors) cuda::destroy_timing_event(anchor.first);
  s.anchors.clear();
  for (const auto& [device, peak] : s.peak_bytes) profile.peak_memory_bytes[device] = std::max<std::int64_t>(0, peak);
  return profile;
}

namespace {

// The trace may only replace nothing, or an earlier trace: EMBER_PROFILE naming the run's
// data, a checkpoint or a device must not destroy it (IOError, and the file is left alone).
void check_replaceable(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error || status.type() == std::filesystem::file_type::not_found) return;
  EMBER_CHECK(status.type() == std::filesystem::file_type::regular, IOError, path,
              " is not a regular file; the trace was not written");
  std::ifstream file(path, std::ios::binary);
  std::string start(18, '\0');
  file.read(start.data(), static_cast<std::streamsize>(start.size()));
  start.resize(static_cast<std::size_t>(file.gcount()));
  EMBER_CHECK(start == "{\"displayTimeUnit\"", IOError, path,
              " exists and is not a trace ember wrote; it was not overwritten (choose another EMBER_PROFILE)");
}

// EMBER_PROFILE=FILE: the whole run is profiled; at exit the Chrome trace goes to FILE and
// the table to stderr.
struct EnvironmentProfile {
  std::unique_ptr<ProfileGuard> guard;
  std::string path;
  EnvironmentProfile() {
    const char* value = std::getenv("EMBER_PROFILE");
    if (value == nullptr || *value == '\0') return;
    path = value;
    guard = std::make_unique<ProfileGuard>();
  }
  ~EnvironmentProfile() {
    if (!guard) return;
    try {
      const Profile profile = guard->stop();
      check_replaceable(path);
      profile.export_chrome_trace(path);
      std::cerr << profile.table() << "ember: EMBER_PROFILE: trace written to " << path << "\n";
    } catch (const std::exception& error) {
      std::cerr << "ember: EMBER_PROFILE: " << error.what() << "\n";
    }
  }
};
const EnvironmentProfile environment_profile;

}  // namespace

}  // namespace ember::profiler
