// The small-object pool (src/core/pool.h): blocks freed by a thread that shares its freed
// blocks (the background compile worker, which frees the graph copies the recording thread
// allocated) are reused by the allocating thread.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/pool.h"
#include "core/storage.h"

namespace {

TEST(Pool, BlocksFreedByASharingThreadAreReusedByTheAllocatingThread) {
#ifdef LT_POOL_DISABLED
  GTEST_SKIP() << "the pool is plain new/delete under AddressSanitizer";
#else
  constexpr size_t kSize = 488;  // a size class nothing else in this program uses
  constexpr int kBlocks = 1000;
  std::vector<void*> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.push_back(lt::pool::allocate(kSize));
  const std::set<void*> freed(blocks.begin(), blocks.end());
  // The other thread stays alive while this one allocates again, as the worker does (a thread's
  // exit hands its list to the depot anyway).
  std::promise<void> freed_all, done;
  std::thread other([&] {
    lt::pool::deallocate(lt::pool::allocate(kSize), kSize);  // a thread with a list of its own
    lt::pool::share_freed_blocks();
    for (void* p : blocks) lt::pool::deallocate(p, kSize);
    freed_all.set_value();
    done.get_future().wait();
  });
  freed_all.get_future().wait();
  int reused = 0;
  std::vector<void*> again;
  for (int i = 0; i < kBlocks; ++i) {
    again.push_back(lt::pool::allocate(kSize));
    reused += freed.count(again.back()) ? 1 : 0;
  }
  done.set_value();
  other.join();
  EXPECT_EQ(reused, kBlocks);
  for (void* p : again) lt::pool::deallocate(p, kSize);
#endif
}

}  // namespace

// Large host blocks start on a 2 MiB boundary with MADV_HUGEPAGE (storage.cpp): where the kernel
// offers transparent huge pages on request, a touched 16 MiB block is backed by them.
TEST(Storage, LargeBlocksAskForHugePages) {
  std::shared_ptr<lt::Storage> s = lt::allocate_storage(size_t{16} << 20);
  const uintptr_t at = reinterpret_cast<uintptr_t>(s->data);
  EXPECT_EQ(at % (size_t{2} << 20), 0u);
  std::memset(s->data, 1, s->nbytes);
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(mode, modes);
  if (modes.find("[never]") != std::string::npos || modes.empty())
    GTEST_SKIP() << "this kernel offers no transparent huge pages";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan's allocator owns the mapping";
#endif
  // The block's mapping in smaps: its AnonHugePages line.
  std::ifstream smaps("/proc/self/smaps");
  int64_t huge_kb = -1;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && line.find(' ') < 30) {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      huge_kb = std::stoll(line.substr(14));
      break;
    }
  }
  EXPECT_GE(huge_kb, 2048) << "no huge page in the block's mapping (THP: " << modes << ")";
}

// A freed block serves a later request of another bucket when the request needs at least half
// of it (sizes that change every step reuse the blocks of earlier steps), and its capacity is
// the block's; a request of less than half allocates.
TEST(Storage, FreedBlocksServeSmallerRequestsOfAtLeastHalfTheirSize) {
  lt::allocator::empty_cache();
  const size_t mib = size_t{1} << 20;
  std::shared_ptr<lt::Storage> a = lt::allocate_storage(3 * mib);
  void* const block = a->data;
  ASSERT_EQ(a->nbytes, 3 * mib);
  a.reset();
  const int64_t hits = lt::allocator::stats().cache_hits;
  std::shared_ptr<lt::Storage> b = lt::allocate_storage(2 * mib);
  EXPECT_EQ(b->data, block);
  EXPECT_EQ(b->nbytes, 3 * mib);
  EXPECT_EQ(lt::allocator::stats().cache_hits, hits + 1);
  std::memset(b->data, 1, b->nbytes);  // the whole capacity is the caller's
  b.reset();
  std::shared_ptr<lt::Storage> c = lt::allocate_storage(mib);
  EXPECT_NE(c->data, block);
  EXPECT_EQ(c->nbytes, mib);
  std::shared_ptr<lt::Storage> d = lt::allocate_storage(3 * mib);  // its own bucket: reused
  EXPECT_EQ(d->data, block);
  EXPECT_EQ(lt::allocator::stats().cached_bytes, 0);
  c.reset();
  d.reset();
  EXPECT_EQ(lt::allocator::stats().cached_bytes, static_cast<int64_t>(4 * mib));
  lt::allocator::empty_cache();
}
