// distributed/tcp_store.cpp — the rendezvous key-value store over TCP (see tcp_store.h).
//
// Server: one thread, one poll() loop over the listening socket, the client sockets and a
// "wake" pipe used to stop it. Every request is answered at once (no request blocks),
// so a single thread serves any number of ranks. Client: one blocking socket per
// TCPStore; get/wait poll the server with CHECK until the deadline.
#include <ember/distributed/tcp_store.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <ember/distributed/distributed_error.h>

namespace ember::distributed {
namespace {

enum Command : std::uint8_t { kSet = 1, kGet = 2, kAdd = 3, kCheck = 4 };

using Bytes = std::vector<char>;

// Sends/receives exactly `size` bytes; false when the peer has gone.
bool send_all(int fd, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t sent = ::send(fd, bytes, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes += sent;
    size -= static_cast<std::size_t>(sent);
  }
  return true;
}

bool receive_all(int fd, void* data, std::size_t size) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    ssize_t got = ::recv(fd, bytes, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    bytes += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

// One frame: a header byte, then a counted list of length-prefixed byte strings.
bool send_frame(int fd, std::uint8_t head, const std::vector<Bytes>& items) {
  Bytes frame;
  frame.push_back(static_cast<char>(head));
  auto append_u32 = [&frame](std::uint32_t value) {
    std::uint32_t network = htonl(value);
    const char* raw = reinterpret_cast<const char*>(&network);
    frame.insert(frame.end(), raw, raw + 4);
  };
  append_u32(static_cast<std::uint32_t>(items.size()));
  for (const auto& item : items) {
    append_u32(static_cast<std::uint32_t>(item.size()));
    frame.insert(frame.end(), item.begin(), item.end());
  }
  return send_all(fd, frame.data(), frame.size());
}

bool receive_frame(int fd, std::uint8_t& head, std::vector<Bytes>& items) {
  auto read_u32 = [fd](std::uint32_t& value) {
    if (!receive_all(fd, &value, 4)) return false;
    value = ntohl(value);
    return true;
  };
  std::uint32_t count = 0;
  if (!receive_all(fd, &head, 1) || !read_u32(count)) return false;
  items.assign(count, {});
  for (auto& item : items) {
    std::uint32_t length = 0;
    if (!read_u32(length)) return false;
    item.resize(length);
    if (length > 0 && !receive_all(fd, item.data(), length)) return false;
  }
  return true;
}

std::string to_string(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }
Bytes to_bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

sockaddr_in make_address(const std::string& host, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  // Only numeric IPv4 addresses: the store is for 127.0.0.1 and cluster-internal IPs.
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1)
    throw ValueError(make_message("TCPStore: '", host, "' is not a numeric IPv4 address"));
  return address;
}

// TCP "simultaneous open": connecting on one machine to a port nobody listens on yet can,
// when the kernel happens to pick that same port as the source port, connect the socket
// to *itself*. The client would then read its own requests back as replies. Such a
// connection is dropped and retried.
bool connected_to_itself(int fd) {
  sockaddr_in mine{}, peer{};
  socklen_t mine_length = sizeof(mine), peer_length = sizeof(peer);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_length) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0)
    return false;
  return mine.sin_port == peer.sin_port && mine.sin_addr.s_addr == peer.sin_addr.s_addr;
}

}  // namespace

