// LT_CHECK(cond, parts...): throw lt::Error with the parts streamed into one message.
#pragma once
#include <sstream>
#include <string>

#include "lt/error.h"

namespace lt {

// The op the user called, while a composite (cross_entropy, embedding, max(dim), an in-place
// op...) runs: an error raised by a primitive it calls names it first ("cross_entropy: gather:
// index 3 is out of bounds ..."). Nested contexts keep the outermost, the user's call.
class OpContext {
 public:
  explicit OpContext(const char* name) : set_(current() == nullptr) {
    if (set_) current() = name;
  }
  ~OpContext() {
    if (set_) current() = nullptr;
  }
  OpContext(const OpContext&) = delete;
  OpContext& operator=(const OpContext&) = delete;
  static const char*& current() {
    thread_local const char* c = nullptr;
    return c;
  }

 private:
  bool set_;
};

inline std::string with_op_context(std::string msg) {
  const char* c = OpContext::current();
  if (!c) return msg;
  const std::string p = std::string(c) + ":";
  return msg.compare(0, p.size(), p) == 0 ? msg : p + " " + msg;
}

template <typename... Args>
[[noreturn]] void throw_error(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw Error(with_op_context(os.str()));
}

}  // namespace lt

#define LT_CHECK(cond, ...)                \
  do {                                     \
    if (!(cond)) ::lt::throw_error(__VA_ARGS__); \
  } while (0)
