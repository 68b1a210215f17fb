// Scalar math the MLIR lowering needs beyond one math op: NaN and signed-zero guards and the
// accurate float64 expm1 / log1p (math_lowering.h). MLIR headers: src/backend/mlir/ only.
#include "backend/mlir/math_lowering.h"

#include <limits>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace lt::backend {

using namespace mlir;

namespace {
Value fconst(OpBuilder& b, Value like, double v) {
  return arith::ConstantOp::create(b, like.getLoc(), b.getFloatAttr(like.getType(), v));
}
}  // namespace

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
  // Away from 0 (u >= 2 or u <= 1/2, infinities and 0 included) u - 1 cancels nothing: u - 1
  // itself. The correction there overflowed: (u - 1) x is inf for x > 703 (tests/test_math_ulp).
  Value far = arith::OrIOp::create(
      b, loc_, arith::CmpFOp::create(b, loc_, P::OGE, u, fconst(b, x, 2.0)),
      arith::CmpFOp::create(b, loc_, P::OLE, u, fconst(b, x, 0.5)));
  r = arith::SelectOp::create(b, loc_, far, um1, r);
  return nan_passes(b, loc_, x, arith::SelectOp::create(b, loc_, is_one, x, r));
}
Value accurate_log1p(OpBuilder& b, Location loc_, Value x) {
  using P = arith::CmpFPredicate;
  Value one = arith::ConstantOp::create(b, loc_, b.getFloatAttr(x.getType(), 1.0));
  Value u = arith::AddFOp::create(b, loc_, x, one);
  Value um1 = arith::SubFOp::create(b, loc_, u, one);
  Value r = arith::DivFOp::create(
      b, loc_, arith::MulFOp::create(b, loc_, math::LogOp::create(b, loc_, u), x), um1);
  // u == 1: x (tiny and signed zeros); u >= 2 or u <= 1/2 (infinities, u <= 0 and NaN
  // included): log(u), which cancels nothing there (1 + x is exact for x in [-1/2, 0]); the
  // correction overflowed, log(u) x = inf for x > 2.6e305 (tests/test_math_ulp).
  Value is_one = arith::CmpFOp::create(b, loc_, P::OEQ, u, one);
  Value plain = arith::OrIOp::create(
      b, loc_, arith::CmpFOp::create(b, loc_, P::UGE, u, fconst(b, x, 2.0)),
      arith::CmpFOp::create(b, loc_, P::ULE, u, fconst(b, x, 0.5)));
  r = arith::SelectOp::create(b, loc_, plain, math::LogOp::create(b, loc_, u), r);
  return arith::SelectOp::create(b, loc_, is_one, x, r);
}
// float32 exp and log at the subnormal edge. MLIR's exp approximation builds its result from an
// exponent field, so results below FLT_MIN (x < -87.34) came out 0 where libm (eager) gives the
// subnormal; its log reads the exponent field of its argument, so a subnormal argument gave
// log(FLT_MIN) = -87.34 for every one (log(1e-45) is -103.28). exp takes x/2 there and squares
// (one more rounding: within 4 ulp of libm); log scales the argument by 2^24 and subtracts
// 24 ln 2. Measured by tests/test_math_ulp.cpp over a million arguments spread over all floats.
Value exp_f32(OpBuilder& b, Location loc_, Value x) {
  if (!x.getType().isF32()) return math::ExpOp::create(b, loc_, x);
  Value edge = fconst(b, x, -87.33654475);
  Value small = arith::CmpFOp::create(b, loc_, arith::CmpFPredicate::OLT, x, edge);
  Value half = arith::MulFOp::create(b, loc_, x, fconst(b, x, 0.5));
  Value e = math::ExpOp::create(b, loc_, arith::SelectOp::create(b, loc_, small, half, x));
  return arith::SelectOp::create(b, loc_, small, arith::MulFOp::create(b, loc_, e, e), e);
}
Value log_f32(OpBuilder& b, Location loc_, Value x) {
  if (!x.getType().isF32()) return math::LogOp::create(b, loc_, x);
  Value min_normal = fconst(b, x, static_cast<double>(std::numeric_limits<float>::min()));
  Value sub = arith::CmpFOp::create(b, loc_, arith::CmpFPredicate::OLT, x, min_normal);
  Value scaled = arith::MulFOp::create(b, loc_, x, fconst(b, x, 16777216.0));
  Value l = math::LogOp::create(b, loc_, arith::SelectOp::create(b, loc_, sub, scaled, x));
  Value shift = fconst(b, x, 24 * 0.69314718055994531);
  return arith::SelectOp::create(b, loc_, sub, arith::SubFOp::create(b, loc_, l, shift), l);
}

