// Elementwise kernels: unary, binary, where, fill and the converting strided copy.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/check.h"
#include "eager/kernels.h"
#include "eager/loops.h"
#include "eager/tensor_util.h"

namespace lt {
namespace {

template <typename To, typename From>
inline To convert(From v) {
  if constexpr (is_reduced_float_v<From>) {  // through float, as c10's conversions
    return convert<To, float>(static_cast<float>(v));
  } else if constexpr (is_reduced_float_v<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // Out-of-range and NaN casts are undefined in C++; give x86's "integer indefinite".
    if (!(v >= static_cast<From>(std::numeric_limits<To>::min()) &&
          v < -static_cast<From>(std::numeric_limits<To>::min())))
      return std::numeric_limits<To>::min();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <typename O, typename I, typename F>
void unary_loop(const Tensor& out, const Tensor& x, F f) {
  auto spec = make_loop<2>({&out, &x});
  run_loop(spec, kElementwiseGrain, [&](char** p, const int64_t* st, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const I* a = reinterpret_cast<const I*>(p[1]);
    if (st[0] == sizeof(O) && st[1] == sizeof(I)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * st[0]) = f(*reinterpret_cast<const I*>(p[1] + i * st[1]));
    }
  });
}

template <typename O, typename T, typename F>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  auto spec = make_loop<3>({&out, &a, &b});
  run_loop(spec, kElementwiseGrain, [&](char** p, const int64_t* st, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    const T* y = reinterpret_cast<const T*>(p[2]);
    if (st[0] == sizeof(O) && st[1] == sizeof(T) && st[2] == sizeof(T)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (st[0] == sizeof(O) && st[1] == sizeof(T) && st[2] == 0) {
      const T yv = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
    } else if (st[0] == sizeof(O) && st[1] == 0 && st[2] == sizeof(T)) {
      const T xv = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * st[0]) = f(*reinterpret_cast<const T*>(p[1] + i * st[1]),
                                                    *reinterpret_cast<const T*>(p[2] + i * st[2]));
    }
  });
}

// glibc's tanhf is ~7x slower than expf; Cephes' tanhf (odd polynomial below 0.625, expf
// above) keeps float accuracy within 2 ulp and runs at expf speed.
template <typename T>
inline T fast_tanh(T v) {
  if constexpr (std::is_same_v<T, float>) {
    float a = std::fabs(v);
    if (a >= 9.0f) return std::copysign(1.0f, v);
    if (a >= 0.625f) return std::copysign(1.0f - 2.0f / (std::exp(2.0f * a) + 1.0f), v);
    float z = v * v;
    if (z == 0.0f) return v;  // keeps tanh(-0) = -0 (the polynomial's last add gave +0)
    return ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
             1.33314422036e-1f) * z - 3.33332819422e-1f) * z * v + v;
  } else {
    return std::tanh(v);
  }
}

template <typename T>
T ipow(T base, T e) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(base, e);
  } else if constexpr (std::is_same_v<T, bool>) {
    return e ? base : true;
  } else {
    if (e < 0) return 0;  // unreachable: binary_typed refuses negative integral exponents
    T r = 1;
    while (e) {
      if (e & 1) r = static_cast<T>(r * base);
      base = static_cast<T>(base * base);
      e >>= 1;
    }
    return r;
  }
}

// -v with two's-complement wrap-around for integers (-INT_MIN == INT_MIN, as PyTorch and the
// compiled code give), without the signed overflow that is undefined behaviour in C++.
template <typename T>
T wrapping_neg(T v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(v));
  else
    return static_cast<T>(-v);
}

