// distributed/process_group.cpp — the default process group and torchrun's environment contract.
//
// Tutorial §9.3: init_process_group(backend="gloo") reads who this process is (RANK,
// WORLD_SIZE) and where to meet the others (MASTER_ADDR:MASTER_PORT) from the
// environment that torchrun — or ember-run — sets for each process it starts. Rank 0
// serves the TCPStore there; everyone connects to it; the backend's group then does its
// own rendezvous through the store.
#include <ember/distributed/process_group.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>

#include <ember/distributed/process_group_gloo.h>
#include <ember/distributed/rendezvous_error.h>
#include <ember/distributed/store_socket.h>
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
// kernel's routing table which local address it would use. Gloo listens there. `master`
// may be a host name or an IPv4/IPv6 address; when it cannot be resolved the TCPStore has
// already said so, and 127.0.0.1 is only a placeholder.
std::string local_address_towards(const std::string& master, int port) {
  store_socket::AddressList addresses;
  if (store_socket::resolve(master, port, addresses) != 0) return "127.0.0.1";
  for (const addrinfo* address = addresses.head; address != nullptr; address = address->ai_next) {
    int fd = ::socket(address->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    std::string local;
    sockaddr_storage mine{};
    socklen_t length = sizeof(mine);
    if (::connect(fd, address->ai_addr, address->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &length) == 0)
      local = store_socket::address_text(&mine);
    ::close(fd);
    if (!local.empty()) return local;
  }
  return "127.0.0.1";
}

// The store key under which rank 0 records its job's TORCHELASTIC_RUN_ID.
constexpr const char* kRunIdKey = "ember/run_id";

// Rank 0 records the job's id; every other rank checks that the store it reached is its
// own job's. Two jobs given one MASTER_PORT: the second job's rank 0 cannot listen, but its
// other ranks reach the *first* job's store — without this check they would register there.
void check_same_job(TCPStore& store, bool serves_store, const std::string& run_id, int port) {
  if (serves_store) {
    store.set(kRunIdKey, run_id);
    return;
  }
  const std::vector<char> value = store.get(kRunIdKey);
  const std::string theirs(value.begin(), value.end());
  if (theirs != run_id) {
    throw DistributedError(make_message("port ", port, " is in use by another job: the store there belongs to run '",
                                        theirs, "', this process is in run '", run_id,
                                        "' (TORCHELASTIC_RUN_ID); give each job its own MASTER_PORT"));
  }
}

}  // namespace

Milliseconds timeout_from_seconds(double seconds, const std::string& what) {
  const double max_seconds = static_cast<double>(kMaxTimeout.count()) / 1000.0;
  EMBER_CHECK(seconds > 0 && seconds <= max_seconds, ValueError, what, " must be a number of seconds in (0, ",
              static_cast<long long>(max_seconds), "], got ", seconds);
  return Milliseconds(static_cast<long long>(std::ceil(seconds * 1000.0)));
}

Milliseconds timeout_from_environment() {
  const char* text = std::getenv("EMBER_TIMEOUT");
  if (text == nullptr || *text == '\0') return kDefaultTimeout;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  const double max_seconds = static_cast<double>(kMaxTimeout.count()) / 1000.0;
  EMBER_CHECK(end != text && *end == '\0' && seconds > 0 && seconds <= max_seconds, ValueError,
              "EMBER_TIMEOUT must be a number of seconds in (0, ", static_cast<long long>(max_seconds), "], got '",
              text, "'");
  return timeout_from_seconds(seconds, "EMBER_TIMEOUT");
}

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
  const auto started = std::chrono::steady_clock::now();  // errors report the time really spent
  EMBER_CHECK(!is_initialized(), DistributedError, "trying to initialize the default process group twice!");
  if (timeout == Milliseconds::zero()) timeout = timeout_from_environment();
  EMBER_CHECK(timeout > Milliseconds::zero() && timeout <= kMaxTimeout, ValueError,
              "init_process_group: timeout must be in (0, ", kMaxTimeout.count(), "] ms, got ", timeout.count(), " ms");
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

  const bool serves_store = rank == 0 && !agent_store;
  const std::string run_id = env_string("TORCHELASTIC_RUN_ID", "");
  std::shared_ptr<TCPStore> store;
  try {
    store = std::make_shared<TCPStore>(address, port, serves_store, timeout);
  } catch (const DistributedError& error) {
    // Name the rank and what it was doing: "TCPStore: timed out ..." alone does not say
    // which of the processes gave up, nor that MASTER_ADDR/MASTER_PORT are the suspects.
    const std::string where = (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" +
                              std::to_string(port);
    const std::string step = serves_store
                                 ? "serving the store at " + where + " (MASTER_ADDR:MASTER_PORT; is MASTER_PORT in use?)"
                                 : "connecting to the store at " + where +
                                       " (MASTER_ADDR:MASTER_PORT; is rank 0 running, and reachable from here?)";
    throw_rendezvous_error(backend == "gloo" ? "Gloo" : "NCCL", rank, world_size, timeout, started, step,
                           error.what());
  }
  // Under a launcher's agent store (torchrun's) the launcher already vouches for the job.
  if (!agent_store) {
    try {
      check_same_job(*store, serves_store, run_id, port);
    } catch (const DistributedError& error) {
      throw_rendezvous_error(backend == "gloo" ? "Gloo" : "NCCL", rank, world_size, timeout, started,
                             "checking that the store at MASTER_PORT " + std::to_string(port) + " is this job's",
                             error.what());
    }
  }
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