// ------------------------------------------------------------------ the server
class TCPStore::Server {
 public:
  Server(const std::string& host, int port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int on = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_in address = make_address(host, port);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(listen_fd_, 128) != 0) {
      std::string reason = std::strerror(errno);
      ::close(listen_fd_);
      throw DistributedError(make_message("TCPStore: cannot bind ", host, ":", port, ": ", reason));
    }
    socklen_t length = sizeof(address);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    if (::pipe(wake_pipe_) != 0) throw DistributedError("TCPStore: pipe() failed");
    thread_ = std::thread([this] { serve(); });
  }

  ~Server() {
    char byte = 0;
    [[maybe_unused]] ssize_t ignored = ::write(wake_pipe_[1], &byte, 1);
    thread_.join();
    for (int fd : clients_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_pipe_[0]);
    ::close(wake_pipe_[1]);
  }

  int port() const { return port_; }

 private:
  void serve() {
    while (true) {
      std::vector<pollfd> fds{{wake_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (int fd : clients_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;  // asked to stop
      std::vector<int> still_open;
      for (std::size_t i = 2; i < fds.size(); ++i) {
        bool open = true;
        if (fds[i].revents) open = handle(fds[i].fd);
        if (open) still_open.push_back(fds[i].fd);
        else ::close(fds[i].fd);
      }
      // A new client joins after the old ones were served (it was not in this poll set).
      if (fds[1].revents & POLLIN) {
        int client = ::accept(listen_fd_, nullptr, nullptr);
        if (client >= 0) {
          int on = 1;
          ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
          still_open.push_back(client);
        }
      }
      clients_ = std::move(still_open);
    }
  }

  // Answers one request; false when the client disconnected (or spoke nonsense).
  bool handle(int fd) {
    std::uint8_t command = 0;
    std::vector<Bytes> items;
    if (!receive_frame(fd, command, items)) return false;
    switch (command) {
      case kSet:
        if (items.size() != 2) return false;
        data_[to_string(items[0])] = items[1];
        return send_frame(fd, 1, {});
      case kGet: {
        if (items.size() != 1) return false;
        auto found = data_.find(to_string(items[0]));
        if (found == data_.end()) return send_frame(fd, 0, {});
        return send_frame(fd, 1, {found->second});
      }
      case kAdd: {
        if (items.size() != 2) return false;
        Bytes& stored = data_[to_string(items[0])];
        std::int64_t value = stored.empty() ? 0 : std::stoll(to_string(stored));
        value += std::stoll(to_string(items[1]));
        stored = to_bytes(std::to_string(value));
        return send_frame(fd, 1, {stored});
      }
      case kCheck: {
        bool all = true;
        for (const auto& key : items) all = all && data_.count(to_string(key)) > 0;
        return send_frame(fd, all ? 1 : 0, {});
      }
      default:
        return false;
    }
  }

  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::vector<int> clients_;
  std::map<std::string, Bytes> data_;
  std::thread thread_;
};

// ------------------------------------------------------------------ the client
TCPStore::TCPStore(std::string host, int port, bool is_master, Milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {
  sockaddr_in address = make_address(host_, port_);  // validates the host first
  if (is_master) {
    server_ = std::make_unique<Server>(host_, port_);
    port_ = server_->port();
    address.sin_port = htons(static_cast<std::uint16_t>(port_));
  }
  // The master may not be listening yet: retry until the deadline, like PyTorch's client.
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (true) {
    socket_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(socket_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        !connected_to_itself(socket_))
      break;
    ::close(socket_);
    socket_ = -1;
    if (std::chrono::steady_clock::now() >= deadline)
      throw DistributedError(make_message("TCPStore: timed out after ", timeout_.count(),
                                          " ms connecting to ", host_, ":", port_));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int on = 1;
  ::setsockopt(socket_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

TCPStore::~TCPStore() {
  if (socket_ >= 0) ::close(socket_);
  server_.reset();  // stops the server thread (other ranks must be done with it by now)
}

TCPStore::Reply TCPStore::request(std::uint8_t command, const std::vector<Bytes>& arguments) {
  Reply reply;
  if (!send_frame(socket_, command, arguments) || !receive_frame(socket_, reply.status, reply.values))
    throw DistributedError(make_message("TCPStore: lost the connection to ", host_, ":", port_,
                                        " (did rank 0 exit?)"));
  return reply;
}

void TCPStore::set(const std::string& key, const std::vector<char>& value) {
  request(kSet, {to_bytes(key), value});
}

std::vector<char> TCPStore::get(const std::string& key) {
  wait({key});
  return request(kGet, {to_bytes(key)}).values.at(0);
}

std::int64_t TCPStore::add(const std::string& key, std::int64_t delta) {
  return std::stoll(to_string(request(kAdd, {to_bytes(key), to_bytes(std::to_string(delta))}).values.at(0)));
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::vector<Bytes> arguments;
  for (const auto& key : keys) arguments.push_back(to_bytes(key));
  return request(kCheck, arguments).status == 1;
}

void TCPStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TCPStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!check(keys)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string names;
      for (const auto& key : keys) names += (names.empty() ? "" : ", ") + key;
      throw DistributedError(make_message("TCPStore: wait timed out after ", timeout.count(),
                                          " ms for keys [", names, "]"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace ember::distributed
