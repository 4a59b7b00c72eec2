// tests/nn/test_profiler.cpp — the op profiler (core/profiler.h) on known op sequences: which
// events it records, how they nest, the FLOPs, bytes and allocations it attributes, the
// table, the Chrome trace's schema, thread tracks, and that it records nothing when off.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/profiler.h>
#include <ember/ember.h>

#include "profile_table.h"
#include "test_support.h"

using namespace ember;
using ember::profiler::Event;
using ember::profiler::EventKind;
using ember::profiler::Profile;
using ember::profiler::ProfileGuard;

namespace {

std::vector<const Event*> named(const Profile& profile, const std::string& name) {
  std::vector<const Event*> found;
  for (const Event& event : profile.events) {
    if (event.name == name) found.push_back(&event);
  }
  return found;
}

std::int64_t calls_of(const Profile& profile, const std::string& name) {
  for (const profiler::Average& row : profile.key_averages()) {
    if (row.name == name) return row.calls;
  }
  return 0;
}

// The events directly inside `parent` on its thread.
std::vector<const Event*> children(const Profile& profile, const Event& parent) {
  std::vector<const Event*> found;
  for (const Event& event : profile.events) {
    if (event.thread == parent.thread && event.depth == parent.depth + 1 && event.start_ns >= parent.start_ns &&
        event.start_ns + event.duration_ns <= parent.start_ns + parent.duration_ns) {
      found.push_back(&event);
    }
  }
  return found;
}

}  // namespace

TEST_CASE("profiler: a forward and backward pass records each op and each node once, linked by sequence number") {
  manual_seed(0);
  Tensor x = randn({4, 3}).requires_grad_();
  Tensor w = randn({3, 5}).requires_grad_();
  ProfileGuard guard;
  Tensor loss = ember::sum(ember::relu(ember::mm(x, w)));
  loss.backward();
  const Profile profile = guard.stop();

  // mm: one in the forward, two in MmBackward0 (dx = g wᵀ, dw = xᵀ g), each taking its
  // transpose as strides: no t() view is made (autograd/linalg_ops.cpp).
  CHECK(calls_of(profile, "mm") == 3);
  CHECK(calls_of(profile, "t") == 0);
  CHECK(calls_of(profile, "relu") == 1);
  CHECK(calls_of(profile, "sum") == 1);
  CHECK(calls_of(profile, "backward") == 1);
  CHECK(calls_of(profile, "SumBackward0") == 1);
  CHECK(calls_of(profile, "ReluBackward0") == 1);
  CHECK(calls_of(profile, "MmBackward0") == 1);
  CHECK(calls_of(profile, "AccumulateGrad") == 2);

  const Event& forward_mm = *named(profile, "mm").front();
  CHECK(forward_mm.kind == EventKind::Op);
  CHECK(forward_mm.depth == 0);
  CHECK(forward_mm.autograd_node == "MmBackward0");
  CHECK(forward_mm.input_sizes == std::vector<std::vector<std::int64_t>>{{4, 3}, {3, 5}});
  CHECK(forward_mm.input_dtypes == std::vector<std::string>{"float32", "float32"});
  CHECK(forward_mm.device == "cpu");
  CHECK(forward_mm.flops == 2.0 * 4 * 3 * 5);
  CHECK(forward_mm.input_bytes == (12 + 15) * 4);
  CHECK(forward_mm.self_allocated_bytes == 4 * 5 * 4);  // its output
  CHECK(forward_mm.allocations == 1);

  const Event& node = *named(profile, "MmBackward0").front();
  CHECK(node.kind == EventKind::Backward);
  CHECK(node.sequence_nr == forward_mm.sequence_nr);
  CHECK(node.sequence_nr >= 0);
  // The node's formula ran two mm inside it, each with its FLOPs.
  std::int64_t nested_mm = 0;
  for (const Event* child : children(profile, node)) {
    if (child->name == "mm") {
      ++nested_mm;
      CHECK(child->flops == 2.0 * 4 * 3 * 5);
      // Listed with the shapes of the product it is: g [4, 5] · wᵀ [5, 3], or xᵀ [3, 4] · g [4, 5].
      CHECK((child->input_sizes == std::vector<std::vector<std::int64_t>>{{4, 5}, {5, 3}} ||
             child->input_sizes == std::vector<std::vector<std::int64_t>>{{3, 4}, {4, 5}}));
    }
  }
  CHECK(nested_mm == 2);
  // Every backward node sits inside the "backward" annotation.
  const Event& backward = *named(profile, "backward").front();
  CHECK(backward.kind == EventKind::Annotation);
  CHECK(node.depth > backward.depth);
}

