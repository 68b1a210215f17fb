// c10::irange(n) and c10::irange(begin, end): integer ranges for range-for, as libtorch programs
// write them (part of the lazytensor::torch drop-in headers).
#pragma once
#include <cstdint>
#include <type_traits>

namespace c10 {

template <typename I>
class IntegerRange {
 public:
  class iterator {
   public:
    explicit iterator(I v) : v_(v) {}
    I operator*() const { return v_; }
    iterator& operator++() {
      ++v_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return v_ != o.v_; }
    bool operator==(const iterator& o) const { return v_ == o.v_; }

   private:
    I v_;
  };
  IntegerRange(I begin, I end) : begin_(begin), end_(end < begin ? begin : end) {}
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  I begin_, end_;
};

// [0, end); empty when end <= 0.
template <typename I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
IntegerRange<I> irange(I end) {
  return IntegerRange<I>(I{0}, end);
}
// [begin, end) in the wider of the two types; empty when end <= begin.
template <typename B, typename E,
          std::enable_if_t<std::is_integral_v<B> && std::is_integral_v<E>, int> = 0>
IntegerRange<std::common_type_t<B, E>> irange(B begin, E end) {
  using I = std::common_type_t<B, E>;
  return IntegerRange<I>(static_cast<I>(begin), static_cast<I>(end));
}

}  // namespace c10
