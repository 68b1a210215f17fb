// Small-object pool for what every recorded op allocates (IR nodes, tensor handles, lazy
// payloads, aliases). Freed blocks stay on a per-thread free list of their size class, so
// recording neither calls malloc nor page-faults on memory the heap gave back to the system.
// Blocks a thread frees at exit go to a shared depot that other threads refill from.
// The fast paths are inline (a size known at compile time picks its class for free).
// Under AddressSanitizer it is plain new/delete, so use-after-free and leaks are still caught.
#pragma once
#include <cstddef>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define LT_POOL_DISABLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LT_POOL_DISABLED 1
#endif
#endif

namespace lt::pool {

namespace detail {
constexpr size_t kGrain = 16;  // size classes: 16, 32, ..., kMaxSize bytes
constexpr size_t kMaxSize = 512;
constexpr size_t kClasses = kMaxSize / kGrain;
struct Block {
  Block* next;
};
// Plain data (zero-initialized), so initial-exec TLS reaches it with one %fs-relative load.
struct Cache {
  Block* head[kClasses];
  char* bump;  // carving position in the current slab
  char* bump_end;
  bool registered;  // this thread's exit hook is armed (its first allocation did it)
  bool gone;        // the thread is exiting: everything goes through the depot
};
extern __attribute__((tls_model("initial-exec"))) thread_local Cache t_cache;
constexpr size_t class_of(size_t n) { return (n + kGrain - 1) / kGrain - 1; }
void* allocate_slow(size_t n);
void deallocate_slow(void* p, size_t n) noexcept;
}  // namespace detail

// For a thread that frees blocks other threads allocated and allocates few of its own (the
// background compile worker frees each graph copy it compiled): its blocks go back to the
// shared depot, which the allocating threads refill from, instead of piling up on its own list.
void share_freed_blocks();
inline void* allocate(size_t n) {
#ifndef LT_POOL_DISABLED
  if (n - 1 < detail::kMaxSize) {  // 1..kMaxSize
    detail::Cache& c = detail::t_cache;
    const size_t cls = detail::class_of(n);
    if (detail::Block* b = c.head[cls]) {
      c.head[cls] = b->next;
      return b;
    }
  }
#endif
  return detail::allocate_slow(n);
}

inline void deallocate(void* p, size_t n) noexcept {
#ifndef LT_POOL_DISABLED
  detail::Cache& c = detail::t_cache;
  if (p && n - 1 < detail::kMaxSize && c.registered && !c.gone) {
    auto* b = static_cast<detail::Block*>(p);
    const size_t cls = detail::class_of(n);
    b->next = c.head[cls];
    c.head[cls] = b;
    return;
  }
#endif
  detail::deallocate_slow(p, n);
}

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
