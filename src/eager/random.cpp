// Counter-based random numbers: Philox-4x32-10 keyed by the seed, counter = offset + element
// block. Element i depends only on (seed, offset, i), so any device can reproduce it.
#include <algorithm>
#include <cmath>

#include "core/parallel.h"
#include "eager/kernels.h"
#include "eager/philox.h"
#include "eager/tensor_util.h"

namespace lt {

void iota_kernel(const Tensor& out) {
  LT_DISPATCH(out.dtype(), T, {
    T* p = static_cast<T*>(out.raw_data_ptr());
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = static_cast<T>(i);
  });
}

void random_kernel(OpKind op, uint64_t seed, uint64_t offset, int64_t low, int64_t high,
                   const Tensor& out) {
  const int64_t n = out.numel();
  LT_DISPATCH(out.dtype(), T, {
    T* p = static_cast<T*>(out.raw_data_ptr());
    // Element i of a float uniform stream is word i % 4 of Philox block i / 4 (a normal pair
    // shares one block): each block is computed once, and a chunk boundary inside a block
    // gives the same values as a whole block.
    parallel_for(n, 16384, [&](int64_t b, int64_t e) {
      if (op == OpKind::Uniform && !std::is_same_v<T, double>) {
        // Whole blocks 256 at a time in lanes (philox_blocks), words converted in order.
        constexpr int64_t kBlocks = 256;
        uint32_t words[4 * kBlocks];
        for (int64_t i = b; i < e;) {
          const int64_t blk = i / 4, blocks = std::min<int64_t>(kBlocks, (e - 1) / 4 - blk + 1);
          philox_blocks(seed, offset + static_cast<uint64_t>(blk), blocks, words);
          const int64_t end = std::min(e, 4 * (blk + blocks));
          for (; i < end; ++i) p[i] = static_cast<T>(uniform_float(words[i - 4 * blk]));
        }
        return;
      }
      if (op == OpKind::Normal) {
        for (int64_t i = b; i < e;) {
          auto r = philox4x32(seed, offset + static_cast<uint64_t>(i / 2));
          double u1 = 1.0 - uniform_double(r[0], r[1]);  // (0, 1]
          double u2 = uniform_double(r[2], r[3]);
          double rad = std::sqrt(-2.0 * std::log(u1));
          double th = 6.283185307179586 * u2;
          for (int64_t j = i % 2; j < 2 && i < e; ++j, ++i)
            p[i] = static_cast<T>(j == 0 ? rad * std::cos(th) : rad * std::sin(th));
        }
        return;
      }
      for (int64_t i = b; i < e; ++i) {
        if (op == OpKind::Uniform) {  // double: one block per element
          auto r = philox4x32(seed, offset + static_cast<uint64_t>(i));
          p[i] = static_cast<T>(uniform_double(r[0], r[1]));
        } else {
          auto r = philox4x32(seed, offset + static_cast<uint64_t>(i));
          uint64_t v = (static_cast<uint64_t>(r[0]) << 32) | r[1];
          uint64_t range = static_cast<uint64_t>(high - low);
          p[i] = static_cast<T>(low + static_cast<int64_t>(v % range));
        }
      }
    });
  });
}

}  // namespace lt