template <typename T>
void unary_typed(OpKind op, const Tensor& x, const Tensor& out) {
  using K = OpKind;
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case K::Exp: return unary_loop<T, T>(out, x, [](T v) { return std::exp(v); });
      case K::Log: return unary_loop<T, T>(out, x, [](T v) { return std::log(v); });
      case K::Log1p: return unary_loop<T, T>(out, x, [](T v) { return std::log1p(v); });
      case K::Expm1: return unary_loop<T, T>(out, x, [](T v) { return std::expm1(v); });
      case K::Sqrt: return unary_loop<T, T>(out, x, [](T v) { return std::sqrt(v); });
      case K::Rsqrt: return unary_loop<T, T>(out, x, [](T v) { return T(1) / std::sqrt(v); });
      case K::Sin: return unary_loop<T, T>(out, x, [](T v) { return std::sin(v); });
      case K::Cos: return unary_loop<T, T>(out, x, [](T v) { return std::cos(v); });
      case K::Tanh: return unary_loop<T, T>(out, x, [](T v) { return fast_tanh(v); });
      case K::Sigmoid:
        return unary_loop<T, T>(out, x, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
      case K::Erf: return unary_loop<T, T>(out, x, [](T v) { return std::erf(v); });
      case K::Erfc:
        return unary_loop<T, T>(out, x, [](T v) { return std::erfc(v); });
      case K::Atan: return unary_loop<T, T>(out, x, [](T v) { return std::atan(v); });
      case K::Reciprocal: return unary_loop<T, T>(out, x, [](T v) { return T(1) / v; });
      case K::Floor: return unary_loop<T, T>(out, x, [](T v) { return std::floor(v); });
      case K::Ceil: return unary_loop<T, T>(out, x, [](T v) { return std::ceil(v); });
      case K::Round: return unary_loop<T, T>(out, x, [](T v) { return std::nearbyint(v); });
      case K::Abs: return unary_loop<T, T>(out, x, [](T v) { return std::abs(v); });
      default: break;
    }
  } else {
    switch (op) {
      case K::Floor: case K::Ceil: case K::Round:
        return unary_loop<T, T>(out, x, [](T v) { return v; });
      case K::Abs:  // two's complement, as PyTorch: abs(INT_MIN) is INT_MIN, not UB
        return unary_loop<T, T>(out, x, [](T v) { return v < T(0) ? wrapping_neg(v) : v; });
      default: break;
    }
  }
  switch (op) {
    case K::Neg: return unary_loop<T, T>(out, x, [](T v) { return wrapping_neg(v); });
    case K::Relu: return unary_loop<T, T>(out, x, [](T v) { return v < T(0) ? T(0) : v; });
    case K::Sign:
      return unary_loop<T, T>(out, x, [](T v) { return static_cast<T>((T(0) < v) - (v < T(0))); });
    case K::LogicalNot: return unary_loop<bool, T>(out, x, [](T v) { return v == T(0); });
    case K::BitwiseNot:
      if constexpr (std::is_same_v<T, bool>)
        return unary_loop<T, T>(out, x, [](T v) { return !v; });
      else if constexpr (std::is_integral_v<T>)
        return unary_loop<T, T>(out, x, [](T v) { return static_cast<T>(~v); });
      break;
    default:
      break;
  }
  throw_error("internal: unary kernel for ", op_name(op), " on ", dtype_name(x.dtype()));
}

template <typename T>
void binary_typed(OpKind op, const Tensor& a, const Tensor& b, const Tensor& out) {
  using K = OpKind;
  switch (op) {
    case K::Add: return binary_loop<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x + y); });
    case K::Sub: return binary_loop<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x - y); });
    case K::Mul: return binary_loop<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x * y); });
    case K::Div:
      if constexpr (std::is_floating_point_v<T>)
        return binary_loop<T, T>(out, a, b, [](T x, T y) { return x / y; });
      break;
    case K::Pow:
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // Checked before the (parallel) loop: nothing is thrown from inside it.
        for (int64_t e : int64_values(b))
          LT_CHECK(e >= 0, "pow: integers to negative integer powers are not allowed (exponent ",
                   e, ")");
      }
      return binary_loop<T, T>(out, a, b, [](T x, T y) { return ipow<T>(x, y); });
    case K::Maximum:
      return binary_loop<T, T>(out, a, b, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>)
          if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
        if constexpr (std::is_floating_point_v<T>)  // +0 above -0, in either order, as compiled
          if (x == y) return std::signbit(x) ? y : x;
        return x > y ? x : y;
      });
    case K::Minimum:
      return binary_loop<T, T>(out, a, b, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>)
          if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
        if constexpr (std::is_floating_point_v<T>)
          if (x == y) return std::signbit(x) ? x : y;
        return x < y ? x : y;
      });
    case K::Fmod:
      if constexpr (std::is_floating_point_v<T>) {
        return binary_loop<T, T>(out, a, b, [](T x, T y) { return std::fmod(x, y); });
      } else if constexpr (!std::is_same_v<T, bool>) {
        for (int64_t d : int64_values(b))  // before the (parallel) loop: nothing throws there
          LT_CHECK(d != 0, "fmod: integer division by zero");
        // x % -1 is 0 (and INT_MIN % -1 would trap).
        return binary_loop<T, T>(
            out, a, b, [](T x, T y) { return y == T(-1) ? T(0) : static_cast<T>(x % y); });
      }
      break;
    case K::Eq: return binary_loop<bool, T>(out, a, b, [](T x, T y) { return x == y; });
    case K::Ne: return binary_loop<bool, T>(out, a, b, [](T x, T y) { return x != y; });
    case K::Lt: return binary_loop<bool, T>(out, a, b, [](T x, T y) { return x < y; });
    case K::Le: return binary_loop<bool, T>(out, a, b, [](T x, T y) { return x <= y; });
    case K::Gt: return binary_loop<bool, T>(out, a, b, [](T x, T y) { return x > y; });
    case K::Ge: return binary_loop<bool, T>(out, a, b, [](T x, T y) { return x >= y; });
    case K::LogicalAnd:
      return binary_loop<bool, T>(out, a, b, [](T x, T y) { return x != T(0) && y != T(0); });
    case K::LogicalOr:
      return binary_loop<bool, T>(out, a, b, [](T x, T y) { return x != T(0) || y != T(0); });
    case K::BitwiseAnd:
      if constexpr (std::is_integral_v<T>)
        return binary_loop<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x & y); });
      break;
    case K::BitwiseOr:
      if constexpr (std::is_integral_v<T>)
        return binary_loop<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x | y); });
      break;
    case K::BitwiseXor:
      if constexpr (std::is_integral_v<T>)
        return binary_loop<T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x ^ y); });
      break;
    case K::LeftShift:
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        return binary_loop<T, T>(out, a, b, [](T x, T y) {
          using U = std::make_unsigned_t<T>;
          return y < 0 || y >= T(sizeof(T) * 8) ? T(0) : static_cast<T>(static_cast<U>(x) << y);
        });
      break;
    case K::RightShift:
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        return binary_loop<T, T>(out, a, b, [](T x, T y) {
          constexpr T top = T(sizeof(T) * 8 - 1);
          return static_cast<T>(x >> (y < 0 || y > top ? top : y));
        });
      break;
    default: break;
  }
  throw_error("internal: binary kernel for ", op_name(op), " on ", dtype_name(a.dtype()));
}

