// distributed/tcp_store.cpp — the rendezvous key-value store over TCP (see tcp_store.h).
//
// Server: one thread, one poll() loop over the listening socket, the client connections and
// a "wake" pipe used to stop it. Each connection has an input buffer (bytes of requests not
// yet complete) and an output buffer (replies the client has not read yet); sockets are
// non-blocking, so a slow or stopped client costs a buffer, never the loop. Every complete
// request is answered at once (no request waits), so one thread serves any number of ranks.
// Client: one non-blocking socket per TCPStore; connect, send and receive all wait in
// poll() with the request's deadline; get/wait re-ask with CHECK until theirs.
#include <ember/distributed/tcp_store.h>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include <ember/distributed/distributed_error.h>
#include <ember/distributed/store_socket.h>

namespace ember::distributed {
namespace {

using namespace store_socket;

enum Command : std::uint8_t { kSet = 1, kGet = 2, kAdd = 3, kCheck = 4 };

// The longest one connect() to one address may take before the next address (or the
// next retry) gets its turn.
constexpr std::chrono::seconds kConnectAttempt(5);
// How long past its deadline a wait still gives the server to answer its last CHECK.
constexpr std::chrono::milliseconds kAnswerGrace(1000);

std::string to_string(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }
Bytes to_bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

}  // namespace

// ------------------------------------------------------------------ the server
class TCPStore::Server {
 public:
  explicit Server(int port) {
    std::string reason;
    listen_fd_ = listen_on_all_interfaces(port, reason);
    if (listen_fd_ < 0) {
      // Two jobs given the same MASTER_PORT is the usual cause: say it in words.
      const bool in_use = reason == std::strerror(EADDRINUSE);
      throw DistributedError(make_message("TCPStore: cannot listen on port ", port, " (all interfaces): ", reason,
                                          in_use ? make_message("; port ", port, " is in use (another job?)") : ""));
    }
    port_ = bound_port(listen_fd_);
    if (::pipe2(wake_pipe_, O_CLOEXEC) != 0) {
      ::close(listen_fd_);
      throw DistributedError("TCPStore: pipe() failed");
    }
    thread_ = std::thread([this] { serve(); });
  }

  ~Server() {
    char byte = 0;
    [[maybe_unused]] ssize_t ignored = ::write(wake_pipe_[1], &byte, 1);
    thread_.join();
    for (auto& connection : connections_) ::close(connection.fd);
    ::close(listen_fd_);
    ::close(wake_pipe_[0]);
    ::close(wake_pipe_[1]);
  }

  int port() const { return port_; }

 private:
  struct Connection {
    int fd = -1;
    Bytes input;   // received bytes not yet forming a whole request
    Bytes output;  // replies not yet taken by the client
  };

