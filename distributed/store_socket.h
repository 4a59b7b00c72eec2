// distributed/store_socket.h — the socket plumbing under TCPStore (internal to distributed/).
//
// Tutorial §9.3. TCPStore (tcp_store.h) is "a map on rank 0 that every rank can reach";
// this file is how it reaches it without ever hanging:
//   - frames: the store's wire format, encoded whole and decoded incrementally from a buffer;
//   - deadline I/O: non-blocking sockets whose every wait is a poll() that ends at a deadline;
//   - addresses: getaddrinfo for host names and numeric IPv4/IPv6 addresses, a
//     non-blocking connect bounded by the deadline, and a listening socket on every interface.
// Not part of ember's public API (the names may change); process_group.cpp also uses
// resolve() to find the local address towards MASTER_ADDR.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

struct addrinfo;

namespace ember::distributed::store_socket {

using Bytes = std::vector<char>;
using Clock = std::chrono::steady_clock;

// ---- frames: u8 head, u32 count, count × (u32 length, bytes); integers in network order
Bytes encode_frame(std::uint8_t head, const std::vector<Bytes>& items);
enum class Parse { Incomplete, Complete, Invalid };
// Decodes one frame from the front of data[0, size) if it is all there (`consumed` = its
// size). Invalid: absurd counts or lengths (a stray client), which the server drops.
Parse parse_frame(const char* data, std::size_t size, std::size_t& consumed, std::uint8_t& head,
                  std::vector<Bytes>& items);

// ---- I/O on a non-blocking socket, bounded by a deadline
enum class Io { Done, Closed, TimedOut };
bool wait_for(int fd, short poll_events, Clock::time_point deadline);  // false: the deadline passed
Io send_all(int fd, const Bytes& bytes, Clock::time_point deadline);
Io receive_frame(int fd, std::uint8_t& head, std::vector<Bytes>& items, Clock::time_point deadline);
void set_nodelay(int fd);

// ---- addresses
// getaddrinfo's list for a TCP connection to host:port (IPv4 and IPv6), freed on destruction.
struct AddressList {
  addrinfo* head = nullptr;
  AddressList() = default;
  AddressList(const AddressList&) = delete;
  AddressList& operator=(const AddressList&) = delete;
  ~AddressList();
};
// 0, or getaddrinfo's EAI_ error code (gai_strerror explains it).
int resolve(const std::string& host, int port, AddressList& list);
// One non-blocking connect, waiting at most until the deadline. The connected socket, or
// -1 with `error` = errno (0 when the deadline passed first).
int connect_once(const addrinfo& address, Clock::time_point deadline, int& error);
// A listening, non-blocking socket on `port` of every interface (IPv6 dual-stack, or IPv4
// where the kernel has no IPv6); -1 with `reason` on failure.
int listen_on_all_interfaces(int port, std::string& reason);
int bound_port(int fd);
// "a.b.c.d" or an IPv6 address in text form, for a socket address.
std::string address_text(const void* socket_address);

}  // namespace ember::distributed::store_socket
