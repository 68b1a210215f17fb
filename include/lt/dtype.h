// Element types and PyTorch's promotion lattice over them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "lt/half.h"

namespace lt {

// The numbering is stable (it appears in graph keys); promote_types gives PyTorch's table.
// Int8, Float16 and BFloat16 are storage dtypes: ops compute on them in their compute dtype
// (int32, float32) and round each result to the storage dtype, as libtorch's CPU kernels do.
enum class Dtype : uint8_t {
  Bool = 0,
  Int32 = 1,
  Int64 = 2,
  Float32 = 3,
  Float64 = 4,
  Int8 = 5,
  Float16 = 6,
  BFloat16 = 7
};

inline constexpr Dtype kBool = Dtype::Bool;
inline constexpr Dtype kInt32 = Dtype::Int32;
inline constexpr Dtype kInt64 = Dtype::Int64;
inline constexpr Dtype kFloat32 = Dtype::Float32;
inline constexpr Dtype kFloat64 = Dtype::Float64;
inline constexpr Dtype kFloat = Dtype::Float32;
inline constexpr Dtype kDouble = Dtype::Float64;
inline constexpr Dtype kInt = Dtype::Int32;
inline constexpr Dtype kLong = Dtype::Int64;
inline constexpr Dtype kInt8 = Dtype::Int8;
inline constexpr Dtype kChar = Dtype::Int8;
inline constexpr Dtype kFloat16 = Dtype::Float16;
inline constexpr Dtype kHalf = Dtype::Float16;
inline constexpr Dtype kBFloat16 = Dtype::BFloat16;

inline constexpr int kNumDtypes = 8;

size_t dtype_size(Dtype t);
const char* dtype_name(Dtype t);   // "float32", ...
const char* dtype_short(Dtype t);  // "f32", ... (IR text)
inline bool is_floating(Dtype t) {
  return t == kFloat32 || t == kFloat64 || t == kFloat16 || t == kBFloat16;
}
inline bool is_integral(Dtype t, bool include_bool = false) {
  return t == kInt32 || t == kInt64 || t == kInt8 || (include_bool && t == kBool);
}
// The storage dtypes and the dtype their arithmetic runs in.
inline bool is_storage_dtype(Dtype t) { return t == kInt8 || t == kFloat16 || t == kBFloat16; }
inline Dtype compute_dtype(Dtype t) {
  return t == kInt8 ? kInt32 : (t == kFloat16 || t == kBFloat16) ? kFloat32 : t;
}
// PyTorch's torch.promote_types over these dtypes: the wider of two integers or of two floats,
// a float over an integer, and float32 for float16 with bfloat16 (neither holds the other).
Dtype promote_types(Dtype a, Dtype b);

// The dtype of floating tensors made without one (factories, float literals, int-to-float
// promotion): float32 unless set_default_dtype chose float64, as libtorch's (process-wide).
Dtype get_default_dtype();
void set_default_dtype(Dtype t);  // a floating dtype

// libtorch's caffe2::TypeMeta as programs use it: TypeMeta::Make<double>(), compared and
// converted to a dtype.
struct TypeMeta {
  Dtype dtype = kFloat32;
  TypeMeta() = default;
  TypeMeta(Dtype t) : dtype(t) {}  // NOLINT: implicit, as libtorch's
  template <typename T>
  static TypeMeta Make();
  operator Dtype() const { return dtype; }  // NOLINT
  Dtype toScalarType() const { return dtype; }
  size_t itemsize() const { return dtype_size(dtype); }
  const char* name() const { return dtype_name(dtype); }
};

template <typename T>
struct DtypeOf;
template <>
struct DtypeOf<float> {
  static constexpr Dtype value = kFloat32;
};
template <>
struct DtypeOf<double> {
  static constexpr Dtype value = kFloat64;
};
template <>
struct DtypeOf<int32_t> {
  static constexpr Dtype value = kInt32;
};
template <>
struct DtypeOf<int64_t> {
  static constexpr Dtype value = kInt64;
};
template <>
struct DtypeOf<bool> {
  static constexpr Dtype value = kBool;
};
template <>
struct DtypeOf<int8_t> {
  static constexpr Dtype value = kInt8;
};
template <>
struct DtypeOf<Half> {
  static constexpr Dtype value = kFloat16;
};
template <>
struct DtypeOf<BFloat16> {
  static constexpr Dtype value = kBFloat16;
};

template <typename T>
TypeMeta TypeMeta::Make() {
  return TypeMeta(DtypeOf<T>::value);
}

}  // namespace lt
