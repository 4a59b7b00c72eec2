// distributed/process_group_nccl.cpp — the GPU process group on NCCL (see process_group_nccl.h).
//
// Read it by the life of one collective:
//   1. check: CUDA tensor on this group's GPU, a dtype NCCL carries;
//   2. order: an event recorded on ember's stream (the legacy default stream, where every
//      ember kernel runs) is waited on by our NCCL stream, so NCCL reads finished data;
//   3. launch the NCCL call on our stream, record a "done" event, and make ember's stream
//      wait on it, so later kernels see the result;
//   4. wait on the host, polling the "done" event and ncclCommGetAsyncError, until it
//      completes, fails or the timeout passes; failure aborts the communicator.
// The communicator is created non-blocking (config.blocking = 0) so that even the
// rendezvous (ncclCommInitRankConfig) can be abandoned when a peer never shows up.
#include <ember/distributed/process_group_nccl.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/factories.h>
#include <ember/distributed/rendezvous_error.h>

namespace ember::distributed {
namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw DistributedError(make_message("ProcessGroupNCCL: ", what, " failed: ", cudaGetErrorString(status)));
}

ncclDataType_t nccl_dtype(DType dtype, const char* operation) {
  switch (dtype) {
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::Int64: return ncclInt64;
    case DType::Int32: return ncclInt32;
    case DType::Float16: return ncclFloat16;
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0)
    case DType::BFloat16: return ncclBfloat16;  // NCCL >= 2.10
#endif
    default:
      throw DTypeError(make_message(operation, ": unsupported dtype ", dtype_name(dtype),
                                    " (use float32, float64, bfloat16, float16, int64 or int32)"));
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;  // NCCL >= 2.10 divides by the world size itself
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
  }
  return ncclSum;
}

}  // namespace

