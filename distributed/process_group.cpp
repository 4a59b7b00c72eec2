// distributed/process_group.cpp — the default process group and torchrun's environment contract.
//
// Tutorial §9.3: init_process_group(backend="gloo") reads who this process is (RANK,
// WORLD_SIZE) and where to meet the others (MASTER_ADDR:MASTER_PORT) from the
// environment that torchrun — or ember-run — sets for each process it starts. Rank 0
// serves the TCPStore there; everyone connects to it; the backend's group then does its
// own rendezvous through the store.
#include <ember/distributed/process_group.h>

#include <cstdlib>
#include <memory>
#include <optional>

#include <ember/distributed/process_group_gloo.h>

namespace ember::distributed {
namespace {

struct DefaultGroup {
  std::shared_ptr<TCPStore> store;
  std::unique_ptr<ProcessGroup> group;
};

DefaultGroup& default_state() {
  static DefaultGroup state;
  return state;
}

// An integer environment variable; `fallback` when unset, an error when not a number.
int env_int(const char* name, std::optional<int> fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    if (fallback) return *fallback;
    throw ValueError(make_message("Error initializing torch.distributed using env:// rendezvous: environment "
                                  "variable ", name, " expected, but not set"));
  }
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  EMBER_CHECK(end != text && *end == '\0', ValueError, "environment variable ", name,
              " must be an integer, got '", text, "'");
  return static_cast<int>(value);
}

std::string env_string(const char* name, const std::string& fallback) {
  const char* text = std::getenv(name);
  return (text == nullptr || *text == '\0') ? fallback : std::string(text);
}

ProcessGroup& resolve(ProcessGroup* group) { return group != nullptr ? *group : default_group(); }

}  // namespace

std::string reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "SUM";
    case ReduceOp::Avg: return "AVG";
    case ReduceOp::Max: return "MAX";
    case ReduceOp::Min: return "MIN";
  }
  return "?";
}

void init_process_group(const std::string& backend, int rank, int world_size, Milliseconds timeout) {
  EMBER_CHECK(!is_initialized(), DistributedError, "trying to initialize the default process group twice!");
  if (backend == "nccl")
    throw NotImplementedError("NCCL backend not built yet: use backend \"gloo\" (CPU tensors) for now");
  EMBER_CHECK(backend == "gloo", ValueError, "Invalid backend: '", backend, "' (expected \"gloo\" or \"nccl\")");
  if (rank < 0) rank = env_int("RANK", std::nullopt);
  if (world_size < 0) world_size = env_int("WORLD_SIZE", std::nullopt);
  EMBER_CHECK(world_size >= 1, ValueError, "world_size must be positive, got ", world_size);
  EMBER_CHECK(rank >= 0 && rank < world_size, ValueError, "Invalid rank ", rank,
              ", rank should be in the interval [0, ", world_size - 1, "]");
  std::string address = env_string("MASTER_ADDR", "127.0.0.1");
  int port = env_int("MASTER_PORT", 29500);

  auto store = std::make_shared<TCPStore>(address, port, /*is_master=*/rank == 0, timeout);
  // The group listens for its peers on the master's interface: on one machine 127.0.0.1.
  auto group = std::make_unique<ProcessGroupGloo>(store, rank, world_size, timeout, address);
  default_state().store = std::move(store);
  default_state().group = std::move(group);
}

void destroy_process_group() {
  // The group goes first: it may still talk to the store while shutting down.
  default_state().group.reset();
  default_state().store.reset();
}

bool is_initialized() { return default_state().group != nullptr; }

ProcessGroup& default_group() {
  EMBER_CHECK(is_initialized(), DistributedError,
              "Default process group has not been initialized, please make sure to call init_process_group.");
  return *default_state().group;
}

int get_rank() { return default_group().rank(); }
int get_world_size() { return default_group().size(); }
int get_local_rank() { return env_int("LOCAL_RANK", 0); }
std::string get_backend() { return default_group().backend(); }

void all_reduce(Tensor& tensor, ReduceOp op, ProcessGroup* group) { resolve(group).all_reduce(tensor, op); }
void broadcast(Tensor& tensor, int src, ProcessGroup* group) { resolve(group).broadcast(tensor, src); }
void all_gather(std::vector<Tensor>& outputs, const Tensor& input, ProcessGroup* group) {
  resolve(group).all_gather(outputs, input);
}
void reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op, ProcessGroup* group) {
  resolve(group).reduce_scatter(output, inputs, op);
}
void barrier(ProcessGroup* group) { resolve(group).barrier(); }

}  // namespace ember::distributed
