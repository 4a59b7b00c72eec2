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

struct ThreadBuffer {
  std::mutex mutex;
  std::thread::id id = std::this_thread::get_id();
  std::string name;                // set_thread_name's, "" for none
  std::uint64_t generation = 0;    // the profile its events belong to (0: none)
  std::vector<Event> events;
  std::vector<OpenEvent> open;
};

struct Session {
  std::mutex mutex;  // buffers, the memory counters, starting and stopping
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  std::atomic<std::uint64_t> generation{0};  // the running (or last) profile's
  std::atomic<std::int64_t> start_ns{0};     // Clock's time at its start
  std::atomic<bool> record_shapes{true};  // the running profile's ProfileOptions
  std::thread::id starter;
  std::map<std::string, std::int64_t> live_bytes, peak_bytes;
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
}

}  // namespace

namespace detail {

bool begin_scope(const char* name, EventKind kind, const Tensor* const* inputs, std::size_t count, bool is_view) {
  Session& s = session();
  const std::uint64_t generation = s.generation.load(std::memory_order_acquire);
  const std::int64_t start = now_ns() - s.start_ns.load(std::memory_order_relaxed);
  ThreadBuffer* found = this_thread_buffer();
  if (found == nullptr) return false;
  ThreadBuffer& buffer = *found;
  std::lock_guard lock(buffer.mutex);
  join_current_profile(buffer, generation);
  // An overload forwarding to another of the same name (add(Tensor, Scalar) -> add) is one call.
  if (kind == EventKind::Op && !buffer.open.empty() && buffer.events[buffer.open.back().index].name == name) {
    return false;
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
  buffer.events.push_back(std::move(event));
  buffer.open.push_back(OpenEvent{buffer.events.size() - 1});
  return true;
}

void end_scope() {
  Session& s = session();
  const std::int64_t end = now_ns() - s.start_ns.load(std::memory_order_relaxed);
  ThreadBuffer* found = this_thread_buffer();
  if (found == nullptr) return;
  ThreadBuffer& buffer = *found;
  std::lock_guard lock(buffer.mutex);
  // The profile stopped (and perhaps another started) since this scope opened: its buffer
  // was harvested or cleared, and the scope is dropped.
  if (buffer.generation != s.generation.load(std::memory_order_acquire) || buffer.open.empty()) return;
  const OpenEvent closing = buffer.open.back();
  buffer.open.pop_back();
  Event& event = buffer.events[closing.index];
  event.duration_ns = std::max<std::int64_t>(0, end - event.start_ns);
  event.self_ns = std::max<std::int64_t>(0, event.duration_ns - closing.child_ns);
  event.allocated_bytes = event.self_allocated_bytes + closing.child_allocated;
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
  for (const auto& [device, peak] : s.peak_bytes) profile.peak_memory_bytes[device] = std::max<std::int64_t>(0, peak);
  return profile;
}

namespace {

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