TEST_CASE("profiler: nested events: self time excludes the children, totals and allocations include them") {
  nn::Linear layer(8, 4);
  Tensor x = randn({16, 8});
  ProfileGuard guard;
  Tensor y = layer.forward(x);
  const Profile profile = guard.stop();

  const std::vector<const Event*> linear = named(profile, "linear");
  REQUIRE(linear.size() == 1);
  const std::vector<const Event*> inside = children(profile, *linear.front());
  std::int64_t children_ns = 0, children_allocated = 0;
  bool has_addmm = false;
  for (const Event* child : inside) {
    children_ns += child->duration_ns;
    children_allocated += child->allocated_bytes;
    has_addmm = has_addmm || child->name == "addmm";
  }
  CHECK(has_addmm);
  CHECK(linear.front()->self_ns == linear.front()->duration_ns - children_ns);
  CHECK(linear.front()->allocated_bytes == linear.front()->self_allocated_bytes + children_allocated);
  CHECK(linear.front()->allocated_bytes >= 16 * 4 * 4);
  const Event& addmm = *named(profile, "addmm").front();
  CHECK(addmm.flops == 2.0 * 16 * 8 * 4);
  for (const Event& event : profile.events) {
    CHECK(event.self_ns <= event.duration_ns);
    CHECK(event.self_ns >= 0);
  }
  CHECK(profile.peak_memory_bytes.at("cpu") >= 16 * 4 * 4);
}

TEST_CASE("profiler: views read nothing; an annotation inside one of its own name counts its time once") {
  Tensor x = randn({3, 4});
  ProfileGuard guard;
  Tensor v = x.view({12});
  Tensor c = ember::contiguous(x.t());
  {
    const profiler::RecordScope outer(EventKind::Annotation, "block");
    const profiler::RecordScope inner(EventKind::Annotation, "block");
  }
  const Profile profile = guard.stop();
  const Event& view = *named(profile, "view").front();
  CHECK(view.input_bytes == 0);
  CHECK(view.self_allocated_bytes == 0);
  const Event& copy = *named(profile, "contiguous").front();
  CHECK(copy.input_bytes == 12 * 4);
  CHECK(copy.allocated_bytes == 12 * 4);

  const std::vector<const Event*> blocks = named(profile, "block");
  REQUIRE(blocks.size() == 2);
  for (const profiler::Average& row : profile.key_averages()) {
    if (row.name != "block") continue;
    CHECK(row.calls == 2);
    CHECK(row.total_ns == blocks[0]->duration_ns);  // the outer one's
    CHECK(row.self_ns == blocks[0]->self_ns + blocks[1]->self_ns);
  }
}

TEST_CASE("profiler: convolution and attention report their FLOPs") {
  Tensor input = randn({2, 3, 8, 8}), weight = randn({4, 3, 3, 3});
  Tensor query = randn({2, 2, 5, 4}), key = randn({2, 2, 5, 4}), value = randn({2, 2, 5, 6});
  ProfileGuard guard;
  Tensor out = ember::conv2d(input, weight, Tensor(), 1, 1);
  auto [attended, logsumexp] = ember::scaled_dot_product_flash_attention(query, key, value, /*is_causal=*/true);
  const Profile profile = guard.stop();
  // Each of the 2·4·8·8 outputs sums 3·3·3 products.
  CHECK(named(profile, "conv2d").front()->flops == 2.0 * (2 * 4 * 8 * 8) * (3 * 3 * 3));
  // Causal over 5 queries and 5 keys: 1+2+3+4+5 = 15 pairs per (batch, head), each a
  // 4-long dot product (QKᵀ) and a 6-long weighted sum (PV).
  CHECK(named(profile, "scaled_dot_product_flash_attention").front()->flops == 2.0 * (2 * 2 * 15) * (4 + 6));
}

