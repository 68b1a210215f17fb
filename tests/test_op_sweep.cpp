// The op sweep: every primitive of the op registry (include/lt/ops.def), reached through the public
// API functions that record it, plus the composite API functions built from them, run on a device
// and compared against a plain double-precision reference computed in this file with loops over
// indices (the library is never used to compute an expected value).
//
// Inputs cover random shapes (seeded std::mt19937, ranks 0..4, sizes 0..5), broadcasting (size-1
// and missing leading dims), non-contiguous views (permuted, sliced with a step, expanded), 0-d and
// empty tensors, and the dtypes each op supports; output dtypes are checked against PyTorch's
// promotion rules, which the reference re-implements (result_type below). Beyond that: non-finite
// values, in-place writes through views, tensors past the kernels' parallel grain on 3 threads,
// and conv/pool gradients through autograd (the backward primitives).
//
// The sweep is a value-parameterized suite over devices. Inputs are built on cpu with lt::tensor
// and moved with .to(device) before any view is taken, so a new device reuses the whole sweep by
// adding itself to INSTANTIATE_TEST_SUITE_P at the bottom of this file. CoversEveryRegistryOp
// fails when ops.def gains an op that no sweep reaches.
//
// Tolerances: |got - want| <= atol + rtol * max(|want|, mag), where mag (when a reference sets
// it) is the sum of |terms| an accumulation adds up; integer and bool results are always exact.
// The reference is exact double math on the same (already rounded) input values, so what is
// bounded is the library's own rounding:
//  - exact ops (neg, abs, relu, sign, floor/ceil/round, max/min, compare, logical, where, casts,
//    movement, indexing, amax/amin/arg*, max_pool2d): bit-exact, since nothing is rounded.
//  - plain float arithmetic (add, sub, mul, div, reciprocal, sqrt): one float32 rounding is
//    2^-24 ~ 6e-8 relative; rtol 1e-5 / atol 1e-6 leaves room for a fused or re-associated
//    implementation. float64: rtol 1e-12 / atol 1e-13.
//  - transcendental ops (exp, log, log1p, expm1, rsqrt, sin, cos, tanh, sigmoid, erf, pow): libm's
//    float versions are within a few ulp and a device may use faster approximations; rtol 3e-5 /
//    atol 3e-6 for float32, 1e-10 / 1e-12 for float64.
//  - reductions and contractions (sum over up to 625 elements, prod, matmul, conv, avg pooling,
//    scatter_add, gradients): the accumulation order is the implementation's choice, so any order
//    must pass: n terms in float32 err by at most n * 2^-24 * mag, under 1e-4 * mag for n <= 625.
//    rtol 1e-4 / atol 2e-5 for float32, 1e-10 / 1e-11 for float64.
//  - composites (softmax, layer_norm, var, losses, attention, ...): chains of several rounded ops
//    with cancellation (x - mean, log of a sum); rtol 3e-4 / atol 3e-5 for float32, 1e-9 / 1e-10
//    for float64. layer_norm adds its conditioning: the rounding of the mean scaled by
//    1/sqrt(var + eps), which reaches 316x on a constant row.
#include <gtest/gtest.h>

#include <cstdlib>
#include <lt/lt.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gradcheck.h"
#include "ops/registry.h"

namespace lt {
// Readable names for the test parameter in gtest's messages.
void PrintTo(const Device& d, std::ostream* os) { *os << d.str(); }
}  // namespace lt

namespace {

using lt::Dtype;
using Shape = std::vector<int64_t>;

constexpr Dtype kB = lt::kBool;
constexpr Dtype kI32 = lt::kInt32;
constexpr Dtype kI64 = lt::kInt64;
constexpr Dtype kF32 = lt::kFloat32;
constexpr Dtype kF64 = lt::kFloat64;
const std::vector<Dtype> kAllDtypes = {kF32, kF64, kI32, kI64, kB};
const std::vector<Dtype> kFloatDtypes = {kF32, kF64};
const std::vector<Dtype> kNumericDtypes = {kF32, kF64, kI32, kI64};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ------------------------------------------------------------------------------------ tolerances

struct Tol {
  double rtol, atol;
};
constexpr Tol kExact{0, 0};
Tol exact_tol(Dtype) { return kExact; }
Tol arith_tol(Dtype t) { return t == kF32 ? Tol{1e-5, 1e-6} : Tol{1e-12, 1e-13}; }
Tol trans_tol(Dtype t) { return t == kF32 ? Tol{3e-5, 3e-6} : Tol{1e-10, 1e-12}; }
Tol reduce_tol(Dtype t) { return t == kF32 ? Tol{1e-4, 2e-5} : Tol{1e-10, 1e-11}; }
Tol composite_tol(Dtype t) { return t == kF32 ? Tol{3e-4, 3e-5} : Tol{1e-9, 1e-10}; }
double eps_of(Dtype t) { return t == kF32 ? 0x1p-24 : 0x1p-53; }

// ------------------------------------------------------------------------- shapes and indices

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

Shape unravel(int64_t i, const Shape& s) {
  Shape c(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}

int64_t ravel(const Shape& c, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + c[d];
  return i;
}

// Linear index into an operand of shape `in` (right-aligned, size-1 dims broadcast) for the
// output coordinate `c`.
int64_t bcast_at(const Shape& c, const Shape& in) {
  const size_t off = c.size() - in.size();
  int64_t i = 0;
  for (size_t d = 0; d < in.size(); ++d) i = i * in[d] + (in[d] == 1 ? 0 : c[off + d]);
  return i;
}

Shape bcast(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    r[i] = x == 1 ? y : x;
  }
  return r;
}

int64_t wrap(int64_t d, int64_t nd) { return d < 0 ? d + std::max<int64_t>(nd, 1) : d; }

std::string str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

Shape shape_of(const lt::Tensor& t) {
  lt::IntList s = t.sizes();
  return Shape(s.begin(), s.end());
}

// Output shape and, per output element, the input elements (in row-major order) folded into it.
struct Groups {
  Shape shape;
  std::vector<std::vector<int64_t>> members;
};
Groups reduce_groups(const Shape& in, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t nd = static_cast<int64_t>(in.size());
  std::vector<bool> red(nd, false);
  for (int64_t d : dims)
    if (nd > 0) red[wrap(d, nd)] = true;
  Groups g;
  for (int64_t d = 0; d < nd; ++d) {
    if (!red[d])
      g.shape.push_back(in[d]);
    else if (keepdim)
      g.shape.push_back(1);
  }
  g.members.resize(numel(g.shape));
  for (int64_t i = 0; i < numel(in); ++i) {
    Shape c = unravel(i, in), oc;
    for (int64_t d = 0; d < nd; ++d) {
      if (!red[d])
        oc.push_back(c[d]);
      else if (keepdim)
        oc.push_back(0);
    }
    g.members[ravel(oc, g.shape)].push_back(i);
  }
  return g;
}

// -------------------------------------------------------------------------- dtypes and values

bool is_float(Dtype t) { return t == kF32 || t == kF64; }
int category(Dtype t) { return t == kB ? 0 : (is_float(t) ? 2 : 1); }
int lattice(Dtype t) {  // PyTorch's promotion order for these dtypes
  switch (t) {
    case kB:
      return 0;
    case kI32:
      return 1;
    case kI64:
      return 2;
    case kF32:
      return 3;
    case kF64:
      return 4;
  }
  return -1;
}
Dtype promote(Dtype a, Dtype b) { return lattice(a) >= lattice(b) ? a : b; }
const char* name(Dtype t) { return lt::dtype_name(t); }

// PyTorch's result_type: operands come in three priorities (tensors with dims, 0-d tensors, host
// scalars). Within a priority dtypes promote; a lower priority only matters when its category
// (bool < integer < floating) is higher than the result so far. Host floats count as float32.
enum Priority { kHostScalar = 0, kZeroDim = 1, kDimmed = 2 };
struct Operand {
  Dtype dtype;
  Priority prio;
};
Priority prio_of(const Shape& s) { return s.empty() ? kZeroDim : kDimmed; }
Dtype result_type(const std::vector<Operand>& ops) {
  std::optional<Dtype> cls[3];
  for (const Operand& o : ops) {
    Dtype d = o.prio == kHostScalar && is_float(o.dtype) ? kF32 : o.dtype;
    cls[o.prio] = cls[o.prio] ? promote(*cls[o.prio], d) : d;
  }
  std::optional<Dtype> r;
  for (int p = 2; p >= 0; --p) {
    if (!cls[p]) continue;
    if (!r)
      r = cls[p];
    else if (category(*cls[p]) > category(*r))
      r = promote(*r, *cls[p]);
  }
  return *r;
}

// A value converted to dtype `t` (ints truncate toward zero; callers keep them in range).
double round_to(double v, Dtype t) {
  switch (t) {
    case kB:
      return v != 0 ? 1.0 : 0.0;  // NaN is true
    case kI32:
    case kI64:
      return std::trunc(v);
    case kF32:
      return static_cast<double>(static_cast<float>(v));
    case kF64:
      return v;
  }
  return v;
}
// The exact result of an op as the reference states it for output dtype `t`: float results stay
// in double (compared with a tolerance), integer and bool results are converted.
double finish(double v, Dtype t) { return is_float(t) ? v : round_to(v, t); }

template <typename T>
lt::Tensor make_typed(const std::vector<double>& v, const Shape& s) {
  std::vector<T> d;
  d.reserve(v.size());
  for (double x : v) {
    if constexpr (std::is_same_v<T, bool>)
      d.push_back(x != 0);
    else
      d.push_back(static_cast<T>(x));
  }
  return lt::tensor(d, s);
}
lt::Tensor make_cpu(const std::vector<double>& v, const Shape& s, Dtype t) {
  switch (t) {
    case kB:
      return make_typed<bool>(v, s);
    case kI32:
      return make_typed<int32_t>(v, s);
    case kI64:
      return make_typed<int64_t>(v, s);
    case kF32:
      return make_typed<float>(v, s);
    case kF64:
      return make_typed<double>(v, s);
  }
  return {};
}

// -------------------------------------------------------------------------- reference tensors

struct Ref {
  Ref(Shape s = {}, std::vector<double> values = {}, Dtype t = kF32, std::vector<double> m = {})
      : shape(std::move(s)), v(std::move(values)), dtype(t), mag(std::move(m)) {}
  Shape shape;
  std::vector<double> v;  // row-major
  Dtype dtype = kF32;
  // Optional, per element: the sum of |terms| an accumulation added up. Any summation order
  // is then within n * eps * mag of the exact value, so the bound uses max(|want|, mag).
  std::vector<double> mag;
};

bool close(double got, double want, double scale, Tol t) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (!std::isfinite(got)) return false;
  return std::abs(got - want) <= t.atol + t.rtol * std::max(std::abs(want), scale);
}

// Checks device, dtype, shape and values of `out` against `want`.
void expect_match(const lt::Tensor& out, const Ref& want, Tol tol, const lt::Device& dev) {
  ASSERT_TRUE(out.defined());
  EXPECT_TRUE(out.device() == dev)
      << "result on " << out.device().str() << ", expected " << dev.str();
  EXPECT_EQ(out.dtype(), want.dtype)
      << "result dtype " << name(out.dtype()) << ", expected " << name(want.dtype);
  Shape got_shape = shape_of(out);
  ASSERT_EQ(str(got_shape), str(want.shape)) << "result shape";
  ASSERT_EQ(static_cast<int64_t>(want.v.size()), numel(want.shape)) << "(reference is broken)";
  std::vector<double> got = out.to_vector<double>();
  ASSERT_EQ(got.size(), want.v.size());
  if (!is_float(out.dtype())) tol = kExact;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (close(got[i], want.v[i], want.mag.empty() ? 0.0 : want.mag[i], tol)) continue;
    if (++bad <= 3)
      ADD_FAILURE() << "value at " << str(unravel(static_cast<int64_t>(i), want.shape)) << ": got "
                    << got[i] << ", expected " << want.v[i] << " (rtol " << tol.rtol << ", atol "
                    << tol.atol << ")";
  }
  if (bad > 3) ADD_FAILURE() << bad << " of " << got.size() << " values differ";
}

int64_t g_cases = 0;  // cases run, reported as the "cases" property of each test

// Runs one case; an unexpected lt::Error becomes a failure of this case only.
template <typename F>
void run_case(const std::string& what, F&& f) {
  ++g_cases;
  SCOPED_TRACE(what);
  try {
    f();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception: " << e.what();
  }
}

// --------------------------------------------------------------------------- inputs on device

enum class Layout { kContig, kPermuted, kStrided, kExpanded };
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kContig:
      return "contig";
    case Layout::kPermuted:
      return "permuted";
    case Layout::kStrided:
      return "strided";
    case Layout::kExpanded:
      return "expanded";
  }
  return "?";
}

// Where input values come from: [lo, hi]; floats are continuous, or multiples of 0.5 when
// `discrete` (ties for comparisons and argmax, halves for round). Integers are uniform in range.
struct Domain {
  double lo = -3, hi = 3;
  bool discrete = false;
};

struct Input {
  Ref ref;
  lt::Tensor t;
  Layout layout = Layout::kContig;
  std::string desc() const {
    return std::string(name(ref.dtype)) + str(ref.shape) + "/" + layout_name(layout);
  }
};

std::string describe(const std::string& op, std::initializer_list<const Input*> ins,
                     const std::string& extra = "") {
  std::string r = op + "(";
  bool first = true;
  for (const Input* i : ins) {
    r += (first ? "" : ", ") + i->desc();
    first = false;
  }
  return r + (extra.empty() ? "" : ", " + extra) + ")";
}

class Sweep {
 public:
  Sweep(lt::Device device, int n_trials, uint32_t seed)
      : dev(device), trials(n_trials), rng(seed) {}

  const lt::Device dev;
  const int trials;
  std::mt19937 rng;
  std::set<std::string> covered;  // registry op names this sweep exercised

  void cover(const char* op) { covered.insert(op); }

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng); }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[uniform(0, static_cast<int64_t>(v.size()) - 1)];
  }

  double draw(Dtype t, const Domain& d) {
    switch (t) {
      case kB:
        return coin() ? 1 : 0;
      case kI32:
      case kI64:
        return static_cast<double>(uniform(std::ceil(d.lo), std::floor(d.hi)));
      default:
        if (d.discrete) return 0.5 * uniform(std::ceil(2 * d.lo), std::floor(2 * d.hi));
        return round_to(real(d.lo, d.hi), t);
    }
  }
  std::vector<double> draws(int64_t n, Dtype t, const Domain& d) {
    std::vector<double> v(n);
    for (double& x : v) x = draw(t, d);
    return v;
  }

  // A tensor on the device holding exactly `v`.
  lt::Tensor put(const std::vector<double>& v, const Shape& s, Dtype t) {
    return make_cpu(v, s, t).to(dev);
  }

  // A random shape: ranks [min_rank, max_rank], sizes 1..max_size with an occasional 0. The
  // first trials are always the edge cases: a 0-d tensor, an empty one, a single element.
  Shape shape(int trial, int min_rank = 0, int max_rank = 4, int max_size = 5) {
    if (trial == 0) return min_rank == 0 ? Shape{} : Shape(min_rank, 1);
    if (trial == 1) {
      Shape s = random_shape(std::max(min_rank, 1), max_rank, max_size);
      s[uniform(0, static_cast<int64_t>(s.size()) - 1)] = 0;
      return s;
    }
    if (trial == 2) return Shape(std::max(min_rank, 1), 1);
    return random_shape(min_rank, max_rank, max_size);
  }
  Shape random_shape(int min_rank, int max_rank, int max_size, double p_zero = 0.06) {
    Shape s(uniform(min_rank, max_rank));
    for (int64_t& v : s) v = coin(p_zero) ? 0 : uniform(1, max_size);
    return s;
  }
  // An operand shape that broadcasts to `out`: some leading dims dropped, some dims set to 1.
  Shape bcast_operand(const Shape& out) {
    Shape s(out.begin() + uniform(0, static_cast<int64_t>(out.size())), out.end());
    if (coin(0.15)) s.clear();
    for (int64_t& v : s)
      if (coin(0.3)) v = 1;
    return s;
  }
  std::vector<int64_t> perm(int64_t n) {
    std::vector<int64_t> p(n);
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
    if (n >= 2 && std::is_sorted(p.begin(), p.end())) std::swap(p[0], p[1]);
    return p;
  }

  Layout layout() {
    static const std::vector<Layout> all = {Layout::kContig, Layout::kPermuted, Layout::kStrided,
                                            Layout::kExpanded};
    return pick(all);
  }

  // A random input of this shape and dtype, built with the requested memory layout on the device.
  Input input(const Shape& shape, Dtype t, const Domain& dom = {}) {
    return input(shape, t, dom, layout());
  }
  Input input(const Shape& shape, Dtype t, const Domain& dom, Layout layout) {
    const int64_t nd = static_cast<int64_t>(shape.size());
    const int64_t n = numel(shape);
    if (nd == 0) layout = Layout::kContig;
    if (nd == 1 && layout == Layout::kPermuted) layout = Layout::kStrided;
    Input in;
    in.layout = layout;
    in.ref.shape = shape;
    in.ref.dtype = t;
    switch (layout) {
      case Layout::kContig: {
        in.ref.v = draws(n, t, dom);
        in.t = put(in.ref.v, shape, t);
        break;
      }
      case Layout::kExpanded: {  // broadcast a smaller tensor: one dim of size 1, fewer dims
        int64_t d = uniform(0, nd - 1);
        Shape base = shape;
        base[d] = 1;
        base.erase(base.begin(), base.begin() + uniform(0, d));
        std::vector<double> bv = draws(numel(base), t, dom);
        in.ref.v.resize(n);
        for (int64_t i = 0; i < n; ++i) in.ref.v[i] = bv[bcast_at(unravel(i, shape), base)];
        in.t = put(bv, base, t).expand(shape);
        break;
      }
      case Layout::kPermuted: {  // storage in another dim order, permuted back into `shape`
        std::vector<int64_t> p = perm(nd), q(nd);
        Shape storage(nd);
        for (int64_t i = 0; i < nd; ++i) {
          storage[i] = shape[p[i]];
          q[p[i]] = i;
        }
        in.ref.v = draws(n, t, dom);
        std::vector<double> sv(n);
        for (int64_t k = 0; k < n; ++k) {
          Shape cs = unravel(k, storage), c(nd);
          for (int64_t i = 0; i < nd; ++i) c[p[i]] = cs[i];
          sv[k] = in.ref.v[ravel(c, shape)];
        }
        in.t = put(sv, storage, t).permute(q);
        break;
      }
      case Layout::kStrided: {  // every other element of a larger tensor, at an offset
        int64_t d = uniform(0, nd - 1);
        Shape storage = shape;
        storage[d] = 2 * shape[d] + 1;
        std::vector<double> sv = draws(numel(storage), t, dom);
        in.ref.v = draws(n, t, dom);
        for (int64_t i = 0; i < n; ++i) {
          Shape c = unravel(i, shape);
          c[d] = 2 * c[d] + 1;
          sv[ravel(c, storage)] = in.ref.v[i];
        }
        in.t = put(sv, storage, t).slice(d, 1, 2 * shape[d] + 1, 2);
        break;
      }
    }
    return in;
  }
};

// LT_SWEEP_TRIALS lowers the count for slow backends (the MLIR run compiles every case).
const int kTrials = [] {
  const char* e = std::getenv("LT_SWEEP_TRIALS");
  return e && std::atoi(e) > 0 ? std::atoi(e) : 96;
}();

// ===================================================================== elementwise: unary

using UFn = lt::Tensor (*)(const lt::Tensor&);
using URef = double (*)(double);
// output: float-promoted, input dtype, bool; kIntegral: the input dtype, float inputs refused
enum class UKind { kFloat, kSame, kBool, kIntegral };

// Where a float64 finite-difference gradcheck samples: [lo, hi], or |x| in [lo, hi] with a random
// sign when away0 (clear of a kink or pole at 0). hi <= lo: the op has no gradient.
struct GradDomain {
  double lo = 0, hi = 0;
  bool away0 = false;
};

