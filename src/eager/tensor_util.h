// Helpers for eager kernels: allocating tensors, making views, dtype dispatch.
#pragma once
#include <vector>

#include "core/check.h"
#include "core/tensor_impl.h"
#include "lt/tensor.h"

namespace lt {

Tensor make_eager(IntList sizes, Dtype dtype);
Tensor make_view(const Tensor& base, IntList sizes, IntList strides, int64_t offset);
inline const TensorImpl& I(const Tensor& t) { return *t.impl(); }

// Views and reads of cpu tensors made without the dispatcher: kernels (and the backends that
// run them) never call the public ops, which would record, dispatch and check again.
// t viewed as `sizes` (same numel); t must be viewable so (contiguous, or differing by 1s).
Tensor reshape_view(const Tensor& t, IntList sizes);
// t broadcast to `sizes` (stride 0 along the dims it expands, leading dims added).
Tensor expand_view(const Tensor& t, IntList sizes);
// t with its dims reordered: result dim i is t's dim perm[i].
Tensor permute_view(const Tensor& t, IntList perm);
// The values of a cpu tensor converted to `as`, in row-major order, into out (numel elements).
void read_values(const Tensor& t, Dtype as, void* out);
// The values of a cpu tensor as int64, in row-major order.
std::vector<int64_t> int64_values(const Tensor& t);

}  // namespace lt

#define LT_CASE_T(DT, CT, T, ...) \
  case DT: {                      \
    using T = CT;                 \
    __VA_ARGS__;                  \
    break;                        \
  }

// The compute dtypes' cases of a dispatch switch.
#define LT_COMPUTE_CASES(T, ...)                    \
  LT_CASE_T(::lt::kFloat32, float, T, __VA_ARGS__)  \
  LT_CASE_T(::lt::kFloat64, double, T, __VA_ARGS__) \
  LT_CASE_T(::lt::kInt32, int32_t, T, __VA_ARGS__)  \
  LT_CASE_T(::lt::kInt64, int64_t, T, __VA_ARGS__)  \
  LT_CASE_T(::lt::kBool, bool, T, __VA_ARGS__)

// Runs the body with T bound to the C++ type of dtype `dt`, a compute dtype: kernels never see
// the storage dtypes (eager_execute widens them first).
#define LT_DISPATCH(dt, T, ...)                                                                  \
  switch (dt) {                                                                                  \
    LT_COMPUTE_CASES(T, __VA_ARGS__)                                                             \
    default:                                                                                     \
      ::lt::throw_error("internal: a kernel reached with storage dtype ", ::lt::dtype_name(dt)); \
  }

// Every dtype, storage dtypes included: for conversions (copy_into).
#define LT_DISPATCH_ALL(dt, T, ...)                            \
  switch (dt) {                                                \
    LT_COMPUTE_CASES(T, __VA_ARGS__)                           \
    LT_CASE_T(::lt::kInt8, int8_t, T, __VA_ARGS__)             \
    LT_CASE_T(::lt::kFloat16, ::lt::Half, T, __VA_ARGS__)      \
    LT_CASE_T(::lt::kBFloat16, ::lt::BFloat16, T, __VA_ARGS__) \
  }

#define LT_DISPATCH_FLOAT(dt, T, ...)               \
  switch (dt) {                                     \
    LT_CASE_T(::lt::kFloat32, float, T, __VA_ARGS__)  \
    LT_CASE_T(::lt::kFloat64, double, T, __VA_ARGS__) \
    default:                                        \
      ::lt::throw_error("internal: expected a floating dtype, got ", ::lt::dtype_name(dt)); \
  }
