// core/error.h — ember's exception types.
//
// Every bad input becomes an exception, never an abort. The messages follow PyTorch's
// wording so a learner can search for them. Each kind of mistake has its own subclass so
// tests (and users) can catch precisely: a shape mismatch is not a dtype mismatch.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

// Base of every error ember throws on purpose (PyTorch: RuntimeError).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

class ShapeError : public Error { using Error::Error; };      // sizes do not fit together
class DTypeError : public Error { using Error::Error; };      // wrong or incompatible dtype
class DeviceError : public Error { using Error::Error; };     // wrong device / device missing
class IndexError : public Error { using Error::Error; };      // index or dim out of range
class ValueError : public Error { using Error::Error; };      // an argument's value is invalid
class AutogradError : public Error { using Error::Error; };   // misuse of the autograd graph
class IOError : public Error { using Error::Error; };         // a file is missing or corrupt
class NotImplementedError : public Error { using Error::Error; };

namespace detail {
inline void append_all(std::ostringstream&) {}
template <class First, class... Rest>
void append_all(std::ostringstream& out, const First& first, const Rest&... rest) {
  out << first;
  append_all(out, rest...);
}
}  // namespace detail

// Builds a message from any streamable pieces: make_message("got ", n, " dims").
template <class... Parts>
std::string make_message(const Parts&... parts) {
  std::ostringstream out;
  detail::append_all(out, parts...);
  return out.str();
}

}  // namespace ember

// EMBER_CHECK(cond, ErrorType, pieces...) throws ErrorType(message) when cond is false.
#define EMBER_CHECK(cond, ErrorType, ...)                         \
  do {                                                            \
    if (!(cond)) throw ErrorType(::ember::make_message(__VA_ARGS__)); \
  } while (0)