struct UnaryOp {
  const char* name;
  UFn fn;
  URef ref;
  UKind kind;
  Domain fdom, idom;  // input domains for floating and integer inputs
  bool bool_ok;
  Tol (*tol)(Dtype);
  GradDomain grad;
};

double ref_round(double x) {  // half to even
  double f = std::floor(x), d = x - f;
  if (d != 0.5) return d < 0.5 ? f : f + 1;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}
double ref_sign(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
double ref_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// One row per op: name, API call, reference, output kind, float/int input domains, whether
// bool inputs are supported, tolerance, gradient domain. The sweep and the gradcheck
// (OpSweep.UnaryGradients) both read this table: a new unary op is one row.
#define LT_U(f) #f, [](const lt::Tensor& t) { return lt::f(t); }
#define LT_R(expr) [](double x) { return static_cast<double>(expr); }
const std::vector<UnaryOp>& unary_ops() {
  using enum UKind;
  // clang-format off
  static const std::vector<UnaryOp> ops = {
      {LT_U(neg),         LT_R(-x),               kSame,  {},            {-5, 5}, false, exact_tol, {-1, 1}},
      {LT_U(abs),         LT_R(std::fabs(x)),     kSame,  {},            {-5, 5}, false, exact_tol, {0.3, 1.5, true}},
      {LT_U(exp),         LT_R(std::exp(x)),      kFloat, {-4, 4},       {-4, 4}, true,  trans_tol, {-1, 1}},
      {LT_U(log),         LT_R(std::log(x)),      kFloat, {0.05, 5},     {1, 9},  true,  trans_tol, {0.5, 2}},
      {LT_U(log1p),       LT_R(std::log1p(x)),    kFloat, {-0.9, 5},     {0, 9},  true,  trans_tol, {-0.5, 1}},
      {LT_U(expm1),       LT_R(std::expm1(x)),    kFloat, {-3, 3},       {-3, 3}, true,  trans_tol, {-1, 1}},
      {LT_U(sqrt),        LT_R(std::sqrt(x)),     kFloat, {0, 6},        {0, 9},  true,  arith_tol, {0.5, 2}},
      {LT_U(rsqrt),       LT_R(1 / std::sqrt(x)), kFloat, {0.05, 6},     {0, 9},  true,  trans_tol, {0.5, 2}},
      {LT_U(sin),         LT_R(std::sin(x)),      kFloat, {-6, 6},       {-6, 6}, true,  trans_tol, {-2, 2}},
      {LT_U(cos),         LT_R(std::cos(x)),      kFloat, {-6, 6},       {-6, 6}, true,  trans_tol, {-2, 2}},
      {LT_U(tanh),        LT_R(std::tanh(x)),     kFloat, {-4, 4},       {-4, 4}, true,  trans_tol, {-2, 2}},
      {LT_U(sigmoid),     ref_sigmoid,            kFloat, {-8, 8},       {-8, 8}, true,  trans_tol, {-2, 2}},
      {LT_U(relu),        LT_R(x < 0 ? 0.0 : x),  kSame,  {},            {-5, 5}, false, exact_tol, {0.3, 1.5, true}},
      {LT_U(erf),         LT_R(std::erf(x)),      kFloat, {-3, 3},       {-3, 3}, true,  trans_tol, {-1.5, 1.5}},
      {LT_U(erfc),        LT_R(std::erfc(x)),     kFloat, {-3, 8},       {-3, 8}, true,  trans_tol, {-1.5, 1.5}},
      {LT_U(atan),        LT_R(std::atan(x)),     kFloat, {-6, 6},       {-6, 6}, true,  trans_tol, {-2, 2}},
      {LT_U(sign),        ref_sign,               kSame,  {-2, 2, true}, {-5, 5}, false, exact_tol, {}},
      {LT_U(floor),       LT_R(std::floor(x)),    kSame,  {-4, 4},       {-5, 5}, false, exact_tol, {}},
      {LT_U(ceil),        LT_R(std::ceil(x)),     kSame,  {-4, 4},       {-5, 5}, false, exact_tol, {}},
      {LT_U(round),       ref_round,              kSame,  {-4, 4, true}, {-5, 5}, false, exact_tol, {}},
      {LT_U(reciprocal),  LT_R(1 / x),            kFloat, {-4, 4},       {-4, 4}, true,  arith_tol, {0.5, 2, true}},
      {LT_U(logical_not), LT_R(x == 0),           kBool,  {-1, 1, true}, {-1, 1}, true,  exact_tol, {}},
      // bool inputs (logical not) are in BitwiseSpellings: this reference is the integer one
      {LT_U(bitwise_not), LT_R(-x - 1),           kIntegral, {},         {-9, 9}, false, exact_tol, {}},
  };
  // clang-format on
  return ops;
}
#undef LT_U
#undef LT_R

void sweep_unary(Sweep& s) {
  for (const UnaryOp& op : unary_ops()) {
    for (Dtype dt : kAllDtypes) {
      if (dt == kB && !op.bool_ok) continue;
      if (op.kind == UKind::kIntegral && is_float(dt)) {
        Input x = s.input(s.shape(0), dt, {-2, 2});
        run_case(describe(op.name, {&x}), [&] { EXPECT_THROW(op.fn(x.t), lt::Error); });
        continue;
      }
      for (int trial = 0; trial < s.trials; ++trial) {
        Input x = s.input(s.shape(trial), dt, is_float(dt) ? op.fdom : op.idom);
        Dtype od = op.kind == UKind::kBool ? kB
                   : op.kind == UKind::kSame || op.kind == UKind::kIntegral
                       ? dt
                       : (is_float(dt) ? dt : kF32);
        Ref want{x.ref.shape, {}, od};
        for (double v : x.ref.v) want.v.push_back(finish(op.ref(v), od));
        run_case(describe(op.name, {&x}),
                 [&] { expect_match(op.fn(x.t), want, op.tol(od), s.dev); });
      }
    }
    s.cover(op.name);
  }
  // PyTorch refuses to negate a bool tensor.
  EXPECT_THROW(lt::neg(s.put({1, 0}, {2}, kB)), lt::Error);
  // Operator and method spellings reach the same ops.
  Input x = s.input({3, 4}, kF32, {-2, 2});
  Ref want{{3, 4}, {}, kF32};
  for (double v : x.ref.v) want.v.push_back(-v);
  run_case("operator-", [&] { expect_match(-x.t, want, kExact, s.dev); });
  for (double& v : want.v) v = std::exp(-v);
  run_case("Tensor::exp", [&] { expect_match(x.t.exp(), want, trans_tol(kF32), s.dev); });
}

// Non-finite inputs: IEEE semantics as PyTorch has them (NaN propagates through max/min/amax).
void sweep_special_values(Sweep& s) {
  const std::vector<double> v = {kNaN, kInf, -kInf, 0.0, -0.0, -1.0, 0.5, -0.5, 1.5, 2.5};
  const Shape sh = {static_cast<int64_t>(v.size())};
  for (Dtype dt : kFloatDtypes) {
    lt::Tensor x = s.put(v, sh, dt);
    for (const UnaryOp& op : unary_ops()) {
      if (op.kind == UKind::kIntegral) continue;  // floats refused (sweep_unary checks that)
      Dtype od = op.kind == UKind::kBool ? kB : dt;
      Ref want{sh, {}, od};
      for (double e : v) want.v.push_back(finish(op.ref(e), od));
      run_case(std::string(op.name) + " of non-finite " + name(dt),
               [&] { expect_match(op.fn(x), want, op.tol(od), s.dev); });
    }
    lt::Tensor one = s.put({1.0}, {1}, dt);
    Ref want{sh, {}, dt};
    for (double e : v) want.v.push_back(std::isnan(e) ? kNaN : std::max(e, 1.0));
    run_case("maximum with NaN", [&] { expect_match(lt::maximum(x, one), want, kExact, s.dev); });
    for (size_t i = 0; i < v.size(); ++i) want.v[i] = std::isnan(v[i]) ? kNaN : std::min(v[i], 1.0);
    run_case("minimum with NaN", [&] { expect_match(lt::minimum(x, one), want, kExact, s.dev); });
    run_case("amax/argmax with NaN", [&] {
      lt::Tensor y = s.put({1.0, kNaN, 3.0, kNaN}, {4}, dt);
      expect_match(lt::amax(y), {{}, {kNaN}, dt}, kExact, s.dev);
      expect_match(lt::amin(y), {{}, {kNaN}, dt}, kExact, s.dev);
      expect_match(lt::argmax(y), {{}, {1}, kI64}, kExact, s.dev);
      expect_match(lt::argmin(y), {{}, {1}, kI64}, kExact, s.dev);
    });
  }
}

// ======================================================================== elementwise: cast

void sweep_cast(Sweep& s) {
  for (Dtype from : kAllDtypes) {
    for (Dtype to : kAllDtypes) {
      for (int trial = 0; trial < s.trials / 2; ++trial) {
        Domain dom{-4, 4, trial % 2 == 0};
        Input x = s.input(s.shape(trial), from, dom);
        Ref want{x.ref.shape, {}, to};
        for (double v : x.ref.v) want.v.push_back(round_to(v, to));
        run_case(describe("cast", {&x}, std::string("to ") + name(to)), [&] {
          expect_match(x.t.to(to), want, kExact, s.dev);
          expect_match(x.t.to(s.dev, to), want, kExact, s.dev);
        });
      }
    }
  }
  s.cover("cast");
}

// ===================================================================== elementwise: binary

using BFn = lt::Tensor (*)(const lt::Tensor&, const lt::Tensor&);
using BRef = double (*)(double, double);
enum class BKind { kArith, kDiv, kPow, kCompare, kLogical, kMod, kBitwise, kShift };

struct BinaryOp {
  const char* name;
  BFn fn;
  BRef ref;
  BKind kind;
  Tol (*tol)(Dtype);
  bool primitive = true;  // a registry op (remainder is a composite of fmod)
};

double ref_add(double x, double y) { return x + y; }
double ref_sub(double x, double y) { return x - y; }
double ref_mul(double x, double y) { return x * y; }
double ref_div(double x, double y) { return x / y; }
double ref_pow(double x, double y) { return std::pow(x, y); }
double ref_max(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? kNaN : std::max(x, y);
}
double ref_fmod(double x, double y) { return std::fmod(x, y); }
double ref_remainder(double x, double y) {  // Python's %: the sign of the divisor
  double r = std::fmod(x, y);
  return r != 0 && (r < 0) != (y < 0) ? r + y : r;
}
double ref_and(double x, double y) { return double(int64_t(x) & int64_t(y)); }
double ref_or(double x, double y) { return double(int64_t(x) | int64_t(y)); }
double ref_xor(double x, double y) { return double(int64_t(x) ^ int64_t(y)); }
double ref_shl(double x, double y) { return x * std::ldexp(1.0, int(y)); }  // y in [0, 5]
double ref_shr(double x, double y) { return std::floor(x / std::ldexp(1.0, int(y))); }
double ref_min(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? kNaN : std::min(x, y);
}

#define LT_BIN(f) #f, [](const lt::Tensor& a, const lt::Tensor& b) { return lt::f(a, b); }
#define LT_REF2(expr) [](double x, double y) { return static_cast<double>(expr); }
const std::vector<BinaryOp>& binary_ops() {
  using enum BKind;
  // clang-format off
  static const std::vector<BinaryOp> ops = {
      {LT_BIN(add),         ref_add,                   kArith,   arith_tol},
      {LT_BIN(sub),         ref_sub,                   kArith,   arith_tol},
      {LT_BIN(mul),         ref_mul,                   kArith,   arith_tol},
      {LT_BIN(div),         ref_div,                   kDiv,     arith_tol},
      {LT_BIN(pow),         ref_pow,                   kPow,     trans_tol},
      {LT_BIN(maximum),     ref_max,                   kArith,   exact_tol},
      {LT_BIN(minimum),     ref_min,                   kArith,   exact_tol},
      {LT_BIN(fmod),        ref_fmod,                  kMod,     exact_tol},
      {LT_BIN(remainder),   ref_remainder,             kMod,     arith_tol, false},
      {LT_BIN(eq),          LT_REF2(x == y),           kCompare, exact_tol},
      {LT_BIN(ne),          LT_REF2(x != y),           kCompare, exact_tol},
      {LT_BIN(lt),          LT_REF2(x < y),            kCompare, exact_tol},
      {LT_BIN(le),          LT_REF2(x <= y),           kCompare, exact_tol},
      {LT_BIN(gt),          LT_REF2(x > y),            kCompare, exact_tol},
      {LT_BIN(ge),          LT_REF2(x >= y),           kCompare, exact_tol},
      {LT_BIN(logical_and), LT_REF2(x != 0 && y != 0), kLogical, exact_tol},
      {LT_BIN(logical_or),  LT_REF2(x != 0 || y != 0), kLogical, exact_tol},
      {LT_BIN(bitwise_and), ref_and,                   kBitwise, exact_tol},
      {LT_BIN(bitwise_or),  ref_or,                    kBitwise, exact_tol},
      {LT_BIN(bitwise_xor), ref_xor,                   kBitwise, exact_tol},
      {LT_BIN(bitwise_left_shift),  ref_shl,           kShift,   exact_tol},
      {LT_BIN(bitwise_right_shift), ref_shr,           kShift,   exact_tol},
  };
  // clang-format on
  return ops;
}
#undef LT_BIN

// Input domains per op kind: [0] for the left operand, [1] for the right.
Domain binary_domain(BKind k, Dtype t, int side) {
  const bool f = is_float(t);
  switch (k) {
    case BKind::kArith:
      return f ? Domain{-3, 3} : Domain{-5, 5};
    case BKind::kDiv:
      return f ? Domain{-3, 3} : Domain{-4, 4};  // int 0 / 0 -> nan, x / 0 -> inf
    case BKind::kPow:  // PyTorch rejects negative integer exponents; keep float bases positive
      if (side == 0) return f ? Domain{0.1, 3} : Domain{0, 4};
      return f ? Domain{-2, 2} : Domain{0, 3};
    case BKind::kCompare:
      return f ? Domain{-2, 2, true} : Domain{-4, 4};
    case BKind::kLogical:
      return f ? Domain{-1, 1, true} : Domain{-1, 1};
    case BKind::kMod:  // integer divisors kept nonzero (division by zero is an error there)
      if (side == 0) return f ? Domain{-5, 5} : Domain{-9, 9};
      return f ? Domain{-3, 3} : Domain{1, 4};
    case BKind::kBitwise:
      return Domain{-9, 9};
    case BKind::kShift:  // amounts within the width here; past it in BitwiseSpellings
      return side == 0 ? Domain{-9, 9} : Domain{0, 5};
  }
  return {};
}

// Output dtype of a binary op whose inputs promote to `ct`; nullopt when PyTorch raises.
std::optional<Dtype> binary_out(BKind k, const char* op, Dtype ct) {
  if (k == BKind::kCompare || k == BKind::kLogical) return kB;
  if (k == BKind::kDiv && !is_float(ct)) return kF32;
  if ((std::string(op) == "sub" || k == BKind::kMod || k == BKind::kShift) && ct == kB)
    return std::nullopt;
  if ((k == BKind::kBitwise || k == BKind::kShift) && is_float(ct)) return std::nullopt;
  return ct;
}
Dtype binary_compute(BKind k, Dtype ct) { return k == BKind::kDiv && !is_float(ct) ? kF32 : ct; }

void sweep_binary(Sweep& s) {
  const std::vector<std::pair<Dtype, Dtype>> pairs = {
      {kF32, kF32}, {kF64, kF64}, {kF32, kF64}, {kI32, kI32}, {kI64, kI64}, {kI32, kI64},
      {kB, kB},     {kI32, kF32}, {kI64, kF64}, {kB, kI32},   {kF64, kB},   {kF32, kI64}};
  for (const BinaryOp& op : binary_ops()) {
    for (const auto& pair : pairs) {
      const Dtype da = pair.first, db = pair.second;
      if (op.kind == BKind::kPow && (da == kB || db == kB)) continue;
      for (int trial = 0; trial < s.trials; ++trial) {
        Shape out = s.shape(trial);
        Shape sa = trial < 3 ? out : s.bcast_operand(out);
        Shape sb = trial < 3 ? out : s.bcast_operand(out);
        Input a = s.input(sa, da, binary_domain(op.kind, da, 0));
        Input b = s.input(sb, db, binary_domain(op.kind, db, 1));
        Dtype ct = result_type({{da, prio_of(sa)}, {db, prio_of(sb)}});
        std::optional<Dtype> od = binary_out(op.kind, op.name, ct);
        run_case(describe(op.name, {&a, &b}), [&] {
          if (!od) {
            EXPECT_THROW(op.fn(a.t, b.t), lt::Error);
            return;
          }
          Dtype cmp = binary_compute(op.kind, ct);
          Ref want{bcast(sa, sb), {}, *od};
          for (int64_t i = 0; i < numel(want.shape); ++i) {
            Shape c = unravel(i, want.shape);
            double x = round_to(a.ref.v[bcast_at(c, sa)], cmp);
            double y = round_to(b.ref.v[bcast_at(c, sb)], cmp);
            want.v.push_back(finish(op.ref(x, y), *od));
          }
          expect_match(op.fn(a.t, b.t), want, op.tol(*od), s.dev);
        });
      }
    }
    if (op.primitive) s.cover(op.name);
  }
  // add/sub with alpha: a + alpha * b.
  for (Dtype dt : {kF32, kF64, kI64}) {
    Input a = s.input({4, 3}, dt), b = s.input({3}, dt);
    Ref want{{4, 3}, {}, dt};
    for (int64_t i = 0; i < 12; ++i) want.v.push_back(a.ref.v[i] - 3 * b.ref.v[i % 3]);
    run_case(describe("sub alpha=3", {&a, &b}),
             [&] { expect_match(lt::sub(a.t, b.t, 3), want, arith_tol(dt), s.dev); });
    for (int64_t i = 0; i < 12; ++i) want.v[i] = a.ref.v[i] + 2 * b.ref.v[i % 3];
    run_case(describe("add alpha=2", {&a, &b}),
             [&] { expect_match(a.t.add(b.t, 2), want, arith_tol(dt), s.dev); });
  }
}

// Tensor-scalar forms: host scalars are "wrapped numbers" of the lowest promotion priority.
struct ScalarOp {
  const char* name;
  lt::Tensor (*fn)(const lt::Tensor&, const lt::Scalar&);
  BRef ref;
  BKind kind;
  bool scalar_left;
};

void sweep_scalar_binary(Sweep& s) {
  using T = const lt::Tensor&;
  using S = const lt::Scalar&;
  // clang-format off
  static const std::vector<ScalarOp> ops = {
      {"add", [](T t, S v) { return t + v; },         ref_add,         BKind::kArith,   false},
      {"add", [](T t, S v) { return v + t; },         ref_add,         BKind::kArith,   true},
      {"add", [](T t, S v) { return t.add(v); },      ref_add,         BKind::kArith,   false},
      {"sub", [](T t, S v) { return t - v; },         ref_sub,         BKind::kArith,   false},
      {"sub", [](T t, S v) { return v - t; },         ref_sub,         BKind::kArith,   true},
      {"mul", [](T t, S v) { return t * v; },         ref_mul,         BKind::kArith,   false},
      {"mul", [](T t, S v) { return v * t; },         ref_mul,         BKind::kArith,   true},
      {"div", [](T t, S v) { return t / v; },         ref_div,         BKind::kDiv,     false},
      {"div", [](T t, S v) { return v / t; },         ref_div,         BKind::kDiv,     true},
      {"pow", [](T t, S v) { return lt::pow(t, v); }, ref_pow,         BKind::kPow,     false},
      {"pow", [](T t, S v) { return lt::pow(v, t); }, ref_pow,         BKind::kPow,     true},
      {"eq",  [](T t, S v) { return t == v; },        LT_REF2(x == y), BKind::kCompare, false},
      {"ne",  [](T t, S v) { return t.ne(v); },       LT_REF2(x != y), BKind::kCompare, false},
      {"lt",  [](T t, S v) { return t < v; },         LT_REF2(x < y),  BKind::kCompare, false},
      {"le",  [](T t, S v) { return t <= v; },        LT_REF2(x <= y), BKind::kCompare, false},
      {"gt",  [](T t, S v) { return t.gt(v); },       LT_REF2(x > y),  BKind::kCompare, false},
      {"ge",  [](T t, S v) { return t >= v; },        LT_REF2(x >= y), BKind::kCompare, false},
  };
  // clang-format on
  for (const ScalarOp& op : ops) {
    for (Dtype dt : kAllDtypes) {
      for (Dtype st : {kI64, kF64, kB}) {
        if (op.kind == BKind::kPow && (dt == kB || st == kB)) continue;
        for (int trial = 0; trial < s.trials / 2; ++trial) {
          const int tside = op.scalar_left ? 1 : 0;
          Input x = s.input(s.shape(trial), dt, binary_domain(op.kind, dt, tside));
          double sv = s.draw(st, binary_domain(op.kind, st == kF64 ? kF32 : st, 1 - tside));
          if (op.kind == BKind::kPow && st == kF64) sv = 0.5 * s.uniform(1, 5);
          lt::Scalar scalar = st == kB     ? lt::Scalar(sv != 0)
                              : st == kI64 ? lt::Scalar(static_cast<int64_t>(sv))
                                           : lt::Scalar(sv);
          Dtype ct = result_type({{dt, prio_of(x.ref.shape)}, {st, kHostScalar}});
          std::optional<Dtype> od = binary_out(op.kind, op.name, ct);
          std::ostringstream extra;
          extra << name(st) << " scalar " << sv << (op.scalar_left ? " on the left" : "");
          run_case(describe(op.name, {&x}, extra.str()), [&] {
            if (!od) {
              EXPECT_THROW(op.fn(x.t, scalar), lt::Error);
              return;
            }
            Dtype cmp = binary_compute(op.kind, ct);
            Ref want{x.ref.shape, {}, *od};
            double y = round_to(sv, cmp);
            for (double v : x.ref.v) {
              double xv = round_to(v, cmp);
              want.v.push_back(finish(op.scalar_left ? op.ref(y, xv) : op.ref(xv, y), *od));
            }
            Tol tol = op.kind == BKind::kPow ? trans_tol(*od) : arith_tol(*od);
            expect_match(op.fn(x.t, scalar), want, tol, s.dev);
          });
        }
      }
    }
    s.cover(op.name);
  }
  // clamp: maximum then minimum against host scalars of the tensor's category.
  for (Dtype dt : kNumericDtypes) {
    for (int trial = 0; trial < s.trials / 2; ++trial) {
      Input x = s.input(s.shape(trial), dt, {-4, 4, true});
      double lo = is_float(dt) ? -1.5 : -2, hi = is_float(dt) ? 2.5 : 3;
      lt::Scalar slo = is_float(dt) ? lt::Scalar(lo) : lt::Scalar(int64_t(lo));
      lt::Scalar shi = is_float(dt) ? lt::Scalar(hi) : lt::Scalar(int64_t(hi));
      Ref want{x.ref.shape, {}, dt};
      for (double v : x.ref.v) want.v.push_back(std::min(std::max(v, lo), hi));
      run_case(describe("clamp", {&x}),
               [&] { expect_match(lt::clamp(x.t, slo, shi), want, kExact, s.dev); });
    }
  }
  s.cover("maximum");
  s.cover("minimum");
}

// ================================================================================= where

void sweep_where(Sweep& s) {
  const std::vector<std::pair<Dtype, Dtype>> pairs = {
      {kF32, kF32}, {kF64, kF32}, {kI32, kI32}, {kI32, kI64}, {kB, kB}, {kI64, kF32}, {kB, kF64}};
  for (const auto& pair : pairs) {
    const Dtype da = pair.first, db = pair.second;
    for (int trial = 0; trial < s.trials; ++trial) {
      Shape out = s.shape(trial);
      Shape sc = trial < 3 ? out : s.bcast_operand(out);
      Shape sa = trial < 3 ? out : s.bcast_operand(out);
      Shape sb = trial < 3 ? out : s.bcast_operand(out);
      Input c = s.input(sc, kB), a = s.input(sa, da), b = s.input(sb, db);
      Dtype od = result_type({{da, prio_of(sa)}, {db, prio_of(sb)}});
      Ref want{bcast(bcast(sc, sa), sb), {}, od};
      for (int64_t i = 0; i < numel(want.shape); ++i) {
        Shape co = unravel(i, want.shape);
        double v =
            c.ref.v[bcast_at(co, sc)] != 0 ? a.ref.v[bcast_at(co, sa)] : b.ref.v[bcast_at(co, sb)];
        want.v.push_back(round_to(v, od));
      }
      run_case(describe("where", {&c, &a, &b}), [&] {
        expect_match(lt::where(c.t, a.t, b.t), want, kExact, s.dev);
        if (trial % 4 == 0) expect_match(a.t.where(c.t, b.t), want, kExact, s.dev);
      });
    }
  }
  // Host scalar branches.
  for (Dtype dt : kAllDtypes) {
    for (int trial = 0; trial < s.trials / 2; ++trial) {
      Shape out = s.shape(trial);
      Input c = s.input(s.bcast_operand(out), kB), a = s.input(out, dt);
      const bool fl = trial % 2 == 0;
      double sv = fl ? 0.5 * s.uniform(-6, 6) : static_cast<double>(s.uniform(-3, 3));
      lt::Scalar sc = fl ? lt::Scalar(sv) : lt::Scalar(static_cast<int64_t>(sv));
      Dtype od = result_type({{dt, prio_of(out)}, {fl ? kF64 : kI64, kHostScalar}});
      Ref want{bcast(c.ref.shape, out), {}, od}, want2 = want;
      for (int64_t i = 0; i < numel(want.shape); ++i) {
        Shape co = unravel(i, want.shape);
        bool cv = c.ref.v[bcast_at(co, c.ref.shape)] != 0;
        double av = a.ref.v[bcast_at(co, out)];
        want.v.push_back(round_to(cv ? av : sv, od));
        want2.v.push_back(round_to(cv ? sv : av, od));
      }
      run_case(describe("where", {&c, &a}, "scalar " + std::to_string(sv)), [&] {
        expect_match(lt::where(c.t, a.t, sc), want, kExact, s.dev);
        expect_match(lt::where(c.t, sc, a.t), want2, kExact, s.dev);
      });
    }
  }
  // PyTorch requires a bool condition.
  EXPECT_THROW(
      lt::where(s.put({1, 0}, {2}, kI64), s.put({1, 2}, {2}, kF32), s.put({3, 4}, {2}, kF32)),
      lt::Error);
  s.cover("where");
}

// ============================================================================ reductions

// A random list of dims to reduce (non-empty for rank >= 1; sometimes negative).
std::vector<int64_t> rand_dims(Sweep& s, int64_t nd) {
  if (nd == 0) return {s.coin() ? 0 : -1};
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < nd; ++d)
    if (s.coin()) dims.push_back(d);
  if (dims.empty()) dims.push_back(s.uniform(0, nd - 1));
  std::shuffle(dims.begin(), dims.end(), s.rng);
  for (int64_t& d : dims)
    if (s.coin(0.3)) d -= nd;
  return dims;
}