// float32 tanh away from 0. MLIR's approximation clamps |x| >= 7.905 to exactly +-1, where
// libm (eager) still gives 1 - 2.4e-7 at 8 and reaches 1 only past 9.01; a later 1 - tanh(x)
// turned that 4-ulp difference into 0 against 2.4e-7 (the fuzzer, seed 46000905 on the AVX2
// path), and it is 4 ulp from libm below that too. For |x| >= 0.625, with e = exp(-2|x|),
// tanh(x) = sign(x) (1 - e) / (1 + e) exactly; e <= 0.29 so nothing cancels and the rounding
// stays within ~2 ulp (tests/test_math_ulp.cpp). Near 0 MLIR's polynomial stays.
Value tanh_f32(OpBuilder& b, Location loc_, Value x) {
  Value t = math::TanhOp::create(b, loc_, x);
  if (!x.getType().isF32()) return t;
  Value ax = math::AbsFOp::create(b, loc_, x);
  Value big = arith::CmpFOp::create(b, loc_, arith::CmpFPredicate::OGE, ax, fconst(b, x, 0.625));
  Value e = math::ExpOp::create(b, loc_, arith::MulFOp::create(b, loc_, ax, fconst(b, x, -2.0)));
  Value one = fconst(b, x, 1.0);
  Value r = arith::DivFOp::create(b, loc_, arith::SubFOp::create(b, loc_, one, e),
                                  arith::AddFOp::create(b, loc_, one, e));
  return arith::SelectOp::create(b, loc_, big, math::CopySignOp::create(b, loc_, r, x), t);
}

// float32 erf away from 0. MLIR's approximation returns exactly +-1 too early (on the AVX2 path
// erf(-3.8007) was -1 where libm gives -0.99999994), so gelu's x (1 + erf(x / sqrt 2)) was 0 in
// its negative tail where eager's is not (the fuzzer, seed 49100000). For |x| >= 1.5 it is
// sign(x) (1 - erfc(|x|)) with erfc from a Chebyshev fit of relative error 1.2e-7 (Press et al.,
// Numerical Recipes, erfcc): erfc(1.5) = 0.034, so even a 1e-6 relative error of erfc in float32
// moves 1 - erfc by under 0.6 ulp, and it reaches 1 where the rounding does.
Value erf_f32(OpBuilder& b, Location loc_, Value x) {
  Value e = math::ErfOp::create(b, loc_, x);
  if (!x.getType().isF32()) return e;
  auto c = [&](double v) { return fconst(b, x, v); };
  auto mul = [&](Value p, Value q) { return arith::MulFOp::create(b, loc_, p, q).getResult(); };
  auto add = [&](Value p, Value q) { return arith::AddFOp::create(b, loc_, p, q).getResult(); };
  Value z = math::AbsFOp::create(b, loc_, x);
  Value t = arith::DivFOp::create(b, loc_, c(1.0), add(c(1.0), mul(c(0.5), z)));
  static constexpr double kCoef[] = {-1.26551223, 1.00002368,  0.37409196, 0.09678418,  -0.18628806,
                                     0.27886807,  -1.13520398, 1.48851587, -0.82215223, 0.17087277};
  Value poly = c(kCoef[9]);
  for (int i = 8; i >= 0; --i) poly = add(c(kCoef[i]), mul(t, poly));
  // erfc(z) = t exp(-z^2 + poly(t)), with -1.26551223 the constant term of poly.
  Value arg = arith::SubFOp::create(b, loc_, poly, mul(z, z));
  Value erfc = mul(t, math::ExpOp::create(b, loc_, arg));
  Value tail = math::CopySignOp::create(b, loc_, arith::SubFOp::create(b, loc_, c(1.0), erfc), x);
  Value big = arith::CmpFOp::create(b, loc_, arith::CmpFPredicate::OGE, z, c(1.5));
  return arith::SelectOp::create(b, loc_, big, tail, e);
}

// erf(-0) = -0: the float32 approximation returned +0.
Value zero_passes(OpBuilder& b, Location loc_, Value x, Value r) {
  Value zero = arith::ConstantOp::create(b, loc_, b.getFloatAttr(x.getType(), 0.0));
  Value z = arith::CmpFOp::create(b, loc_, arith::CmpFPredicate::OEQ, x, zero);
  return arith::SelectOp::create(b, loc_, z, x, r);
}

}  // namespace lt::backend
