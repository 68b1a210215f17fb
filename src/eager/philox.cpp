// Philox blocks in lanes (philox.h): the block-by-block function's rounds, sixteen counters at a
// time as arrays, so that the compiler vectorizes the 32x32->64-bit products.
#include "eager/philox.h"

namespace lt {

__attribute__((target_clones("avx512f", "avx2", "default"))) void philox_blocks(uint64_t seed,
                                                                                uint64_t first,
                                                                                int64_t count,
                                                                                uint32_t* out) {
  constexpr int kLanes = 16;
  const uint32_t key0 = static_cast<uint32_t>(seed), key1 = static_cast<uint32_t>(seed >> 32);
  for (int64_t base = 0; base < count; base += kLanes) {
    const int lanes = static_cast<int>(count - base < kLanes ? count - base : kLanes);
    uint32_t c0[kLanes], c1[kLanes], c2[kLanes] = {}, c3[kLanes] = {};
    for (int j = 0; j < kLanes; ++j) {
      const uint64_t counter = first + static_cast<uint64_t>(base + j);
      c0[j] = static_cast<uint32_t>(counter);
      c1[j] = static_cast<uint32_t>(counter >> 32);
    }
    uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < 10; ++round) {
      for (int j = 0; j < kLanes; ++j) {
        const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0[j];
        const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2[j];
        const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[j] ^ k0;
        const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[j] ^ k1;
        c1[j] = static_cast<uint32_t>(p1);
        c3[j] = static_cast<uint32_t>(p0);
        c0[j] = n0;
        c2[j] = n2;
      }
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    for (int j = 0; j < lanes; ++j) {
      uint32_t* o = out + 4 * (base + j);
      o[0] = c0[j];
      o[1] = c1[j];
      o[2] = c2[j];
      o[3] = c3[j];
    }
  }
}

}  // namespace lt