std::string dims_str(const std::vector<int64_t>& dims, bool keepdim) {
  return "dims " + str(dims) + (keepdim ? " keepdim" : "");
}

bool any_zero_reduced(const Shape& sh, const std::vector<int64_t>& dims) {
  if (dims.empty()) return numel(sh) == 0;
  for (int64_t d : dims)
    if (!sh.empty() && sh[wrap(d, sh.size())] == 0) return true;
  return false;
}

void sweep_sum_prod(Sweep& s) {
  for (const char* op : {"sum", "prod"}) {
    const bool is_sum = std::string(op) == "sum";
    for (Dtype dt : kAllDtypes) {
      for (int trial = 0; trial < s.trials; ++trial) {
        // prod: at most 81 elements, so products stay in range (int64 exact, float32 finite).
        Shape sh = is_sum ? s.shape(trial) : s.shape(trial, 0, 4, 3);
        // prod: |x| near 1 keeps float32 products finite; odd trials add signs and small values.
        Domain dom = is_sum ? Domain{-3, 3} : (trial % 2 ? Domain{-1.3, 1.3} : Domain{0.8, 1.25});
        if (!is_sum && !is_float(dt)) dom = numel(sh) <= 40 ? Domain{-2, 2} : Domain{-1, 1};
        Input x = s.input(sh, dt, dom);
        const bool full = trial % 3 == 0;
        const bool keepdim = s.coin();
        std::vector<int64_t> dims = full ? std::vector<int64_t>{} : rand_dims(s, sh.size());
        std::vector<int64_t> all(sh.size());
        std::iota(all.begin(), all.end(), 0);
        Dtype od = is_float(dt) ? dt : kI64;  // PyTorch: integer and bool sums are int64
        Groups g = reduce_groups(sh, full ? all : dims, full ? false : keepdim);
        Ref want{g.shape, {}, od};
        for (const auto& m : g.members) {
          double acc = is_sum ? 0 : 1, mag = 0;
          for (int64_t i : m) {
            acc = is_sum ? acc + x.ref.v[i] : acc * x.ref.v[i];
            mag += std::abs(x.ref.v[i]);
          }
          want.v.push_back(finish(acc, od));
          if (is_sum) want.mag.push_back(mag);
        }
        run_case(describe(op, {&x}, full ? "all" : dims_str(dims, keepdim)), [&] {
          lt::Tensor r;
          if (full)
            r = is_sum ? lt::sum(x.t) : lt::prod(x.t);
          else if (dims.size() == 1 && s.coin())
            r = is_sum ? x.t.sum(dims[0], keepdim) : x.t.prod(dims[0], keepdim);
          else
            r = is_sum ? lt::sum(x.t, dims, keepdim) : lt::prod(x.t, dims, keepdim);
          expect_match(r, want, reduce_tol(od), s.dev);
        });
      }
    }
    s.cover(op);
  }
}

// Reductions whose result is one of the inputs' values or a bool (nothing is rounded): exact.
// One row per op: its functions, the fold, the identity (empty reductions give it), and whether an
// empty reduction is refused instead (PyTorch: max/min have no identity).
struct ExactReduction {
  const char* name;
  lt::Tensor (*all)(const lt::Tensor&);
  lt::Tensor (*dims)(const lt::Tensor&, lt::IntList, bool);
  double (*fold)(double acc, double v);
  double identity;
  bool empty_refused;
  bool bool_result;
};

const std::vector<ExactReduction>& exact_reductions() {
  static const std::vector<ExactReduction> rows = {
      {"amax", [](const lt::Tensor& t) { return lt::amax(t); },
       [](const lt::Tensor& t, lt::IntList d, bool k) { return lt::amax(t, d, k); },
       [](double a, double v) { return std::max(a, v); }, 0, true, false},
      {"amin", [](const lt::Tensor& t) { return lt::amin(t); },
       [](const lt::Tensor& t, lt::IntList d, bool k) { return lt::amin(t, d, k); },
       [](double a, double v) { return std::min(a, v); }, 0, true, false},
      {"any", [](const lt::Tensor& t) { return lt::any(t); },
       [](const lt::Tensor& t, lt::IntList d, bool k) { return lt::any(t, d, k); },
       [](double a, double v) { return a != 0 || v != 0 ? 1.0 : 0.0; }, 0, false, true},
      {"all", [](const lt::Tensor& t) { return lt::all(t); },
       [](const lt::Tensor& t, lt::IntList d, bool k) { return lt::all(t, d, k); },
       [](double a, double v) { return a != 0 && v != 0 ? 1.0 : 0.0; }, 1, false, true},
  };
  return rows;
}

void sweep_exact_reductions(Sweep& s) {
  for (const ExactReduction& op : exact_reductions()) {
    for (Dtype dt : kAllDtypes) {
      for (int trial = 0; trial < s.trials; ++trial) {
        Shape sh = s.shape(trial);
        // For any and all, zeros must be common (or absent) often enough that both results occur.
        Input x = s.input(sh, dt, {-3, 3, true});
        if (op.bool_result && trial % 4 == 0) x = s.input(sh, dt, {0, 1, true});
        if (op.bool_result && trial % 4 == 1) x = s.input(sh, dt, {1, 2, true});
        const bool full = trial % 3 == 0;
        const bool keepdim = s.coin();
        std::vector<int64_t> dims = full ? std::vector<int64_t>{} : rand_dims(s, sh.size());
        auto call = [&] { return full ? op.all(x.t) : op.dims(x.t, dims, keepdim); };
        run_case(describe(op.name, {&x}, full ? "all" : dims_str(dims, keepdim)), [&] {
          if (op.empty_refused && any_zero_reduced(sh, dims)) {
            EXPECT_THROW(call(), lt::Error);
            return;
          }
          std::vector<int64_t> all(sh.size());
          std::iota(all.begin(), all.end(), 0);
          Groups g = reduce_groups(sh, full ? all : dims, full ? false : keepdim);
          Ref want{g.shape, {}, op.bool_result ? kB : dt};
          for (const auto& m : g.members) {
            double acc = op.empty_refused ? x.ref.v[m[0]] : op.identity;
            for (int64_t i : m) acc = op.fold(acc, x.ref.v[i]);
            want.v.push_back(acc);
          }
          expect_match(call(), want, kExact, s.dev);
        });
      }
    }
    s.cover(op.name);
  }
}

// argmax/argmin (and max/min with a dim): int64 indices of the first extreme, like PyTorch.
void sweep_arg(Sweep& s) {
  for (const char* op : {"argmax", "argmin"}) {
    const bool is_max = std::string(op) == "argmax";
    for (Dtype dt : kNumericDtypes) {
      for (int trial = 0; trial < s.trials; ++trial) {
        Shape sh = s.shape(trial);
        Input x = s.input(sh, dt, {-2, 2, true});  // many ties
        const int64_t nd = sh.size();
        const bool full = trial % 3 == 0;
        const int64_t dim = nd == 0 ? s.uniform(-1, 0) : s.uniform(-nd, nd - 1);
        const bool keepdim = s.coin();
        auto best = [&](const std::vector<int64_t>& m) {
          int64_t b = 0;
          for (size_t k = 1; k < m.size(); ++k) {
            double v = x.ref.v[m[k]], bv = x.ref.v[m[b]];
            if (is_max ? v > bv : v < bv) b = static_cast<int64_t>(k);
          }
          return b;
        };
        run_case(describe(op, {&x}, full ? "all" : "dim " + std::to_string(dim)), [&] {
          if (full) {
            if (numel(sh) == 0) {
              EXPECT_THROW(is_max ? lt::argmax(x.t) : lt::argmin(x.t), lt::Error);
              return;
            }
            std::vector<int64_t> all(numel(sh));
            std::iota(all.begin(), all.end(), 0);
            Ref want{{}, {static_cast<double>(best(all))}, kI64};
            expect_match(is_max ? lt::argmax(x.t) : lt::argmin(x.t), want, kExact, s.dev);
            return;
          }
          if (nd > 0 && sh[wrap(dim, nd)] == 0) {
            EXPECT_THROW(is_max ? lt::argmax(x.t, dim, keepdim) : lt::argmin(x.t, dim, keepdim),
                         lt::Error);
            return;
          }
          Groups g = reduce_groups(sh, {dim}, keepdim);
          Ref idx{g.shape, {}, kI64}, val{g.shape, {}, dt};
          for (const auto& m : g.members) {
            int64_t b = best(m);
            idx.v.push_back(static_cast<double>(b));
            val.v.push_back(x.ref.v[m[b]]);
          }
          expect_match(is_max ? lt::argmax(x.t, dim, keepdim) : lt::argmin(x.t, dim, keepdim), idx,
                       kExact, s.dev);
          auto [values, indices] = is_max ? lt::max(x.t, dim, keepdim) : lt::min(x.t, dim, keepdim);
          expect_match(values, val, kExact, s.dev);
          expect_match(indices, idx, kExact, s.dev);
        });
      }
    }
    // PyTorch has no argmax for bool.
    EXPECT_THROW(is_max ? lt::argmax(s.put({1, 0}, {2}, kB)) : lt::argmin(s.put({1, 0}, {2}, kB)),
                 lt::Error);
    s.cover(op);
  }
  // max()/min() over everything are amax/amin.
  Input x = s.input({3, 4}, kI32, {-9, 9});
  run_case("max()/min()", [&] {
    expect_match(lt::max(x.t), {{}, {*std::max_element(x.ref.v.begin(), x.ref.v.end())}, kI32},
                 kExact, s.dev);
    expect_match(x.t.min(), {{}, {*std::min_element(x.ref.v.begin(), x.ref.v.end())}, kI32}, kExact,
                 s.dev);
  });
}

// ============================================================================== movement

// Same values in row-major order, another shape.
Ref reshaped(const Ref& r, const Shape& s) { return {s, r.v, r.dtype}; }

Shape rand_reshape_target(Sweep& s, const Shape& sh) {
  const int64_t n = numel(sh);
  std::vector<Shape> c = {{n}, {1, n}, {n, 1}, Shape(sh.rbegin(), sh.rend())};
  if (n == 1) c.push_back({});
  if (n == 0) c.insert(c.end(), {{0, 3}, {2, 0}, {3, 0, 1}});
  for (int64_t d = 2; d < n; ++d)
    if (n % d == 0) c.insert(c.end(), {{d, n / d}, {n / d, 1, d}});
  return s.pick(c);
}

void sweep_reshape(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial);
    const int64_t nd = sh.size();
    Input x = s.input(sh, s.pick(kAllDtypes));
    Shape target = rand_reshape_target(s, sh);
    run_case(describe("reshape", {&x}, "to " + str(target)), [&] {
      Shape req = target;
      if (numel(sh) > 0 && !req.empty() && s.coin()) req[s.uniform(0, req.size() - 1)] = -1;
      expect_match(x.t.reshape(req), reshaped(x.ref, target), kExact, s.dev);
      expect_match(lt::reshape(x.t, target), reshaped(x.ref, target), kExact, s.dev);
      if (x.layout == Layout::kContig)
        expect_match(x.t.view(target), reshaped(x.ref, target), kExact, s.dev);
      // flatten
      int64_t a = nd == 0 ? 0 : s.uniform(0, nd - 1), b = nd == 0 ? 0 : s.uniform(a, nd - 1);
      Shape f;
      if (nd == 0) {
        f = {1};
      } else {
        f.assign(sh.begin(), sh.begin() + a);
        int64_t m = 1;
        for (int64_t d = a; d <= b; ++d) m *= sh[d];
        f.push_back(m);
        f.insert(f.end(), sh.begin() + b + 1, sh.end());
      }
      expect_match(x.t.flatten(a, b), reshaped(x.ref, f), kExact, s.dev);
      // unsqueeze, squeeze
      int64_t u = s.uniform(-nd - 1, nd);
      Shape us = sh;
      us.insert(us.begin() + wrap(u, nd + 1), 1);
      expect_match(lt::unsqueeze(x.t, u), reshaped(x.ref, us), kExact, s.dev);
      Shape sq;
      for (int64_t v : us)
        if (v != 1) sq.push_back(v);
      expect_match(lt::unsqueeze(x.t, u).squeeze(), reshaped(x.ref, sq), kExact, s.dev);
      expect_match(lt::unsqueeze(x.t, u).squeeze(u), x.ref, kExact, s.dev);
    });
  }
  s.cover("reshape");
}

void sweep_permute(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial);
    const int64_t nd = sh.size();
    Input x = s.input(sh, s.pick(kAllDtypes));
    std::vector<int64_t> p = s.perm(nd), preq = p;
    for (int64_t& d : preq)
      if (s.coin(0.3)) d -= nd;
    auto permuted = [&](const std::vector<int64_t>& pp) {
      Shape os(nd);
      for (int64_t j = 0; j < nd; ++j) os[j] = sh[pp[j]];
      Ref r{os, {}, x.ref.dtype};
      for (int64_t i = 0; i < numel(os); ++i) {
        Shape c = unravel(i, os), ic(nd);
        for (int64_t j = 0; j < nd; ++j) ic[pp[j]] = c[j];
        r.v.push_back(x.ref.v[ravel(ic, sh)]);
      }
      return r;
    };
    run_case(describe("permute", {&x}, str(preq)), [&] {
      expect_match(x.t.permute(preq), permuted(p), kExact, s.dev);
      if (nd >= 1) {
        int64_t d0 = s.uniform(-nd, nd - 1), d1 = s.uniform(-nd, nd - 1);
        std::vector<int64_t> tp(nd);
        std::iota(tp.begin(), tp.end(), 0);
        std::swap(tp[wrap(d0, nd)], tp[wrap(d1, nd)]);
        expect_match(lt::transpose(x.t, d0, d1), permuted(tp), kExact, s.dev);
      }
      if (nd <= 2) {
        std::vector<int64_t> tp(nd);
        std::iota(tp.rbegin(), tp.rend(), 0);
        expect_match(x.t.t(), permuted(tp), kExact, s.dev);
      }
    });
  }
  s.cover("permute");
}

