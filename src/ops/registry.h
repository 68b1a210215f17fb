// The op registry: OpKind, names and categories generated from ops.def, plus OpAttrs.
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

enum class OpKind : uint16_t {
#define X(Name, str, cat, arity) Name,
#include "ops/ops.def"
#undef X
  NumOps
};

inline constexpr int kNumOps = static_cast<int>(OpKind::NumOps);
static_assert(kNumOps == 68, "ops.def changed: update docs/ARCHITECTURE.md and the op sweep");

const char* op_name(OpKind k);
OpCategory op_category(OpKind k);
int op_arity(OpKind k);
inline bool is_elementwise(OpKind k) {
  OpCategory c = op_category(k);
  return c == OpCategory::EwUnary || c == OpCategory::EwBinary || c == OpCategory::EwTernary;
}
inline bool is_compare(OpKind k) { return k >= OpKind::Eq && k <= OpKind::Ge; }
inline bool is_logical(OpKind k) {
  return k == OpKind::LogicalAnd || k == OpKind::LogicalOr || k == OpKind::LogicalNot;
}
// Unary ops that compute in floating point even for integer inputs (exp, log, ...).
bool is_float_unary(OpKind k);

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
