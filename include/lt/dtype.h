// Element types and PyTorch's promotion lattice over them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace lt {

// Order matters: for the supported set, promotion is the maximum in this order
// (bool < int32 < int64 < float32 < float64), which matches PyTorch's table.
enum class Dtype : uint8_t { Bool = 0, Int32 = 1, Int64 = 2, Float32 = 3, Float64 = 4 };

inline constexpr Dtype kBool = Dtype::Bool;
inline constexpr Dtype kInt32 = Dtype::Int32;
inline constexpr Dtype kInt64 = Dtype::Int64;
inline constexpr Dtype kFloat32 = Dtype::Float32;
inline constexpr Dtype kFloat64 = Dtype::Float64;
inline constexpr Dtype kFloat = Dtype::Float32;
inline constexpr Dtype kDouble = Dtype::Float64;
inline constexpr Dtype kInt = Dtype::Int32;
inline constexpr Dtype kLong = Dtype::Int64;

inline constexpr int kNumDtypes = 5;

size_t dtype_size(Dtype t);
const char* dtype_name(Dtype t);   // "float32", ...
const char* dtype_short(Dtype t);  // "f32", ... (IR text)
inline bool is_floating(Dtype t) { return t == kFloat32 || t == kFloat64; }
inline bool is_integral(Dtype t, bool include_bool = false) {
  return t == kInt32 || t == kInt64 || (include_bool && t == kBool);
}
inline Dtype promote_types(Dtype a, Dtype b) { return a > b ? a : b; }

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

template <typename T>
TypeMeta TypeMeta::Make() {
  return TypeMeta(DtypeOf<T>::value);
}

}  // namespace lt
