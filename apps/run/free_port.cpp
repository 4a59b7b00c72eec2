// apps/run/free_port.cpp — see free_port.h.
#include "free_port.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ember::run {
namespace {

// Binds port 0 on every interface of one family; the chosen port, or -1 with errno set.
int bind_any_port(int family) {
  int socket_fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (socket_fd < 0) return -1;
  sockaddr_storage address{};
  socklen_t length = 0;
  if (family == AF_INET6) {
    int off = 0;  // dual-stack, like the store: the port must be free for IPv4 too
    ::setsockopt(socket_fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    auto& v6 = reinterpret_cast<sockaddr_in6&>(address);
    v6.sin6_family = AF_INET6;
    v6.sin6_addr = in6addr_any;
    length = sizeof v6;
  } else {
    auto& v4 = reinterpret_cast<sockaddr_in&>(address);
    v4.sin_family = AF_INET;
    v4.sin_addr.s_addr = htonl(INADDR_ANY);
    length = sizeof v4;
  }
  int port = -1;
  if (::bind(socket_fd, reinterpret_cast<sockaddr*>(&address), length) == 0 &&
      ::getsockname(socket_fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(address).sin6_port)
                              : ntohs(reinterpret_cast<sockaddr_in&>(address).sin_port);
  }
  const int error = errno;
  ::close(socket_fd);
  errno = error;
  return port;
}

}  // namespace

int find_free_port() {
  int port = bind_any_port(AF_INET6);
  if (port < 0) port = bind_any_port(AF_INET);  // a kernel without IPv6
  if (port < 0) throw std::runtime_error(std::string("cannot bind a free port: ") + std::strerror(errno));
  return port;
}

}  // namespace ember::run
