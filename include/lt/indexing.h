// Multi-dimensional indexing, as libtorch spells it: t.index({Slice(1, None), 0, None, Ellipsis}),
// t.index_put_({mask}, 0), t[i][j] = v. Integers, slices, None and Ellipsis give views (writes
// through them update the base); integer tensors (advanced indexing) and bool masks give copies.
// A bool mask read through index() is a data-dependent shape: on the lazy device it evaluates
// the mask (counted as DataDependentSync); index_put_ of a mask with a scalar value does not.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <type_traits>

#include "lt/tensor.h"

namespace lt::indexing {

constexpr std::nullopt_t None = std::nullopt;  // a new dimension of size 1, or a slice bound

struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};  // as many full slices as the other indices leave

// start:stop:step of Python; an absent bound is the whole dimension, a negative one counts from
// the end; the step is positive.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt);
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};

enum class TensorIndexType { None, Ellipsis, Integer, Boolean, Slice, Tensor };

class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : type_(TensorIndexType::None) {}
  TensorIndex(EllipsisIndexType) : type_(TensorIndexType::Ellipsis) {}
  TensorIndex(const char* s);  // "..." only
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T i) : type_(TensorIndexType::Integer), integer_(static_cast<int64_t>(i)) {}
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T b) : type_(TensorIndexType::Boolean), boolean_(b) {}
  TensorIndex(Slice s) : type_(TensorIndexType::Slice), slice_(s) {}
  TensorIndex(Tensor t) : type_(TensorIndexType::Tensor), tensor_(std::move(t)) {}

  TensorIndexType type() const { return type_; }
  bool is_none() const { return type_ == TensorIndexType::None; }
  bool is_ellipsis() const { return type_ == TensorIndexType::Ellipsis; }
  bool is_integer() const { return type_ == TensorIndexType::Integer; }
  bool is_boolean() const { return type_ == TensorIndexType::Boolean; }
  bool is_slice() const { return type_ == TensorIndexType::Slice; }
  bool is_tensor() const { return type_ == TensorIndexType::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  TensorIndexType type_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

std::ostream& operator<<(std::ostream& os, const Slice& s);
std::ostream& operator<<(std::ostream& os, const TensorIndex& i);

}  // namespace lt::indexing

namespace lt {

// The coordinates of t's nonzero elements, [n, t.dim()] int64. Its shape depends on the values:
// on the lazy device it evaluates t (counted as DataDependentSync).
Tensor nonzero(const Tensor& t);

}  // namespace lt
