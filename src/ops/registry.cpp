#include "ops/registry.h"

#include "ops/autograd_hooks.h"
#include "ops/dist_hooks.h"
#include "ops/lazy_hooks.h"

namespace lt {
namespace {
constexpr const char* kNames[] = {
#define X(Name, str, cat, arity) str,
#include "ops/ops.def"
#undef X
};
constexpr OpCategory kCats[] = {
#define X(Name, str, cat, arity) OpCategory::cat,
#include "ops/ops.def"
#undef X
};
constexpr int kArity[] = {
#define X(Name, str, cat, arity) arity,
#include "ops/ops.def"
#undef X
};
}  // namespace

const char* op_name(OpKind k) { return kNames[static_cast<int>(k)]; }
OpCategory op_category(OpKind k) { return kCats[static_cast<int>(k)]; }
int op_arity(OpKind k) { return kArity[static_cast<int>(k)]; }

bool is_float_unary(OpKind k) {
  switch (k) {
    case OpKind::Exp: case OpKind::Log: case OpKind::Log1p: case OpKind::Expm1:
    case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos:
    case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf: case OpKind::Reciprocal:
      return true;
    default:
      return false;
  }
}

LazyHooks& lazy_hooks() {
  static LazyHooks h;
  return h;
}

AutogradHooks& autograd_hooks() {
  static AutogradHooks h;
  return h;
}

DistHooks& dist_hooks() {
  static DistHooks h;
  return h;
}

const OpAttrs kNoAttrs{};

}  // namespace lt