void sweep_expand(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial, 0, 3);
    Input x = s.input(sh, s.pick(kAllDtypes));
    Shape target, req;
    for (int64_t k = s.uniform(0, 2); k > 0; --k) {
      int64_t v = s.uniform(0, 3);
      target.push_back(v);
      req.push_back(v);
    }
    for (int64_t v : sh) {
      int64_t t = v == 1 ? s.uniform(0, 4) : v;
      target.push_back(t);
      req.push_back(t == v && s.coin(0.3) ? -1 : t);
    }
    Ref want{target, {}, x.ref.dtype};
    for (int64_t i = 0; i < numel(target); ++i)
      want.v.push_back(x.ref.v[bcast_at(unravel(i, target), sh)]);
    run_case(describe("expand", {&x}, str(req)), [&] {
      expect_match(x.t.expand(req), want, kExact, s.dev);
      expect_match(lt::broadcast_to(x.t, target), want, kExact, s.dev);
      lt::Tensor like = s.put(std::vector<double>(numel(target), 0), target, kF32);
      expect_match(x.t.expand_as(like), want, kExact, s.dev);
    });
  }
  // A dim that is neither 1 nor the target size cannot expand.
  EXPECT_THROW(s.put({1, 2}, {2}, kF32).expand({3}), lt::Error);
  s.cover("expand");
}

// PyTorch's slice: negative start/end count from the end, both clamp to [0, n], end >= start.
void sweep_slice(Sweep& s) {
  for (int trial = 0; trial < 3 * s.trials; ++trial) {
    Shape sh = s.shape(trial, 1);
    const int64_t nd = sh.size();
    Input x = s.input(sh, s.pick(kAllDtypes));
    const int64_t dim = s.uniform(-nd, nd - 1), d = wrap(dim, nd), n = sh[d];
    int64_t start = s.uniform(-n - 2, n + 2), end = s.uniform(-n - 2, n + 2);
    const int64_t step = s.uniform(1, 3);
    auto norm = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
    const int64_t b = norm(start), e = std::max(b, norm(end));
    auto sliced = [&](int64_t from, int64_t len, int64_t st) {
      Shape os = sh;
      os[d] = len;
      Ref r{os, {}, x.ref.dtype};
      for (int64_t i = 0; i < numel(os); ++i) {
        Shape c = unravel(i, os);
        c[d] = from + c[d] * st;
        r.v.push_back(x.ref.v[ravel(c, sh)]);
      }
      return r;
    };
    std::ostringstream extra;
    extra << "dim " << dim << " " << start << ":" << end << ":" << step;
    run_case(describe("slice", {&x}, extra.str()), [&] {
      expect_match(x.t.slice(dim, start, end, step), sliced(b, (e - b + step - 1) / step, step),
                   kExact, s.dev);
      int64_t ns = s.uniform(0, n), len = s.uniform(0, n - ns);
      expect_match(lt::narrow(x.t, dim, ns, len), sliced(ns, len, 1), kExact, s.dev);
      if (n > 0) {
        int64_t idx = s.uniform(-n, n - 1);
        Ref sel = sliced(wrap(idx, n), 1, 1);
        sel.shape.erase(sel.shape.begin() + d);
        expect_match(x.t.select(dim, idx), sel, kExact, s.dev);
      }
    });
  }
  s.cover("slice");
}

void sweep_copy(Sweep& s) {
  for (int trial = 0; trial < s.trials; ++trial) {
    Input x = s.input(s.shape(trial), s.pick(kAllDtypes));
    run_case(describe("copy", {&x}), [&] {
      lt::Tensor c = x.t.clone();
      EXPECT_TRUE(c.is_contiguous());
      expect_match(c, x.ref, kExact, s.dev);
      lt::Tensor k = x.t.contiguous();
      EXPECT_TRUE(k.is_contiguous());
      expect_match(k, x.ref, kExact, s.dev);
    });
  }
  s.cover("copy");
}

void sweep_cat(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape base = s.shape(trial, 1);
    const int64_t nd = base.size();
    const int64_t dim = s.uniform(-nd, nd - 1), d = wrap(dim, nd);
    const int k = static_cast<int>(s.uniform(1, 3));
    std::vector<Input> ins;
    std::vector<lt::Tensor> ts;
    std::vector<Operand> ops;
    std::vector<const Input*> ptrs;
    Dtype first = s.pick(kAllDtypes);
    for (int i = 0; i < k; ++i) {
      Shape sh = base;
      sh[d] = s.coin(0.15) ? 0 : s.uniform(1, 3);
      Dtype dt = s.coin(0.7) ? first : s.pick(kAllDtypes);
      ins.push_back(s.input(sh, dt));
      ops.push_back({dt, kDimmed});
    }
    for (const Input& in : ins) {
      ts.push_back(in.t);
      ptrs.push_back(&in);
    }
    Dtype od = result_type(ops);
    Shape os = base;
    os[d] = 0;
    for (const Input& in : ins) os[d] += in.ref.shape[d];
    Ref want{os, std::vector<double>(numel(os)), od};
    int64_t off = 0;
    for (const Input& in : ins) {
      for (int64_t i = 0; i < numel(in.ref.shape); ++i) {
        Shape c = unravel(i, in.ref.shape);
        c[d] += off;
        want.v[ravel(c, os)] = round_to(in.ref.v[i], od);
      }
      off += in.ref.shape[d];
    }
    std::string what = "cat dim " + std::to_string(dim) + " of";
    for (const Input* p : ptrs) what += " " + p->desc();
    run_case(what, [&] { expect_match(lt::cat(ts, dim), want, kExact, s.dev); });
  }
  // stack: a new dim (0-d inputs included).
  for (int trial = 0; trial < s.trials; ++trial) {
    Shape sh = s.shape(trial, 0, 3);
    const int64_t nd = sh.size();
    const int64_t dim = s.uniform(-nd - 1, nd), d = wrap(dim, nd + 1);
    const int k = static_cast<int>(s.uniform(1, 3));
    Dtype dt = s.pick(kAllDtypes);
    std::vector<Input> ins;
    std::vector<lt::Tensor> ts;
    for (int i = 0; i < k; ++i) {
      ins.push_back(s.input(sh, dt));
      ts.push_back(ins.back().t);
    }
    Shape os = sh;
    os.insert(os.begin() + d, k);
    Ref want{os, {}, dt};
    for (int64_t i = 0; i < numel(os); ++i) {
      Shape c = unravel(i, os);
      int64_t which = c[d];
      c.erase(c.begin() + d);
      want.v.push_back(ins[which].ref.v[ravel(c, sh)]);
    }
    run_case(describe("stack", {&ins[0]}, "dim " + std::to_string(dim) + " x" + std::to_string(k)),
             [&] { expect_match(lt::stack(ts, dim), want, kExact, s.dev); });
  }
  s.cover("cat");
}

// Constant padding, F.pad order (last dim first); negative pads crop.
void sweep_pad(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial);
    const int64_t nd = sh.size();
    Dtype dt = s.pick(kAllDtypes);
    Input x = s.input(sh, dt);
    const int64_t k = nd == 0 ? 0 : s.uniform(trial == 0 ? 0 : 1, nd);
    std::vector<int64_t> pads;
    Shape os = sh;
    std::vector<int64_t> left(nd, 0);
    for (int64_t j = 0; j < k; ++j) {
      int64_t d = nd - 1 - j, n = sh[d];
      int64_t l = s.uniform(-std::min<int64_t>(n, 2), 2);
      int64_t r = s.uniform(-std::min<int64_t>(n + l, 2), 2);
      pads.push_back(l);
      pads.push_back(r);
      left[d] = l;
      os[d] = n + l + r;
    }
    double value = dt == kB ? 1.0 : (is_float(dt) ? -1.5 : 7.0);
    Ref want{os, {}, dt};
    for (int64_t i = 0; i < numel(os); ++i) {
      Shape c = unravel(i, os);
      bool inside = true;
      for (int64_t d = 0; d < nd; ++d) {
        c[d] -= left[d];
        inside = inside && c[d] >= 0 && c[d] < sh[d];
      }
      want.v.push_back(inside ? x.ref.v[ravel(c, sh)] : value);
    }
    run_case(describe("pad", {&x}, str(pads)),
             [&] { expect_match(lt::pad(x.t, pads, value), want, kExact, s.dev); });
  }
  s.cover("pad");
}

// ============================================================ matmul, conv2d and pooling

// torch.matmul semantics: 1-d operands gain a dim that is removed again, batch dims broadcast.
Ref ref_matmul(const Ref& a, const Ref& b) {
  Shape as = a.shape, bs = b.shape;
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  const int64_t n = as[as.size() - 2], k = as.back(), m = bs.back();
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  Shape batch = bcast(ab, bb);
  Ref r{batch, {}, a.dtype};
  if (!a1) r.shape.push_back(n);
  if (!b1) r.shape.push_back(m);
  for (int64_t bi = 0; bi < numel(batch); ++bi) {
    Shape c = unravel(bi, batch);
    const int64_t ia = bcast_at(c, ab), ib = bcast_at(c, bb);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          double t = a.v[(ia * n + i) * k + p] * b.v[(ib * k + p) * m + j];
          acc += t;
          mag += std::abs(t);
        }
        r.v.push_back(acc);
        r.mag.push_back(mag);
      }
  }
  return r;
}

void sweep_matmul(Sweep& s) {
  for (Dtype dt : kNumericDtypes) {
    const Domain dom = is_float(dt) ? Domain{-2, 2} : Domain{-3, 3};
    for (int trial = 0; trial < 2 * s.trials; ++trial) {
      auto sz = [&] { return s.coin(0.1) ? int64_t{0} : s.uniform(1, 6); };
      const int64_t n = sz(), k = sz(), m = sz();
      Shape sa, sb;
      switch (trial % 6) {
        case 0:
          sa = {k};
          sb = {k};
          break;
        case 1:
          sa = {n, k};
          sb = {k};
          break;
        case 2:
          sa = {k};
          sb = {k, m};
          break;
        case 3:
          sa = {n, k};
          sb = {k, m};
          break;
        case 4: {  // batch dims broadcast
          Shape batch = s.random_shape(1, 2, 3);
          sa = s.bcast_operand(batch);
          sb = s.bcast_operand(batch);
          sa.insert(sa.end(), {n, k});
          sb.insert(sb.end(), {k, m});
          break;
        }
        default: {  // batched with a 1-d operand
          Shape batch = s.random_shape(1, 2, 3);
          if (s.coin()) {
            sa = batch;
            sa.insert(sa.end(), {n, k});
            sb = {k};
          } else {
            sa = {k};
            sb = batch;
            sb.insert(sb.end(), {k, m});
          }
        }
      }
      Input a = s.input(sa, dt, dom), b = s.input(sb, dt, dom);
      run_case(describe("matmul", {&a, &b}), [&] {
        Ref want = ref_matmul(a.ref, b.ref);
        expect_match(lt::matmul(a.t, b.t), want, reduce_tol(dt), s.dev);
        if (sa.size() == 2 && sb.size() == 2)
          expect_match(a.t.mm(b.t), want, reduce_tol(dt), s.dev);
      });
    }
    // bmm
    Input a = s.input({3, 2, 4}, dt, dom), b = s.input({3, 4, 5}, dt, dom);
    run_case(describe("bmm", {&a, &b}), [&] {
      expect_match(lt::bmm(a.t, b.t), ref_matmul(a.ref, b.ref), reduce_tol(dt), s.dev);
    });
  }
  // PyTorch requires equal dtypes and matching inner dims.
  EXPECT_THROW(lt::matmul(s.input({2, 3}, kF32).t, s.input({3, 2}, kF64).t), lt::Error);
  EXPECT_THROW(lt::matmul(s.input({2, 3}, kF32).t, s.input({2, 2}, kF32).t), lt::Error);
  s.cover("matmul");
}

// torch.nn.functional.conv2d: x [N, C, H, W], w [O, C/groups, kh, kw], zero padding.
Ref ref_conv2d(const Ref& x, const Ref& w, const Ref* bias, int64_t sh, int64_t sw, int64_t ph,
               int64_t pw, int64_t dh, int64_t dw, int64_t g) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t O = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1;
  const int64_t OW = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
  const int64_t Og = O / g;
  Ref r{{N, O, OH, OW}, {}, x.dtype};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? bias->v[o] : 0.0, mag = std::abs(acc);
          const int64_t gi = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                int64_t ih = oh * sh - ph + i * dh, iw = ow * sw - pw + j * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                double t = x.v[((n * C + gi * Cg + c) * H + ih) * W + iw] *
                           w.v[((o * Cg + c) * KH + i) * KW + j];
                acc += t;
                mag += std::abs(t);
              }
          r.v.push_back(acc);
          r.mag.push_back(mag);
        }
  return r;
}

void sweep_conv2d(Sweep& s) {
  int done = 0;
  for (int attempt = 0; done < 2 * s.trials && attempt < 100 * s.trials; ++attempt) {
    Dtype dt = s.pick(kFloatDtypes);
    int64_t H = s.uniform(1, 7), W = s.uniform(1, 7);
    const int64_t g = s.uniform(1, 2), N = s.uniform(1, 2), cg = s.uniform(1, 3),
                  og = s.uniform(1, 3), KH = s.uniform(1, 3), KW = s.uniform(1, 3),
                  sh = s.uniform(1, 2), sw = s.uniform(1, 2), ph = s.uniform(0, 1),
                  pw = s.uniform(0, 1), dh = s.uniform(1, 2), dw = s.uniform(1, 2);
    if (H + 2 * ph - dh * (KH - 1) - 1 < 0 || W + 2 * pw - dw * (KW - 1) - 1 < 0) continue;
    ++done;
    // Images of 256 or more output pixels, whose chunks the kernel splits (eager conv.cpp),
    // in every third case (16 or more output rows and columns)
    const int64_t big = done % 3 == 0 ? 18 + s.uniform(0, 6) : 0;
    if (big) H = big * sh + 2, W = big * sw + 2;
    const bool unbatched = N == 1 && s.coin(0.25);
    Input x = s.input({N, g * cg, H, W}, dt, {-2, 2});
    Input w = s.input({g * og, cg, KH, KW}, dt, {-1, 1});
    std::optional<Input> b;
    if (s.coin()) b = s.input({g * og}, dt, {-1, 1});
    Ref want = ref_conv2d(x.ref, w.ref, b ? &b->ref : nullptr, sh, sw, ph, pw, dh, dw, g);
    std::ostringstream extra;
    extra << "stride " << sh << "x" << sw << " pad " << ph << "x" << pw << " dil " << dh << "x"
          << dw << " groups " << g << (b ? " bias" : "") << (unbatched ? " unbatched" : "");
    run_case(describe("conv2d", {&x, &w}, extra.str()), [&] {
      lt::Tensor xt = unbatched ? x.t.select(0, 0) : x.t;
      lt::Tensor y = lt::conv2d(xt, w.t, b ? b->t : lt::Tensor(), {sh, sw}, {ph, pw}, {dh, dw}, g);
      if (unbatched) want.shape.erase(want.shape.begin());
      expect_match(y, want, reduce_tol(dt), s.dev);
    });
  }
  // Stride 1 with output rows as long as the input's (eager copies the in-range rows of each
  // im2col row as one block and zeroes the padding columns after): kernels of 1-5 columns with
  // "same" padding, dilated rows, and images of one row or one column.
  for (const std::vector<int64_t>& c :
       std::vector<std::vector<int64_t>>{// H, W, KH, KW, ph, pw, dh, dw
                                         {7, 6, 3, 3, 1, 1, 1, 1},
                                         {9, 5, 3, 3, 2, 1, 2, 1},
                                         {5, 8, 3, 5, 0, 2, 1, 1},
                                         {1, 4, 3, 3, 1, 1, 1, 1},
                                         {6, 1, 3, 3, 1, 1, 1, 1},
                                         {4, 6, 2, 3, 0, 2, 1, 2},
                                         {3, 3, 1, 1, 0, 0, 1, 1}}) {
    Dtype dt = s.pick(kFloatDtypes);
    Input x = s.input({2, 3, c[0], c[1]}, dt, {-2, 2});
    Input w = s.input({4, 3, c[2], c[3]}, dt, {-1, 1});
    Ref want = ref_conv2d(x.ref, w.ref, nullptr, 1, 1, c[4], c[5], c[6], c[7], 1);
    run_case(describe("conv2d", {&x, &w}, "same-width rows"), [&] {
      lt::Tensor y = lt::conv2d(x.t, w.t, lt::Tensor(), {1, 1}, {c[4], c[5]}, {c[6], c[7]}, 1);
      expect_match(y, want, reduce_tol(dt), s.dev);
    });
  }
  EXPECT_THROW(lt::conv2d(s.input({1, 2, 4, 4}, kI32).t, s.input({1, 2, 1, 1}, kI32).t), lt::Error);
  s.cover("conv2d");
}

void sweep_pool2d(Sweep& s) {
  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    const bool is_max = std::string(op) == "max_pool2d";
    int done = 0;
    for (int attempt = 0; done < 2 * s.trials && attempt < 100 * s.trials; ++attempt) {
      Dtype dt = s.pick(kFloatDtypes);
      const int64_t N = s.uniform(1, 2), C = s.uniform(1, 3), H = s.uniform(1, 6),
                    W = s.uniform(1, 6), kh = s.uniform(1, 3), kw = s.uniform(1, 3);
      const bool default_stride = s.coin(0.3);
      const int64_t sh = default_stride ? kh : s.uniform(1, 3);
      const int64_t sw = default_stride ? kw : s.uniform(1, 3);
      const int64_t ph = s.uniform(0, kh / 2), pw = s.uniform(0, kw / 2);
      if (H + 2 * ph < kh || W + 2 * pw < kw) continue;
      ++done;
      const int64_t OH = (H + 2 * ph - kh) / sh + 1, OW = (W + 2 * pw - kw) / sw + 1;
      Input x = s.input({N, C, H, W}, dt, {-3, 3});
      Ref want{{N, C, OH, OW}, {}, dt};
      for (int64_t nc = 0; nc < N * C; ++nc)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double acc = is_max ? -kInf : 0.0, mag = 0;
            for (int64_t i = oh * sh - ph; i < oh * sh - ph + kh; ++i)
              for (int64_t j = ow * sw - pw; j < ow * sw - pw + kw; ++j) {
                if (i < 0 || i >= H || j < 0 || j >= W) continue;  // -inf / zero padding
                double v = x.ref.v[(nc * H + i) * W + j];
                acc = is_max ? std::max(acc, v) : acc + v;
                mag += std::abs(v) / static_cast<double>(kh * kw);
              }
            // avg_pool2d's default count_include_pad=True divides by the full window.
            want.v.push_back(is_max ? acc : acc / static_cast<double>(kh * kw));
            want.mag.push_back(mag);
          }
      const bool unbatched = N == 1 && s.coin(0.25);
      std::ostringstream extra;
      extra << "kernel " << kh << "x" << kw << " stride " << sh << "x" << sw << " pad " << ph << "x"
            << pw << (unbatched ? " unbatched" : "");
      run_case(describe(op, {&x}, extra.str()), [&] {
        lt::Tensor xt = unbatched ? x.t.select(0, 0) : x.t;
        const std::vector<int64_t> kernel = {kh, kw}, stride_v = {sh, sw}, padding = {ph, pw};
        const lt::IntList stride = default_stride ? lt::IntList() : lt::IntList(stride_v);
        lt::Tensor y = is_max ? lt::max_pool2d(xt, kernel, stride, padding)
                              : lt::avg_pool2d(xt, kernel, stride, padding);
        if (unbatched) want.shape.erase(want.shape.begin());
        expect_match(y, want, is_max ? kExact : reduce_tol(dt), s.dev);
      });
    }
    s.cover(op);
  }
}

