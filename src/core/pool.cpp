#include "core/pool.h"

#include <cstdint>
#include <mutex>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define LT_POOL_DISABLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LT_POOL_DISABLED 1
#endif
#endif

namespace lt::pool {

#ifdef LT_POOL_DISABLED

void* allocate(size_t n) { return ::operator new(n); }
void deallocate(void* p, size_t) noexcept { ::operator delete(p); }

#else

namespace {

constexpr size_t kGrain = 16;                // size classes: 16, 32, ..., kMaxSize bytes
constexpr size_t kMaxSize = 512;
constexpr size_t kClasses = kMaxSize / kGrain;
constexpr size_t kSlabBytes = size_t{64} << 10;

struct Block {
  Block* next;
};

// Blocks freed by exited threads (and by anyone after their own cache is gone), per class.
struct Depot {
  std::mutex mu;
  Block* head[kClasses] = {};
};
Depot& depot() {
  static Depot* d = new Depot();  // never destroyed: frees may run during static teardown
  return *d;
}

// The per-thread cache is plain data; a separate object with a destructor hands its blocks to
// the depot when the thread exits, and is registered on the thread's first pool call.
struct Cache {
  Block* head[kClasses];
  char* bump;  // carving position in the current slab
  char* bump_end;
  bool registered;
  bool gone;  // the thread is exiting: use the depot
};
// initial-exec: a %fs-relative load instead of a __tls_get_addr call (the library is linked,
// not dlopen-ed late, so it has static TLS).
__attribute__((tls_model("initial-exec"))) thread_local Cache t_cache;  // zero-initialized

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

void register_thread(Cache& c) {
  c.registered = true;
  t_reaper.armed = true;  // first use: registers its destructor for this thread's exit
}

size_t class_of(size_t n) { return (n + kGrain - 1) / kGrain - 1; }

void* refill(Cache& c, size_t cls) {
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

}  // namespace

void* allocate(size_t n) {
  if (n == 0) n = 1;
  if (n > kMaxSize) return ::operator new(n);
  const size_t cls = class_of(n);
  Cache& c = t_cache;
  if (c.gone) {  // thread teardown: serve from the depot or a block of the class size
    Depot& d = depot();
    std::lock_guard<std::mutex> g(d.mu);
    if (Block* b = d.head[cls]) {
      d.head[cls] = b->next;
      return b;
    }
    return ::operator new((cls + 1) * kGrain);
  }
  if (Block* b = c.head[cls]) {
    c.head[cls] = b->next;
    return b;
  }
  if (!c.registered) register_thread(c);
  return refill(c, cls);
}

void deallocate(void* p, size_t n) noexcept {
  if (!p) return;
  if (n == 0) n = 1;
  if (n > kMaxSize) return ::operator delete(p);
  const size_t cls = class_of(n);
  Block* b = static_cast<Block*>(p);
  Cache& c = t_cache;
  if (c.gone || !c.registered) {  // exiting, or never allocated here: the depot keeps it  // this thread's cache is gone: hand the block to the depot
    Depot& d = depot();
    std::lock_guard<std::mutex> g(d.mu);
    b->next = d.head[cls];
    d.head[cls] = b;
    return;
  }
  b->next = c.head[cls];
  c.head[cls] = b;
}

#endif

}  // namespace lt::pool
