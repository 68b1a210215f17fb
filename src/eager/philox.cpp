// Philox blocks in vector lanes (philox.h): the rounds on 16 (AVX-512) or 8 (AVX2) counters at a
// time, each round's two 32x32->64-bit products as vpmuludq on the even and the odd lanes. (Left
// to GCC's vectorizer, the loop multiplied in 64 bits, three vpmuludq per product: 2x the scalar
// loop where these run 4x.) The path is picked by the CPU, once.
#include "eager/philox.h"

#include <immintrin.h>

namespace lt {
namespace {

constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;

void blocks_scalar(uint64_t seed, uint64_t first, int64_t count, uint32_t* out) {
  for (int64_t k = 0; k < count; ++k) {
    const auto r = philox4x32(seed, first + static_cast<uint64_t>(k));
    for (int w = 0; w < 4; ++w) out[4 * k + w] = r[w];
  }
}

// The counters' words for lanes first + base .. + lanes - 1, and the lanes' results written out
// block by block (words in order).
template <int kLanes>
void counters(uint64_t first, int64_t base, uint32_t* c0, uint32_t* c1) {
  for (int j = 0; j < kLanes; ++j) {
    const uint64_t c = first + static_cast<uint64_t>(base + j);
    c0[j] = static_cast<uint32_t>(c);
    c1[j] = static_cast<uint32_t>(c >> 32);
  }
}
template <int kLanes>
void write_blocks(const uint32_t (&w)[4][kLanes], int lanes, uint32_t* out) {
  for (int j = 0; j < lanes; ++j)
    for (int k = 0; k < 4; ++k) out[4 * j + k] = w[k][j];
}

// GCC 12's AVX-512 intrinsics start from a deliberately undefined vector (`__Y = __Y`), which
// -Wmaybe-uninitialized reports once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) void blocks_avx512(uint64_t seed, uint64_t first, int64_t count,
                                                      uint32_t* out) {
  const __m512i m0 = _mm512_set1_epi64(kM0), m1 = _mm512_set1_epi64(kM1);
  constexpr __mmask16 kOdd = 0xAAAA;
  for (int64_t base = 0; base < count; base += 16) {
    alignas(64) uint32_t w[4][16];
    counters<16>(first, base, w[0], w[1]);
    __m512i c0 = _mm512_load_si512(w[0]), c1 = _mm512_load_si512(w[1]);
    __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      // Products of the even lanes (in place) and of the odd ones (shifted down).
      const __m512i e0 = _mm512_mul_epu32(c0, m0),
                    o0 = _mm512_mul_epu32(_mm512_srli_epi64(c0, 32), m0);
      const __m512i e1 = _mm512_mul_epu32(c2, m1),
                    o1 = _mm512_mul_epu32(_mm512_srli_epi64(c2, 32), m1);
      const __m512i lo0 = _mm512_mask_blend_epi32(kOdd, e0, _mm512_slli_epi64(o0, 32));
      const __m512i hi0 = _mm512_mask_blend_epi32(kOdd, _mm512_srli_epi64(e0, 32), o0);
      const __m512i lo1 = _mm512_mask_blend_epi32(kOdd, e1, _mm512_slli_epi64(o1, 32));
      const __m512i hi1 = _mm512_mask_blend_epi32(kOdd, _mm512_srli_epi64(e1, 32), o1);
      c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32(static_cast<int>(k0)));
      c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32(static_cast<int>(k1)));
      c1 = lo1;
      c3 = lo0;
      k0 += kW0;
      k1 += kW1;
    }
    _mm512_store_si512(w[0], c0);
    _mm512_store_si512(w[1], c1);
    _mm512_store_si512(w[2], c2);
    _mm512_store_si512(w[3], c3);
    write_blocks<16>(w, static_cast<int>(count - base < 16 ? count - base : 16), out + 4 * base);
  }
}

#pragma GCC diagnostic pop

__attribute__((target("avx2"))) void blocks_avx2(uint64_t seed, uint64_t first, int64_t count,
                                                 uint32_t* out) {
  const __m256i m0 = _mm256_set1_epi64x(kM0), m1 = _mm256_set1_epi64x(kM1);
  constexpr int kOdd = 0xAA;
  for (int64_t base = 0; base < count; base += 8) {
    alignas(32) uint32_t w[4][8];
    counters<8>(first, base, w[0], w[1]);
    __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(w[0]));
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(w[1]));
    __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      const __m256i e0 = _mm256_mul_epu32(c0, m0),
                    o0 = _mm256_mul_epu32(_mm256_srli_epi64(c0, 32), m0);
      const __m256i e1 = _mm256_mul_epu32(c2, m1),
                    o1 = _mm256_mul_epu32(_mm256_srli_epi64(c2, 32), m1);
      const __m256i lo0 = _mm256_blend_epi32(e0, _mm256_slli_epi64(o0, 32), kOdd);
      const __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(e0, 32), o0, kOdd);
      const __m256i lo1 = _mm256_blend_epi32(e1, _mm256_slli_epi64(o1, 32), kOdd);
      const __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(e1, 32), o1, kOdd);
      c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
      c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
      c1 = lo1;
      c3 = lo0;
      k0 += kW0;
      k1 += kW1;
    }
    _mm256_store_si256(reinterpret_cast<__m256i*>(w[0]), c0);
    _mm256_store_si256(reinterpret_cast<__m256i*>(w[1]), c1);
    _mm256_store_si256(reinterpret_cast<__m256i*>(w[2]), c2);
    _mm256_store_si256(reinterpret_cast<__m256i*>(w[3]), c3);
    write_blocks<8>(w, static_cast<int>(count - base < 8 ? count - base : 8), out + 4 * base);
  }
}

using BlocksFn = void (*)(uint64_t, uint64_t, int64_t, uint32_t*);

BlocksFn blocks_for(PhiloxPath p) {
  switch (p) {
    case PhiloxPath::kAvx512:
      return __builtin_cpu_supports("avx512f") ? blocks_avx512 : nullptr;
    case PhiloxPath::kAvx2:
      return __builtin_cpu_supports("avx2") ? blocks_avx2 : nullptr;
    case PhiloxPath::kScalar:
      return blocks_scalar;
  }
  return nullptr;
}

}  // namespace

bool philox_blocks_on(PhiloxPath path, uint64_t seed, uint64_t first, int64_t count,
                      uint32_t* out) {
  BlocksFn f = blocks_for(path);
  if (!f) return false;
  f(seed, first, count, out);
  return true;
}

void philox_blocks(uint64_t seed, uint64_t first, int64_t count, uint32_t* out) {
  static const BlocksFn best = [] {
    for (PhiloxPath p : {PhiloxPath::kAvx512, PhiloxPath::kAvx2})
      if (BlocksFn f = blocks_for(p)) return f;
    return blocks_for(PhiloxPath::kScalar);
  }();
  best(seed, first, count, out);
}

}  // namespace lt