// Gradients of conv2d and the pools through autograd (the backward primitives
// conv2d_grad_input, conv2d_grad_weight, max_pool2d_grad, avg_pool2d_grad): y.backward(g) on
// leaves that require grad, against the adjoint loops of the forward references.
void sweep_conv_pool_backward(Sweep& s) {
  // After the random cases, the same-width cases of sweep_conv2d (eager adds a column row's
  // in-range rows back as one run): H, W, KH, KW, ph, pw, dh, dw, at stride 1.
  const std::vector<std::vector<int64_t>> same_width{{7, 6, 3, 3, 1, 1, 1, 1},
                                                     {9, 5, 3, 3, 2, 1, 2, 1},
                                                     {5, 8, 3, 5, 0, 2, 1, 1},
                                                     {1, 4, 3, 3, 1, 1, 1, 1},
                                                     {4, 6, 2, 3, 0, 2, 1, 2}};
  int done = 0;
  const int cases = s.trials + static_cast<int>(same_width.size());
  for (int attempt = 0; done < cases && attempt < 100 * cases; ++attempt) {
    Dtype dt = s.pick(kFloatDtypes);
    int64_t g = s.uniform(1, 2), N = s.uniform(1, 2), Cg = s.uniform(1, 3), Og = s.uniform(1, 2),
            H = s.uniform(1, 6), W = s.uniform(1, 6), KH = s.uniform(1, 3), KW = s.uniform(1, 3),
            sh = s.uniform(1, 2), sw = s.uniform(1, 2), ph = s.uniform(0, 1), pw = s.uniform(0, 1),
            dh = s.uniform(1, 2), dw = s.uniform(1, 2);
    if (done >= s.trials) {
      const std::vector<int64_t>& c = same_width[static_cast<size_t>(done - s.trials)];
      H = c[0], W = c[1], KH = c[2], KW = c[3], ph = c[4], pw = c[5], dh = c[6], dw = c[7];
      sh = sw = 1;
    }
    if (H + 2 * ph - dh * (KH - 1) - 1 < 0 || W + 2 * pw - dw * (KW - 1) - 1 < 0) continue;
    ++done;
    const int64_t C = g * Cg, O = g * Og;
    const int64_t OH = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1;
    const int64_t OW = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
    Input x = s.input({N, C, H, W}, dt, {-2, 2}), w = s.input({O, Cg, KH, KW}, dt, {-1, 1});
    Input b = s.input({O}, dt, {-1, 1});
    Input up = s.input({N, O, OH, OW}, dt, {-1, 1});
    Ref dx{x.ref.shape, std::vector<double>(numel(x.ref.shape)), dt,
           std::vector<double>(numel(x.ref.shape))};
    Ref dwr{w.ref.shape, std::vector<double>(numel(w.ref.shape)), dt,
            std::vector<double>(numel(w.ref.shape))};
    Ref db{{O}, std::vector<double>(O), dt, std::vector<double>(O)};
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const double gv = up.ref.v[((n * O + o) * OH + oh) * OW + ow];
            db.v[o] += gv;
            db.mag[o] += std::abs(gv);
            const int64_t gi = o / Og;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t i = 0; i < KH; ++i)
                for (int64_t j = 0; j < KW; ++j) {
                  int64_t ih = oh * sh - ph + i * dh, iw = ow * sw - pw + j * dw;
                  if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  const int64_t xi = ((n * C + gi * Cg + c) * H + ih) * W + iw;
                  const int64_t wi = ((o * Cg + c) * KH + i) * KW + j;
                  dx.v[xi] += gv * w.ref.v[wi];
                  dx.mag[xi] += std::abs(gv * w.ref.v[wi]);
                  dwr.v[wi] += gv * x.ref.v[xi];
                  dwr.mag[wi] += std::abs(gv * x.ref.v[xi]);
                }
          }
    std::ostringstream extra;
    extra << "stride " << sh << "x" << sw << " pad " << ph << "x" << pw << " dil " << dh << "x"
          << dw << " groups " << g;
    run_case(describe("conv2d backward", {&x, &w, &up}, extra.str()), [&] {
      x.t.requires_grad_();
      w.t.requires_grad_();
      b.t.requires_grad_();
      lt::conv2d(x.t, w.t, b.t, {sh, sw}, {ph, pw}, {dh, dw}, g).backward(up.t);
      expect_match(x.t.grad(), dx, reduce_tol(dt), s.dev);
      expect_match(w.t.grad(), dwr, reduce_tol(dt), s.dev);
      expect_match(b.t.grad(), db, reduce_tol(dt), s.dev);
    });
  }
  s.cover("conv2d_grad_input");
  s.cover("conv2d_grad_weight");

  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    const bool is_max = std::string(op) == "max_pool2d";
    done = 0;
    for (int attempt = 0; done < s.trials && attempt < 100 * s.trials; ++attempt) {
      Dtype dt = s.pick(kFloatDtypes);
      const int64_t N = s.uniform(1, 2), C = s.uniform(1, 3), H = s.uniform(1, 6),
                    W = s.uniform(1, 6), kh = s.uniform(1, 3), kw = s.uniform(1, 3),
                    sh = s.uniform(1, 3), sw = s.uniform(1, 3), ph = s.uniform(0, kh / 2),
                    pw = s.uniform(0, kw / 2);
      if (H + 2 * ph < kh || W + 2 * pw < kw) continue;
      ++done;
      const int64_t OH = (H + 2 * ph - kh) / sh + 1, OW = (W + 2 * pw - kw) / sw + 1;
      // Expanded layouts give ties: PyTorch routes the gradient to the first maximum in the
      // window's row-major scan.
      Input x = s.input({N, C, H, W}, dt, {-3, 3, true});
      Input up = s.input({N, C, OH, OW}, dt, {-1, 1});
      Ref dx{x.ref.shape, std::vector<double>(numel(x.ref.shape)), dt,
             std::vector<double>(numel(x.ref.shape))};
      for (int64_t p = 0; p < N * C; ++p)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const double gv = up.ref.v[(p * OH + oh) * OW + ow];
            int64_t best = -1;
            for (int64_t i = oh * sh - ph; i < oh * sh - ph + kh; ++i)
              for (int64_t j = ow * sw - pw; j < ow * sw - pw + kw; ++j) {
                if (i < 0 || i >= H || j < 0 || j >= W) continue;
                const int64_t xi = (p * H + i) * W + j;
                if (!is_max) {
                  dx.v[xi] += gv / static_cast<double>(kh * kw);
                  dx.mag[xi] += std::abs(gv) / static_cast<double>(kh * kw);
                } else if (best < 0 || x.ref.v[xi] > x.ref.v[best]) {
                  best = xi;
                }
              }
            if (is_max) {
              dx.v[best] += gv;
              dx.mag[best] += std::abs(gv);
            }
          }
      std::ostringstream extra;
      extra << "kernel " << kh << "x" << kw << " stride " << sh << "x" << sw << " pad " << ph << "x"
            << pw;
      run_case(describe(std::string(op) + " backward", {&x, &up}, extra.str()), [&] {
        x.t.requires_grad_();
        const std::vector<int64_t> kernel = {kh, kw}, stride = {sh, sw}, padding = {ph, pw};
        lt::Tensor y = is_max ? lt::max_pool2d(x.t, kernel, stride, padding)
                              : lt::avg_pool2d(x.t, kernel, stride, padding);
        y.backward(up.t);
        expect_match(x.t.grad(), dx, reduce_tol(dt), s.dev);
      });
    }
    s.cover(is_max ? "max_pool2d_grad" : "avg_pool2d_grad");
  }
}

// ============================================================================== indexing

// An index tensor (int64 or int32) with values in [0, bound).
Input index_input(Sweep& s, const Shape& sh, int64_t bound) {
  Dtype it = s.coin(0.7) ? kI64 : kI32;
  return s.input(sh, it, {0, static_cast<double>(std::max<int64_t>(bound, 1) - 1)});
}

void sweep_gather(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial);
    const int64_t nd = sh.size();
    Input x = s.input(sh, s.pick(kAllDtypes));
    const int64_t dim = nd == 0 ? 0 : s.uniform(-nd, nd - 1), d = wrap(dim, nd);
    Shape is(nd);
    for (int64_t j = 0; j < nd; ++j)
      is[j] = j == d ? (sh[d] == 0 ? 0 : s.uniform(0, 4)) : s.uniform(0, sh[j]);
    Input idx = index_input(s, is, nd == 0 ? 1 : sh[d]);
    Ref want{is, {}, x.ref.dtype};
    for (int64_t i = 0; i < numel(is); ++i) {
      Shape c = unravel(i, is);
      if (nd > 0) c[d] = static_cast<int64_t>(idx.ref.v[i]);
      want.v.push_back(x.ref.v[ravel(c, sh)]);
    }
    run_case(describe("gather", {&x, &idx}, "dim " + std::to_string(dim)),
             [&] { expect_match(lt::gather(x.t, dim, idx.t), want, kExact, s.dev); });
  }
  // PyTorch checks index bounds.
  EXPECT_THROW(lt::gather(s.input({3}, kF32).t, 0, s.put({3}, {1}, kI64)).to_vector<double>(),
               lt::Error);
  s.cover("gather");
}

// scatter_add adds src into x at index; scatter writes it, duplicate targets taking the last
// write in index's row-major order (eager's kernel, which every backend runs), so the reference
// writes in that order.
void sweep_scatter_into(Sweep& s, bool accumulate) {
  const char* name = accumulate ? "scatter_add" : "scatter";
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial);
    const int64_t nd = sh.size();
    Dtype dt = s.pick(accumulate ? kNumericDtypes : kAllDtypes);
    Input x = s.input(sh, dt);
    const int64_t dim = nd == 0 ? 0 : s.uniform(-nd, nd - 1), d = wrap(dim, nd);
    Shape is(nd), ss(nd);
    for (int64_t j = 0; j < nd; ++j) {
      is[j] = j == d ? (sh[d] == 0 ? 0 : s.uniform(0, 5)) : s.uniform(0, sh[j]);
      ss[j] = is[j] + s.uniform(0, 1);
    }
    Input idx = index_input(s, is, nd == 0 ? 1 : sh[d]);
    Input src = s.input(ss, dt);
    Ref want = x.ref;
    for (double v : want.v) want.mag.push_back(std::abs(v));
    for (int64_t i = 0; i < numel(is); ++i) {
      Shape c = unravel(i, is), t = c;
      if (nd > 0) t[d] = static_cast<int64_t>(idx.ref.v[i]);
      const double v = src.ref.v[ravel(c, ss)];
      want.v[ravel(t, sh)] = accumulate ? want.v[ravel(t, sh)] + v : v;
      want.mag[ravel(t, sh)] = accumulate ? want.mag[ravel(t, sh)] + std::abs(v) : std::abs(v);
    }
    run_case(describe(name, {&x, &idx, &src}, "dim " + std::to_string(dim)), [&] {
      expect_match(accumulate ? lt::scatter_add(x.t, dim, idx.t, src.t)
                              : lt::scatter(x.t, dim, idx.t, src.t),
                   want, accumulate ? arith_tol(dt) : exact_tol(dt), s.dev);
    });
  }
  s.cover(name);
}
void sweep_scatter_add(Sweep& s) { sweep_scatter_into(s, true); }
void sweep_scatter(Sweep& s) { sweep_scatter_into(s, false); }

// argsort (and sort, which gathers with it): a stable sort of each slice, NaN above every number;
// small integer domains give ties, whose order the stability fixes.
void sweep_sort(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial);
    const int64_t nd = sh.size();
    Dtype dt = s.pick(kAllDtypes);
    Input x = s.input(sh, dt, is_float(dt) ? Domain{-2, 2, trial % 2 == 0} : Domain{-3, 3});
    const int64_t dim = nd == 0 ? 0 : s.uniform(-nd, nd - 1), d = wrap(dim, nd);
    const bool desc = s.coin();
    Ref want_idx{sh, {}, kI64}, want_val{sh, {}, dt};
    want_idx.v.resize(x.ref.v.size());
    want_val.v.resize(x.ref.v.size());
    const int64_t n = nd == 0 ? 1 : sh[d];
    for (int64_t i = 0; i < numel(sh); ++i) {
      Shape c = unravel(i, sh);
      if (nd > 0 && c[d] != 0) continue;  // once per slice, from its first element
      std::vector<int64_t> perm(n);
      for (int64_t k = 0; k < n; ++k) perm[k] = k;
      auto val = [&](int64_t k) {
        Shape e = c;
        if (nd > 0) e[d] = k;
        return x.ref.v[ravel(e, sh)];
      };
      auto after = [](double u, double v) { return std::isnan(u) ? !std::isnan(v) : v < u; };
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        return desc ? after(val(a), val(b)) : after(val(b), val(a));
      });
      for (int64_t k = 0; k < n; ++k) {
        Shape e = c;
        if (nd > 0) e[d] = k;
        want_idx.v[ravel(e, sh)] = static_cast<double>(perm[k]);
        want_val.v[ravel(e, sh)] = val(perm[k]);
      }
    }
    run_case(describe("argsort", {&x}, "dim " + std::to_string(dim) + (desc ? " desc" : "")), [&] {
      expect_match(lt::argsort(x.t, dim, desc), want_idx, kExact, s.dev);
      auto [v, i] = lt::sort(x.t, dim, desc);
      expect_match(v, want_val, kExact, s.dev);
      expect_match(i, want_idx, kExact, s.dev);
    });
  }
  s.cover("argsort");
}

void sweep_index_select(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial);
    const int64_t nd = sh.size();
    Input x = s.input(sh, s.pick(kAllDtypes));
    const int64_t dim = nd == 0 ? 0 : s.uniform(-nd, nd - 1), d = wrap(dim, nd);
    const int64_t bound = nd == 0 ? 1 : sh[d];
    Shape is = s.coin(0.2) && bound > 0 ? Shape{} : Shape{bound == 0 ? 0 : s.uniform(0, 6)};
    if (nd == 0) is = s.coin() ? Shape{} : Shape{1};  // a 0-d input takes one index
    Input idx = index_input(s, is, bound);
    Shape os = sh;
    if (nd > 0) os[d] = numel(is);
    Ref want{os, {}, x.ref.dtype};
    for (int64_t i = 0; i < numel(os); ++i) {
      Shape c = unravel(i, os);
      if (nd > 0) c[d] = static_cast<int64_t>(idx.ref.v[c[d]]);
      want.v.push_back(x.ref.v[ravel(c, sh)]);
    }
    run_case(describe("index_select", {&x, &idx}, "dim " + std::to_string(dim)),
             [&] { expect_match(lt::index_select(x.t, dim, idx.t), want, kExact, s.dev); });
  }
  s.cover("index_select");
}

// ============================================================================== creation

void sweep_creation(Sweep& s) {
  const lt::TensorOptions o(s.dev);
  run_case("scalar_tensor", [&] {
    expect_match(lt::scalar_tensor(2.5, o), {{}, {2.5}, kF32}, kExact, s.dev);
    expect_match(lt::scalar_tensor(-3, o), {{}, {-3}, kI64}, kExact, s.dev);
    expect_match(lt::scalar_tensor(true, o), {{}, {1}, kB}, kExact, s.dev);
    expect_match(lt::scalar_tensor(2.5, o.dtype(kF64)), {{}, {2.5}, kF64}, kExact, s.dev);
    expect_match(lt::scalar_tensor(7, o.dtype(kI32)), {{}, {7}, kI32}, kExact, s.dev);
  });
  run_case("full", [&] {
    // Default dtypes follow the value (float -> float32, int -> int64, bool -> bool).
    expect_match(lt::full({2, 3}, 1.5, o), {{2, 3}, std::vector<double>(6, 1.5), kF32}, kExact,
                 s.dev);
    expect_match(lt::full({2, 0}, 3, o), {{2, 0}, {}, kI64}, kExact, s.dev);
    expect_match(lt::full({}, true, o), {{}, {1}, kB}, kExact, s.dev);
    // Explicit dtypes convert the value like a cast does.
    expect_match(lt::full({2}, 2.7, o.dtype(kI32)), {{2}, {2, 2}, kI32}, kExact, s.dev);
    expect_match(lt::full({2}, -2.7, o.dtype(kI64)), {{2}, {-2, -2}, kI64}, kExact, s.dev);
    expect_match(lt::full({3}, 0.5, o.dtype(kB)), {{3}, {1, 1, 1}, kB}, kExact, s.dev);
    expect_match(lt::full({1, 2}, 7, o.dtype(kF64)), {{1, 2}, {7, 7}, kF64}, kExact, s.dev);
    expect_match(lt::zeros({2, 2}, o), {{2, 2}, {0, 0, 0, 0}, kF32}, kExact, s.dev);
    expect_match(lt::ones({3}, o.dtype(kI32)), {{3}, {1, 1, 1}, kI32}, kExact, s.dev);
    lt::Tensor like = s.put({1, 2, 3, 4, 5, 6}, {3, 2}, kF64).t();
    expect_match(lt::zeros_like(like), {{2, 3}, std::vector<double>(6, 0), kF64}, kExact, s.dev);
    expect_match(lt::ones_like(like, lt::TensorOptions(kI64)),
                 {{2, 3}, std::vector<double>(6, 1), kI64}, kExact, s.dev);
    expect_match(lt::full_like(like, 4.25), {{2, 3}, std::vector<double>(6, 4.25), kF64}, kExact,
                 s.dev);
  });
  s.cover("scalar");

  run_case("arange", [&] {
    expect_match(lt::arange(5, o), {{5}, {0, 1, 2, 3, 4}, kI64}, kExact, s.dev);
    expect_match(lt::arange(2, 11, 3, o), {{3}, {2, 5, 8}, kI64}, kExact, s.dev);
    expect_match(lt::arange(5, 0, -2, o), {{3}, {5, 3, 1}, kI64}, kExact, s.dev);
    expect_match(lt::arange(0, o), {{0}, {}, kI64}, kExact, s.dev);
    expect_match(lt::arange(1, 2.5, 0.5, o), {{3}, {1, 1.5, 2}, kF32}, kExact, s.dev);
    expect_match(lt::arange(0, 4, 1, o.dtype(kF64)), {{4}, {0, 1, 2, 3}, kF64}, kExact, s.dev);
    expect_match(lt::arange(3, o.dtype(kI32)), {{3}, {0, 1, 2}, kI32}, kExact, s.dev);
    Ref want{{10}, {}, kF32};
    for (int i = 0; i < 10; ++i) want.v.push_back(0.1 * i);
    expect_match(lt::arange(0.0, 1.0, 0.1, o), want, arith_tol(kF32), s.dev);
    want = {{7}, {}, kF64};
    for (int i = 0; i < 7; ++i) want.v.push_back(-1.0 + 0.3 * i);
    expect_match(lt::arange(-1.0, 1.0, 0.3, o.dtype(kF64)), want, arith_tol(kF64), s.dev);
  });
  run_case("linspace", [&] {
    for (auto [a, b, n] : std::vector<std::tuple<double, double, int64_t>>{
             {0, 1, 5}, {-1, 1, 1}, {2, 3, 0}, {-3, 7, 11}, {1, -1, 8}, {0.1, 0.7, 2}}) {
      for (Dtype dt : kFloatDtypes) {
        Ref want{{n}, {}, dt};
        for (int64_t i = 0; i < n; ++i)
          want.v.push_back(n == 1 ? a : a + (b - a) * i / double(n - 1));
        expect_match(lt::linspace(a, b, n, o.dtype(dt)), want, arith_tol(dt), s.dev);
      }
    }
    expect_match(lt::linspace(0, 1, 3, o), {{3}, {0, 0.5, 1}, kF32}, kExact, s.dev);
  });
  run_case("eye", [&] {
    for (auto [n, m] :
         std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {2, 4}, {4, 1}, {0, 2}, {0, 0}}) {
      Ref want{{n, m}, {}, kF32};
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) want.v.push_back(i == j);
      expect_match(lt::eye(n, m, o), want, kExact, s.dev);
      want.dtype = kI64;
      expect_match(lt::eye(n, m, o.dtype(kI64)), want, kExact, s.dev);
    }
    Ref want{{2, 2}, {1, 0, 0, 1}, kB};
    expect_match(lt::eye(2, o.dtype(kB)), want, kExact, s.dev);
  });
  s.cover("iota");
}

