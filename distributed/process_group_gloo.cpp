// distributed/process_group_gloo.cpp — the CPU process group on Gloo (see process_group_gloo.h).
//
// Three ideas to read this file by:
//   1. Rendezvous: Gloo needs a gloo::rendezvous::Store; StoreAdapter forwards Gloo's
//      set/get/wait to our TCPStore, under a per-group key prefix.
//   2. Tags: Gloo matches the messages of a collective by a tag. Every rank issues the
//      same collectives in the same order, so a counter incremented per call gives every
//      rank the same tag for the same collective.
//   3. Tensors: Gloo works on raw contiguous buffers. A non-contiguous tensor is copied to
//      a contiguous one, reduced there, and copied back, so every collective is still
//      "in place" on the tensor the caller passed.
// Any Gloo exception (a peer closed the connection, or the timeout expired) is rethrown
// as DistributedError naming the operation, this rank, the time spent and the timeout; so is any failure
// of the rendezvous, including the TCPStore's own errors (rendezvous_error.h).
#include <ember/distributed/process_group_gloo.h>

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <type_traits>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/factories.h>
#include <ember/distributed/rendezvous_error.h>

namespace ember::distributed {
namespace {

class StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(std::shared_ptr<TCPStore> store, std::string prefix)
      : store_(std::move(store)), prefix_(std::move(prefix)) {}
  void set(const std::string& key, const std::vector<char>& data) override { store_->set(prefix_ + key, data); }
  std::vector<char> get(const std::string& key) override { return store_->get(prefix_ + key); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, store_->timeout()); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> prefixed;
    for (const auto& key : keys) prefixed.push_back(prefix_ + key);
    store_->wait(prefixed, timeout);
  }

 private:
  std::shared_ptr<TCPStore> store_;
  std::string prefix_;
};

using ReduceFunction = void (*)(void*, const void*, const void*, std::size_t);

// Gloo's sum/max/min for the 16-bit floats: each pair in float32, rounded to the dtype, as
// PyTorch's Gloo backend computes with c10::BFloat16 and c10::Half (max and min keep
// std::max's and std::min's choice, so a NaN in the first operand wins).
template <class T, class Combine>
void combine_16_bit(void* c, const void* a, const void* b, std::size_t n, Combine combine) {
  auto* out = static_cast<T*>(c);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) out[i] = combine(x[i], y[i]);
}
template <class T>
void sum_16_bit(void* c, const void* a, const void* b, std::size_t n) {
  combine_16_bit<T>(c, a, b, n, [](T x, T y) { return static_cast<T>(static_cast<float>(x) + static_cast<float>(y)); });
}
template <class T>
void max_16_bit(void* c, const void* a, const void* b, std::size_t n) {
  combine_16_bit<T>(c, a, b, n, [](T x, T y) { return static_cast<float>(x) < static_cast<float>(y) ? y : x; });
}
template <class T>
void min_16_bit(void* c, const void* a, const void* b, std::size_t n) {
  combine_16_bit<T>(c, a, b, n, [](T x, T y) { return static_cast<float>(y) < static_cast<float>(x) ? y : x; });
}

template <class T>
ReduceFunction reduce_function(ReduceOp op) {
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) {
    switch (op) {
      case ReduceOp::Max: return &max_16_bit<T>;
      case ReduceOp::Min: return &min_16_bit<T>;
      default: return &sum_16_bit<T>;
    }
  } else {
    switch (op) {
      case ReduceOp::Max: return &gloo::max<T>;
      case ReduceOp::Min: return &gloo::min<T>;
      default: return &gloo::sum<T>;  // Avg = Sum, then divided by the world size
    }
  }
}

// Calls body<T>() for the dtypes Gloo can carry; others are a DTypeError naming the op.
template <class Body>
void dispatch_collective_dtype(DType dtype, const char* operation, Body&& body) {
  switch (dtype) {
    case DType::Float32: body(float{}); break;
    case DType::Float64: body(double{}); break;
    case DType::Int64: body(std::int64_t{}); break;
    case DType::Int32: body(std::int32_t{}); break;
    case DType::BFloat16: body(BFloat16{}); break;
    case DType::Float16: body(Half{}); break;
    default:
      throw DTypeError(make_message(operation, ": unsupported dtype ", dtype_name(dtype),
                                    " (use float32, float64, bfloat16, float16, int64 or int32)"));
  }
}

void check_cpu(const Tensor& tensor, const char* operation) {
  EMBER_CHECK(tensor.defined(), ValueError, operation, ": got an undefined tensor");
  EMBER_CHECK(tensor.is_cpu(), DeviceError, operation, ": the gloo backend needs CPU tensors, got ",
              tensor.device().str());
}

// The contiguous tensor Gloo will read and write: `tensor` itself when possible.
Tensor contiguous_buffer(const Tensor& tensor) { return tensor.is_contiguous() ? tensor : tensor.contiguous(); }

