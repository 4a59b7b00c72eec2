// distributed/process_group.cpp — the default process group and torchrun's environment contract.
//
// Tutorial §9.3: init_process_group(backend="gloo") reads who this process is (RANK,
// WORLD_SIZE) and where to meet the others (MASTER_ADDR:MASTER_PORT) from the
// environment that torchrun — or ember-run — sets for each process it starts. Rank 0
// serves the TCPStore there; everyone connects to it; the backend's group then does its
// own rendezvous through the store.
#include <ember/distributed/process_group.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>

#include <ember/distributed/process_group_gloo.h>
#ifdef EMBER_HAVE_NCCL
#include <ember/distributed/process_group_nccl.h>
#endif

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

// The address of this machine's interface that reaches `master` (127.0.0.1 on one machine,
// the LAN address on a cluster): connecting a UDP socket sends nothing, it only asks the
// kernel's routing table which local address it would use. Gloo listens there.
std::string local_address_towards(const std::string& master, int port) {
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, master.c_str(), &target.sin_addr) != 1) return master;  // TCPStore reports it
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  std::string local = "127.0.0.1";
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)) == 0) {
    sockaddr_in mine{};
    socklen_t length = sizeof(mine);
    char text[INET_ADDRSTRLEN] = {};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &length) == 0 &&
        ::inet_ntop(AF_INET, &mine.sin_addr, text, sizeof(text)) != nullptr)
      local = text;
  }
  if (fd >= 0) ::close(fd);
  return local;
}

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
  EMBER_CHECK(backend == "gloo" || backend == "nccl", ValueError, "Invalid backend: '", backend,
              "' (expected \"gloo\" or \"nccl\")");
#ifndef EMBER_HAVE_NCCL
  if (backend == "nccl")
    throw DistributedError("Distributed package doesn't have NCCL built in: this ember was built without CUDA "
                           "or without NCCL (configure with -DEMBER_CUDA=ON on a machine with nccl.h); use "
                           "backend \"gloo\" for CPU tensors");
#endif
  if (rank < 0) rank = env_int("RANK", std::nullopt);
  if (world_size < 0) world_size = env_int("WORLD_SIZE", std::nullopt);
  EMBER_CHECK(world_size >= 1, ValueError, "world_size must be positive, got ", world_size);
  EMBER_CHECK(rank >= 0 && rank < world_size, ValueError, "Invalid rank ", rank,
              ", rank should be in the interval [0, ", world_size - 1, "]");
  std::string address = env_string("MASTER_ADDR", "127.0.0.1");
  int port = env_int("MASTER_PORT", 29500);
  // torchrun's contract: with TORCHELASTIC_USE_AGENT_STORE=True the launcher already serves
  // the store at MASTER_ADDR:MASTER_PORT, so rank 0 connects like everybody else.
  const bool agent_store = env_string("TORCHELASTIC_USE_AGENT_STORE", "") == "True";

  auto store = std::make_shared<TCPStore>(address, port, /*is_master=*/rank == 0 && !agent_store, timeout);
  std::unique_ptr<ProcessGroup> group;
#ifdef EMBER_HAVE_NCCL
  if (backend == "nccl") group = std::make_unique<ProcessGroupNCCL>(store, rank, world_size, timeout);
#endif
  if (backend == "gloo")
    group = std::make_unique<ProcessGroupGloo>(store, rank, world_size, timeout, local_address_towards(address, port));
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
#ifdef EMBER_HAVE_NCCL
bool is_nccl_available() { return true; }
#else
bool is_nccl_available() { return false; }
#endif
bool is_gloo_available() { return true; }  // Gloo is a required dependency (distributed/CMakeLists.txt)

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