TEST_CASE("profiler: off, nothing is recorded; one profile at a time; a stopped guard returns nothing more") {
  Tensor x = randn({4, 4});
  Tensor before = ember::exp(x);  // no profile running
  ProfileGuard guard;
  CHECK_THROWS_AS(ProfileGuard(), ValueError);
  Tensor during = ember::tanh(x);
  const Profile profile = guard.stop();
  Tensor after = ember::sigmoid(x);
  CHECK(calls_of(profile, "exp") == 0);
  CHECK(calls_of(profile, "tanh") == 1);
  CHECK(calls_of(profile, "sigmoid") == 0);
  CHECK(guard.stop().events.empty());
  CHECK_FALSE(profiler::is_enabled());
  ProfileGuard second;  // the first one is stopped: a new profile may start
  Tensor again = ember::tanh(x);
  const Profile next = second.stop();
  CHECK(calls_of(next, "tanh") == 1);
  CHECK(calls_of(next, "exp") == 0);
}

TEST_CASE("profiler: each thread records on its own named track, the DataLoader's workers included") {
  Tensor data = randn({8, 2}), targets = arange(8);
  data::DataLoaderOptions options;
  options.batch_size = 4;
  options.num_workers = 2;
  data::DataLoader loader(std::make_shared<data::TensorDataset>(data, targets), options);

  ProfileGuard guard;
  std::thread helper([&] {
    profiler::set_thread_name("helper");
    Tensor y = ember::neg(data);
  });
  helper.join();
  std::int64_t batches = 0;
  for (const data::Example& batch : loader) batches += batch.data.size(0) > 0 ? 1 : 0;
  const Profile profile = guard.stop();
  REQUIRE(batches == 2);

  auto track = [&](const std::string& name) {
    return static_cast<std::uint32_t>(std::find(profile.thread_names.begin(), profile.thread_names.end(), name) -
                                      profile.thread_names.begin());
  };
  const std::uint32_t main = track("main"), helper_track = track("helper");
  REQUIRE(main < profile.thread_names.size());
  REQUIRE(helper_track < profile.thread_names.size());
  CHECK(named(profile, "neg").front()->thread == helper_track);
  CHECK(named(profile, "DataLoader.next").size() == 2);
  for (const Event* next : named(profile, "DataLoader.next")) CHECK(next->thread == main);
  // The batches were loaded on the workers' tracks.
  const std::vector<const Event*> loads = named(profile, "DataLoader.load_batch");
  CHECK(loads.size() == 2);
  for (const Event* load : loads) CHECK(profile.thread_names[load->thread].rfind("DataLoader worker ", 0) == 0);
}

TEST_CASE("profiler: the table has a row per op with its calls, and the peak columns when given a peak") {
  Tensor a = randn({6, 6}), b = randn({6, 7});
  ProfileGuard guard;
  for (int i = 0; i < 3; ++i) Tensor c = ember::mm(a, b);
  Tensor d = ember::mm(b.t(), a);
  const Profile profile = guard.stop();

  const std::string text = profile.table();
  CHECK(ember::testing::profile_table_calls(text, "mm") == "4");
  CHECK(text.find("GFLOP/s") != std::string::npos);
  CHECK(text.find("% peak") == std::string::npos);
  profiler::TableOptions with_peak;
  with_peak.peak_flops_per_second = 1e12;
  CHECK(profile.table(with_peak).find("% peak") != std::string::npos);

  // Grouped by input shapes, the two kinds of mm are two rows.
  std::int64_t mm_rows = 0;
  for (const profiler::Average& row : profile.key_averages(/*group_by_input_shape=*/true)) {
    if (row.name != "mm") continue;
    ++mm_rows;
    CHECK((row.input_shapes == "[[6, 6], [6, 7]]" ? row.calls == 3 : row.input_shapes == "[[7, 6], [6, 6]]"));
  }
  CHECK(mm_rows == 2);
}

