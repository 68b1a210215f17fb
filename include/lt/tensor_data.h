// TensorData: the values of lt::tensor({...}) as libtorch's torch::tensor takes them: a scalar
// (a 0-d tensor) or nested braced lists of one shape. The dtype follows the values: integers give
// int64, bools give bool, and floating values the default floating dtype (float32).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "lt/error.h"

namespace lt {

class TensorData {
 public:
  enum class Kind : uint8_t { Bool = 0, Int = 1, Float = 2 };  // promotion: the maximum

  TensorData(bool v) : kind_(Kind::Bool), ints_{v ? 1 : 0} {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  TensorData(T v) : kind_(Kind::Int), ints_{static_cast<int64_t>(v)} {}
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  TensorData(T v) : kind_(Kind::Float), floats_{static_cast<double>(v)} {}
  // One more dimension; every element must have the same shape ("tensor: ..." errors).
  TensorData(std::initializer_list<TensorData> list);

  const std::vector<int64_t>& sizes() const { return sizes_; }
  Kind kind() const { return kind_; }
  // The values in row-major order; ints() for Bool and Int data, floats() for Float data.
  const std::vector<int64_t>& ints() const { return ints_; }
  const std::vector<double>& floats() const { return floats_; }

 private:
  std::vector<int64_t> sizes_;
  Kind kind_ = Kind::Float;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
};

inline TensorData::TensorData(std::initializer_list<TensorData> list) {
  sizes_.push_back(static_cast<int64_t>(list.size()));
  if (list.size() == 0) return;  // tensor({}): an empty float tensor
  const TensorData& first = *list.begin();
  kind_ = Kind::Bool;
  for (const TensorData& e : list) {
    if (e.sizes_ != first.sizes_)
      throw Error("tensor: nested lists of different lengths (expected every element of a list "
                  "to have the same shape)");
    if (e.kind_ > kind_) kind_ = e.kind_;
  }
  sizes_.insert(sizes_.end(), first.sizes_.begin(), first.sizes_.end());
  for (const TensorData& e : list) {
    if (kind_ == Kind::Float) {
      if (e.kind_ == Kind::Float)
        floats_.insert(floats_.end(), e.floats_.begin(), e.floats_.end());
      else
        for (int64_t v : e.ints_) floats_.push_back(static_cast<double>(v));
    } else {
      ints_.insert(ints_.end(), e.ints_.begin(), e.ints_.end());
    }
  }
}

}  // namespace lt
