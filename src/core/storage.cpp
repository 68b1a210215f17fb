#include "core/storage.h"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "core/config.h"

namespace lt {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kCacheMin = size_t{1} << 16;       // smaller blocks go straight to malloc
constexpr size_t kCacheLimit = size_t{2} << 30;     // at most 2 GiB kept for reuse

// Rounds up to 2^k * {4,5,6,7}/4 so that near sizes share a bucket (<= 25% waste).
size_t bucket_size(size_t n) {
  if (n < kCacheMin) return (n + kAlign - 1) / kAlign * kAlign;
  size_t p = size_t{1} << (63 - __builtin_clzll(n));
  size_t q = p / 4;
  return (n + q - 1) / q * q;
}

struct Cache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_blocks;
  allocator::Stats st;
};

Cache& cache() {
  static Cache* c = new Cache();  // leaked on purpose: storages may die during static teardown
  return *c;
}

// Large blocks start on a 2 MiB boundary and ask for transparent huge pages (Debian's default
// THP mode is madvise: nothing is huge unless asked). A data set's rows read in shuffled order
// each took a TLB miss on 4 KiB pages.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeMin = size_t{8} << 20;

void* raw_alloc(size_t bytes) {
  static const bool huge = config::flag("LT_HUGE_PAGES");
  if (huge && bytes >= kHugeMin) {
    void* p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
    if (!p) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: where THP is off it changes nothing
    return p;
  }
  void* p = std::aligned_alloc(kAlign, bytes == 0 ? kAlign : bytes);
  if (!p) throw std::bad_alloc();
  return p;
}

// A freed block of the request's bucket is reused, else the smallest cached block of at most
// kReuseSlack times the request (`bytes` becomes that block's size): without it, sizes that
// change from step to step (a sequence length, a batch) met a new bucket most steps, and each
// new block's first touch faulted its pages in while older, larger blocks sat idle (a
// TransformerEncoderLayer loop over lengths in [8, 256] on eager: 460 ms of page faults in its
// first 20 steps, whose sizes were mostly new).
constexpr size_t kReuseSlack = 2;

void* cached_alloc(size_t& bytes) {
  Cache& c = cache();
  if (bytes >= kCacheMin) {
    std::lock_guard<std::mutex> g(c.mu);
    // No list is empty: the last block out erases its bucket.
    auto it = c.free_blocks.lower_bound(bytes);
    if (it != c.free_blocks.end() && it->first <= bytes * kReuseSlack) {
      void* p = it->second.back();
      it->second.pop_back();
      bytes = it->first;
      if (it->second.empty()) c.free_blocks.erase(it);
      c.st.cached_bytes -= static_cast<int64_t>(bytes);
      c.st.cache_hits++;
      c.st.live_bytes += static_cast<int64_t>(bytes);
      if (c.st.live_bytes > c.st.peak_live_bytes) c.st.peak_live_bytes = c.st.live_bytes;
      return p;
    }
    c.st.cache_misses++;
    c.st.live_bytes += static_cast<int64_t>(bytes);
    if (c.st.live_bytes > c.st.peak_live_bytes) c.st.peak_live_bytes = c.st.live_bytes;
  }
  return raw_alloc(bytes);
}

void cached_free(void* p, size_t bytes) {
  Cache& c = cache();
  if (bytes >= kCacheMin) {
    std::lock_guard<std::mutex> g(c.mu);
    c.st.live_bytes -= bytes;
    if (c.st.cached_bytes + static_cast<int64_t>(bytes) <= static_cast<int64_t>(kCacheLimit)) {
      c.free_blocks[bytes].push_back(p);
      c.st.cached_bytes += bytes;
      return;
    }
  }
  std::free(p);
}

}  // namespace

Storage::~Storage() {
  if (owned && data) cached_free(data, nbytes);
}

std::shared_ptr<Storage> allocate_storage(size_t nbytes) {
  auto s = std::make_shared<Storage>();
  s->nbytes = bucket_size(nbytes);
  s->data = cached_alloc(s->nbytes);
  return s;
}

std::shared_ptr<Storage> wrap_storage(void* data, size_t nbytes) {
  auto s = std::make_shared<Storage>();
  s->data = data;
  s->nbytes = nbytes;
  s->owned = false;
  return s;
}

void* cache_malloc(size_t nbytes, size_t align) {
  if (align < kAlign) align = kAlign;
  size_t total = bucket_size(nbytes + align + 16);
  char* base = static_cast<char*>(cached_alloc(total));
  const uintptr_t a = (reinterpret_cast<uintptr_t>(base) + 16 + align - 1) & ~(uintptr_t{align} - 1);
  size_t* header = reinterpret_cast<size_t*>(a) - 2;  // {base, total} just before the block
  header[0] = reinterpret_cast<uintptr_t>(base);
  header[1] = total;
  return reinterpret_cast<void*>(a);
}

void cache_free(void* p) {
  if (!p) return;
  const size_t* header = static_cast<const size_t*>(p) - 2;
  cached_free(reinterpret_cast<void*>(header[0]), header[1]);
}

namespace allocator {
Stats stats() {
  std::lock_guard<std::mutex> g(cache().mu);
  return cache().st;
}
void reset_peak() {
  std::lock_guard<std::mutex> g(cache().mu);
  cache().st.peak_live_bytes = cache().st.live_bytes;
}
void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> g(c.mu);
  for (auto& [size, blocks] : c.free_blocks)
    for (void* p : blocks) std::free(p);
  c.free_blocks.clear();
  c.st.cached_bytes = 0;
}
}  // namespace allocator

}  // namespace lt