bool has_avx() {
  static const bool avx = __builtin_cpu_supports("avx");
  return avx;
}

// o[i, j] = x[j, i] for a 32x32 tile of 4-byte elements, in 8x8 blocks of AVX shuffles (the
// library is built for baseline x86-64: this function alone is compiled for AVX and runs where
// the CPU has it). A scalar tile moves one element per cycle; this moves about four.
__attribute__((target("avx"))) void transpose_tile_avx(const float* x, int64_t ldx, float* o,
                                                       int64_t ldo) {
  for (int64_t jb = 0; jb < 32; jb += 8)
    for (int64_t ib = 0; ib < 32; ib += 8) {
      __m256 r[8], t[8];
      for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(x + (jb + k) * ldx + ib);
      for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
      }
      for (int k = 0; k < 8; k += 4) {
        r[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
      }
      for (int k = 0; k < 4; ++k) {
        t[k] = _mm256_permute2f128_ps(r[k], r[k + 4], 0x20);
        t[k + 4] = _mm256_permute2f128_ps(r[k], r[k + 4], 0x31);
      }
      for (int k = 0; k < 8; ++k) _mm256_storeu_ps(o + (ib + k) * ldo + jb, t[k]);
    }
}

// A copy whose source runs contiguously along the destination's second-innermost dim (a
// transposed view made dense, a weight gradient from a transposed product): walked row by row,
// every destination row would read one source cache line per element, and a 784x256 float
// transpose missed L1 throughout (10% of an MLP training step). Tiles of kTile x kTile
// elements keep the tile's source lines in L1 while its destination rows are written. False
// when the layout is another.
template <typename T>
bool copy_transposed(const LoopSpec<2>& s) {
  constexpr int64_t es = sizeof(T), kTile = 32;
  const int in = s.ndim - 1, mid = s.ndim - 2;
  if (s.ndim < 2 || s.strides[0][in] != es || s.strides[1][mid] != es) return false;
  const int64_t rows = s.sizes[mid], cols = s.sizes[in], lds = s.strides[1][in] / es;
  if (rows < kTile || cols < kTile) return false;
  const int64_t row_tiles = (rows + kTile - 1) / kTile, batches = s.numel / (rows * cols);
  parallel_for(batches * row_tiles, std::max<int64_t>(1, kElementwiseGrain / (kTile * cols)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t w = begin; w < end; ++w) {
                   char* po = s.base[0];
                   char* pi = s.base[1];
                   for (int64_t d = mid - 1, b = w / row_tiles; d >= 0; --d) {
                     po += (b % s.sizes[d]) * s.strides[0][d];
                     pi += (b % s.sizes[d]) * s.strides[1][d];
                     b /= s.sizes[d];
                   }
                   T* o = reinterpret_cast<T*>(po + (w % row_tiles) * kTile * s.strides[0][mid]);
                   const T* x = reinterpret_cast<const T*>(pi) + (w % row_tiles) * kTile;
                   const int64_t r1 = std::min(kTile, rows - (w % row_tiles) * kTile),
                                 ldo = s.strides[0][mid] / es;
                   for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
                     const int64_t j1 = std::min(cols, j0 + kTile);
                     if constexpr (sizeof(T) == 4) {
                       if (r1 == kTile && j1 - j0 == kTile && has_avx()) {
                         transpose_tile_avx(reinterpret_cast<const float*>(x + j0 * lds), lds,
                                            reinterpret_cast<float*>(o + j0), ldo);
                         continue;
                       }
                     }
                     for (int64_t i = 0; i < r1; ++i)
                       for (int64_t j = j0; j < j1; ++j) o[i * ldo + j] = x[i + j * lds];
                   }
                 }
               });
  return true;
}

}  // namespace

