// Philox in lanes (src/eager/philox.cpp) against the block-by-block function, and the float
// uniform kernel built on it against the stream's definition: element i is word i % 4 of block
// offset + i / 4, whatever the chunks the threads take.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "eager/kernels.h"
#include "eager/philox.h"
#include "eager/tensor_util.h"

namespace {

void expect_block_by_block(const char* path,
                           const std::function<bool(uint64_t, uint64_t, int64_t, uint32_t*)>& f) {
  // Counts around the 8 and 16 lanes, and counters whose low word wraps into the high one.
  for (uint64_t seed : {uint64_t{0}, uint64_t{0x123456789abcdefULL}})
    for (uint64_t first : {uint64_t{0}, uint64_t{7}, (uint64_t{1} << 32) - 5})
      for (int64_t count : {1, 7, 8, 9, 15, 16, 17, 300}) {
        std::vector<uint32_t> out(static_cast<size_t>(4 * count));
        if (!f(seed, first, count, out.data())) {
          std::printf("the %s path is not on this CPU\n", path);
          return;
        }
        for (int64_t k = 0; k < count; ++k) {
          const auto want = lt::philox4x32(seed, first + static_cast<uint64_t>(k));
          for (int w = 0; w < 4; ++w)
            ASSERT_EQ(out[static_cast<size_t>(4 * k + w)], want[w])
                << path << ": seed " << seed << " first " << first << " count " << count
                << " block " << k;
        }
      }
}

TEST(Philox, LanesGiveTheBlockByBlockValuesOnEveryPath) {
  expect_block_by_block("best", [](uint64_t s, uint64_t f, int64_t n, uint32_t* o) {
    lt::philox_blocks(s, f, n, o);
    return true;
  });
  for (auto [path, name] :
       {std::pair{lt::PhiloxPath::kAvx512, "AVX-512"}, std::pair{lt::PhiloxPath::kAvx2, "AVX2"},
        std::pair{lt::PhiloxPath::kScalar, "scalar"}})
    expect_block_by_block(name, [path = path](uint64_t s, uint64_t f, int64_t n, uint32_t* o) {
      return lt::philox_blocks_on(path, s, f, n, o);
    });
}

TEST(Philox, FloatUniformKernelFollowsTheStreamAcrossChunks) {
  // Sizes that are not whole blocks, above the kernel's per-thread grain (16384), and an offset
  // that puts the first element mid-way into nothing (offsets count blocks).
  for (int64_t n : {int64_t{1}, int64_t{5}, int64_t{1023}, int64_t{100003}}) {
    lt::Tensor out = lt::make_eager({n}, lt::kFloat32);
    const uint64_t seed = 42, offset = 3;
    lt::random_kernel(lt::OpKind::Uniform, seed, offset, 0, 0, out);
    const float* p = static_cast<const float*>(out.raw_data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      const auto r = lt::philox4x32(seed, offset + static_cast<uint64_t>(i / 4));
      ASSERT_EQ(p[i], lt::uniform_float(r[i % 4])) << "element " << i << " of " << n;
    }
  }
}

}  // namespace