struct ProcessGroupNCCL::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t ready = nullptr;  // ember's stream reached the collective
  cudaEvent_t done = nullptr;   // the collective finished
  int device = 0;
  bool aborted = false;
  // The CUDA objects go with the state, also when the constructor throws half way (a
  // failed rendezvous); the communicator is the destructor's business.
  ~State() {
    if (done != nullptr) cudaEventDestroy(done);
    if (ready != nullptr) cudaEventDestroy(ready);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

// Waits until the communicator is no longer "in progress" (non-blocking init or launch),
// or throws after aborting it.
static void wait_for_communicator(ProcessGroupNCCL::State& state, const char* operation, int rank,
                                  Milliseconds timeout, cudaEvent_t event);

ProcessGroupNCCL::ProcessGroupNCCL(std::shared_ptr<TCPStore> store, int rank, int size, Milliseconds timeout)
    : ProcessGroup(rank, size, timeout), state_(std::make_unique<State>()), store_(std::move(store)) {
  EMBER_CHECK(size >= 1, ValueError, "ProcessGroupNCCL: world_size must be positive, got ", size);
  EMBER_CHECK(rank >= 0 && rank < size, ValueError, "Invalid rank ", rank, ", rank should be in the interval [0, ",
              size - 1, "]");
  const auto started = std::chrono::steady_clock::now();  // errors report the time really spent
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
    throw DistributedError("ProcessGroupNCCL: no CUDA device is visible; the nccl backend needs one GPU per "
                           "process (use backend \"gloo\" on CPUs)");
  check_cuda(cudaGetDevice(&state_->device), "cudaGetDevice");
  check_cuda(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreateWithFlags(&state_->ready, cudaEventDisableTiming), "cudaEventCreate");
  check_cuda(cudaEventCreateWithFlags(&state_->done, cudaEventDisableTiming), "cudaEventCreate");

  // The unique id travels through the store, one key per initialisation. Every failure on
  // the way names this rank, the step and the timeout (rendezvous_error.h).
  const std::string device_name = "cuda:" + std::to_string(state_->device);
  const std::string joined_prefix = "ember/nccl/generation/";
  std::int64_t generation = 0;
  try {
    generation = store_->add(joined_prefix + std::to_string(rank), 1);
  } catch (const std::exception& error) {
    throw_rendezvous_error("NCCL", rank, size, timeout, started, "registering with the store", error.what());
  }
  const std::string key = "nccl/" + std::to_string(generation) + "/unique_id";
  ncclUniqueId id;
  if (rank == 0) {
    ncclResult_t status = ncclGetUniqueId(&id);
    if (status != ncclSuccess)
      throw_rendezvous_error("NCCL", rank, size, timeout, started, "creating the ncclUniqueId",
                             make_message("ncclGetUniqueId: ", ncclGetErrorString(status)));
    const char* bytes = reinterpret_cast<const char*>(&id);
    try {
      store_->set(key, std::vector<char>(bytes, bytes + sizeof(id)));
    } catch (const std::exception& error) {
      throw_rendezvous_error("NCCL", rank, size, timeout, started, "publishing the ncclUniqueId", error.what());
    }
  } else {
    std::vector<char> bytes;
    try {
      bytes = store_->get(key);
    } catch (const std::exception& error) {
      throw_rendezvous_error("NCCL", rank, size, timeout, started, "reading the ncclUniqueId that rank 0 publishes",
                             error.what(), store_.get(), joined_prefix);
    }
    if (bytes.size() != sizeof(id))
      throw_rendezvous_error("NCCL", rank, size, timeout, started, "reading the ncclUniqueId",
                             make_message("the value in the store has ", bytes.size(), " bytes, expected ", sizeof(id)));
    std::memcpy(&id, bytes.data(), sizeof(id));
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t status = ncclCommInitRankConfig(&state_->comm, size, id, rank, &config);
  if (status != ncclSuccess && status != ncclInProgress)
    throw_rendezvous_error("NCCL", rank, size, timeout, started, "creating the communicator on " + device_name,
                           make_message("ncclCommInitRankConfig: ", ncclGetErrorString(status),
                                        " (every rank needs its own GPU: call ember::cuda::set_device(local_rank) "
                                        "before init_process_group)"));
  wait_for_communicator(*state_, "init_process_group", rank, timeout, nullptr);
}

ProcessGroupNCCL::~ProcessGroupNCCL() {
  // An aborted communicator was already freed by ncclCommAbort.
  if (state_->comm != nullptr && !state_->aborted) {
    cudaStreamSynchronize(state_->stream);
    // Finalize flushes NCCL's pending work (asynchronously on a non-blocking communicator);
    // a peer that never finalizes must not hang this destructor: abort after the timeout.
    ncclResult_t status = ncclCommFinalize(state_->comm);
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (status == ncclInProgress && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ncclCommGetAsyncError(state_->comm, &status);
    }
    if (status == ncclSuccess) ncclCommDestroy(state_->comm);
    else ncclCommAbort(state_->comm);
  }
}

int ProcessGroupNCCL::device_index() const { return state_->device; }

static void wait_for_communicator(ProcessGroupNCCL::State& state, const char* operation, int rank,
                                  Milliseconds timeout, cudaEvent_t event) {
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + timeout;
  auto fail = [&](const std::string& reason) {
    // The time really spent goes next to the timeout: a dead peer fails the call long before it.
    const long long spent = elapsed_ms(started);
    // Abort frees the communicator and makes NCCL kernels stuck on a dead peer return.
    ncclCommAbort(state.comm);
    state.aborted = true;
    throw DistributedError(make_message("NCCL ", operation, " failed on rank ", rank, " after ", spent,
                                        " ms (timeout ", timeout.count(), " ms; a peer may have exited or hung): ",
                                        reason, "; the communicator was aborted"));
  };
  auto pause = std::chrono::microseconds(20);
  while (true) {
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(state.comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) fail(ncclGetErrorString(async));
    if (async == ncclSuccess) {
      if (event == nullptr) return;
      cudaError_t query = cudaEventQuery(event);
      if (query == cudaSuccess) return;
      // "Not ready" is no failure, but the runtime also leaves it in this thread's
      // last-error slot, where the next kernel launch's check would read it as its own
      // ("device not ready"): clear it, as PyTorch's CUDAEvent::query does.
      if (query == cudaErrorNotReady) (void)cudaGetLastError();
      else fail(cudaGetErrorString(query));
    }
    if (std::chrono::steady_clock::now() >= deadline) fail("timed out");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));  // short ops stay fast, long ones cost no CPU
  }
}

