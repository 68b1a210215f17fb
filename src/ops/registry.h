// The op registry: OpKind and every per-op fact, generated from the rows of ops.def, plus OpAttrs.
#pragma once
#include <cstdint>

#include "core/dims.h"
#include "lt/device.h"
#include "lt/dtype.h"

namespace lt {

enum class OpCategory : uint8_t {
  EwUnary,
  EwBinary,
  EwTernary,
  Reduction,
  Movement,
  Contraction,
  Indexing,
  Creation,
  Random,
  Collective
};

// The columns of ops.def (see its header).
enum class DtypeRule : uint8_t {
  Same,
  SameNoBool,
  Float,
  ToBool,
  Int64,
  AttrDtype,
  Promote,
  PromoteNoBool,
  PromoteFloat,
  PromotePow,
  Integral,
  PromoteIntegral,
  PromoteShift,
  Custom
};

namespace op_table {
// Gradient column: what the formula reads (bit `which`: inputs 0-2, the output 3).
inline constexpr uint8_t None = 0, In0 = 1, In1 = 2, In2 = 4, Out = 8;
inline constexpr uint8_t kDifferentiable = 16;
inline constexpr uint8_t NoGrad = 0;
constexpr uint8_t Reads(uint8_t what) { return kDifferentiable | what; }
// Traits column.
inline constexpr uint8_t Fused = 1, View = 2;

struct Row {
  const char* name;
  OpCategory category;
  int8_t arity;
  DtypeRule dtype;
  uint8_t grad;
  uint8_t traits;
};
inline constexpr Row kRows[] = {
#define X(Name, str, cat, arity, dtype, grad, traits) \
  {str, OpCategory::cat, arity, DtypeRule::dtype, grad, traits},
#include "lt/ops.def"
#undef X
};
}  // namespace op_table

enum class OpKind : uint16_t {
#define X(Name, ...) Name,
#include "lt/ops.def"
#undef X
  NumOps
};

// Counted from the table: no document or assertion repeats the number.
inline constexpr int kNumOps = static_cast<int>(OpKind::NumOps);

inline const op_table::Row& op_row(OpKind k) { return op_table::kRows[static_cast<int>(k)]; }
inline const char* op_name(OpKind k) { return op_row(k).name; }
inline OpCategory op_category(OpKind k) { return op_row(k).category; }
inline int op_arity(OpKind k) { return op_row(k).arity; }
inline DtypeRule op_dtype_rule(OpKind k) { return op_row(k).dtype; }
inline bool is_elementwise(OpKind k) {
  OpCategory c = op_category(k);
  return c == OpCategory::EwUnary || c == OpCategory::EwBinary || c == OpCategory::EwTernary;
}
// Whether autograd records the op; what its formula reads (0-2: inputs, 3: the output).
inline bool differentiable(OpKind k) { return op_row(k).grad & op_table::kDifferentiable; }
inline bool formula_reads(OpKind k, int which) { return op_row(k).grad & (1u << which); }
// A view of its input on eager (Reshape a view when the strides allow).
inline bool is_view_op(OpKind k) { return op_row(k).traits & op_table::View; }
// The MLIR backend lowers the op inside compiled clusters (else: a library step).
inline bool is_fused_op(OpKind k) { return op_row(k).traits & op_table::Fused; }

// Op attributes: each op uses the fields its ops.def row names.
struct OpAttrs {
  Dims ints;
  int64_t i[4] = {0, 0, 0, 0};
  double f = 0;
  bool flag = false;
  Dtype dtype = kFloat32;
  Device device;
};
// The attributes of an op that has none (a shared instance: no construction per op).
extern const OpAttrs kNoAttrs;

}  // namespace lt
