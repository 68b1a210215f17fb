// The lt::Error message a call throws ("no error" when it throws none), for tests that check
// what an error names.
#pragma once
#include <lt/lt.h>

#include <functional>
#include <string>

namespace lt_test {

inline std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const lt::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace lt_test
