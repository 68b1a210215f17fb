// What the tests compare a tensor by: its values as float64 on the host (any device, dtype or
// layout), and its shape.
#pragma once
#include <lt/lt.h>

#include <cstdint>
#include <vector>

namespace lt_test {

inline std::vector<double> vals(const lt::Tensor& t) {
  return t.to(lt::kCPU).to(lt::kFloat64).to_vector<double>();
}
inline std::vector<int64_t> shape(const lt::Tensor& t) {
  return {t.sizes().begin(), t.sizes().end()};
}

}  // namespace lt_test