  void serve() {
    while (true) {
      std::vector<pollfd> fds{{wake_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (const auto& connection : connections_)
        fds.push_back({connection.fd, static_cast<short>(POLLIN | (connection.output.empty() ? 0 : POLLOUT)), 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;  // asked to stop
      std::vector<Connection> still_open;
      for (std::size_t i = 0; i < connections_.size(); ++i) {
        Connection& connection = connections_[i];
        bool open = fds[i + 2].revents == 0 || service(connection);
        if (open) still_open.push_back(std::move(connection));
        else ::close(connection.fd);
      }
      connections_ = std::move(still_open);
      // New clients join after the old ones were served (they were not in this poll set).
      if (fds[1].revents & POLLIN) {
        while (true) {
          int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (client < 0) break;  // EAGAIN: no more waiting (or a transient error: next poll)
          set_nodelay(client);
          connections_.push_back({client, {}, {}});
        }
      }
    }
  }

  // Reads what arrived, answers every complete request, writes what the socket takes.
  // False when the client disconnected or spoke nonsense.
  bool service(Connection& connection) {
    char chunk[65536];
    while (true) {
      ssize_t count = ::recv(connection.fd, chunk, sizeof chunk, 0);
      if (count > 0) {
        connection.input.insert(connection.input.end(), chunk, chunk + count);
        continue;
      }
      if (count < 0 && errno == EINTR) continue;
      if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      return false;  // closed (0) or reset
    }
    std::size_t offset = 0;
    while (true) {
      std::size_t consumed = 0;
      std::uint8_t command = 0;
      std::vector<Bytes> items;
      Parse parsed = parse_frame(connection.input.data() + offset, connection.input.size() - offset, consumed,
                                 command, items);
      if (parsed == Parse::Invalid) return false;
      if (parsed == Parse::Incomplete) break;
      offset += consumed;
      Bytes reply;
      if (!answer(command, items, reply)) return false;
      connection.output.insert(connection.output.end(), reply.begin(), reply.end());
    }
    connection.input.erase(connection.input.begin(), connection.input.begin() + static_cast<std::ptrdiff_t>(offset));
    while (!connection.output.empty()) {
      ssize_t count = ::send(connection.fd, connection.output.data(), connection.output.size(), MSG_NOSIGNAL);
      if (count > 0) {
        connection.output.erase(connection.output.begin(), connection.output.begin() + count);
        continue;
      }
      if (count < 0 && errno == EINTR) continue;
      if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // POLLOUT tells us when
      return false;
    }
    return true;
  }

  // The reply to one request; false for a request that makes no sense.
  bool answer(std::uint8_t command, const std::vector<Bytes>& items, Bytes& reply) {
    switch (command) {
      case kSet:
        if (items.size() != 2) return false;
        data_[to_string(items[0])] = items[1];
        reply = encode_frame(1, {});
        return true;
      case kGet: {
        if (items.size() != 1) return false;
        auto found = data_.find(to_string(items[0]));
        reply = found == data_.end() ? encode_frame(0, {}) : encode_frame(1, {found->second});
        return true;
      }
      case kAdd: {
        if (items.size() != 2) return false;
        Bytes& stored = data_[to_string(items[0])];
        try {
          std::int64_t value = stored.empty() ? 0 : std::stoll(to_string(stored));
          value += std::stoll(to_string(items[1]));
          stored = to_bytes(std::to_string(value));
        } catch (const std::exception&) {
          return false;  // not a number: a confused client, not a reason to stop the server
        }
        reply = encode_frame(1, {stored});
        return true;
      }
      case kCheck: {
        bool all = true;
        for (const auto& key : items) all = all && data_.count(to_string(key)) > 0;
        reply = encode_frame(all ? 1 : 0, {});
        return true;
      }
      default:
        return false;
    }
  }

  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::vector<Connection> connections_;
  std::map<std::string, Bytes> data_;
  std::thread thread_;
};

// ------------------------------------------------------------------ the client
TCPStore::TCPStore(std::string host, int port, bool is_master, Milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {
  EMBER_CHECK(port_ >= 0 && port_ <= 65535, ValueError, "TCPStore: port must be in [0, 65535], got ", port_);
  AddressList probe;
  int resolved = resolve(host_, port_, probe);  // a bad host name fails before a server starts
  if (resolved != 0 && resolved != EAI_AGAIN)
    throw DistributedError(make_message("TCPStore: cannot resolve host '", host_, "': ", ::gai_strerror(resolved)));
  if (is_master) {
    server_ = std::make_unique<Server>(port_);
    port_ = server_->port();
  }
  // The master may not be listening yet: retry until the deadline, like PyTorch's client.
  const auto deadline = Clock::now() + timeout_;
  std::string last_error = "none";
  while (true) {
    AddressList addresses;
    int status = resolve(host_, port_, addresses);
    if (status != 0) {
      last_error = ::gai_strerror(status);
    } else {
      for (const addrinfo* address = addresses.head; address != nullptr && socket_ < 0; address = address->ai_next) {
        // One silent address (a host whose IPv6 route is a black hole) must not use up the
        // whole timeout before the next address is tried.
        int error = 0;
        socket_ = connect_once(*address, std::min(deadline, Clock::now() + kConnectAttempt), error);
        if (socket_ < 0) last_error = error != 0 ? std::strerror(error) : "no answer";
      }
    }
    if (socket_ >= 0) break;
    if (Clock::now() >= deadline)
      throw DistributedError(make_message("TCPStore: timed out after ", timeout_.count(), " ms connecting to ",
                                          endpoint(), " (last error: ", last_error, ")"));
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(20), deadline - Clock::now()));
  }
  set_nodelay(socket_);
}

TCPStore::~TCPStore() {
  if (socket_ >= 0) ::close(socket_);
  server_.reset();  // stops the server thread (other ranks must be done with it by now)
}

std::string TCPStore::endpoint() const {
  return (host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

TCPStore::Reply TCPStore::request(std::uint8_t command, const std::vector<Bytes>& arguments,
                                  Clock::time_point deadline, Milliseconds budget, const std::string& what) {
  if (socket_ < 0)
    throw DistributedError(make_message("TCPStore: ", what, " on a connection to ", endpoint(),
                                        " that was closed after an earlier error (", broken_, ")"));
  Reply reply;
  Io result = send_all(socket_, encode_frame(command, arguments), deadline);
  if (result == Io::Done) result = receive_frame(socket_, reply.status, reply.values, deadline);
  if (result == Io::Done) return reply;
  broken_ = result == Io::TimedOut ? "timed out" : "connection lost";
  ::close(socket_);
  socket_ = -1;
  if (result == Io::TimedOut)
    throw DistributedError(make_message("TCPStore: ", what, " timed out after ", budget.count(),
                                        " ms: the store at ", endpoint(),
                                        " did not answer (is the process serving it, rank 0, stopped or hung?)"));
  throw DistributedError(make_message("TCPStore: lost the connection to ", endpoint(), " during ", what,
                                      " (did rank 0 exit?)"));
}

void TCPStore::set(const std::string& key, const std::vector<char>& value) {
  request(kSet, {to_bytes(key), value}, Clock::now() + timeout_, timeout_, "set('" + key + "')");
}

std::vector<char> TCPStore::get(const std::string& key) {
  wait({key});
  Reply reply = request(kGet, {to_bytes(key)}, Clock::now() + timeout_, timeout_, "get('" + key + "')");
  EMBER_CHECK(reply.status == 1 && reply.values.size() == 1, DistributedError, "TCPStore: get('", key,
              "'): the key vanished from the store at ", endpoint());
  return reply.values[0];
}

std::int64_t TCPStore::add(const std::string& key, std::int64_t delta) {
  Reply reply = request(kAdd, {to_bytes(key), to_bytes(std::to_string(delta))}, Clock::now() + timeout_, timeout_,
                        "add('" + key + "')");
  EMBER_CHECK(reply.values.size() == 1, DistributedError, "TCPStore: add('", key, "'): malformed reply from ",
              endpoint());
  return std::stoll(to_string(reply.values[0]));
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::vector<Bytes> arguments;
  for (const auto& key : keys) arguments.push_back(to_bytes(key));
  return request(kCheck, arguments, Clock::now() + timeout_, timeout_, "check").status == 1;
}

void TCPStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TCPStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string names;
  for (const auto& key : keys) names += (names.empty() ? "" : ", ") + key;
  std::vector<Bytes> arguments;
  for (const auto& key : keys) arguments.push_back(to_bytes(key));
  while (true) {
    // Each CHECK must be answered by the wait's own deadline (plus a moment, so that a
    // busy but healthy server answering the last one is not taken for a dead one): a
    // stopped server ends the wait on time instead of blocking in recv() for ever.
    const auto request_deadline = std::max(deadline, Clock::now() + kAnswerGrace);
    if (request(kCheck, arguments, request_deadline, timeout, "wait([" + names + "])").status == 1) return;
    if (Clock::now() >= deadline)
      throw DistributedError(make_message("TCPStore: wait timed out after ", timeout.count(), " ms for keys [",
                                          names, "]"));
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(5), deadline - Clock::now()));
  }
}

}  // namespace ember::distributed