// ================================================================================ random

struct Stats {
  double mean = 0, var = 0, min = kInf, max = -kInf;
};
Stats stats_of(const std::vector<double>& v) {
  Stats st;
  for (double x : v) {
    st.mean += x;
    st.min = std::min(st.min, x);
    st.max = std::max(st.max, x);
  }
  st.mean /= static_cast<double>(v.size());
  for (double x : v) st.var += (x - st.mean) * (x - st.mean);
  st.var /= static_cast<double>(v.size() - 1);
  return st;
}

void sweep_random(Sweep& s) {
  const lt::TensorOptions o(s.dev);
  const int64_t kN = 100000;
  // Bounds are > 8 standard errors of the estimate on 100k samples, so they never flake.
  for (Dtype dt : kFloatDtypes) {
    run_case(std::string("rand ") + name(dt), [&] {
      lt::manual_seed(1234);
      lt::Tensor a = lt::rand({kN}, o.dtype(dt));
      EXPECT_EQ(a.dtype(), dt);
      EXPECT_TRUE(a.device() == s.dev);
      std::vector<double> v = a.to_vector<double>();
      Stats st = stats_of(v);
      EXPECT_GE(st.min, 0.0);
      EXPECT_LT(st.max, 1.0);
      EXPECT_NEAR(st.mean, 0.5, 0.01);
      EXPECT_NEAR(st.var, 1.0 / 12, 0.003);
      int64_t low = std::count_if(v.begin(), v.end(), [](double x) { return x < 0.1; });
      EXPECT_NEAR(static_cast<double>(low) / kN, 0.1, 0.01);
      // Same seed, same numbers; and the same numbers on cpu (Philox is device-independent).
      lt::manual_seed(1234);
      EXPECT_TRUE(lt::rand({kN}, o.dtype(dt)).to_vector<double>() == v);
      lt::manual_seed(1234);
      EXPECT_TRUE(lt::rand({kN}, lt::TensorOptions(lt::kCPU).dtype(dt)).to_vector<double>() == v);
      // Another seed or the next draw gives other numbers.
      lt::manual_seed(1235);
      EXPECT_FALSE(lt::rand({kN}, o.dtype(dt)).to_vector<double>() == v);
      lt::manual_seed(1234);
      lt::rand({kN}, o.dtype(dt));
      EXPECT_FALSE(lt::rand({kN}, o.dtype(dt)).to_vector<double>() == v);
    });
    run_case(std::string("randn ") + name(dt), [&] {
      lt::manual_seed(99);
      lt::Tensor a = lt::randn({200, kN / 200}, o.dtype(dt));
      EXPECT_EQ(a.dtype(), dt);
      EXPECT_EQ(str(shape_of(a)), str({200, kN / 200}));
      std::vector<double> v = a.to_vector<double>();
      Stats st = stats_of(v);
      EXPECT_NEAR(st.mean, 0.0, 0.03);
      EXPECT_NEAR(st.var, 1.0, 0.04);
      int64_t in1 = std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x) < 1; });
      EXPECT_NEAR(static_cast<double>(in1) / kN, 0.6827, 0.012);
      for (double x : v) ASSERT_TRUE(std::isfinite(x));
      lt::manual_seed(99);
      EXPECT_TRUE(lt::randn({200, kN / 200}, o.dtype(dt)).to_vector<double>() == v);
      lt::manual_seed(98);
      EXPECT_FALSE(lt::randn({200, kN / 200}, o.dtype(dt)).to_vector<double>() == v);
    });
  }
  for (Dtype dt : {kI64, kI32}) {
    run_case(std::string("randint ") + name(dt), [&] {
      lt::manual_seed(7);
      lt::Tensor a =
          dt == kI64 ? lt::randint(-3, 7, {kN}, o) : lt::randint(-3, 7, {kN}, o.dtype(dt));
      EXPECT_EQ(a.dtype(), dt);  // int64 by default, like PyTorch
      std::vector<double> v = a.to_vector<double>();
      Stats st = stats_of(v);
      EXPECT_EQ(st.min, -3);
      EXPECT_EQ(st.max, 6);
      EXPECT_NEAR(st.mean, 1.5, 0.05);
      EXPECT_NEAR(st.var, (10.0 * 10.0 - 1) / 12, 0.15);
      for (int64_t k = -3; k < 7; ++k) {
        int64_t c = std::count(v.begin(), v.end(), static_cast<double>(k));
        EXPECT_NEAR(static_cast<double>(c) / kN, 0.1, 0.01) << "value " << k;
      }
      lt::manual_seed(7);
      lt::Tensor b =
          dt == kI64 ? lt::randint(-3, 7, {kN}, o) : lt::randint(-3, 7, {kN}, o.dtype(dt));
      EXPECT_TRUE(b.to_vector<double>() == v);
      lt::Tensor c = lt::randint(5, {4, 0}, o);
      EXPECT_EQ(str(shape_of(c)), "[4, 0]");
    });
  }
  run_case("random shapes", [&] {
    lt::Tensor z = lt::rand({}, o);
    EXPECT_EQ(z.dim(), 0);
    EXPECT_EQ(z.numel(), 1);
    EXPECT_EQ(lt::randn({0, 3}, o).numel(), 0);
    EXPECT_EQ(lt::rand({2, 0}, o.dtype(kF64)).dtype(), kF64);
    EXPECT_THROW(lt::randint(3, 3, {2}, o), lt::Error);
    EXPECT_THROW(lt::rand({2}, o.dtype(kI64)), lt::Error);
    EXPECT_EQ(lt::rand({3}, o).dtype(), kF32);  // float32 by default
    EXPECT_EQ(lt::randn({3}, o).dtype(), kF32);
  });
  s.cover("uniform");
  s.cover("normal");
  s.cover("random_int");
}

// ============================================================================ composites

// Softmax and log-softmax along `dim` (the groups of reduce_groups with that dim).
void sweep_softmax(Sweep& s) {
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      Shape sh = s.shape(trial);
      const int64_t nd = sh.size();
      Input x = s.input(sh, dt, {-5, 5});
      const int64_t dim = nd == 0 ? 0 : s.uniform(-nd, nd - 1);
      Groups g = reduce_groups(sh, {dim}, true);
      Ref sm{sh, std::vector<double>(numel(sh)), dt}, lsm = sm;
      for (const auto& m : g.members) {
        double mx = -kInf, sum = 0;
        for (int64_t i : m) mx = std::max(mx, x.ref.v[i]);
        for (int64_t i : m) sum += std::exp(x.ref.v[i] - mx);
        for (int64_t i : m) {
          sm.v[i] = std::exp(x.ref.v[i] - mx) / sum;
          lsm.v[i] = x.ref.v[i] - mx - std::log(sum);
        }
      }
      run_case(describe("softmax", {&x}, "dim " + std::to_string(dim)), [&] {
        expect_match(lt::softmax(x.t, dim), sm, composite_tol(dt), s.dev);
        expect_match(x.t.log_softmax(dim), lsm, composite_tol(dt), s.dev);
      });
    }
  }
}

void sweep_layer_norm(Sweep& s) {
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      Shape sh = s.shape(trial, 1);
      const int64_t nd = sh.size(), k = s.uniform(1, nd);
      Shape ns(sh.end() - k, sh.end());
      const int64_t m = numel(ns);
      Input x = s.input(sh, dt, {-3, 3});
      std::optional<Input> w, b;
      if (s.coin(0.7)) w = s.input(ns, dt, {0.5, 2});
      if (s.coin(0.7)) b = s.input(ns, dt, {-1, 1});
      Ref want{sh, std::vector<double>(numel(sh)), dt, std::vector<double>(numel(sh))};
      for (int64_t r = 0; m > 0 && r < numel(sh) / m; ++r) {
        double mu = 0, var = 0;
        for (int64_t j = 0; j < m; ++j) mu += x.ref.v[r * m + j];
        mu /= m;
        for (int64_t j = 0; j < m; ++j)
          var += (x.ref.v[r * m + j] - mu) * (x.ref.v[r * m + j] - mu);
        var /= m;  // biased, like PyTorch
        for (int64_t j = 0; j < m; ++j) {
          double y = (x.ref.v[r * m + j] - mu) / std::sqrt(var + 1e-5);
          // Conditioning: the rounding of the mean (a few ulps of |mu|, |x|) is scaled by
          // 1/sqrt(var + eps), up to 316x for a constant row; allow 50 ulps of it.
          double cond = (std::abs(x.ref.v[r * m + j]) + std::abs(mu)) / std::sqrt(var + 1e-5);
          if (w) {
            y *= w->ref.v[j];
            cond *= std::abs(w->ref.v[j]);
          }
          if (b) y += b->ref.v[j];
          want.v[r * m + j] = y;
          want.mag[r * m + j] = 50 * eps_of(dt) * cond / composite_tol(dt).rtol;
        }
      }
      run_case(
          describe("layer_norm", {&x}, str(ns) + (w ? " weight" : "") + (b ? " bias" : "")), [&] {
            expect_match(lt::layer_norm(x.t, ns, w ? w->t : lt::Tensor(), b ? b->t : lt::Tensor()),
                         want, composite_tol(dt), s.dev);
          });
    }
  }
}

// batch_norm in training (the batch's statistics per channel, dim 1), forward and backward (its
// closed-form gradient), and in evaluation (given running statistics), against float64 loops.
void sweep_batch_norm(Sweep& s) {
  const double eps = 1e-5;
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      const Shape sh = s.shape(trial, 2);
      const int64_t n = numel(sh), c = sh[1], per = c > 0 ? n / c : 0,
                    inner = numel(Shape(sh.begin() + 2, sh.end()));
      if (n > 0 && per < 2) continue;  // training needs 2 values per channel (an error)
      Input x = s.input(sh, dt, {-3, 3}), up = s.input(sh, dt, {-1, 1});
      Input w = s.input({c}, dt, {0.5, 2}), b = s.input({c}, dt, {-1, 1});
      Input rm = s.input({c}, dt, {-1, 1}), rv = s.input({c}, dt, {0.5, 2});
      auto ch = [&](int64_t i) { return i / inner % c; };
      std::vector<double> mu(c), rstd(c), sg(c), sgx(c), ag(c), agx(c);
      for (int64_t i = 0; i < n; ++i) mu[ch(i)] += x.ref.v[i] / per;
      std::vector<double> var(c);
      for (int64_t i = 0; i < n; ++i) var[ch(i)] += std::pow(x.ref.v[i] - mu[ch(i)], 2) / per;
      for (int64_t k = 0; k < c; ++k) rstd[k] = 1 / std::sqrt(var[k] + eps);
      Ref y{sh, std::vector<double>(n), dt, std::vector<double>(n)}, ye = y, dx = y;
      Ref dw{{c}, std::vector<double>(c), dt, std::vector<double>(c)}, db = dw;
      std::vector<double> xhat(n);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = ch(i);
        xhat[i] = (x.ref.v[i] - mu[k]) * rstd[k];
        const double g = up.ref.v[i];
        sg[k] += g, sgx[k] += g * xhat[i], ag[k] += std::abs(g), agx[k] += std::abs(g * xhat[i]);
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = ch(i);
        const double wk = w.ref.v[k], g = up.ref.v[i];
        // Conditioning as layer_norm's: the rounding of the mean, scaled by rstd; for dx also
        // the sums' (their |terms| over n), scaled by w * rstd.
        const double cond = (std::abs(x.ref.v[i]) + std::abs(mu[k])) * rstd[k];
        y.v[i] = xhat[i] * wk + b.ref.v[k];
        y.mag[i] = 50 * eps_of(dt) * cond * std::abs(wk) / composite_tol(dt).rtol;
        ye.v[i] = (x.ref.v[i] - rm.ref.v[k]) / std::sqrt(rv.ref.v[k] + eps) * wk + b.ref.v[k];
        dx.v[i] = wk * rstd[k] * (g - sg[k] / per - xhat[i] * sgx[k] / per);
        dx.mag[i] = 50 * eps_of(dt) / composite_tol(dt).rtol * std::abs(wk) * rstd[k] *
                    (std::abs(g) + ag[k] / per + (std::abs(xhat[i]) + cond) * agx[k] / per +
                     cond * std::abs(sgx[k]) / per);
      }
      for (int64_t k = 0; k < c; ++k) {
        dw.v[k] = sgx[k], db.v[k] = sg[k];
        dw.mag[k] = agx[k] * 50, db.mag[k] = ag[k];
      }
      run_case(describe("batch_norm", {&x, &up}), [&] {
        x.t.requires_grad_();
        w.t.requires_grad_();
        b.t.requires_grad_();
        lt::Tensor out = lt::batch_norm(x.t, w.t, b.t, {}, {}, true, 0.1, eps);
        out.backward(up.t);
        lt::mark_step();  // one graph for the output and the gradients
        expect_match(out, y, composite_tol(dt), s.dev);
        expect_match(x.t.grad(), dx, composite_tol(dt), s.dev);
        expect_match(w.t.grad(), dw, composite_tol(dt), s.dev);
        expect_match(b.t.grad(), db, composite_tol(dt), s.dev);
      });
      if (trial % 3 != 0) continue;  // evaluation is elementwise: fewer cases (compile time)
      run_case(describe("batch_norm eval", {&x}), [&] {
        expect_match(
            lt::batch_norm(x.t.detach(), w.t.detach(), b.t.detach(), rm.t, rv.t, false, 0.1, eps),
            ye, composite_tol(dt), s.dev);
      });
    }
  }
}

void sweep_activations(Sweep& s) {
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      Input x = s.input(s.shape(trial), dt, {-5, 5});
      Ref gelu{x.ref.shape, {}, dt}, gelu_tanh = gelu, silu = gelu;
      for (double v : x.ref.v) {
        gelu.v.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
        gelu_tanh.v.push_back(
            0.5 * v *
            (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v))));
        silu.v.push_back(v / (1 + std::exp(-v)));
      }
      run_case(describe("gelu/silu", {&x}), [&] {
        expect_match(lt::gelu(x.t), gelu, composite_tol(dt), s.dev);
        expect_match(x.t.gelu("tanh"), gelu_tanh, composite_tol(dt), s.dev);
        expect_match(lt::silu(x.t), silu, composite_tol(dt), s.dev);
      });
    }
  }
}

// erf's inverse in float64 by bisection on libm's erf (the reference for lt::erfinv).
double ref_erfinv(double y) {
  if (std::abs(y) >= 1) return y == 1 ? kInf : (y == -1 ? -kInf : kNaN);
  double lo = -7, hi = 7;
  for (int i = 0; i < 200 && lo < hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The elementwise math composites (src/api/math_composites.cpp) against libm in float64: random
// shapes and layouts (0-d, empty, strided, expanded), both float dtypes, broadcast operands, and
// the special values each must keep (signed zeros, infinities, NaN).
void sweep_math_composites(Sweep& s) {
  using T = const lt::Tensor&;
  struct Row {
    const char* name;
    lt::Tensor (*fn)(T);
    double (*ref)(double);
    Domain dom;
  };
  static const Row rows[] = {
      {"tan", [](T x) { return lt::tan(x); }, [](double v) { return std::tan(v); }, {-1.4, 1.4}},
      {"sinh", [](T x) { return x.sinh(); }, [](double v) { return std::sinh(v); }, {-6, 6}},
      {"cosh", [](T x) { return lt::cosh(x); }, [](double v) { return std::cosh(v); }, {-6, 6}},
      {"asinh", [](T x) { return x.asinh(); }, [](double v) { return std::asinh(v); }, {-40, 40}},
      {"acosh", [](T x) { return lt::acosh(x); }, [](double v) { return std::acosh(v); }, {1, 40}},
      {"atanh",
       [](T x) { return x.atanh(); },
       [](double v) { return std::atanh(v); },
       {-0.95, 0.95}},
      {"asin", [](T x) { return lt::asin(x); }, [](double v) { return std::asin(v); }, {-1, 1}},
      {"acos", [](T x) { return x.acos(); }, [](double v) { return std::acos(v); }, {-1, 1}},
      {"log2", [](T x) { return lt::log2(x); }, [](double v) { return std::log2(v); }, {0.01, 100}},
      {"log10", [](T x) { return x.log10(); }, [](double v) { return std::log10(v); }, {0.01, 100}},
      {"exp2", [](T x) { return lt::exp2(x); }, [](double v) { return std::exp2(v); }, {-20, 20}},
      {"trunc", [](T x) { return x.trunc(); }, [](double v) { return std::trunc(v); }, {-5, 5}},
      {"frac",
       [](T x) { return lt::frac(x); },
       [](double v) { return v - std::trunc(v); },
       {-5, 5}},
      {"nan_to_num", [](T x) { return x.nan_to_num(); }, [](double v) { return v; }, {-5, 5}},
      {"erfinv", [](T x) { return x.erfinv(); }, ref_erfinv, {-0.999, 0.999}},
  };
  for (const Row& row : rows) {
    for (Dtype dt : kFloatDtypes) {
      for (int trial = 0; trial < s.trials; ++trial) {
        Input x = s.input(s.shape(trial), dt, row.dom);
        Ref want{x.ref.shape, {}, dt};
        for (double v : x.ref.v) want.v.push_back(round_to(row.ref(v), dt));
        run_case(describe(row.name, {&x}),
                 [&] { expect_match(row.fn(x.t), want, composite_tol(dt), s.dev); });
      }
    }
  }
  // Binary and ternary composites, broadcast.
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      Shape out = s.shape(trial);
      Input a = s.input(trial < 3 ? out : s.bcast_operand(out), dt, {-3, 3});
      Input b = s.input(trial < 3 ? out : s.bcast_operand(out), dt, {-3, 3});
      Input w = s.input(trial < 3 ? out : s.bcast_operand(out), dt, {0, 1});
      const Shape ab = bcast(a.ref.shape, b.ref.shape), sh = bcast(ab, w.ref.shape);
      Ref at2{ab, {}, dt}, cs = at2, xl = at2, hv = at2, lx{ab, {}, kB}, lp{sh, {}, dt};
      for (int64_t i = 0; i < numel(ab); ++i) {
        Shape c = unravel(i, ab);
        const double x = a.ref.v[bcast_at(c, a.ref.shape)], y = b.ref.v[bcast_at(c, b.ref.shape)];
        at2.v.push_back(std::atan2(x, y));
        cs.v.push_back(std::copysign(x, y));
        xl.v.push_back(x == 0 ? 0.0 : x * std::log(std::abs(y)));
        hv.v.push_back(x == 0 ? y : (x > 0 ? 1.0 : 0.0));
        lx.v.push_back((x > 0.5) != (y > 0.5));
      }
      for (int64_t i = 0; i < numel(sh); ++i) {
        Shape c = unravel(i, sh);
        const double x = a.ref.v[bcast_at(c, a.ref.shape)], y = b.ref.v[bcast_at(c, b.ref.shape)],
                     t = w.ref.v[bcast_at(c, w.ref.shape)];
        lp.v.push_back(x + t * (y - x));
      }
      run_case(describe("atan2/copysign/xlogy/lerp/heaviside/logical_xor", {&a, &b, &w}), [&] {
        expect_match(lt::atan2(a.t, b.t), at2, composite_tol(dt), s.dev);
        expect_match(lt::copysign(a.t, b.t), cs, exact_tol(dt), s.dev);
        expect_match(lt::xlogy(a.t, lt::abs(b.t)), xl, composite_tol(dt), s.dev);
        expect_match(lt::lerp(a.t, b.t, w.t), lp, composite_tol(dt), s.dev);
        expect_match(lt::heaviside(a.t, b.t), hv, exact_tol(dt), s.dev);
        expect_match(lt::logical_xor(a.t > 0.5, b.t > 0.5), lx, exact_tol(kB), s.dev);
      });
    }
  }
  // Special values, float32 and float64, on this device.
  const double inf = kInf, nan = kNaN;
  for (Dtype dt : kFloatDtypes) {
    auto put1 = [&](std::vector<double> v) {
      return s.put(v, {static_cast<int64_t>(v.size())}, dt);
    };
    auto vals = [](const lt::Tensor& t) {
      return t.to("cpu").to(lt::kFloat64).to_vector<double>();
    };
    run_case(std::string("math composites, special values, ") + dtype_name(dt), [&] {
      lt::Tensor x = put1({-inf, -2.5, -0.0, 0.0, 1.5, inf, nan});
      EXPECT_EQ(lt::isnan(x).to("cpu").to_vector<bool>(),
                (std::vector<bool>{false, false, false, false, false, false, true}));
      EXPECT_EQ(x.isinf().to("cpu").to_vector<bool>(),
                (std::vector<bool>{true, false, false, false, false, true, false}));
      EXPECT_EQ(lt::isfinite(x).to("cpu").to_vector<bool>(),
                (std::vector<bool>{false, true, true, true, true, false, false}));
      const double big = dt == kF32 ? std::numeric_limits<float>::max() : 1.7976931348623157e308;
      std::vector<double> n2n = vals(lt::nan_to_num(x));
      EXPECT_EQ(n2n[0], -big);
      EXPECT_EQ(n2n[5], big);
      EXPECT_EQ(n2n[6], 0.0);
      std::vector<double> custom = vals(x.nan_to_num(-1.0, 7.0, -7.0));
      EXPECT_EQ(custom, (std::vector<double>{-7, -2.5, -0.0, 0.0, 1.5, 7, -1}));
      std::vector<double> tr = vals(lt::trunc(x));
      EXPECT_EQ(tr[1], -2.0);
      EXPECT_TRUE(std::isinf(tr[0]) && std::isnan(tr[6]));
      // copysign reads the sign of zeros.
      std::vector<double> cs = vals(lt::copysign(put1({1, 1, 1}), put1({-0.0, 0.0, -inf})));
      EXPECT_EQ(cs, (std::vector<double>{-1, 1, -1}));
      // atan2 in every quadrant and on the axes.
      std::vector<double> at =
          vals(lt::atan2(put1({1, 1, -1, -1, 0, 1, -1, 0}), put1({1, -1, -1, 1, -1, 0, 0, 0})));
      const std::vector<double> want_at = {
          std::atan2(1, 1),  std::atan2(1, -1), std::atan2(-1, -1), std::atan2(-1, 1),
          std::atan2(0, -1), std::atan2(1, 0),  std::atan2(-1, 0),  0.0};
      for (size_t i = 0; i < at.size(); ++i) EXPECT_NEAR(at[i], want_at[i], 1e-6) << i;
      // asinh/acosh of large arguments do not overflow; domains give NaN as libm.
      std::vector<double> h = vals(lt::asinh(put1({-1e30, 1e30})));
      EXPECT_NEAR(h[1], std::asinh(1e30), 1e-5 * std::asinh(1e30));
      EXPECT_NEAR(h[0], -std::asinh(1e30), 1e-5 * std::asinh(1e30));
      EXPECT_TRUE(std::isnan(vals(lt::acosh(put1({0.5})))[0]));
      EXPECT_TRUE(std::isnan(vals(lt::asin(put1({1.5})))[0]));
      EXPECT_EQ(vals(lt::atanh(put1({1.0})))[0], inf);
      std::vector<double> xl = vals(lt::xlogy(put1({0, 0, 2}), put1({0, nan, 1})));
      EXPECT_EQ(xl[0], 0.0);
      EXPECT_TRUE(std::isnan(xl[1]));
      EXPECT_EQ(xl[2], 0.0);
    });
  }
  // Integer inputs: float results in the default dtype; trunc keeps integers.
  run_case("math composites, integer inputs", [&] {
    lt::Tensor i = s.put({1, 4, 8}, {3}, kI64);
    expect_match(lt::log2(i), Ref{{3}, {0, 2, 3}, kF32}, composite_tol(kF32), s.dev);
    expect_match(lt::exp2(i), Ref{{3}, {2, 16, 256}, kF32}, composite_tol(kF32), s.dev);
    expect_match(lt::trunc(i), Ref{{3}, {1, 4, 8}, kI64}, exact_tol(kI64), s.dev);
    EXPECT_FALSE(lt::isinf(i).any().item<bool>());
    EXPECT_THROW(lt::frac(i), lt::Error);
    EXPECT_THROW(lt::heaviside(i, s.put({1}, {1}, kF32)), lt::Error);
  });
}