namespace {

void check_cuda_tensor(const Tensor& tensor, int device, const char* operation) {
  EMBER_CHECK(tensor.defined(), ValueError, operation, ": got an undefined tensor");
  EMBER_CHECK(tensor.is_cuda(), DeviceError, operation, ": the nccl backend needs CUDA tensors, got ",
              tensor.device().str());
  const int index = tensor.device().has_index() ? tensor.device().index() : device;
  EMBER_CHECK(index == device, DeviceError, operation, ": tensor is on cuda:", index,
              " but this process group's communicator is bound to cuda:", device,
              " (NCCL: one GPU per process; call ember::cuda::set_device(local_rank) before init_process_group)");
}

}  // namespace

// Queues `launch` (one NCCL call on the group stream) after the work on ember's stream and
// records `done` behind it (steps 1–3 of the file comment, without ember's stream waiting).
template <class Launch>
static void enqueue_nccl(ProcessGroupNCCL::State& state, const char* operation, int rank, Milliseconds timeout,
                         cudaEvent_t done, Launch&& launch) {
  EMBER_CHECK(!state.aborted, DistributedError, "NCCL ", operation, " on rank ", rank,
              ": the communicator was aborted by an earlier failure; restart the job");
  check_cuda(cudaSetDevice(state.device), "cudaSetDevice");
  check_cuda(cudaEventRecord(state.ready, cudaStreamLegacy), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(state.stream, state.ready, 0), "cudaStreamWaitEvent");
  ncclResult_t status = launch(state.comm, state.stream);
  if (status != ncclSuccess && status != ncclInProgress) {
    ncclCommAbort(state.comm);
    state.aborted = true;
    throw DistributedError(make_message("NCCL ", operation, " failed on rank ", rank, ": ",
                                        ncclGetErrorString(status), "; the communicator was aborted"));
  }
  // A non-blocking communicator may still be enqueueing the kernel: only once it reports
  // success is the kernel on the stream, so only then does the "done" event follow it.
  if (status == ncclInProgress) wait_for_communicator(state, operation, rank, timeout, nullptr);
  check_cuda(cudaEventRecord(done, state.stream), "cudaEventRecord");
}

// Ember's stream waits for `done`, and so does the host (polling for errors and the timeout).
static void wait_for_nccl(ProcessGroupNCCL::State& state, const char* operation, int rank, Milliseconds timeout,
                          cudaEvent_t done) {
  check_cuda(cudaSetDevice(state.device), "cudaSetDevice");
  check_cuda(cudaStreamWaitEvent(cudaStreamLegacy, done, 0), "cudaStreamWaitEvent");
  wait_for_communicator(state, operation, rank, timeout, done);
}

// Runs `launch` between the two stream/event hand-offs and waits for it; see the file comment.
template <class Launch>
static void run_nccl(ProcessGroupNCCL::State& state, const char* operation, int rank, Milliseconds timeout,
                     Launch&& launch) {
  enqueue_nccl(state, operation, rank, timeout, state.done, std::forward<Launch>(launch));
  wait_for_nccl(state, operation, rank, timeout, state.done);
}