TEST_CASE("profiler: the Chrome trace is JSON with a named track per thread and one complete event per record") {
  Tensor x = randn({5, 5}).requires_grad_();
  ProfileGuard guard;
  ember::sum(ember::mul(x, x)).backward();
  const Profile profile = guard.stop();
  const nlohmann::json trace = nlohmann::json::parse(profile.chrome_trace());
  REQUIRE(trace.at("traceEvents").is_array());
  std::size_t complete = 0, thread_names = 0;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    const std::string phase = event.at("ph");
    CHECK(event.at("pid").is_number_integer());
    CHECK(event.at("tid").is_number_integer());
    if (phase == "M") {
      CHECK(event.at("name") == "thread_name");
      CHECK(event.at("args").at("name").is_string());
      ++thread_names;
      continue;
    }
    REQUIRE(phase == "X");
    ++complete;
    CHECK(event.at("name").is_string());
    CHECK(event.at("ts").is_number());
    CHECK(event.at("dur").get<double>() >= 0);
    CHECK(event.at("args").at("Input Dims").is_array());
    CHECK(event.at("args").at("Input type").is_array());
  }
  CHECK(complete == profile.events.size());
  CHECK(thread_names == profile.thread_names.size());
  CHECK(trace.at("peakMemoryBytes").at("cpu").is_number_integer());
}

TEST_CASE("profiler: the CPU's computed fp32 peak scales with the threads") {
  const std::optional<double> one = profiler::cpu_fp32_peak_flops(1);
  if (!one) EMBER_SKIP("the CPU clock is not readable here");
  CHECK(*one >= 1e9);  // at least 1 GFLOP/s per core: a 4-lane FMA at 125 MHz
  CHECK(profiler::cpu_fp32_peak_flops(4).value() == Approx(4 * *one));
  CHECK_FALSE(profiler::cpu_fp32_peak_flops(0).has_value());
}

TEST_CASE("profiler: the CPU's bfloat16 peak is AMX's where the GEMM uses it, else twice the fp32 one with AVX512-BF16, absent without") {
  const std::optional<double> fp32 = profiler::cpu_fp32_peak_flops(2);
  if (!fp32) EMBER_SKIP("the CPU clock is not readable here");
  __builtin_cpu_init();
  if (cpu::amx_bfloat16_usable()) {
    // AMX tiles: 1024 FLOPs a cycle per core.
    CHECK(profiler::cpu_bf16_peak_flops(2).value() == Approx(2 * 1024.0 * profiler::cpu_clock_hz().value()));
  } else if (__builtin_cpu_supports("avx512bf16")) {
    CHECK(profiler::cpu_bf16_peak_flops(2).value() == Approx(2 * *fp32));
  } else {
    CHECK_FALSE(profiler::cpu_bf16_peak_flops(2).has_value());
  }
}

TEST_CASE("profiler: the measured clock is a clock a CPU can run at") {
  // The measurement is a chain of dependent register adds; a chain a core can shorten (Golden
  // Cove folds adds of small constants in its renamer) reads several times too fast. No x86
  // CPU has run at 7 GHz outside overclocking records.
  const std::optional<double> hz = profiler::cpu_clock_hz();
  if (!hz) EMBER_SKIP("the CPU clock is not readable here");
  CHECK(*hz > 1e8);
  CHECK(*hz < 7e9);
}

TEST_CASE("profiler: measuring the clock again keeps the highest clock seen and the peak follows it") {
  // A VM's core changes speed during a run; a later, slower measurement must not lower the
  // peak (it would no longer be a ceiling), and the peaks are computed from the clock kept.
  const std::optional<double> first = profiler::cpu_clock_hz();
  if (!first) EMBER_SKIP("the CPU clock is not readable here");
  for (int i = 0; i < 3; ++i) {
    const std::optional<double> again = profiler::remeasure_cpu_clock_hz();
    REQUIRE(again.has_value());
    CHECK(*again >= *first);
    CHECK(*again == profiler::cpu_clock_hz().value());
    CHECK(*again < 7e9);
  }
  const double hz = profiler::cpu_clock_hz().value();
  const std::optional<double> peak = profiler::cpu_fp32_peak_flops(1);
  REQUIRE(peak.has_value());
  const double flops_per_cycle = *peak / hz;  // 2 FMA units x lanes x 2: 16, 32 or 64
  CHECK((flops_per_cycle == Approx(16) || flops_per_cycle == Approx(32) || flops_per_cycle == Approx(64)));
}

