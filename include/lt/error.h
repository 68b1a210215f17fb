// lt::Error: the one exception type the library throws for bad input (shapes, dtypes, devices).
#pragma once
#include <stdexcept>
#include <string>

namespace lt {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

}  // namespace lt
