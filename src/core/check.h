// LT_CHECK(cond, parts...): throw lt::Error with the parts streamed into one message.
#pragma once
#include <sstream>
#include <string>

#include "lt/error.h"

namespace lt {

template <typename... Args>
[[noreturn]] void throw_error(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw Error(os.str());
}

}  // namespace lt

#define LT_CHECK(cond, ...)                \
  do {                                     \
    if (!(cond)) ::lt::throw_error(__VA_ARGS__); \
  } while (0)
