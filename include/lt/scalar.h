// Scalar: a host number (bool, integer or floating) used as an op argument.
#pragma once
#include <cstdint>
#include <type_traits>

#include "lt/dtype.h"

namespace lt {

class Scalar {
 public:
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : dtype_(kBool), i_(v), d_(v) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : dtype_(kInt64), i_(static_cast<int64_t>(v)), d_(static_cast<double>(v)) {}
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : dtype_(kFloat64), i_(static_cast<int64_t>(v)), d_(static_cast<double>(v)) {}
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}

  // kBool, kInt64 or kFloat64: the "wrapped number" dtype PyTorch gives a host scalar.
  Dtype dtype() const { return dtype_; }
  bool is_floating() const { return dtype_ == kFloat64; }
  bool is_integral() const { return dtype_ == kInt64; }
  bool is_bool() const { return dtype_ == kBool; }
  double to_double() const { return d_; }
  int64_t to_int() const { return i_; }
  template <typename T>
  T to() const {
    if constexpr (std::is_floating_point_v<T>)
      return static_cast<T>(d_);
    else if constexpr (std::is_same_v<T, bool>)
      return is_floating() ? d_ != 0 : i_ != 0;
    else
      return is_floating() ? static_cast<T>(d_) : static_cast<T>(i_);
  }

 private:
  Dtype dtype_;
  int64_t i_;
  double d_;
};

}  // namespace lt
