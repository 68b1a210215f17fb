// Elementwise functions, methods, operators and in-place variants.
#include <cmath>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"
#include "core/tensor_impl.h"
#include "ops/shape_rules.h"

namespace lt {
namespace {
using K = OpKind;
Tensor un(K k, const Tensor& t) { return call(k, {t}); }
// A non-owning handle: shared_ptr's aliasing constructor over an empty owner points at the
// impl without a control block, so making, copying and dropping it touches no reference count.
Tensor borrow(const Tensor& t) {
  return Tensor(std::shared_ptr<TensorImpl>(std::shared_ptr<TensorImpl>(), t.impl()));
}
// Binary ops are the commonest recorded ops. Their inputs reach call() as borrowed handles,
// which saves two atomic increments and two decrements per op (a quarter of the recording
// cost on the lazy device). Safe because the caller's tensors outlive the call and a binary
// op's result is always a new tensor; with autograd the inputs are saved for backward, so
// those calls take owning handles.
Tensor bin(K k, const Tensor& a, const Tensor& b) {
  if (a.defined() && b.defined() && !a.impl()->autograd && !b.impl()->autograd) {
    const Tensor in[2] = {borrow(a), borrow(b)};
    return call(k, ArrayRef<Tensor>(in, 2));
  }
  return call(k, {a, b});
}
Tensor bin(K k, const Tensor& a, const Scalar& b) { return call(k, {a, wrap_scalar(b, a.device())}); }
Tensor bin(K k, const Scalar& a, const Tensor& b) { return call(k, {wrap_scalar(a, b.device()), b}); }
bool is_one(const Scalar& s) { return s.to_double() == 1.0 && !s.is_bool(); }
// alpha * b for add/sub. As in PyTorch, alpha never takes part in type promotion: the result
// type is that of (a, b), and b is scaled in it (so alpha must fit it: no floating alpha for
// an integral result, no bool alpha for a non-bool one).
Tensor scaled(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (is_one(alpha)) return b;
  LT_CHECK(a.defined() && b.defined(), op, ": got an undefined tensor");
  const Dtype r = result_type({a, b});
  LT_CHECK(!alpha.is_floating() || is_floating(r), op, ": for integral input tensors, alpha ",
           alpha.to_double(), " must not be a floating point number (result type ",
           dtype_name(r), ")");
  LT_CHECK(!alpha.is_bool() || r == kBool, op, ": a boolean alpha is only supported for a bool ",
           "result, not ", dtype_name(r));
  return (b.dtype() == r ? b : b.to(r)) * alpha;
}
}  // namespace

// ---- free functions
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return bin(K::Add, a, scaled("add", a, b, alpha));
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return bin(K::Sub, a, scaled("sub", a, b, alpha));
}
Tensor mul(const Tensor& a, const Tensor& b) { return bin(K::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return bin(K::Div, a, b); }
// As in PyTorch, an integral power with a negative integral exponent is an error (checked
// here for host scalars and known values; the eager kernel checks the rest).
void check_int_pow(const Tensor& a, const Tensor& e) {
  if (!a.defined() || !e.defined() || is_floating(result_type({a, e})) || e.dtype() == kBool)
    return;
  if (e.numel() == 0) return;
  // A computed exponent on the lazy device is observed here (one small graph), as PyTorch's
  // kernel reads it: an integral tensor power is rare, a silent wrong result is not acceptable.
  Tensor v = known_values(e);
  const int64_t lo = (v.defined() ? v : e).min().item().to<int64_t>();
  LT_CHECK(lo >= 0, "pow: integers to negative integer powers are not allowed (exponent ", lo,
           ")");
}
Tensor pow(const Tensor& a, const Tensor& b) {
  check_int_pow(a, b);
  return bin(K::Pow, a, b);
}
Tensor pow(const Tensor& a, const Scalar& b) {
  LT_CHECK(b.is_floating() || b.is_bool() || b.to_int() >= 0 || is_floating(a.dtype()),
           "pow: integers to negative integer powers are not allowed (exponent ", b.to_int(),
           ")");
  return bin(K::Pow, a, b);
}
Tensor pow(const Scalar& a, const Tensor& b) {
  Tensor w = wrap_scalar(a, b.device());
  check_int_pow(w, b);
  return call(K::Pow, {w, b});
}
// Integer fmod by zero on the lazy device: libtorch's ZeroDivisionError when the divisor's
// values are known (device data). Eager's kernel checks its divisor itself.
void check_int_divisor(const char* op, const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || !b.device().is_lazy()) return;
  if (is_floating(result_type({a, b})) || b.numel() == 0) return;
  Tensor v = known_values(b);
  if (!v.defined() || v.device().is_lazy()) return;
  LT_CHECK(!(v == 0).any().item<bool>(), op, ": integer division by zero (divisor of shape ",
           shape_str(b.sizes()), ")");
}
Tensor fmod(const Tensor& a, const Tensor& b) {
  check_int_divisor("fmod", a, b);
  return bin(K::Fmod, a, b);
}
void check_int_divisor(const char* op, const Tensor& a, const Scalar& b) {
  LT_CHECK(b.is_floating() || is_floating(a.dtype()) || b.to_int() != 0, op,
           ": integer division by zero (a tensor of shape ", shape_str(a.sizes()), " by 0)");
}
Tensor fmod(const Tensor& a, const Scalar& b) {
  check_int_divisor("fmod", a, b);
  return fmod(a, wrap_scalar(b, a.device()));
}
// fmod's result moved into b's sign: r + b where r is nonzero with the other sign (so the
// gradient is 1 for a and -floor(a / b) for b, through fmod's).
Tensor remainder(const Tensor& a, const Tensor& b) {
  check_int_divisor("remainder", a, b);
  Tensor r = bin(K::Fmod, a, b);
  Tensor flip = (r != 0).logical_and((r < 0) != (b < 0));
  return where(flip, r + b, r);
}
Tensor remainder(const Tensor& a, const Scalar& b) {
  check_int_divisor("remainder", a, b);
  return remainder(a, wrap_scalar(b, a.device()));
}
Tensor remainder(const Scalar& a, const Tensor& b) {
  return remainder(wrap_scalar(a, b.device()), b);
}
Tensor Tensor::fmod(const Tensor& o) const { return lt::fmod(*this, o); }
Tensor Tensor::fmod(const Scalar& o) const { return lt::fmod(*this, o); }
Tensor Tensor::remainder(const Tensor& o) const { return lt::remainder(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return lt::remainder(*this, o); }
Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator%(const Tensor& a, const Scalar& b) { return remainder(a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return bin(K::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return bin(K::Minimum, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return bin(K::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return bin(K::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return bin(K::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return bin(K::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return bin(K::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return bin(K::Ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return bin(K::LogicalAnd, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return bin(K::LogicalOr, a, b); }
// The U rows of lt/ops.def: lt::name(t) and t.name().
#define U(Name, ident, ...)                                 \
  Tensor ident(const Tensor& t) { return un(K::Name, t); }  \
  Tensor Tensor::ident() const { return lt::ident(*this); } \
  Tensor& Tensor::ident##_() const { return inplace(K::Name, *this, {*this}); }
#include "lt/ops.def"
#undef U
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return call(K::Where, {c, a, b}); }
Tensor where(const Tensor& c, const Tensor& a, const Scalar& b) {
  return call(K::Where, {c, a, wrap_scalar(b, a.device())});
}
Tensor where(const Tensor& c, const Scalar& a, const Tensor& b) {
  return call(K::Where, {c, wrap_scalar(a, b.device()), b});
}
Tensor where(const Tensor& c, const Scalar& a, const Scalar& b) {
  return call(K::Where, {c, wrap_scalar(a, c.device()), wrap_scalar(b, c.device())});
}
Tensor square(const Tensor& t) { return t * t; }

Tensor gelu(const Tensor& x, const std::string& approximate) {
  LT_CHECK(approximate == "none" || approximate == "tanh",
           "gelu: approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
  if (is_storage_dtype(x.dtype()))
    return in_compute_dtype(x, [&](const Tensor& x) { return gelu(x, approximate); });
  if (approximate == "none") return x * 0.5 * (erf(x * M_SQRT1_2) + 1.0);
  // 0.5 * (1 + tanh(y)) written as sigmoid(2y): the same function without the cancellation of
  // 1 + tanh(y) for negative x, where one ulp of tanh was 0.2% of the result at x = -4 (and
  // the eager kernel and the compiled polynomial differ by about that).
  const double k2 = 2.0 * std::sqrt(2.0 / M_PI);
  return x * sigmoid((x + x * x * x * 0.044715) * k2);
}
Tensor silu(const Tensor& x) {
  return in_compute_dtype(x, [](const Tensor& x) { return x * sigmoid(x); });
}

Tensor clamp(const Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  LT_CHECK(lo || hi, "clamp: at least one of min and max must be given");
  Tensor r = t;
  if (lo) r = bin(K::Maximum, r, *lo);
  if (hi) r = bin(K::Minimum, r, *hi);
  return r;
}

Tensor allclose_mask(const Tensor& a, const Tensor& b, double rtol, double atol) {
  Tensor af = a.to(kFloat64), bf = b.to(kFloat64);
  return le(abs(af - bf), abs(bf) * rtol + atol) || (eq(af, bf));
}
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  return allclose_mask(a, b, rtol, atol).logical_not().sum().item<int64_t>() == 0;
}
bool equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return false;
  return !a.ne(b).any().item<bool>();
}
bool Tensor::equal(const Tensor& o) const { return lt::equal(*this, o); }
bool Tensor::allclose(const Tensor& o, double rtol, double atol) const {
  return lt::allclose(*this, o, rtol, atol);
}

// ---- operators
Tensor operator+(const Tensor& a, const Tensor& b) { return bin(K::Add, a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return bin(K::Sub, a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return bin(K::Mul, a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return bin(K::Div, a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return bin(K::Add, a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return bin(K::Sub, a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return bin(K::Mul, a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return bin(K::Div, a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return bin(K::Add, a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return bin(K::Sub, a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return bin(K::Mul, a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return bin(K::Div, a, b); }
Tensor operator-(const Tensor& a) { return un(K::Neg, a); }
Tensor operator==(const Tensor& a, const Tensor& b) { return bin(K::Eq, a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return bin(K::Ne, a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return bin(K::Lt, a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return bin(K::Le, a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return bin(K::Gt, a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return bin(K::Ge, a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return bin(K::Eq, a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return bin(K::Ne, a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return bin(K::Lt, a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return bin(K::Le, a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return bin(K::Gt, a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return bin(K::Ge, a, b); }
Tensor operator&&(const Tensor& a, const Tensor& b) { return bin(K::LogicalAnd, a, b); }
Tensor operator||(const Tensor& a, const Tensor& b) { return bin(K::LogicalOr, a, b); }
Tensor operator!(const Tensor& a) { return un(K::LogicalNot, a); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }

// ---- methods
Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return lt::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o) const { return *this + o; }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return lt::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o) const { return *this - o; }
Tensor Tensor::mul(const Tensor& o) const { return *this * o; }
Tensor Tensor::mul(const Scalar& o) const { return *this * o; }
Tensor Tensor::div(const Tensor& o) const { return *this / o; }
Tensor Tensor::div(const Scalar& o) const { return *this / o; }
Tensor Tensor::pow(const Tensor& e) const { return lt::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return lt::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return lt::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return lt::minimum(*this, o); }
Tensor Tensor::gelu(const std::string& approximate) const { return lt::gelu(*this, approximate); }
Tensor Tensor::silu() const { return lt::silu(*this); }
Tensor Tensor::square() const { return lt::square(*this); }
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return lt::clamp(*this, lo, hi);
}
Tensor Tensor::logical_and(const Tensor& o) const { return lt::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return lt::logical_or(*this, o); }
Tensor Tensor::eq(const Tensor& o) const { return *this == o; }
Tensor Tensor::eq(const Scalar& o) const { return *this == o; }
Tensor Tensor::ne(const Tensor& o) const { return *this != o; }
Tensor Tensor::ne(const Scalar& o) const { return *this != o; }
Tensor Tensor::lt(const Tensor& o) const { return *this < o; }
Tensor Tensor::lt(const Scalar& o) const { return *this < o; }
Tensor Tensor::le(const Tensor& o) const { return *this <= o; }
Tensor Tensor::le(const Scalar& o) const { return *this <= o; }
Tensor Tensor::gt(const Tensor& o) const { return *this > o; }
Tensor Tensor::gt(const Scalar& o) const { return *this > o; }
Tensor Tensor::ge(const Tensor& o) const { return *this >= o; }
Tensor Tensor::ge(const Scalar& o) const { return *this >= o; }
Tensor Tensor::where(const Tensor& cond, const Tensor& other) const {
  return lt::where(cond, *this, other);
}

// ---- in place
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) const {
  return inplace(K::Add, *this, {*this, scaled("add_", *this, o, alpha)});
}
Tensor& Tensor::add_(const Scalar& o) const {
  return inplace(K::Add, *this, {*this, wrap_scalar(o, device())});
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) const {
  return inplace(K::Sub, *this, {*this, scaled("sub_", *this, o, alpha)});
}
Tensor& Tensor::sub_(const Scalar& o) const {
  return inplace(K::Sub, *this, {*this, wrap_scalar(o, device())});
}
Tensor& Tensor::mul_(const Tensor& o) const { return inplace(K::Mul, *this, {*this, o}); }
Tensor& Tensor::mul_(const Scalar& o) const {
  return inplace(K::Mul, *this, {*this, wrap_scalar(o, device())});
}
Tensor& Tensor::div_(const Tensor& o) const { return inplace(K::Div, *this, {*this, o}); }
Tensor& Tensor::div_(const Scalar& o) const {
  return inplace(K::Div, *this, {*this, wrap_scalar(o, device())});
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  LT_CHECK(lo || hi, "clamp_: at least one of min and max must be given");
  if (!hi) return inplace(K::Maximum, *this, {*this, wrap_scalar(*lo, device())});
  // One write, after the checks of both steps: a clamp_ that throws leaves *this unchanged.
  Tensor x = lo ? bin(K::Maximum, *this, *lo) : *this;
  return inplace(K::Minimum, *this, {x, wrap_scalar(*hi, device())});
}
Tensor& Tensor::zero_() const { return fill_(0); }
Tensor& Tensor::fill_(const Scalar& v) const { return copy_(scalar_of(v, dtype(), device())); }

}  // namespace lt
