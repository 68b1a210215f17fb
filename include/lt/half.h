// Half (IEEE binary16) and BFloat16: the two 16-bit floating storage types, as libtorch's
// c10::Half and c10::BFloat16. They convert to and from float with round-to-nearest-even (NaN
// stays NaN, overflow gives infinity); arithmetic on them is float arithmetic.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace lt {

namespace detail {

inline uint32_t float_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
inline float bits_float(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

inline uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00 : 0x7c00);  // NaN, inf
  if (ax >= 0x477ff000u) return sign | 0x7c00;  // rounds to 65520 or more: infinity
  if (ax < 0x38800000u) {
    // Below 2^-14: a subnormal half, counted in units of 2^-24. The scaling is exact and
    // nearbyint rounds to nearest even (the default mode); 1024 is the smallest normal's bits.
    return sign | static_cast<uint16_t>(std::nearbyint(bits_float(ax) * 16777216.0f));
  }
  // Rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits, ties to even;
  // a carry out of the mantissa moves into the exponent, as it should.
  ax += 0xc8000fffu + ((ax >> 13) & 1u);
  return sign | static_cast<uint16_t>(ax >> 13);
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {  // zero or subnormal: m * 2^-24
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);  // ties to even
}

inline float bfloat16_bits_to_float(uint16_t b) {
  return bits_float(static_cast<uint32_t>(b) << 16);
}

}  // namespace detail

struct Half {
  uint16_t x = 0;
  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return {}; }
  Half() = default;
  constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
  Half(float v) : x(detail::float_to_half_bits(v)) {}  // NOLINT: implicit, as c10::Half
  operator float() const { return detail::half_bits_to_float(x); }  // NOLINT
};

struct BFloat16 {
  uint16_t x = 0;
  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return {}; }
  BFloat16() = default;
  constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  BFloat16(float v) : x(detail::float_to_bfloat16_bits(v)) {}           // NOLINT: implicit
  operator float() const { return detail::bfloat16_bits_to_float(x); }  // NOLINT
};

template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Arithmetic as c10's: two 16-bit values give their own type (the float result rounded); a
// 16-bit value with a built-in number gives that number's arithmetic over float. Comparisons
// are float's, through the conversion.
#define LT_REDUCED_FLOAT_OPS(H)                                             \
  inline H operator+(H a, H b) { return H(float(a) + float(b)); }           \
  inline H operator-(H a, H b) { return H(float(a) - float(b)); }           \
  inline H operator*(H a, H b) { return H(float(a) * float(b)); }           \
  inline H operator/(H a, H b) { return H(float(a) / float(b)); }           \
  inline H operator-(H a) { return H(-float(a)); }                          \
  inline H& operator+=(H& a, H b) { return a = a + b; }                     \
  inline H& operator-=(H& a, H b) { return a = a - b; }                     \
  inline H& operator*=(H& a, H b) { return a = a * b; }                     \
  inline H& operator/=(H& a, H b) { return a = a / b; }                     \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> \
  inline auto operator+(H a, T b) {                                         \
    return float(a) + b;                                                    \
  }                                                                         \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> \
  inline auto operator+(T a, H b) {                                         \
    return a + float(b);                                                    \
  }                                                                         \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> \
  inline auto operator-(H a, T b) {                                         \
    return float(a) - b;                                                    \
  }                                                                         \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> \
  inline auto operator-(T a, H b) {                                         \
    return a - float(b);                                                    \
  }                                                                         \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> \
  inline auto operator*(H a, T b) {                                         \
    return float(a) * b;                                                    \
  }                                                                         \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> \
  inline auto operator*(T a, H b) {                                         \
    return a * float(b);                                                    \
  }                                                                         \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> \
  inline auto operator/(H a, T b) {                                         \
    return float(a) / b;                                                    \
  }                                                                         \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> \
  inline auto operator/(T a, H b) {                                         \
    return a / float(b);                                                    \
  }

LT_REDUCED_FLOAT_OPS(Half)
LT_REDUCED_FLOAT_OPS(BFloat16)
#undef LT_REDUCED_FLOAT_OPS

}  // namespace lt
