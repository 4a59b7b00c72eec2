// apps/run/free_port.cpp — see free_port.h.
#include "free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ember::run {

int find_free_port(const std::string& address) {
  int socket_fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (socket_fd < 0) throw std::runtime_error(std::string("socket() failed: ") + std::strerror(errno));
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  socket_address.sin_port = 0;  // "any port": the kernel picks one that is free
  // A host name (e.g. "localhost") is not parsed here: then ask on every interface.
  if (::inet_pton(AF_INET, address.c_str(), &socket_address.sin_addr) != 1) socket_address.sin_addr.s_addr = INADDR_ANY;
  if (::bind(socket_fd, reinterpret_cast<sockaddr*>(&socket_address), sizeof socket_address) != 0) {
    int error = errno;
    ::close(socket_fd);
    throw std::runtime_error("bind() to a free port on " + address + " failed: " + std::strerror(error));
  }
  socklen_t length = sizeof socket_address;
  if (::getsockname(socket_fd, reinterpret_cast<sockaddr*>(&socket_address), &length) != 0) {
    int error = errno;
    ::close(socket_fd);
    throw std::runtime_error(std::string("getsockname() failed: ") + std::strerror(error));
  }
  ::close(socket_fd);
  return ntohs(socket_address.sin_port);
}

}  // namespace ember::run