namespace {

// An all_reduce on the group stream with its own event; the tensor is kept until waited for.
class NcclWork final : public Work {
 public:
  NcclWork(ProcessGroupNCCL::State& state, int rank, Milliseconds timeout, Tensor tensor)
      : state_(state), rank_(rank), timeout_(timeout), tensor_(std::move(tensor)) {
    check_cuda(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~NcclWork() override {
    if (done_ != nullptr) cudaEventDestroy(done_);  // deferred by CUDA while the event is pending
  }
  NcclWork(const NcclWork&) = delete;
  NcclWork& operator=(const NcclWork&) = delete;
  cudaEvent_t done() const { return done_; }
  void wait() override {
    if (waited_) return;
    EMBER_CHECK(!state_.aborted, DistributedError, "NCCL all_reduce on rank ", rank_,
                ": the communicator was aborted by an earlier failure; restart the job");
    wait_for_nccl(state_, "all_reduce", rank_, timeout_, done_);
    waited_ = true;
    tensor_.bump_version();
  }

 private:
  ProcessGroupNCCL::State& state_;
  int rank_;
  Milliseconds timeout_;
  Tensor tensor_;
  cudaEvent_t done_ = nullptr;
  bool waited_ = false;
};

}  // namespace

std::unique_ptr<Work> ProcessGroupNCCL::all_reduce_async(Tensor& tensor, ReduceOp op) {
  check_cuda_tensor(tensor, state_->device, "all_reduce");
  EMBER_CHECK(tensor.is_contiguous(), ValueError, "all_reduce (async): the nccl backend needs a contiguous tensor");
  EMBER_CHECK(op != ReduceOp::Avg || tensor.is_floating_point(), DTypeError,
              "all_reduce: ReduceOp.AVG needs a floating point tensor, got ", dtype_name(tensor.dtype()));
  const ncclDataType_t type = nccl_dtype(tensor.dtype(), "all_reduce");
  // The event must belong to the group's device, whatever this thread (DDP's communication
  // thread, say) has as its current device: an event recorded on another device's stream fails.
  check_cuda(cudaSetDevice(state_->device), "cudaSetDevice");
  auto work = std::make_unique<NcclWork>(*state_, rank_, timeout_, tensor);
  if (tensor.numel() == 0) {
    check_cuda(cudaEventRecord(work->done(), cudaStreamLegacy), "cudaEventRecord");  // nothing to wait for
    return work;
  }
  void* data = tensor.data_ptr();
  const auto count = static_cast<std::size_t>(tensor.numel());
  enqueue_nccl(*state_, "all_reduce", rank_, timeout_, work->done(), [&](ncclComm_t comm, cudaStream_t stream) {
    return ncclAllReduce(data, data, count, type, nccl_op(op), comm, stream);
  });
  return work;
}

void ProcessGroupNCCL::all_reduce(Tensor& tensor, ReduceOp op) {
  check_cuda_tensor(tensor, state_->device, "all_reduce");
  EMBER_CHECK(op != ReduceOp::Avg || tensor.is_floating_point(), DTypeError,
              "all_reduce: ReduceOp.AVG needs a floating point tensor, got ", dtype_name(tensor.dtype()));
  const ncclDataType_t type = nccl_dtype(tensor.dtype(), "all_reduce");
  if (tensor.numel() == 0) return;
  NoGradGuard no_grad;
  Tensor buffer = tensor.is_contiguous() ? tensor : tensor.contiguous();
  void* data = buffer.data_ptr();
  const auto count = static_cast<std::size_t>(buffer.numel());
  run_nccl(*state_, "all_reduce", rank_, timeout_, [&](ncclComm_t comm, cudaStream_t stream) {
    return ncclAllReduce(data, data, count, type, nccl_op(op), comm, stream);
  });
  if (!buffer.is_same(tensor)) tensor.copy_(buffer);
  else tensor.bump_version();
}

void ProcessGroupNCCL::broadcast(Tensor& tensor, int src) {
  check_cuda_tensor(tensor, state_->device, "broadcast");
  EMBER_CHECK(src >= 0 && src < size_, ValueError, "broadcast: invalid root rank ", src, " for world size ", size_);
  const ncclDataType_t type = nccl_dtype(tensor.dtype(), "broadcast");
  if (tensor.numel() == 0) return;
  NoGradGuard no_grad;
  Tensor buffer = tensor.is_contiguous() ? tensor : tensor.contiguous();
  void* data = buffer.data_ptr();
  const auto count = static_cast<std::size_t>(buffer.numel());
  run_nccl(*state_, "broadcast", rank_, timeout_, [&](ncclComm_t comm, cudaStream_t stream) {
    return ncclBroadcast(data, data, count, type, src, comm, stream);
  });
  if (!buffer.is_same(tensor)) tensor.copy_(buffer);
  else tensor.bump_version();
}

void ProcessGroupNCCL::all_gather(std::vector<Tensor>& outputs, const Tensor& input) {
  check_cuda_tensor(input, state_->device, "all_gather");
  EMBER_CHECK(static_cast<int>(outputs.size()) == size_, ValueError, "all_gather: expected ", size_,
              " output tensors (one per rank), got ", outputs.size());
  for (const auto& output : outputs) {
    check_cuda_tensor(output, state_->device, "all_gather");
    EMBER_CHECK(output.sizes() == input.sizes(), ShapeError, "all_gather: every output must have the input's shape ",
                shape_to_string(input.sizes()), ", got ", shape_to_string(output.sizes()));
    EMBER_CHECK(output.dtype() == input.dtype(), DTypeError, "all_gather: every output must have the input's dtype ",
                dtype_name(input.dtype()), ", got ", dtype_name(output.dtype()));
  }
  const ncclDataType_t type = nccl_dtype(input.dtype(), "all_gather");
  if (input.numel() == 0) return;
  NoGradGuard no_grad;
  Tensor source = input.contiguous();
  Tensor gathered = empty({static_cast<std::int64_t>(size_), input.numel()}, input.options());
  const void* send = source.data_ptr();
  void* receive = gathered.data_ptr();
  const auto count = static_cast<std::size_t>(input.numel());
  run_nccl(*state_, "all_gather", rank_, timeout_, [&](ncclComm_t comm, cudaStream_t stream) {
    return ncclAllGather(send, receive, count, type, comm, stream);
  });
  for (int r = 0; r < size_; ++r) outputs[r].copy_(gathered.select(0, r).view(input.sizes()));
}

void ProcessGroupNCCL::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
  check_cuda_tensor(output, state_->device, "reduce_scatter");
  EMBER_CHECK(static_cast<int>(inputs.size()) == size_, ValueError, "reduce_scatter: expected ", size_,
              " input tensors (one per rank), got ", inputs.size());
  for (const auto& input : inputs) {
    check_cuda_tensor(input, state_->device, "reduce_scatter");
    EMBER_CHECK(input.sizes() == output.sizes(), ShapeError, "reduce_scatter: every input must have the output's shape ",
                shape_to_string(output.sizes()), ", got ", shape_to_string(input.sizes()));
    EMBER_CHECK(input.dtype() == output.dtype(), DTypeError, "reduce_scatter: every input must have the output's dtype ",
                dtype_name(output.dtype()), ", got ", dtype_name(input.dtype()));
  }
  EMBER_CHECK(op != ReduceOp::Avg || output.is_floating_point(), DTypeError,
              "reduce_scatter: ReduceOp.AVG needs a floating point tensor, got ", dtype_name(output.dtype()));
  const ncclDataType_t type = nccl_dtype(output.dtype(), "reduce_scatter");
  if (output.numel() == 0) return;
  // NCCL has a real reduce-scatter: rank r receives the reduction of block r.
  NoGradGuard no_grad;
  Tensor stacked = empty({static_cast<std::int64_t>(size_), output.numel()}, output.options());
  for (int r = 0; r < size_; ++r) stacked.select(0, r).copy_(inputs[r].reshape({output.numel()}));
  Tensor result = output.is_contiguous() ? output : output.contiguous();
  const void* send = stacked.data_ptr();
  void* receive = result.data_ptr();
  const auto count = static_cast<std::size_t>(output.numel());
  run_nccl(*state_, "reduce_scatter", rank_, timeout_, [&](ncclComm_t comm, cudaStream_t stream) {
    return ncclReduceScatter(send, receive, count, type, nccl_op(op), comm, stream);
  });
  if (!result.is_same(output)) output.copy_(result);
  else output.bump_version();
}

void ProcessGroupNCCL::barrier() {
  // NCCL has no barrier: an all-reduce of one number on the GPU is one (as PyTorch does).
  Tensor token = zeros({1}, TensorOptions(kFloat32).device(Device(DeviceType::CUDA, state_->device)));
  all_reduce(token, ReduceOp::Sum);
}

}  // namespace ember::distributed