// mean, var, std, logsumexp, norm over dims (empty = all).
void sweep_statistics(Sweep& s) {
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      Shape sh = s.shape(trial);
      const int64_t nd = sh.size();
      Input x = s.input(sh, dt, {-3, 3});
      const bool full = trial % 3 == 0, keepdim = s.coin(), unbiased = s.coin(0.6);
      std::vector<int64_t> dims = full ? std::vector<int64_t>{} : rand_dims(s, nd);
      std::vector<int64_t> all(nd);
      std::iota(all.begin(), all.end(), 0);
      Groups g = reduce_groups(sh, full ? all : dims, keepdim);
      Ref mean{g.shape, {}, dt}, var = mean, sd = mean, lse = mean, n2 = mean, n1 = mean,
                                 ninf = mean, n3 = mean;
      for (const auto& m : g.members) {
        const double n = static_cast<double>(m.size());
        double mu = 0, ss = 0, mx = -kInf, se = 0, a1 = 0, a2 = 0, a3 = 0, amx = 0;
        for (int64_t i : m) mu += x.ref.v[i];
        mu /= n;
        for (int64_t i : m) {
          double v = x.ref.v[i];
          ss += (v - mu) * (v - mu);
          mx = std::max(mx, v);
          a1 += std::abs(v);
          a2 += v * v;
          a3 += std::pow(std::abs(v), 3);
          amx = std::max(amx, std::abs(v));
        }
        for (int64_t i : m) se += std::exp(x.ref.v[i] - mx);
        const double div =
            std::max(0.0, n - (unbiased ? 1 : 0));  // PyTorch: max(0, N - correction)
        mean.v.push_back(mu);
        var.v.push_back(ss / div);
        sd.v.push_back(std::sqrt(ss / div));
        lse.v.push_back(m.empty() ? -kInf : mx + std::log(se));
        n2.v.push_back(std::sqrt(a2));
        n1.v.push_back(a1);
        n3.v.push_back(std::cbrt(a3));
        ninf.v.push_back(amx);
      }
      run_case(describe("statistics", {&x}, full ? "all" : dims_str(dims, keepdim)), [&] {
        const Tol tol = composite_tol(dt);
        expect_match(lt::mean(x.t, dims, keepdim), mean, tol, s.dev);
        expect_match(lt::var(x.t, dims, unbiased, keepdim), var, tol, s.dev);
        expect_match(lt::std(x.t, dims, unbiased, keepdim), sd, tol, s.dev);
        expect_match(lt::norm(x.t, 2.0, dims, keepdim), n2, tol, s.dev);
        expect_match(lt::norm(x.t, 1.0, dims, keepdim), n1, tol, s.dev);
        expect_match(lt::norm(x.t, 3.0, dims, keepdim), n3, tol, s.dev);
        if (any_zero_reduced(sh, dims))  // PyTorch: the inf-norm has no identity
          EXPECT_THROW(lt::norm(x.t, kInf, dims, keepdim), lt::Error);
        else
          expect_match(lt::norm(x.t, kInf, dims, keepdim), ninf, tol, s.dev);
        if (!full) expect_match(lt::logsumexp(x.t, dims, keepdim), lse, tol, s.dev);
        if (full && !keepdim) {
          expect_match(x.t.mean(), mean, tol, s.dev);
          expect_match(x.t.var(unbiased), var, tol, s.dev);
          expect_match(lt::norm(x.t), n2, tol, s.dev);
        }
      });
    }
  }
  // logsumexp keeps -inf rows at -inf and promotes integers to float32.
  run_case("logsumexp -inf", [&] {
    lt::Tensor t = s.put({-kInf, -kInf, 0.0, std::log(3.0), kInf, 1.0}, {3, 2}, kF32);
    expect_match(lt::logsumexp(t, {1}), {{3}, {-kInf, std::log(4.0), kInf}, kF32},
                 composite_tol(kF32), s.dev);
    lt::Tensor i = s.put({1, 2, 3, 4}, {2, 2}, kI32);
    expect_match(
        lt::logsumexp(i, {0}, true),
        {{1, 2}, {std::log(std::exp(1) + std::exp(3)), std::log(std::exp(2) + std::exp(4))}, kF32},
        composite_tol(kF32), s.dev);
  });
  // PyTorch: mean of an integer tensor is an error (it does not promote).
  EXPECT_THROW(lt::mean(s.put({1, 2}, {2}, kI64)), lt::Error);
}

void sweep_losses(Sweep& s) {
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      const int64_t N = s.uniform(1, 4), C = s.uniform(1, 5);
      const bool one_d = trial % 5 == 4;
      Input x = s.input(one_d ? Shape{C} : Shape{N, C}, dt, {-3, 3});
      const int64_t rows = one_d ? 1 : N;
      Input t = s.input(one_d ? Shape{} : Shape{N}, s.coin(0.8) ? kI64 : kI32, {0, double(C - 1)});
      const double smooth = s.coin() ? 0.0 : 0.1 * s.uniform(1, 3);
      // log_softmax per row
      std::vector<double> lsm(rows * C);
      for (int64_t r = 0; r < rows; ++r) {
        double mx = -kInf, se = 0;
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, x.ref.v[r * C + c]);
        for (int64_t c = 0; c < C; ++c) se += std::exp(x.ref.v[r * C + c] - mx);
        for (int64_t c = 0; c < C; ++c) lsm[r * C + c] = x.ref.v[r * C + c] - mx - std::log(se);
      }
      double ce = 0, nll = 0;
      for (int64_t r = 0; r < rows; ++r) {
        int64_t tc = static_cast<int64_t>(t.ref.v[r]);
        double mean_lsm = 0;
        for (int64_t c = 0; c < C; ++c) mean_lsm += lsm[r * C + c] / C;
        ce += -(1 - smooth) * lsm[r * C + tc] - smooth * mean_lsm;
        nll += -x.ref.v[r * C + tc];
      }
      // probability targets
      Input p = s.input(x.ref.shape, dt, {0.1, 1});
      double pce = 0;
      for (int64_t r = 0; r < rows; ++r) {
        double tot = 0;
        for (int64_t c = 0; c < C; ++c) tot += p.ref.v[r * C + c];
        for (int64_t c = 0; c < C; ++c) p.ref.v[r * C + c] /= tot;
      }
      lt::Tensor pt = s.put(p.ref.v, p.ref.shape, dt);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < C; ++c)
          pce -= (round_to(p.ref.v[r * C + c], dt) * (1 - smooth) + smooth / C) * lsm[r * C + c];
      run_case(describe("losses", {&x, &t}, "smoothing " + std::to_string(smooth)), [&] {
        const Tol tol = composite_tol(dt);
        expect_match(lt::cross_entropy(x.t, t.t, smooth), {{}, {ce / rows}, dt}, tol, s.dev);
        expect_match(lt::nll_loss(x.t, t.t), {{}, {nll / rows}, dt}, tol, s.dev);
        expect_match(lt::cross_entropy(x.t, pt, smooth), {{}, {pce / rows}, dt}, tol, s.dev);
      });
      // mse_loss, with broadcasting
      Shape sh = s.shape(trial + 3, 1);
      Input a = s.input(sh, dt), b = s.input(s.bcast_operand(sh), dt);
      double se = 0;
      Shape os = bcast(sh, b.ref.shape);
      for (int64_t i = 0; i < numel(os); ++i) {
        Shape c = unravel(i, os);
        double d = a.ref.v[bcast_at(c, sh)] - b.ref.v[bcast_at(c, b.ref.shape)];
        se += d * d;
      }
      run_case(describe("mse_loss", {&a, &b}), [&] {
        expect_match(lt::mse_loss(a.t, b.t), {{}, {numel(os) ? se / numel(os) : kNaN}, dt},
                     composite_tol(dt), s.dev);
      });
    }
  }
}

void sweep_linear_embedding(Sweep& s) {
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      const int64_t in_f = s.uniform(1, 6), out_f = s.uniform(1, 5);
      Shape xs = s.random_shape(0, 2, 3);
      xs.push_back(in_f);
      Input x = s.input(xs, dt, {-2, 2}), w = s.input({out_f, in_f}, dt, {-1, 1});
      std::optional<Input> b;
      if (s.coin()) b = s.input({out_f}, dt, {-1, 1});
      Shape os(xs.begin(), xs.end() - 1);
      os.push_back(out_f);
      Ref want{os, {}, dt};
      for (int64_t r = 0; r < numel(os) / out_f; ++r)
        for (int64_t o = 0; o < out_f; ++o) {
          double acc = b ? b->ref.v[o] : 0.0, mag = std::abs(acc);
          for (int64_t i = 0; i < in_f; ++i) {
            double t = x.ref.v[r * in_f + i] * w.ref.v[o * in_f + i];
            acc += t;
            mag += std::abs(t);
          }
          want.v.push_back(acc);
          want.mag.push_back(mag);
        }
      run_case(describe("linear", {&x, &w}, b ? "bias" : ""), [&] {
        expect_match(lt::linear(x.t, w.t, b ? b->t : lt::Tensor()), want, reduce_tol(dt), s.dev);
      });

      const int64_t num = s.uniform(1, 6), dim = s.uniform(1, 4);
      Input table = s.input({num, dim}, dt);
      Input idx = index_input(s, s.random_shape(0, 2, 4), num);
      Shape es = idx.ref.shape;
      es.push_back(dim);
      Ref emb{es, {}, dt};
      for (double iv : idx.ref.v)
        for (int64_t j = 0; j < dim; ++j)
          emb.v.push_back(table.ref.v[static_cast<int64_t>(iv) * dim + j]);
      run_case(describe("embedding", {&idx, &table}),
               [&] { expect_match(lt::embedding(idx.t, table.t), emb, kExact, s.dev); });
    }
  }
}

void sweep_sdpa(Sweep& s) {
  for (Dtype dt : kFloatDtypes) {
    for (int trial = 0; trial < s.trials; ++trial) {
      const int64_t B = s.uniform(1, 2), L = s.uniform(1, 4), S = s.uniform(1, 5),
                    E = s.uniform(1, 4), Ev = s.uniform(1, 3);
      const int mode = trial % 4;  // 0 none, 1 bool mask, 2 float mask, 3 causal
      Input q = s.input({B, L, E}, dt, {-2, 2}), k = s.input({B, S, E}, dt, {-2, 2}),
            v = s.input({B, S, Ev}, dt, {-2, 2});
      Input mask;
      if (mode == 1) {
        mask = s.input({L, S}, kB);
        for (int64_t i = 0; i < L; ++i) mask.ref.v[i * S + i % S] = 1;  // no fully masked row
        mask.t = s.put(mask.ref.v, {L, S}, kB);
      } else if (mode == 2) {
        mask = s.input({L, S}, dt, {-1, 1});
      }
      Ref want{{B, L, Ev}, {}, dt};
      const double scale = 1 / std::sqrt(static_cast<double>(E));
      for (int64_t bi = 0; bi < B; ++bi)
        for (int64_t i = 0; i < L; ++i) {
          std::vector<double> sc(S);
          double mx = -kInf;
          for (int64_t j = 0; j < S; ++j) {
            double a = 0;
            for (int64_t e = 0; e < E; ++e)
              a += q.ref.v[(bi * L + i) * E + e] * k.ref.v[(bi * S + j) * E + e];
            a *= scale;
            if (mode == 1 && mask.ref.v[i * S + j] == 0) a = -kInf;
            if (mode == 2) a += mask.ref.v[i * S + j];
            if (mode == 3 && j > i) a = -kInf;
            sc[j] = a;
            mx = std::max(mx, a);
          }
          double tot = 0;
          for (double& a : sc) tot += (a = std::exp(a - mx));
          for (int64_t e = 0; e < Ev; ++e) {
            double acc = 0;
            for (int64_t j = 0; j < S; ++j) acc += sc[j] / tot * v.ref.v[(bi * S + j) * Ev + e];
            want.v.push_back(acc);
          }
        }
      run_case(
          describe("scaled_dot_product_attention", {&q, &k, &v}, "mode " + std::to_string(mode)),
          [&] {
            lt::Tensor y = lt::scaled_dot_product_attention(
                q.t, k.t, v.t, mode == 1 || mode == 2 ? mask.t : lt::Tensor(), 0.0, mode == 3);
            expect_match(y, want, composite_tol(dt), s.dev);
          });
    }
  }
}

void sweep_split_chunk_repeat(Sweep& s) {
  for (int trial = 0; trial < s.trials; ++trial) {
    Shape sh = s.shape(trial, 1);
    const int64_t nd = sh.size();
    Input x = s.input(sh, s.pick(kAllDtypes));
    const int64_t dim = s.uniform(-nd, nd - 1), d = wrap(dim, nd), n = sh[d];
    auto piece = [&](int64_t from, int64_t len) {
      Shape os = sh;
      os[d] = len;
      Ref r{os, {}, x.ref.dtype};
      for (int64_t i = 0; i < numel(os); ++i) {
        Shape c = unravel(i, os);
        c[d] += from;
        r.v.push_back(x.ref.v[ravel(c, sh)]);
      }
      return r;
    };
    const int64_t size = s.uniform(1, 3), chunks = s.uniform(1, 4);
    run_case(describe("split/chunk", {&x}, "dim " + std::to_string(dim)), [&] {
      std::vector<lt::Tensor> parts = lt::split(x.t, size, dim);
      // PyTorch: ceil(n / size) pieces, the last one shorter; one empty piece for n == 0.
      ASSERT_EQ(static_cast<int64_t>(parts.size()), n == 0 ? 1 : (n + size - 1) / size);
      for (size_t p = 0; p < parts.size(); ++p) {
        int64_t from = static_cast<int64_t>(p) * size;
        expect_match(parts[p], piece(from, std::min(size, n - from)), kExact, s.dev);
      }
      // chunk: pieces of ceil(n / chunks).
      std::vector<lt::Tensor> cs = x.t.chunk(chunks, dim);
      const int64_t per = (n + chunks - 1) / chunks;
      ASSERT_EQ(static_cast<int64_t>(cs.size()), n == 0 ? 1 : (n + per - 1) / per);
      for (size_t p = 0; p < cs.size(); ++p) {
        int64_t from = static_cast<int64_t>(p) * per;
        expect_match(cs[p], piece(from, n == 0 ? 0 : std::min(per, n - from)), kExact, s.dev);
      }
    });
  }
  for (int trial = 0; trial < s.trials; ++trial) {
    Shape sh = s.shape(trial, 0, 3, 3);
    const int64_t nd = sh.size();
    Input x = s.input(sh, s.pick(kAllDtypes));
    std::vector<int64_t> reps(nd + s.uniform(0, 2));
    for (int64_t& r : reps) r = s.coin(0.1) ? 0 : s.uniform(1, 3);
    const int64_t off = reps.size() - nd;
    Shape os(reps.size());
    for (size_t i = 0; i < reps.size(); ++i)
      os[i] = reps[i] * (static_cast<int64_t>(i) < off ? 1 : sh[i - off]);
    Ref want{os, {}, x.ref.dtype};
    for (int64_t i = 0; i < numel(os); ++i) {
      Shape c = unravel(i, os), ic(nd);
      for (int64_t j = 0; j < nd; ++j) ic[j] = c[j + off] % sh[j];
      want.v.push_back(x.ref.v[ravel(ic, sh)]);
    }
    run_case(describe("repeat", {&x}, str(reps)),
             [&] { expect_match(x.t.repeat(reps), want, kExact, s.dev); });
  }
}

// ======================================================== in-place writes through views

// Where each element of a view lives in its base (row-major base index per view element).
struct ViewMap {
  Shape shape;
  std::vector<int64_t> at;
};
ViewMap map_view(const ViewMap& m, const Shape& shape,
                 const std::function<Shape(const Shape&)>& src) {
  ViewMap r{shape, {}};
  for (int64_t i = 0; i < numel(shape); ++i)
    r.at.push_back(m.at[ravel(src(unravel(i, shape)), m.shape)]);
  return r;
}

