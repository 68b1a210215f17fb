// Elementwise math written once over the registry's primitives (so it fuses on the lazy device
// and differentiates through them), each in the form that stays accurate where the textbook
// formula is not: sinh through expm1 near 0, acos through atan of a half-angle, inverse
// hyperbolics through log1p, large arguments before they square into overflow.
#include <cmath>
#include <limits>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/ops.h"

namespace lt {
namespace {

constexpr double kLn2 = 0.6931471805599453094172321;
constexpr double kLn10 = 2.3025850929940456840179915;
constexpr double kPi = 3.1415926535897932384626434;
// Above this, x^2 + 1 rounds to x^2 in float64 too, and asinh/acosh are log(2x).
constexpr double kHuge = 268435456.0;  // 2^28

Tensor as_float(const Tensor& t) { return is_floating(t.dtype()) ? t : t.to(get_default_dtype()); }

}  // namespace

Tensor tan(const Tensor& x) {
  Tensor f = as_float(x);
  return sin(f) / cos(f);
}
Tensor sinh(const Tensor& x) {
  Tensor f = as_float(x);
  return (expm1(f) - expm1(-f)) * 0.5;
}
Tensor cosh(const Tensor& x) {
  Tensor f = as_float(x);
  return (exp(f) + exp(-f)) * 0.5;
}
Tensor asinh(const Tensor& x) {
  Tensor f = as_float(x);
  Tensor a = abs(f);
  Tensor c = a.clamp_max(kHuge);  // no overflow in either branch
  Tensor small = log1p(c + c * c / (sqrt(c * c + 1.0) + 1.0));
  Tensor large = log(a.clamp_min(1.0)) + kLn2;
  return sign(f) * where(a > kHuge, large, small);
}
Tensor acosh(const Tensor& x) {
  Tensor f = as_float(x);
  Tensor t = f.clamp_max(kHuge) - 1.0;
  Tensor small = log1p(t + sqrt(t * (t + 2.0)));  // NaN below 1, as libm's
  Tensor large = log(f.clamp_min(1.0)) + kLn2;
  return where(f > kHuge, large, small);
}
Tensor atanh(const Tensor& x) {
  Tensor f = as_float(x);
  return log1p(f * 2.0 / (1.0 - f)) * 0.5;
}
Tensor asin(const Tensor& x) {
  Tensor f = as_float(x);
  return atan(f / sqrt((1.0 - f) * (1.0 + f)));
}
Tensor acos(const Tensor& x) {
  Tensor f = as_float(x);
  return atan(sqrt((1.0 - f) / (1.0 + f))) * 2.0;
}
Tensor log2(const Tensor& x) { return log(as_float(x)) * (1.0 / kLn2); }
Tensor log10(const Tensor& x) { return log(as_float(x)) * (1.0 / kLn10); }
Tensor exp2(const Tensor& x) { return pow(2.0, as_float(x)); }
Tensor trunc(const Tensor& x) {
  if (!is_floating(x.dtype())) return x.clone();
  return where(x < 0.0, ceil(x), floor(x));
}
Tensor frac(const Tensor& x) {
  LT_CHECK(is_floating(x.dtype()), "frac: needs a floating tensor, got ", dtype_name(x.dtype()),
           " (shape ", shape_str(x.sizes()), ")");
  return x - trunc(x);
}
Tensor isnan(const Tensor& x) { return x != x; }
Tensor isinf(const Tensor& x) {
  if (!is_floating(x.dtype())) return zeros_like(x, TensorOptions(kBool));
  return abs(x) == std::numeric_limits<double>::infinity();
}
Tensor isfinite(const Tensor& x) {
  if (!is_floating(x.dtype())) return ones_like(x, TensorOptions(kBool));
  return abs(x) < std::numeric_limits<double>::infinity();  // false for NaN too
}
Tensor sgn(const Tensor& x) { return sign(x); }
Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!is_floating(x.dtype())) return x.clone();
  const bool f32 = x.dtype() == kFloat32;
  const double hi = f32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor r = where(x == inf, posinf.value_or(hi), x);
  r = where(x == -inf, neginf.value_or(-hi), r);
  return where(x != x, nan.value_or(0.0), r);
}