// Copies a working buffer back into the caller's tensor when they are not the same.
void write_back(Tensor& tensor, const Tensor& buffer) {
  if (!buffer.is_same(tensor)) tensor.copy_(buffer);
  else tensor.bump_version();  // the data changed under autograd's feet: tell it
}

// A peer that died leaves a half-closed socket; writing to it raises SIGPIPE, whose default
// action kills the *survivor* silently before Gloo can report the error. Python (and so
// PyTorch) ignores SIGPIPE from the start; a C++ program must ask. Only the default action
// is replaced: a program that installed its own handler keeps it.
void ignore_broken_pipes() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, nullptr);
  }
}

}  // namespace

struct ProcessGroupGloo::State {
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::uint32_t next_tag = 0;
};

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<TCPStore> store, int rank, int size, Milliseconds timeout,
                                   const std::string& interface_address)
    : ProcessGroup(rank, size, timeout), state_(std::make_unique<State>()), store_(std::move(store)) {
  EMBER_CHECK(size >= 1, ValueError, "ProcessGroupGloo: world_size must be positive, got ", size);
  EMBER_CHECK(rank >= 0 && rank < size, ValueError, "Invalid rank ", rank, ", rank should be in the interval [0, ",
              size - 1, "]");
  ignore_broken_pipes();
  const auto started = std::chrono::steady_clock::now();  // errors report the time really spent
  // Every failure below — Gloo's own exceptions and the TCPStore's DistributedError alike
  // (the store is called from inside connectFullMesh through StoreAdapter) — becomes one
  // message naming this rank, the step and the timeout (rendezvous_error.h).
  const std::string joined_prefix = "ember/gloo/generation/";
  std::int64_t generation = 0;
  try {
    // A per-init generation number keeps two groups created over one store apart.
    generation = store_->add(joined_prefix + std::to_string(rank), 1);
  } catch (const std::exception& error) {
    throw_rendezvous_error("Gloo", rank, size, timeout, started, "registering with the store", error.what());
  }
  try {
    gloo::transport::tcp::attr attributes;
    attributes.hostname = interface_address;
    state_->device = gloo::transport::tcp::CreateDevice(attributes);
  } catch (const std::exception& error) {
    throw_rendezvous_error("Gloo", rank, size, timeout, started, "opening a TCP device on " + interface_address,
                           error.what());
  }
  try {
    state_->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    state_->context->setTimeout(timeout);
    StoreAdapter adapter(store_, "gloo/" + std::to_string(generation) + "/");
    state_->context->connectFullMesh(adapter, state_->device);
  } catch (const std::exception& error) {
    throw_rendezvous_error("Gloo", rank, size, timeout, started, "exchanging addresses with the other ranks (full mesh)",
                           error.what(), store_.get(), joined_prefix);
  }
}

ProcessGroupGloo::~ProcessGroupGloo() = default;

// Runs one Gloo call, translating its exceptions into DistributedError.
// The message gives the time really spent next to the timeout: a peer that exited fails
// the call in milliseconds, and "after timeout 600000 ms" would send the reader looking
// for a hang.
template <class Call>
static void run_collective(const char* operation, int rank, Milliseconds timeout, Call&& call) {
  const auto started = std::chrono::steady_clock::now();
  try {
    call();
  } catch (const gloo::Exception& error) {
    throw DistributedError(make_message("Gloo ", operation, " failed on rank ", rank, " after ", elapsed_ms(started),
                                        " ms (timeout ", timeout.count(),
                                        " ms; a peer may have exited or hung): ", error.what()));
  }
}

void ProcessGroupGloo::all_reduce(Tensor& tensor, ReduceOp op) {
  check_cpu(tensor, "all_reduce");
  EMBER_CHECK(op != ReduceOp::Avg || tensor.is_floating_point(), DTypeError,
              "all_reduce: ReduceOp.AVG needs a floating point tensor, got ", dtype_name(tensor.dtype()));
  NoGradGuard no_grad;
  Tensor buffer = contiguous_buffer(tensor);
  dispatch_collective_dtype(tensor.dtype(), "all_reduce", [&](auto zero) {
    using T = decltype(zero);
    if (buffer.numel() == 0 || size_ == 1) return;
    gloo::AllreduceOptions options(state_->context);
    options.setOutput(buffer.data_ptr<T>(), static_cast<std::size_t>(buffer.numel()));
    options.setReduceFunction(reduce_function<T>(op));
    options.setTag(state_->next_tag++);
    options.setTimeout(timeout_);
    run_collective("all_reduce", rank_, timeout_, [&] { gloo::allreduce(options); });
  });
  if (op == ReduceOp::Avg && size_ > 1) buffer.div_(Scalar(static_cast<double>(size_)));
  write_back(tensor, buffer);
}

