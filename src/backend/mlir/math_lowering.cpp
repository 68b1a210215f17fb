// Scalar math the MLIR lowering needs beyond one math op: NaN and signed-zero guards and the
// accurate float64 expm1 / log1p (math_lowering.h). MLIR headers: src/backend/mlir/ only.
#include "backend/mlir/math_lowering.h"

#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace lt::backend {

using namespace mlir;

// x is NaN ? x : r. MLIR's exp approximation converts its scaled argument with fptosi, which
// is poison for NaN; when canonicalization had folded the argument to a NaN constant (softmax
// of a 0-d inf: inf - inf), LLVM folded the poison into an arbitrary value (the fuzzer saw
// 43.29 where eager gives NaN). The select keeps NaN without reaching the poisoned arm.
Value nan_passes(OpBuilder& b, Location loc_, Value x, Value r) {
  if (!isa<FloatType>(x.getType())) return r;
  Value nan = arith::CmpFOp::create(b, loc_, arith::CmpFPredicate::UNO, x, x);
  return arith::SelectOp::create(b, loc_, nan, x, r);
}

// float64 expm1 / log1p: MLIR lowers them as exp(x) - 1 and log(1 + x), which lose every
// digit for tiny x (expm1(-1e-30) gave 0; the fuzzer found expm1(-0) = +0). Kahan's and
// Goldberg's corrections are accurate to a few ulp given exp and log: with u = exp(x),
// expm1 = u == 1 ? x : (u - 1) x / log(u) (u == 0: -1; u = inf: inf); with u = 1 + x,
// log1p = u == 1 ? x : log(u) x / (u - 1). Both keep -0. float32 takes MLIR's approximations,
// which handle tiny arguments.
Value accurate_expm1(OpBuilder& b, Location loc_, Value x) {
  using P = arith::CmpFPredicate;
  Value one = arith::ConstantOp::create(b, loc_, b.getFloatAttr(x.getType(), 1.0));
  Value u = math::ExpOp::create(b, loc_, x);
  Value um1 = arith::SubFOp::create(b, loc_, u, one);
  Value r = arith::DivFOp::create(b, loc_, arith::MulFOp::create(b, loc_, um1, x),
                                  math::LogOp::create(b, loc_, u));
  Value is_one = arith::CmpFOp::create(b, loc_, P::OEQ, u, one);
  // u - 1 == -1 (u == 0) or u infinite: u - 1 itself.
  Value inf = arith::ConstantOp::create(
      b, loc_, b.getFloatAttr(x.getType(), std::numeric_limits<double>::infinity()));
  Value big = arith::CmpFOp::create(b, loc_, P::OEQ, u, inf);
  Value zero_u =
      arith::CmpFOp::create(b, loc_, P::OEQ, u, arith::SubFOp::create(b, loc_, one, one));
  r = arith::SelectOp::create(b, loc_, arith::OrIOp::create(b, loc_, big, zero_u), um1, r);
  return nan_passes(b, loc_, x, arith::SelectOp::create(b, loc_, is_one, x, r));
}
Value accurate_log1p(OpBuilder& b, Location loc_, Value x) {
  using P = arith::CmpFPredicate;
  Value one = arith::ConstantOp::create(b, loc_, b.getFloatAttr(x.getType(), 1.0));
  Value u = arith::AddFOp::create(b, loc_, x, one);
  Value um1 = arith::SubFOp::create(b, loc_, u, one);
  Value r = arith::DivFOp::create(
      b, loc_, arith::MulFOp::create(b, loc_, math::LogOp::create(b, loc_, u), x), um1);
  Value inf = arith::ConstantOp::create(
      b, loc_, b.getFloatAttr(x.getType(), std::numeric_limits<double>::infinity()));
  // u == 1: x (tiny and signed zeros); u infinite or u <= 0: log(u) (inf, -inf, NaN).
  Value is_one = arith::CmpFOp::create(b, loc_, P::OEQ, u, one);
  Value plain = arith::OrIOp::create(
      b, loc_, arith::CmpFOp::create(b, loc_, P::OEQ, u, inf),
      arith::CmpFOp::create(b, loc_, P::ULE, u, arith::SubFOp::create(b, loc_, one, one)));
  r = arith::SelectOp::create(b, loc_, plain, math::LogOp::create(b, loc_, u), r);
  return arith::SelectOp::create(b, loc_, is_one, x, r);
}
// erf(-0) = -0: the float32 approximation returned +0.
Value zero_passes(OpBuilder& b, Location loc_, Value x, Value r) {
  Value zero = arith::ConstantOp::create(b, loc_, b.getFloatAttr(x.getType(), 0.0));
  Value z = arith::CmpFOp::create(b, loc_, arith::CmpFPredicate::OEQ, x, zero);
  return arith::SelectOp::create(b, loc_, z, x, r);
}

}  // namespace lt::backend
