// distributed/store_socket.cpp — frames, deadline I/O and addresses for TCPStore (see store_socket.h).
//
// Every blocking point is a poll() with a timeout computed from the caller's deadline, so
// no call here can outlive it: a peer that stops answering (SIGSTOP, a dead machine whose
// packets vanish) costs at most the time the caller allowed.
#include <ember/distributed/store_socket.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ember::distributed::store_socket {
namespace {

// A request larger than this is nonsense (a stray client, a port scanner): the server drops it.
constexpr std::size_t kMaxFrameBytes = std::size_t{1} << 30;
constexpr std::uint32_t kMaxFrameItems = 1u << 20;

}  // namespace

// ------------------------------------------------------------------ frames
Bytes encode_frame(std::uint8_t head, const std::vector<Bytes>& items) {
  std::size_t total = 1 + 4;
  for (const auto& item : items) total += 4 + item.size();
  Bytes frame(total);
  std::size_t at = 0;
  auto put_u32 = [&](std::uint32_t value) {
    const std::uint32_t network = htonl(value);
    std::memcpy(frame.data() + at, &network, 4);
    at += 4;
  };
  frame[at++] = static_cast<char>(head);
  put_u32(static_cast<std::uint32_t>(items.size()));
  for (const auto& item : items) {
    put_u32(static_cast<std::uint32_t>(item.size()));
    if (!item.empty()) std::memcpy(frame.data() + at, item.data(), item.size());
    at += item.size();
  }
  return frame;
}

Parse parse_frame(const char* data, std::size_t size, std::size_t& consumed, std::uint8_t& head,
                  std::vector<Bytes>& items) {
  std::size_t at = 0;
  auto read_u32 = [&](std::uint32_t& value) {
    if (size - at < 4) return false;
    std::memcpy(&value, data + at, 4);
    value = ntohl(value);
    at += 4;
    return true;
  };
  if (size < 1) return Parse::Incomplete;
  head = static_cast<std::uint8_t>(data[0]);
  at = 1;
  std::uint32_t count = 0;
  if (!read_u32(count)) return Parse::Incomplete;
  if (count > kMaxFrameItems) return Parse::Invalid;
  if (std::size_t{count} * 4 > size - at) return Parse::Incomplete;  // not even the lengths yet
  items.assign(count, {});
  std::size_t total = at;
  for (auto& item : items) {
    std::uint32_t length = 0;
    if (!read_u32(length)) return Parse::Incomplete;
    total += 4 + std::size_t{length};
    if (total > kMaxFrameBytes) return Parse::Invalid;
    if (size - at < length) return Parse::Incomplete;
    item.assign(data + at, data + at + length);
    at += length;
  }
  consumed = at;
  return Parse::Complete;
}

// ------------------------------------------------------------------ sockets
namespace {
int milliseconds_until(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}
}  // namespace

bool wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd entry{fd, events, 0};
    int ready = ::poll(&entry, 1, milliseconds_until(deadline));
    if (ready > 0) return true;  // readable/writable, or an error that the next call reports
    if (ready < 0 && errno != EINTR) return true;
    if (Clock::now() >= deadline) return false;
  }
}

Io send_all(int fd, const Bytes& bytes, Clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t count = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (count > 0) {
      sent += static_cast<std::size_t>(count);
    } else if (count < 0 && errno == EINTR) {
      continue;
    } else if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, deadline)) return Io::TimedOut;
    } else {
      return Io::Closed;
    }
  }
  return Io::Done;
}

// Reads until one whole frame has arrived.
Io receive_frame(int fd, std::uint8_t& head, std::vector<Bytes>& items, Clock::time_point deadline) {
  Bytes buffer;
  char chunk[4096];
  while (true) {
    std::size_t consumed = 0;
    Parse parsed = parse_frame(buffer.data(), buffer.size(), consumed, head, items);
    if (parsed == Parse::Complete) return Io::Done;
    if (parsed == Parse::Invalid) return Io::Closed;
    ssize_t count = ::recv(fd, chunk, sizeof chunk, 0);
    if (count > 0) {
      buffer.insert(buffer.end(), chunk, chunk + count);
    } else if (count < 0 && errno == EINTR) {
      continue;
    } else if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLIN, deadline)) return Io::TimedOut;
    } else {
      return Io::Closed;
    }
  }
}

void set_nodelay(int fd) {
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

AddressList::~AddressList() {
  if (head != nullptr) ::freeaddrinfo(head);
}

int resolve(const std::string& host, int port, AddressList& list) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  const std::string service = std::to_string(port);
  int status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list.head);
  if (status == EAI_NONAME || status == EAI_ADDRFAMILY || status == EAI_NODATA) {
    // AI_ADDRCONFIG hides ::1 and 127.0.0.1 on a machine whose only interface is loopback.
    hints.ai_flags = 0;
    status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list.head);
  }
  return status;
}

namespace {
// The address and port of a socket address, for comparing two of them.
std::pair<std::string, int> address_and_port(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
    return {text, ntohs(v4.sin_port)};
  }
  const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
  ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
  return {text, ntohs(v6.sin6_port)};
}

// TCP "simultaneous open": connecting on one machine to a port nobody listens on yet can,
// when the kernel happens to pick that same port as the source port, connect the socket
// to *itself*. The client would then read its own requests back as replies. Such a
// connection is dropped and retried.
bool connected_to_itself(int fd) {
  sockaddr_storage mine{}, peer{};
  socklen_t mine_length = sizeof(mine), peer_length = sizeof(peer);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_length) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0)
    return false;
  return address_and_port(mine) == address_and_port(peer);
}
}  // namespace

int connect_once(const addrinfo& address, Clock::time_point deadline, int& error) {
  int fd = ::socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, address.ai_protocol);
  if (fd < 0) {
    error = errno;
    return -1;
  }
  int status = ::connect(fd, address.ai_addr, address.ai_addrlen);
  if (status != 0 && errno == EINPROGRESS) {
    if (!wait_for(fd, POLLOUT, deadline)) {
      ::close(fd);
      error = 0;
      return -1;
    }
    socklen_t length = sizeof(error);
    error = 0;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    status = error == 0 ? 0 : -1;
  } else if (status != 0) {
    error = errno;
  }
  if (status == 0 && connected_to_itself(fd)) {
    status = -1;
    error = ECONNREFUSED;
  }
  if (status != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// IPv6 with IPV6_V6ONLY off also accepts IPv4 clients (as ::ffff:a.b.c.d); a kernel
// without IPv6 gets a plain IPv4 socket.
int listen_on_all_interfaces(int port, std::string& reason) {
  int on = 1, off = 0;
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_any;
    address.sin6_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 && ::listen(fd, 1024) == 0) return fd;
    const int error = errno;
    ::close(fd);
    if (error != EAFNOSUPPORT && error != EADDRNOTAVAIL) {
      reason = std::strerror(error);
      return -1;
    }
  }
  fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    reason = std::strerror(errno);
    return -1;
  }
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 && ::listen(fd, 1024) == 0) return fd;
  reason = std::strerror(errno);
  ::close(fd);
  return -1;
}

int bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  return address_and_port(address).second;
}

std::string address_text(const void* socket_address) {
  sockaddr_storage address{};
  const auto* raw = static_cast<const sockaddr*>(socket_address);
  std::memcpy(&address, raw, raw->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
  return address_and_port(address).first;
}

}  // namespace ember::distributed::store_socket