TEST_CASE("profiler: numbered blocks share one row, whose average is the time per block") {
  ProfileGuard guard;
  for (int step = 1; step <= 3; ++step) {
    const std::string label = "ProfilerStep#" + std::to_string(step);
    const profiler::RecordScope block(EventKind::Annotation, label.c_str());
    Tensor y = ember::exp(randn({4}));
  }
  const Profile profile = guard.stop();
  CHECK(named(profile, "ProfilerStep#2").size() == 1);  // the events keep their numbers
  std::int64_t rows = 0;
  for (const profiler::Average& row : profile.key_averages()) {
    if (row.name.rfind("ProfilerStep#", 0) != 0) continue;
    ++rows;
    CHECK(row.name == "ProfilerStep#*");
    CHECK(row.calls == 3);
  }
  CHECK(rows == 1);
}

TEST_CASE("profiler: events with GPU times get CUDA columns in the table and a GPU track in the trace") {
  // A profile as stop() leaves one after ops on cuda:0 (made by hand: no GPU here).
  Profile profile;
  profile.thread_names = {"main"};
  profile.duration_ns = 50'000;
  Event outer;
  outer.name = "linear";
  outer.device = "cuda:0";
  outer.duration_ns = 20'000;
  outer.self_ns = 5'000;
  outer.gpu = 0;
  outer.device_ns = 12'000;
  outer.device_self_ns = 2'000;
  outer.device_start_ns = 1'500;
  Event inner = outer;
  inner.name = "addmm";
  inner.depth = 1;
  inner.start_ns = 1'000;
  inner.duration_ns = 15'000;
  inner.self_ns = 15'000;
  inner.device_ns = 10'000;
  inner.device_self_ns = 10'000;
  inner.device_start_ns = 3'500;
  Event host;  // a CPU op beside them: no device time
  host.name = "item";
  host.start_ns = 30'000;
  host.duration_ns = 1'000;
  host.self_ns = 1'000;
  profile.events = {outer, inner, host};

  const std::string text = profile.table();
  CHECK(text.find("CUDA self") != std::string::npos);
  CHECK(text.find("CUDA total") != std::string::npos);
  for (const profiler::Average& row : profile.key_averages()) {
    if (row.name == "addmm") CHECK((row.on_device && row.device_self_ns == 10'000 && row.device_total_ns == 10'000));
    if (row.name == "linear") CHECK((row.on_device && row.device_self_ns == 2'000 && row.device_total_ns == 12'000));
    if (row.name == "item") CHECK_FALSE(row.on_device);
  }

  const nlohmann::json trace = nlohmann::json::parse(profile.chrome_trace());
  std::int64_t gpu_track = -1;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    if (event.at("ph") == "M" && event.at("args").at("name") == "CUDA stream (cuda:0)") gpu_track = event.at("tid");
  }
  REQUIRE(gpu_track == 1);  // after the one thread's track
  std::size_t on_gpu = 0;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    if (event.at("ph") != "X" || event.at("tid") != gpu_track) continue;
    ++on_gpu;
    CHECK(event.at("cat") == "gpu");
    if (event.at("name") == "addmm") {
      CHECK(event.at("ts").get<double>() == Approx(3.5));   // microseconds
      CHECK(event.at("dur").get<double>() == Approx(10.0));
    }
  }
  CHECK(on_gpu == 2);
}

TEST_CASE("profiler: a scope left open across a restart is dropped, never closed on the new profile's events") {
  auto first = std::make_unique<ProfileGuard>();
  auto straddling = std::make_unique<profiler::RecordScope>(EventKind::Annotation, "straddling");
  first->stop();
  ProfileGuard second;
  {
    const profiler::RecordScope outer(EventKind::Annotation, "outer");
    straddling.reset();  // ends while the new profile's "outer" is open on this thread
    Tensor y = ember::exp(randn({3}));
  }
  const Profile profile = second.stop();
  CHECK(named(profile, "straddling").empty());
  REQUIRE(named(profile, "outer").size() == 1);
  REQUIRE(named(profile, "exp").size() == 1);
  const Event& outer = *named(profile, "outer").front();
  const Event& exp = *named(profile, "exp").front();
  CHECK(exp.depth == outer.depth + 1);  // still inside "outer": its scope was not closed early
  CHECK(exp.start_ns + exp.duration_ns <= outer.start_ns + outer.duration_ns);
}