Tensor atan2(const Tensor& y, const Tensor& x) {
  Tensor fy = as_float(y), fx = as_float(x);
  Tensor r = atan(fy / fx);  // +-pi/2 when x is 0
  Tensor shifted = where(fy < 0.0, r - kPi, r + kPi);
  r = where(fx < 0.0, shifted, r);
  return where((fx == 0.0).logical_and(fy == 0.0), zeros_like(r), r);  // atan2(0, 0) = 0
}
Tensor copysign(const Tensor& a, const Tensor& b) {
  Tensor m = abs(as_float(a));
  Tensor fb = as_float(b);
  // b's sign bit: negative, or a zero whose reciprocal is -inf.
  Tensor neg = (fb < 0.0).logical_or((fb == 0.0).logical_and(reciprocal(fb) < 0.0));
  return where(neg, -m, m);
}
Tensor copysign(const Tensor& a, const Scalar& b) {
  return copysign(a, scalar_tensor(b, TensorOptions(a.device()).dtype(kFloat64)));
}
Tensor heaviside(const Tensor& x, const Tensor& values) {
  LT_CHECK(x.dtype() == values.dtype(), "heaviside: input (", dtype_name(x.dtype()),
           ") and values (", dtype_name(values.dtype()), ") must have the same dtype");
  return where(x == 0, values, (x > 0).to(x.dtype()));
}
Tensor xlogy(const Tensor& x, const Tensor& y) {
  Tensor fx = as_float(x), fy = as_float(y);
  Tensor safe_y = where(fx == 0.0, ones_like(fy), fy);  // log(0) is not taken where x is 0
  Tensor r = where(fx == 0.0, zeros_like(fx * safe_y), fx * log(safe_y));
  return where(fy != fy, fy * fx, r);  // NaN y gives NaN, even where x is 0
}
Tensor xlogy(const Tensor& x, const Scalar& y) {
  return xlogy(x, scalar_tensor(y, TensorOptions(x.device()).dtype(kFloat64)));
}
Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& w) {
  // As libtorch: from a for small weights, from b for large ones (exact at w = 0 and 1).
  Tensor d = b - a;
  return where(abs(w) < 0.5, a + w * d, b - d * (1.0 - w));
}
Tensor lerp(const Tensor& a, const Tensor& b, const Scalar& w) {
  const double v = w.to_double();
  return std::abs(v) < 0.5 ? a + (b - a) * v : b - (b - a) * (1.0 - v);
}
Tensor logical_xor(const Tensor& a, const Tensor& b) { return (a != 0).ne(b != 0); }
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  LT_CHECK((min && min->defined()) || (max && max->defined()),
           "clamp: at least one of min and max must be given (shape ", shape_str(x.sizes()), ")");
  Tensor r = x;
  if (min && min->defined()) r = maximum(r, *min);
  if (max && max->defined()) r = minimum(r, *max);
  return r;
}

// The inverse of erf on [-1, 1] (+-inf at +-1, NaN outside), computed in float64 whatever the
// input's float dtype and rounded once: Giles' single-precision approximation ("Approximating
// the erfinv function", GPU Computing Gems, 2011; relative error ~1e-7), then two Newton steps
// on erf, each of which squares the relative error. The first guess and the first step carry no
// history, so the gradient is the last step's, sqrt(pi)/2 exp(x^2), at a converged x.
Tensor erfinv(const Tensor& x) {
  OpContext ctx("erfinv");
  const Dtype out = is_floating(x.dtype()) ? x.dtype() : get_default_dtype();
  Tensor y = x.to(kFloat64);
  Tensor w = -log((1.0 - y) * (1.0 + y));
  auto horner = [](const Tensor& t, std::initializer_list<double> coef) {
    Tensor p = full_like(t, *coef.begin());
    for (auto c = coef.begin() + 1; c != coef.end(); ++c) p = p * t + *c;
    return p;
  };
  Tensor central =
      horner(w - 2.5, {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                       0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941});
  Tensor tail =
      horner(sqrt(w) - 3.0, {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                             0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
  const double half_sqrt_pi = 0.5 * std::sqrt(kPi);
  auto newton = [&](const Tensor& z) { return z - (erf(z) - y) * half_sqrt_pi * exp(z * z); };
  Tensor x0 = without_history(where(w < 5.0, central, tail) * y);
  Tensor x2 = newton(without_history(newton(x0)));
  // +-inf at +-1, without history: where's zero gradient times inf would be NaN elsewhere
  Tensor edge = without_history(y * std::numeric_limits<double>::infinity());
  return where(abs(y) == 1.0, edge, x2).to(out);
}

#define LT_UNARY_METHOD(name) \
  Tensor Tensor::name() const { return lt::name(*this); }
LT_UNARY_METHOD(tan)
LT_UNARY_METHOD(sinh)
LT_UNARY_METHOD(cosh)
LT_UNARY_METHOD(asinh)
LT_UNARY_METHOD(acosh)
LT_UNARY_METHOD(atanh)
LT_UNARY_METHOD(asin)
LT_UNARY_METHOD(acos)
LT_UNARY_METHOD(log2)
LT_UNARY_METHOD(log10)
LT_UNARY_METHOD(exp2)
LT_UNARY_METHOD(trunc)
LT_UNARY_METHOD(frac)
LT_UNARY_METHOD(isnan)
LT_UNARY_METHOD(isinf)
LT_UNARY_METHOD(isfinite)
LT_UNARY_METHOD(sgn)
LT_UNARY_METHOD(erfinv)
#undef LT_UNARY_METHOD
Tensor Tensor::clamp(const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) const {
  return lt::clamp(*this, lo, hi);
}
Tensor& Tensor::clamp_(const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) const {
  return write_back(*this, lt::clamp(*this, lo, hi), "clamp_");
}
Tensor& Tensor::erfinv_() const { return write_back(*this, lt::erfinv(*this), "erfinv_"); }
Tensor Tensor::atan2(const Tensor& x) const { return lt::atan2(*this, x); }
Tensor Tensor::lerp(const Tensor& end, const Scalar& w) const { return lt::lerp(*this, end, w); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& w) const { return lt::lerp(*this, end, w); }
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf,
                          std::optional<double> neginf) const {
  return lt::nan_to_num(*this, nan, posinf, neginf);
}

}  // namespace lt
