// The small-object pool (src/core/pool.h): blocks freed by a thread that shares its freed
// blocks (the background compile worker, which frees the graph copies the recording thread
// allocated) are reused by the allocating thread.
#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>
#include <vector>

#include "core/pool.h"

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
