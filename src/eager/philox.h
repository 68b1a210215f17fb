// Philox-4x32-10 (Salmon et al., SC'11): 4 x 32-bit outputs per 128-bit counter.
#pragma once
#include <array>
#include <cstdint>

namespace lt {

inline std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t counter) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = static_cast<uint32_t>(p1);
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

// Philox blocks first .. first + count - 1 of `seed`, their words in order: out[4 k + w] is
// word w of block first + k, the same values as philox4x32 block by block. Computed 16 (AVX-512)
// or 8 (AVX2) blocks at a time in vector lanes, on the best path the CPU has (the eager kernels
// are built for baseline x86-64).
void philox_blocks(uint64_t seed, uint64_t first, int64_t count, uint32_t* out);
// The same on one path; false (nothing written) where the CPU lacks it. For tests.
enum class PhiloxPath { kAvx512, kAvx2, kScalar };
bool philox_blocks_on(PhiloxPath path, uint64_t seed, uint64_t first, int64_t count, uint32_t* out);

inline float uniform_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
inline double uniform_double(uint32_t hi, uint32_t lo) {
  uint64_t v = ((static_cast<uint64_t>(hi) << 32) | lo) >> 11;
  return static_cast<double>(v) * (1.0 / 9007199254740992.0);
}

}  // namespace lt