// In-place ops on views must write into the base (on the lazy device a write through a slice is
// recorded as slice_scatter of the base; on cpu it writes the shared storage).
void sweep_write_through_views(Sweep& s) {
  for (int trial = 0; trial < 2 * s.trials; ++trial) {
    Shape sh = s.shape(trial + 3, 1);
    Dtype dt = s.pick(kNumericDtypes);
    Input base =
        s.input(sh, dt, {-3, 3},
                s.pick(std::vector<Layout>{Layout::kContig, Layout::kPermuted, Layout::kStrided}));
    ViewMap m{sh, std::vector<int64_t>(numel(sh))};
    std::iota(m.at.begin(), m.at.end(), 0);
    lt::Tensor v = base.t;
    std::string chain;
    const int steps = static_cast<int>(s.uniform(1, 3));
    for (int k = 0; k < steps; ++k) {
      const int64_t nd = m.shape.size();
      const int kind = k == 0 || nd == 0 ? 0 : static_cast<int>(s.uniform(0, 3));
      if (nd == 0) break;
      if (kind == 0) {  // slice with a step
        const int64_t d = s.uniform(0, nd - 1), n = m.shape[d];
        const int64_t start = s.uniform(0, n), step = s.uniform(1, 3);
        const int64_t end = s.uniform(start, n), len = (end - start + step - 1) / step;
        Shape os = m.shape;
        os[d] = len;
        m = map_view(m, os, [&](const Shape& c) {
          Shape ic = c;
          ic[d] = start + c[d] * step;
          return ic;
        });
        v = v.slice(d, start, end, step);
        chain += ".slice(" + std::to_string(d) + ", " + std::to_string(start) + ", " +
                 std::to_string(end) + ", " + std::to_string(step) + ")";
      } else if (kind == 1) {  // permute
        std::vector<int64_t> p = s.perm(nd);
        Shape os(nd);
        for (int64_t j = 0; j < nd; ++j) os[j] = m.shape[p[j]];
        m = map_view(m, os, [&](const Shape& c) {
          Shape ic(nd);
          for (int64_t j = 0; j < nd; ++j) ic[p[j]] = c[j];
          return ic;
        });
        v = v.permute(p);
        chain += ".permute(" + str(p) + ")";
      } else if (kind == 2 && m.shape[0] > 0) {  // select
        const int64_t i = s.uniform(0, m.shape[0] - 1);
        Shape os(m.shape.begin() + 1, m.shape.end());
        m = map_view(m, os, [&](const Shape& c) {
          Shape ic = c;
          ic.insert(ic.begin(), i);
          return ic;
        });
        v = v.select(0, i);
        chain += ".select(0, " + std::to_string(i) + ")";
      } else {  // unsqueeze (a view whatever the strides)
        Shape os = m.shape;
        os.push_back(1);
        m.shape = os;
        v = v.unsqueeze(-1);
        chain += ".unsqueeze(-1)";
      }
    }
    const int op = static_cast<int>(s.uniform(0, 4));
    Input src = s.input(s.bcast_operand(m.shape), op == 0 ? s.pick(kNumericDtypes) : dt, {-3, 3});
    const double sv = is_float(dt) ? 0.5 * s.uniform(-5, 5) : static_cast<double>(s.uniform(-3, 3));
    const lt::Scalar scalar = is_float(dt) ? lt::Scalar(sv) : lt::Scalar(static_cast<int64_t>(sv));
    Ref want = base.ref, view{m.shape, {}, dt};
    for (int64_t i = 0; i < numel(m.shape); ++i) {
      double& e = want.v[m.at[i]];
      double x = round_to(src.ref.v[bcast_at(unravel(i, m.shape), src.ref.shape)], dt);
      switch (op) {
        case 0:
          e = x;
          break;
        case 1:
          e = e + x;
          break;
        case 2:
          e = e * sv;
          break;
        case 3:
          e = sv;
          break;
        default:
          e = 0;
      }
      view.v.push_back(e);
    }
    static const char* const kOps[] = {"copy_", "add_", "mul_", "fill_", "zero_"};
    run_case(describe("write through", {&base, &src}, chain + "." + kOps[op]), [&] {
      switch (op) {
        case 0:
          v.copy_(src.t);
          break;
        case 1:
          v.add_(src.t);
          break;
        case 2:
          v.mul_(scalar);
          break;
        case 3:
          v.fill_(scalar);
          break;
        default:
          v.zero_();
      }
      expect_match(v, view, arith_tol(dt), s.dev);
      expect_match(base.t, want, arith_tol(dt), s.dev);
    });
  }
  if (s.dev.is_lazy()) s.cover("slice_scatter");
}

// ========================================================================= large tensors

// Tensors past the kernels' parallel grain (32768 elements), on an odd thread count so that
// chunk boundaries fall inside rows: the threaded split of elementwise loops and reductions.
class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(lt::get_num_threads()) { lt::set_num_threads(n); }
  ~ThreadCount() { lt::set_num_threads(saved_); }

 private:
  int saved_;
};

void sweep_large(Sweep& s) {
  ThreadCount threads(3);
  for (int trial = 0; trial < std::max(2, s.trials / 12); ++trial) {
    Shape sh = {s.uniform(2, 4), s.uniform(150, 260), s.uniform(60, 140)};
    Dtype dt = s.pick(kAllDtypes);
    Input a = s.input(sh, dt, {-3, 3}, trial == 0 ? Layout::kContig : s.layout());
    Input b = s.input(s.bcast_operand(sh), dt == kB ? kI32 : dt, {-3, 3});
    Input c = s.input(s.bcast_operand(sh), kB);
    const int64_t n = numel(sh);
    Dtype sum_t = is_float(dt) ? dt : kI64, add_t = promote(dt, b.ref.dtype);
    Ref add{sh, {}, add_t}, lt_{sh, {}, kB}, wh{sh, {}, add_t}, ab{sh, {}, dt == kB ? kB : dt},
        cast{sh, {}, kF64};
    for (int64_t i = 0; i < n; ++i) {
      Shape co = unravel(i, sh);
      double x = a.ref.v[i], y = b.ref.v[bcast_at(co, b.ref.shape)];
      add.v.push_back(finish(x + y, add_t));
      lt_.v.push_back(x < y);
      wh.v.push_back(c.ref.v[bcast_at(co, c.ref.shape)] != 0 ? x : y);
      ab.v.push_back(std::abs(x));
      cast.v.push_back(x);
    }
    run_case(describe("large elementwise", {&a, &b, &c}), [&] {
      expect_match(a.t + b.t, add, arith_tol(add_t), s.dev);
      expect_match(a.t < b.t, lt_, kExact, s.dev);
      expect_match(lt::where(c.t, a.t, b.t), wh, kExact, s.dev);
      if (dt != kB) expect_match(lt::abs(a.t), ab, kExact, s.dev);
      expect_match(a.t.to(kF64), cast, kExact, s.dev);
      expect_match(a.t.clone(), a.ref, kExact, s.dev);
    });
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}}) {
      Groups g = reduce_groups(sh, dims, false);
      Ref sum{g.shape, {}, sum_t}, mx{g.shape, {}, dt};
      for (const auto& m : g.members) {
        double acc = 0, mag = 0, best = -kInf;
        for (int64_t i : m) {
          acc += a.ref.v[i];
          mag += std::abs(a.ref.v[i]);
          best = std::max(best, a.ref.v[i]);
        }
        sum.v.push_back(acc);
        sum.mag.push_back(mag);
        mx.v.push_back(best);
      }
      run_case(describe("large reduction", {&a}, dims_str(dims, false)), [&] {
        expect_match(lt::sum(a.t, dims), sum, reduce_tol(sum_t), s.dev);
        expect_match(lt::amax(a.t, dims), mx, kExact, s.dev);
      });
    }
    if (dt != kB) {
      Groups g = reduce_groups(sh, {-1}, true);
      Ref idx{g.shape, {}, kI64};
      for (const auto& m : g.members) {
        int64_t best = 0;
        for (size_t k = 1; k < m.size(); ++k)
          if (a.ref.v[m[k]] < a.ref.v[m[best]]) best = static_cast<int64_t>(k);
        idx.v.push_back(static_cast<double>(best));
      }
      run_case(describe("large argmin", {&a}),
               [&] { expect_match(lt::argmin(a.t, -1, true), idx, kExact, s.dev); });
    }
  }
  // A float matmul and pooling big enough for threaded BLAS and pooling loops.
  for (Dtype dt : kFloatDtypes) {
    Input a = s.input({s.uniform(200, 300), s.uniform(100, 200)}, dt, {-1, 1});
    Input b = s.input({a.ref.shape[1], s.uniform(100, 160)}, dt, {-1, 1});
    run_case(describe("large matmul", {&a, &b}), [&] {
      expect_match(lt::matmul(a.t, b.t), ref_matmul(a.ref, b.ref), reduce_tol(dt), s.dev);
    });
    Input x = s.input({4, 6, 40, 50}, dt, {-3, 3});
    Ref want{{4, 6, 20, 25}, {}, dt};
    for (int64_t p = 0; p < 24; ++p)
      for (int64_t i = 0; i < 20; ++i)
        for (int64_t j = 0; j < 25; ++j) {
          double m = -kInf;
          for (int64_t di = 0; di < 2; ++di)
            for (int64_t dj = 0; dj < 2; ++dj)
              m = std::max(m, x.ref.v[(p * 40 + 2 * i + di) * 50 + 2 * j + dj]);
          want.v.push_back(m);
        }
    run_case(describe("large max_pool2d", {&x}), [&] {
      expect_match(lt::max_pool2d(x.t, {2, 2}), want, kExact, s.dev);
    });
  }
}

// all_reduce in a world of one (lt::dist with rank 0 of 1, no peers): every reduce op is the
// identity, so this checks the registry op's plumbing (shape rule, eager kernel through the dist
// hook, a library step on the lazy backends, in-place write-back through views). The reduction
// across real processes is tested in test_dist.cpp.
void sweep_all_reduce(Sweep& s) {
  lt::dist::InitOptions one;
  one.rank = 0;
  one.world_size = 1;
  lt::dist::ProcessGroupGuard pg(one);
  const std::vector<lt::dist::ReduceOp> ops = {lt::dist::ReduceOp::Sum, lt::dist::ReduceOp::Mean,
                                               lt::dist::ReduceOp::Max, lt::dist::ReduceOp::Min,
                                               lt::dist::ReduceOp::Product};
  for (int trial = 0; trial < s.trials; ++trial) {
    const lt::dist::ReduceOp op = s.pick(ops);
    const bool mean = op == lt::dist::ReduceOp::Mean;
    Input x = s.input(s.shape(trial), s.pick(mean ? kFloatDtypes : kNumericDtypes));
    run_case(describe("all_reduce", {&x}, "op " + std::to_string(static_cast<int>(op))), [&] {
      // An expanded input is not writable in place: reduce a copy of it then.
      lt::Tensor t = x.layout == Layout::kExpanded ? x.t.clone() : x.t;
      lt::dist::all_reduce(t, op);
      expect_match(t, x.ref, kExact, s.dev);
    });
  }
  s.cover("all_reduce");
}

// ============================================================================ the suite

using SweepFn = void (*)(Sweep&);
const std::vector<std::pair<std::string, SweepFn>>& all_sweeps() {
  static const std::vector<std::pair<std::string, SweepFn>> v = {
      {"Unary", sweep_unary},
      {"SpecialValues", sweep_special_values},
      {"Cast", sweep_cast},
      {"Binary", sweep_binary},
      {"ScalarBinary", sweep_scalar_binary},
      {"Where", sweep_where},
      {"SumProd", sweep_sum_prod},
      {"ExactReductions", sweep_exact_reductions},
      {"ArgmaxArgmin", sweep_arg},
      {"Reshape", sweep_reshape},
      {"Permute", sweep_permute},
      {"Expand", sweep_expand},
      {"Slice", sweep_slice},
      {"Copy", sweep_copy},
      {"CatStack", sweep_cat},
      {"Pad", sweep_pad},
      {"Matmul", sweep_matmul},
      {"Conv2d", sweep_conv2d},
      {"Pool2d", sweep_pool2d},
      {"ConvPoolBackward", sweep_conv_pool_backward},
      {"Gather", sweep_gather},
      {"ScatterAdd", sweep_scatter_add},
      {"Scatter", sweep_scatter},
      {"IndexSelect", sweep_index_select},
      {"Sort", sweep_sort},
      {"Creation", sweep_creation},
      {"Random", sweep_random},
      {"Softmax", sweep_softmax},
      {"LayerNorm", sweep_layer_norm},
      {"BatchNorm", sweep_batch_norm},
      {"Activations", sweep_activations},
      {"MathComposites", sweep_math_composites},
      {"Statistics", sweep_statistics},
      {"Losses", sweep_losses},
      {"LinearEmbedding", sweep_linear_embedding},
      {"Attention", sweep_sdpa},
      {"SplitChunkRepeat", sweep_split_chunk_repeat},
      {"WriteThroughViews", sweep_write_through_views},
      {"LargeTensors", sweep_large},
      {"AllReduce", sweep_all_reduce},
  };
  return v;
}

uint32_t seed_of(const std::string& s) {
  uint32_t h = 2166136261u;  // FNV-1a: a fixed, distinct seed per sweep
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

class OpSweep : public ::testing::TestWithParam<lt::Device> {
 protected:
  void run(const std::string& sweep) {
    for (const auto& [name, fn] : all_sweeps()) {
      if (name != sweep) continue;
      Sweep s(GetParam(), kTrials, seed_of(name));
      const int64_t before = g_cases;
      const int64_t fallbacks = lt::metrics::counter("CompileFallback");
      fn(s);
      RecordProperty("cases", static_cast<int>(g_cases - before));
      // On the MLIR backend no case may send its whole graph to interp: an op without a
      // lowering is a library step (LT_MLIR_DISABLE_LOWERING tests that path).
      EXPECT_EQ(lt::metrics::counter("CompileFallback"), fallbacks) << lt::metrics::report();
      return;
    }
    FAIL() << "no sweep named " << sweep;
  }
};

#define LT_SWEEP_TEST(Name) \
  TEST_P(OpSweep, Name) { run(#Name); }

LT_SWEEP_TEST(Unary)
LT_SWEEP_TEST(SpecialValues)
LT_SWEEP_TEST(Cast)
LT_SWEEP_TEST(Binary)
LT_SWEEP_TEST(ScalarBinary)
LT_SWEEP_TEST(Where)
LT_SWEEP_TEST(SumProd)
LT_SWEEP_TEST(ExactReductions)
LT_SWEEP_TEST(ArgmaxArgmin)
LT_SWEEP_TEST(Reshape)
LT_SWEEP_TEST(Permute)
LT_SWEEP_TEST(Expand)
LT_SWEEP_TEST(Slice)
LT_SWEEP_TEST(Copy)
LT_SWEEP_TEST(CatStack)
LT_SWEEP_TEST(Pad)
LT_SWEEP_TEST(Matmul)
LT_SWEEP_TEST(Conv2d)
LT_SWEEP_TEST(Pool2d)
LT_SWEEP_TEST(ConvPoolBackward)
LT_SWEEP_TEST(Gather)
LT_SWEEP_TEST(ScatterAdd)
LT_SWEEP_TEST(Scatter)
LT_SWEEP_TEST(IndexSelect)
LT_SWEEP_TEST(Sort)
LT_SWEEP_TEST(Creation)
LT_SWEEP_TEST(Random)
LT_SWEEP_TEST(Softmax)
LT_SWEEP_TEST(LayerNorm)
LT_SWEEP_TEST(BatchNorm)
LT_SWEEP_TEST(Activations)
LT_SWEEP_TEST(MathComposites)
LT_SWEEP_TEST(Statistics)
LT_SWEEP_TEST(Losses)
LT_SWEEP_TEST(LinearEmbedding)
LT_SWEEP_TEST(Attention)
LT_SWEEP_TEST(SplitChunkRepeat)
LT_SWEEP_TEST(WriteThroughViews)
LT_SWEEP_TEST(LargeTensors)
LT_SWEEP_TEST(AllReduce)

// Registry ops that no public API function records on this device, each with the reason.
// Keep this list short and honest: an op leaves it as soon as a sweep can reach it.
std::set<std::string> unreachable_on(const lt::Device& dev) {
  std::set<std::string> r;
  // slice_scatter only rebuilds a lazy base after an in-place write through a slice view; on cpu
  // that write goes straight to the shared storage (sweep_write_through_views checks both).
  if (dev.is_cpu()) r.insert("slice_scatter");
  return r;
}

// The unary table's gradient column: every row with a gradient domain passes a float64
// finite-difference gradcheck (2x3, 0-d and a non-contiguous 3x2 transpose) on this device, and
// the rows with and without one agree with ops.def's differentiable column.
TEST_P(OpSweep, UnaryGradients) {
  std::mt19937 gen(777u);
  auto draw = [&](const GradDomain& g, std::vector<int64_t> sizes) {
    lt_test::In in{std::vector<double>(lt_test::numel_of(sizes)), sizes};
    std::uniform_real_distribution<double> d(g.lo, g.hi);
    std::bernoulli_distribution coin(0.5);
    for (double& v : in.v) v = g.away0 && coin(gen) ? -d(gen) : d(gen);
    return in;
  };
  for (const UnaryOp& op : unary_ops()) {
    bool registered = false;
    for (int k = 0; k < lt::kNumOps; ++k) {
      if (std::string(lt::op_name(static_cast<lt::OpKind>(k))) != op.name) continue;
      registered = true;
      EXPECT_EQ(op.grad.hi > op.grad.lo, lt::differentiable(static_cast<lt::OpKind>(k)))
          << op.name << ": the table's gradient domain disagrees with ops.def's gradient column";
    }
    EXPECT_TRUE(registered) << op.name << " is not a registry op";
    if (op.grad.hi <= op.grad.lo) continue;
    const UFn fn = op.fn;
    lt_test::gradcheck(op.name, [fn](lt_test::Ts x) { return fn(x[0]); }, {draw(op.grad, {2, 3})},
                       GetParam());
    lt_test::gradcheck(std::string(op.name) + " 0-d", [fn](lt_test::Ts x) { return fn(x[0]); },
                       {draw(op.grad, {})}, GetParam());
    lt_test::gradcheck(std::string(op.name) + " transposed",
                       [fn](lt_test::Ts x) { return fn(x[0].t()); }, {draw(op.grad, {2, 3})},
                       GetParam());
  }
}

// Every registry op is exercised by the sweep. CTest runs each test in its own process, so this
// test runs the whole sweep itself (two trials per case) and collects the op names it reached.
TEST_P(OpSweep, CoversEveryRegistryOp) {
  std::set<std::string> covered;
  for (const auto& [name, fn] : all_sweeps()) {
    Sweep s(GetParam(), 2, seed_of(name));
    fn(s);
    covered.insert(s.covered.begin(), s.covered.end());
  }
  std::set<std::string> registry;
  for (int i = 0; i < lt::kNumOps; ++i) registry.insert(lt::op_name(static_cast<lt::OpKind>(i)));
  EXPECT_EQ(registry.size(), static_cast<size_t>(lt::kNumOps)) << "duplicate op names";
  const std::set<std::string> unreachable = unreachable_on(GetParam());
  for (const std::string& op : unreachable)
    EXPECT_TRUE(registry.count(op))
        << "\"" << op << "\" is listed as unreachable but not in ops.def";
  for (const std::string& op : registry)
    EXPECT_TRUE(covered.count(op) || unreachable.count(op))
        << "registry op \"" << op << "\" is not exercised by the sweep";
  for (const std::string& op : covered)
    EXPECT_TRUE(registry.count(op)) << "the sweep claims \"" << op << "\", which is not in ops.def";
}

// The lazy device will join this list and reuse the whole sweep.
INSTANTIATE_TEST_SUITE_P(Devices, OpSweep, ::testing::Values(lt::Device("cpu"), lt::Device("lazy")),
                         [](const ::testing::TestParamInfo<lt::Device>& p) {
                           std::string n = p.param.str();  // "lazy:0" -> "lazy_0"
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
