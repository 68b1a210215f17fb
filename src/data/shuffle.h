// A seeded Fisher-Yates shuffle whose result is a function of the seed alone: std::shuffle and
// std::uniform_int_distribution are implementation-defined, so libstdc++ and libc++ would give
// different orders for one seed. Used by DataLoader and the torch::data samplers.
#pragma once
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace lt::data {

// Uniform in [0, bound) by rejection.
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = top - top % bound;
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % bound;
}

template <typename T>
void seeded_shuffle(std::vector<T>& v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_below(rng, i)]);
}

}  // namespace lt::data