void ProcessGroupGloo::broadcast(Tensor& tensor, int src) {
  check_cpu(tensor, "broadcast");
  EMBER_CHECK(src >= 0 && src < size_, ValueError, "broadcast: invalid root rank ", src, " for world size ", size_);
  NoGradGuard no_grad;
  Tensor buffer = contiguous_buffer(tensor);
  dispatch_collective_dtype(tensor.dtype(), "broadcast", [&](auto zero) {
    using T = decltype(zero);
    if (buffer.numel() == 0 || size_ == 1) return;
    gloo::BroadcastOptions options(state_->context);
    options.setOutput(buffer.data_ptr<T>(), static_cast<std::size_t>(buffer.numel()));
    options.setRoot(src);
    options.setTag(state_->next_tag++);
    options.setTimeout(timeout_);
    run_collective("broadcast", rank_, timeout_, [&] { gloo::broadcast(options); });
  });
  write_back(tensor, buffer);
}

void ProcessGroupGloo::all_gather(std::vector<Tensor>& outputs, const Tensor& input) {
  check_cpu(input, "all_gather");
  EMBER_CHECK(static_cast<int>(outputs.size()) == size_, ValueError, "all_gather: expected ", size_,
              " output tensors (one per rank), got ", outputs.size());
  for (const auto& output : outputs) {
    check_cpu(output, "all_gather");
    EMBER_CHECK(output.sizes() == input.sizes(), ShapeError, "all_gather: every output must have the input's shape ",
                shape_to_string(input.sizes()), ", got ", shape_to_string(output.sizes()));
    EMBER_CHECK(output.dtype() == input.dtype(), DTypeError, "all_gather: every output must have the input's dtype ",
                dtype_name(input.dtype()), ", got ", dtype_name(output.dtype()));
  }
  NoGradGuard no_grad;
  // Gloo gathers into one flat buffer of size × numel; we then split it into the outputs.
  Tensor source = input.contiguous();
  Tensor gathered = empty({static_cast<std::int64_t>(size_), input.numel()}, input.options());
  dispatch_collective_dtype(input.dtype(), "all_gather", [&](auto zero) {
    using T = decltype(zero);
    if (input.numel() == 0) return;
    if (size_ == 1) {
      gathered.view({input.numel()}).copy_(source.view({input.numel()}));
      return;
    }
    gloo::AllgatherOptions options(state_->context);
    options.setInput(source.data_ptr<T>(), static_cast<std::size_t>(input.numel()));
    options.setOutput(gathered.data_ptr<T>(), static_cast<std::size_t>(gathered.numel()));
    options.setTag(state_->next_tag++);
    options.setTimeout(timeout_);
    run_collective("all_gather", rank_, timeout_, [&] { gloo::allgather(options); });
  });
  if (input.numel() == 0) return;
  for (int r = 0; r < size_; ++r) outputs[r].copy_(gathered.select(0, r).view(input.sizes()));
}

void ProcessGroupGloo::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
  check_cpu(output, "reduce_scatter");
  EMBER_CHECK(static_cast<int>(inputs.size()) == size_, ValueError, "reduce_scatter: expected ", size_,
              " input tensors (one per rank), got ", inputs.size());
  for (const auto& input : inputs) {
    check_cpu(input, "reduce_scatter");
    EMBER_CHECK(input.sizes() == output.sizes(), ShapeError, "reduce_scatter: every input must have the output's shape ",
                shape_to_string(output.sizes()), ", got ", shape_to_string(input.sizes()));
    EMBER_CHECK(input.dtype() == output.dtype(), DTypeError, "reduce_scatter: every input must have the output's dtype ",
                dtype_name(output.dtype()), ", got ", dtype_name(input.dtype()));
  }
  EMBER_CHECK(op != ReduceOp::Avg || output.is_floating_point(), DTypeError,
              "reduce_scatter: ReduceOp.AVG needs a floating point tensor, got ", dtype_name(output.dtype()));
  // Gloo has no general reduce-scatter for unbound buffers: stack the inputs, all-reduce
  // the stack, keep our row. Twice the traffic of a ring reduce-scatter, same result.
  NoGradGuard no_grad;
  Tensor stacked = empty({static_cast<std::int64_t>(size_), output.numel()}, output.options());
  for (int r = 0; r < size_; ++r) stacked.select(0, r).copy_(inputs[r].reshape({output.numel()}));
  all_reduce(stacked, op);
  output.copy_(stacked.select(0, rank_).view(output.sizes()));
}

void ProcessGroupGloo::barrier() {
  if (size_ == 1) return;
  gloo::BarrierOptions options(state_->context);
  options.setTag(state_->next_tag++);
  options.setTimeout(timeout_);
  run_collective("barrier", rank_, timeout_, [&] { gloo::barrier(options); });
}

}  // namespace ember::distributed
