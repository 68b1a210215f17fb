// IntList: a non-owning view of int64 values (sizes, dims), built from {..}, a vector or one int.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <type_traits>
#include <utility>
#include <vector>

namespace lt {

template <typename T>
class ArrayRef {
 public:
  ArrayRef() : data_(nullptr), size_(0) {}
  ArrayRef(const T& one) : data_(&one), size_(1) {}
  ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  // Like c10::ArrayRef: valid for the full-expression that builds it (a call's arguments).
  ArrayRef(std::initializer_list<T> l) : data_(l.begin()), size_(l.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  template <typename C, typename = decltype(std::declval<const C&>().data()),
            typename = std::enable_if_t<
                std::is_same_v<std::remove_cv_t<std::remove_pointer_t<decltype(
                                   std::declval<const C&>().data())>>,
                               T> &&
                !std::is_same_v<C, std::vector<T>>>>
  ArrayRef(const C& c) : data_(c.data()), size_(c.size()) {}

  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(data_, data_ + size_); }
  // Element-wise equality, as c10::IntArrayRef: t.sizes() == std::vector<int64_t>{2, 3}, or
  // == another tensor's sizes(); the other side converts (C++20 derives != and the reverse).
  friend bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }
  bool equals(ArrayRef o) const {
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (data_[i] != o.data_[i]) return false;
    return true;
  }

 private:
  const T* data_;
  size_t size_;
};

// "[2, 3]", so that gtest's ASSERT_EQ(t.sizes(), ...) prints sizes.
template <typename T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << "[";
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << "]";
}

using IntList = ArrayRef<int64_t>;
using IntArrayRef = ArrayRef<int64_t>;

}  // namespace lt
