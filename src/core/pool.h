// Small-object pool for what every recorded op allocates (IR nodes, tensor handles, lazy
// payloads, aliases). Freed blocks stay on a per-thread free list of their size class, so
// recording neither calls malloc nor page-faults on memory the heap gave back to the system.
// Blocks a thread frees at exit go to a shared depot that other threads refill from.
// Under AddressSanitizer it is plain new/delete, so use-after-free and leaks are still caught.
#pragma once
#include <cstddef>
#include <new>

namespace lt::pool {

void* allocate(size_t n);
void deallocate(void* p, size_t n) noexcept;

// For std::allocate_shared (the control block and the object in one pooled block).
template <typename T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <typename U>
  Allocator(const Allocator<U>&) {}  // NOLINT: rebinding is implicit by design
  T* allocate(size_t n) { return static_cast<T*>(pool::allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { pool::deallocate(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const Allocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const Allocator<U>&) const {
    return false;
  }
};

// Mix into a class to allocate it from the pool with plain `new`/`delete`.
struct Pooled {
  static void* operator new(size_t n) { return allocate(n); }
  static void operator delete(void* p, size_t n) noexcept { deallocate(p, n); }
};

}  // namespace lt::pool
