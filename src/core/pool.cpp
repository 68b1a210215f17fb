#include "core/pool.h"

#include <cstdint>
#include <mutex>

namespace lt::pool {

#ifdef LT_POOL_DISABLED

namespace detail {
void* allocate_slow(size_t n) { return ::operator new(n); }
void deallocate_slow(void* p, size_t) noexcept { ::operator delete(p); }
}  // namespace detail
void share_freed_blocks() {}

#else

namespace detail {

__attribute__((tls_model("initial-exec"))) thread_local Cache t_cache;

namespace {

constexpr size_t kSlabBytes = size_t{64} << 10;

// Blocks freed by exited threads (and by anyone after their own cache is gone), per class.
struct Depot {
  std::mutex mu;
  Block* head[kClasses] = {};
};
Depot& depot() {
  static Depot* d = new Depot();  // never destroyed: frees may run during static teardown
  return *d;
}

// Hands the exiting thread's free blocks to the depot; registered on its first allocation.
struct Reaper {
  bool armed = false;
  ~Reaper() {
    Cache& c = t_cache;
    Depot& d = depot();
    std::lock_guard<std::mutex> g(d.mu);
    for (size_t k = 0; k < kClasses; ++k)
      while (Block* b = c.head[k]) {
        c.head[k] = b->next;
        b->next = d.head[k];
        d.head[k] = b;
      }
    c.gone = true;
  }
};
thread_local Reaper t_reaper;

void* from_depot_or_new(size_t cls) {
  Depot& d = depot();
  std::lock_guard<std::mutex> g(d.mu);
  if (Block* b = d.head[cls]) {
    d.head[cls] = b->next;
    return b;
  }
  return ::operator new((cls + 1) * kGrain);  // a whole class-sized block: it may be reused
}

}  // namespace

void* allocate_slow(size_t n) {
  if (n == 0) n = 1;
  if (n > kMaxSize) return ::operator new(n);
  const size_t cls = class_of(n);
  Cache& c = t_cache;
  if (c.gone) return from_depot_or_new(cls);  // thread teardown
  if (!c.registered) {
    c.registered = true;
    t_reaper.armed = true;  // first use: registers its destructor for this thread's exit
  }
  {
    Depot& d = depot();
    std::lock_guard<std::mutex> g(d.mu);
    if (Block* b = d.head[cls]) {  // take the whole list
      d.head[cls] = nullptr;
      c.head[cls] = b->next;
      return b;
    }
  }
  const size_t size = (cls + 1) * kGrain;
  if (c.bump == nullptr || c.bump + size > c.bump_end) {
    // Slabs are kept for the life of the process, like any allocator's arenas.
    c.bump = static_cast<char*>(::operator new(kSlabBytes));
    c.bump_end = c.bump + kSlabBytes;
  }
  void* p = c.bump;
  c.bump += size;
  return p;
}

void deallocate_slow(void* p, size_t n) noexcept {
  if (!p) return;
  if (n == 0) n = 1;
  if (n > kMaxSize) return ::operator delete(p);
  // Exiting, or a thread that never allocated from the pool: the depot keeps the block.
  Block* b = static_cast<Block*>(p);
  const size_t cls = class_of(n);
  Depot& d = depot();
  std::lock_guard<std::mutex> g(d.mu);
  b->next = d.head[cls];
  d.head[cls] = b;
}

}  // namespace detail

void share_freed_blocks() {
  detail::Cache& c = detail::t_cache;
  detail::Depot& d = detail::depot();
  std::lock_guard<std::mutex> g(d.mu);
  for (size_t k = 0; k < detail::kClasses; ++k)
    while (detail::Block* b = c.head[k]) {
      c.head[k] = b->next;
      b->next = d.head[k];
      d.head[k] = b;
    }
  c.gone = true;  // from now on every free (and allocation) goes through the depot
}

#endif

}  // namespace lt::pool