Tensor dense(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor c = make_eager(t.sizes(), t.dtype());
  copy_into(c, t);
  return c;
}

void copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  LT_DISPATCH_ALL(dst.dtype(), O, LT_DISPATCH_ALL(src.dtype(), S, {
                    if constexpr (std::is_same_v<O, S>) {
                      auto spec = make_loop<2>({&dst, &src});
                      if (copy_transposed<O>(spec)) return;
                      run_loop(
                          spec, kElementwiseGrain, [&](char** p, const int64_t* st, int64_t n) {
                            if (st[0] == sizeof(O) && st[1] == sizeof(S)) {
                              std::memcpy(p[0], p[1], n * sizeof(O));
                            } else if (st[0] == sizeof(O) && st[1] == 0) {
                              // A broadcast value (zeros(...) is copy(expand(0))): a fill,
                              // which the compiler vectorizes; the strided loop did not.
                              std::fill_n(reinterpret_cast<O*>(p[0]), n,
                                          convert<O, S>(*reinterpret_cast<const S*>(p[1])));
                            } else {
                              for (int64_t i = 0; i < n; ++i)
                                *reinterpret_cast<O*>(p[0] + i * st[0]) =
                                    convert<O, S>(*reinterpret_cast<const S*>(p[1] + i * st[1]));
                            }
                          });
                    } else {
                      unary_loop<O, S>(dst, src, [](S v) { return convert<O, S>(v); });
                    }
                  }));
}

void unary_kernel(OpKind op, const Tensor& x, const Tensor& out) {
  if (out.numel() == 0) return;
  LT_DISPATCH(x.dtype(), T, unary_typed<T>(op, x, out));
}

void binary_kernel(OpKind op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  LT_DISPATCH(a.dtype(), T, binary_typed<T>(op, a, b, out));
}

void where_kernel(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  LT_DISPATCH(out.dtype(), T, {
    auto spec = make_loop<4>({&out, &cond, &a, &b});
    run_loop(spec, kElementwiseGrain, [&](char** p, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * st[0]) =
            *reinterpret_cast<const bool*>(p[1] + i * st[1])
                ? *reinterpret_cast<const T*>(p[2] + i * st[2])
                : *reinterpret_cast<const T*>(p[3] + i * st[3]);
    });
  });
}

void fill_kernel(const Tensor& out, double value, int64_t ivalue) {
  if (out.numel() == 0) return;
  if (is_storage_dtype(out.dtype())) {  // the value as the compute dtype holds it, rounded
    Tensor w = make_eager(out.sizes(), compute_dtype(out.dtype()));
    fill_kernel(w, value, ivalue);
    copy_into(out, w);
    return;
  }
  LT_DISPATCH(out.dtype(), T, {
    // bool from the double: 0.5 and NaN are true, as in PyTorch (ivalue truncates them).
    const T v = std::is_floating_point_v<T> ? static_cast<T>(value)
                                            : (std::is_same_v<T, bool> ? static_cast<T>(value != 0)
                                                                       : static_cast<T>(ivalue));
    auto spec = make_loop<1>({&out});
    run_loop(spec, kElementwiseGrain, [&](char** p, const int64_t* st, int64_t n) {
      if (st[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * st[0]) = v;
      }
    });
  });
}

}  // namespace lt
