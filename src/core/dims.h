// Dims: a small vector of int64 with inline room for 6 entries (sizes, strides, dim lists),
// so shape bookkeeping on the op-recording path does not allocate.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "lt/array_ref.h"

namespace lt {

class Dims {
 public:
  static constexpr size_t kInline = 6;
  Dims() = default;
  explicit Dims(size_t n, int64_t v = 0) { assign(n, v); }
  Dims(std::initializer_list<int64_t> l) { assign(l.begin(), l.size()); }
  Dims(IntList l) { assign(l.data(), l.size()); }
  Dims(const std::vector<int64_t>& v) { assign(v.data(), v.size()); }
  Dims(const Dims& o) { copy_from(o); }
  Dims(Dims&& o) noexcept { move_from(o); }
  Dims& operator=(const Dims& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  Dims& operator=(Dims&& o) noexcept {
    if (this != &o) {
      release();
      move_from(o);
    }
    return *this;
  }
  ~Dims() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& back() { return data()[size_ - 1]; }
  int64_t back() const { return data()[size_ - 1]; }
  operator IntList() const { return IntList(data(), size_); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - pos) * sizeof(int64_t));
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }
  void resize(size_t n, int64_t v = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = v;
    size_ = n;
  }
  void clear() { size_ = 0; }
  bool operator==(const Dims& o) const {
    return size_ == o.size_ && std::equal(begin(), end(), o.begin());
  }
  bool operator!=(const Dims& o) const { return !(*this == o); }

 private:
  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = std::max(n, cap_ * 2);
    auto* h = new int64_t[cap];
    std::memcpy(h, data(), size_ * sizeof(int64_t));
    delete[] heap_;
    heap_ = h;
    cap_ = cap;
  }
  void assign(const int64_t* p, size_t n) {
    size_ = 0;
    reserve(n);
    if (n) std::memmove(data(), p, n * sizeof(int64_t));  // p may be null when n == 0
    size_ = n;
  }
  void assign(size_t n, int64_t v) {
    size_ = 0;
    reserve(n);
    std::fill(data(), data() + n, v);
    size_ = n;
  }
  // Inline contents are copied whole (a fixed-size copy the compiler turns into a few vector
  // moves): shapes are copied on every recorded op.
  void copy_from(const Dims& o) {
    if (o.heap_) return assign(o.heap_, o.size_);
    if (heap_) release();
    std::memcpy(inline_, o.inline_, sizeof inline_);
    size_ = o.size_;
  }
  void release() {
    delete[] heap_;
    heap_ = nullptr;
    cap_ = kInline;
    size_ = 0;
  }
  void move_from(Dims& o) {
    size_ = o.size_;
    cap_ = o.cap_;
    if (o.heap_) {
      heap_ = o.heap_;
      o.heap_ = nullptr;
    } else {
      heap_ = nullptr;
      std::memcpy(inline_, o.inline_, sizeof inline_);
    }
    o.size_ = 0;
    o.cap_ = kInline;
  }

  int64_t inline_[kInline];
  int64_t* heap_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = kInline;
};

}  // namespace lt
