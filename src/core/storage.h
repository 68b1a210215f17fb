// Storage: a reference-counted, 64-byte aligned buffer. Large buffers come from a size-bucketed
// cache so that big temporaries do not page-fault on every allocation (glibc mmaps >= 32 MiB).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace lt {

struct Storage {
  void* data = nullptr;
  size_t nbytes = 0;
  bool owned = true;  // false: wraps caller memory (from_blob)
  ~Storage();
};

std::shared_ptr<Storage> allocate_storage(size_t nbytes);
std::shared_ptr<Storage> wrap_storage(void* data, size_t nbytes);

// malloc/free over the same cache for code that frees without a size (the compiled MLIR code's
// temporaries): a header before the block keeps where it starts and its size. `align` is a power
// of two (64 at least).
void* cache_malloc(size_t nbytes, size_t align = 64);
void cache_free(void* p);

// n uninitialized elements of T from the buffer cache, freed with the handle: kernels' scratch
// (a std::vector zero-filled its chunk of im2col columns at every convolution, and a large one
// page-faulted anew each time).
template <typename T>
using Scratch = std::unique_ptr<T, void (*)(void*)>;
template <typename T>
Scratch<T> scratch(int64_t n) {
  return Scratch<T>(static_cast<T*>(cache_malloc(static_cast<size_t>(n) * sizeof(T))), cache_free);
}

namespace allocator {
struct Stats {
  int64_t cached_bytes = 0;
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;
  int64_t live_bytes = 0;
  int64_t peak_live_bytes = 0;
};
Stats stats();
void empty_cache();
void reset_peak();
}  // namespace allocator

}  // namespace lt
