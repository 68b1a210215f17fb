// Compiled math against eager, densely over the whole float range: every op the MLIR backend
// lowers to a math-dialect function (polynomial approximations or libm calls), on about a
// million float32 inputs spread evenly over the 2^32 bit patterns (every 4093rd, plus both
// zeros, the infinities and the edges of each function's domain), and as many float64 ones
// over the 2^64 patterns. The distance is counted in ulps of the dtype (the number of
// representable values between the two results); NaN must match NaN. One bound per op for both
// dtypes: the measured maximum; docs/ARCHITECTURE.md states them.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

std::vector<float> dense_floats() {
  std::vector<float> v;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 4093) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof f);
    v.push_back(f);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.0f, -0.0f, inf, -inf, 1.0f, -1.0f, 0.5f, -0.5f, 88.7f, -87.3f, 9.0f, -9.0f,
                  1e-7f, -1e-7f, std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(), std::numeric_limits<float>::max()})
    v.push_back(f);
  return v;
}

// About a million float64 inputs spread evenly over the 2^64 bit patterns, and the same edges.
std::vector<double> dense_doubles() {
  std::vector<double> v;
  for (uint64_t i = 0; i < (uint64_t(1) << 20); ++i) {
    uint64_t b = i * (uint64_t(1) << 44) + i * 2654435761u;  // odd offsets: not only round bits
    double d;
    std::memcpy(&d, &b, sizeof d);
    v.push_back(d);
  }
  for (float f : dense_floats()) v.push_back(f);  // the float32 set, edges included
  for (double d : {709.7, -708.4, -745.0, std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::min(), std::numeric_limits<double>::max()})
    v.push_back(d);
  return v;
}

int64_t ulps64(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  if (a == b) return 0;
  auto key = [](double f) {
    int64_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? -(i & INT64_MAX) : i;
  };
  const int64_t ka = key(a), kb = key(b);
  return ka > kb ? ka - kb : kb - ka;  // |ka - kb| < 2^63: both keys are within +-2^63 - 1
}

// Distance in float32 ulps between a and b: 0 when both are NaN or both are the same infinity.
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  if (a == b) return 0;  // also +0 == -0
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : static_cast<int64_t>(i);
  };
  return std::llabs(key(a) - key(b));
}

struct MathOp {
  const char* name;
  lt::Tensor (*fn)(const lt::Tensor&);
  int64_t max_ulps;  // the bound this test enforces (measured maximum, rounded up)
};

const std::vector<MathOp>& math_ops() {
  static const std::vector<MathOp> ops = {
      {"exp", [](const lt::Tensor& t) { return t.exp(); }, 4},
      {"expm1", [](const lt::Tensor& t) { return t.expm1(); }, 4},
      {"log", [](const lt::Tensor& t) { return t.log(); }, 2},
      {"log1p", [](const lt::Tensor& t) { return t.log1p(); }, 2},
      {"sqrt", [](const lt::Tensor& t) { return t.sqrt(); }, 0},
      {"rsqrt", [](const lt::Tensor& t) { return t.rsqrt(); }, 1},
      {"sin", [](const lt::Tensor& t) { return t.sin(); }, 1},
      {"cos", [](const lt::Tensor& t) { return t.cos(); }, 1},
      {"tanh", [](const lt::Tensor& t) { return t.tanh(); }, 4},
      {"sigmoid", [](const lt::Tensor& t) { return t.sigmoid(); }, 2},
      {"erf", [](const lt::Tensor& t) { return t.erf(); }, 4},
      {"erfc", [](const lt::Tensor& t) { return t.erfc(); }, 1},  // libm on both
      {"atan", [](const lt::Tensor& t) { return t.atan(); }, 1},
      {"reciprocal", [](const lt::Tensor& t) { return t.reciprocal(); }, 0},
  };
  return ops;
}

class MathUlp : public ::testing::TestWithParam<MathOp> {};

// Runs op on xs on cpu and on the lazy device (mlir); returns the worst distance and where.
template <typename T, typename Ulps>
void check_op(const MathOp& op, const std::vector<T>& xs, Ulps ulps_of, const char* dtype) {
  lt::Tensor x = lt::tensor(xs, {static_cast<int64_t>(xs.size())});
  const std::vector<T> want = op.fn(x).template to_vector<T>();
  lt::Tensor xl = x.to(lt::Device("lazy"));
  lt::mark_step();
  lt::metrics::reset();
  const std::vector<T> got = op.fn(xl).template to_vector<T>();
  EXPECT_EQ(lt::metrics::counter("CompileFallback"), 0) << lt::metrics::report();
  EXPECT_GT(lt::metrics::counter("MlirClusters"), 0) << lt::metrics::report();
  ASSERT_EQ(got.size(), want.size());
  int64_t worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t d = ulps_of(got[i], want[i]);
    if (d > worst) worst = d, at = i;
  }
  std::printf("%-10s %s max %lld ulp (x = %.17g: eager %.17g, compiled %.17g) over %zu inputs\n",
              op.name, dtype, static_cast<long long>(worst), static_cast<double>(xs[at]),
              static_cast<double>(want[at]), static_cast<double>(got[at]), xs.size());
  EXPECT_LE(worst, op.max_ulps) << op.name << " " << dtype << " at x = " << xs[at]
                                << ": eager " << want[at] << ", compiled " << got[at];
}

TEST_P(MathUlp, CompiledWithinBoundOfEager) {
  const std::string before = lt::lazy_backend();
  lt::set_lazy_backend("mlir");
  check_op(GetParam(), dense_floats(), ulps, "f32");
  check_op(GetParam(), dense_doubles(), ulps64, "f64");
  lt::set_lazy_backend(before);
}

// Every 8th float in [lo, hi] and its negation.
std::vector<float> every_8th_float(float lo, float hi) {
  std::vector<float> xs;
  for (float v = lo; v <= hi;) {
    xs.push_back(v);
    xs.push_back(-v);
    for (int i = 0; i < 8; ++i) v = std::nextafter(v, hi + 1);
  }
  return xs;
}

// f(xs) on cpu and on the lazy device.
template <typename F>
std::pair<std::vector<float>, std::vector<float>> eager_and_lazy(const std::vector<float>& xs,
                                                                 F f) {
  lt::Tensor x = lt::tensor(xs, {static_cast<int64_t>(xs.size())});
  return {f(x).template to_vector<float>(),
          f(x.to(lt::Device("lazy"))).template to_vector<float>()};
}

// float32 tanh where it nears +-1: MLIR's approximation returned exactly 1 from 7.905 on, where
// libm still gives 1 - 2.4e-7 at 8, so 1 - tanh(x) was 0 on lazy (the fuzzer's find). Every
// 8th float in [6.5, 9.5] and its negation, checked as tanh and as 1 - |tanh|.
TEST(MathUlp, TanhNearSaturationFollowsEager) {
  const std::string before = lt::lazy_backend();
  lt::set_lazy_backend("mlir");
  const std::vector<float> xs = every_8th_float(6.5f, 9.5f);
  check_op({"tanh", [](const lt::Tensor& t) { return t.tanh(); }, 2}, xs, ulps, "f32");
  const auto [want, got] =
      eager_and_lazy(xs, [](const lt::Tensor& t) { return 1.0f - t.tanh().abs(); });
  for (size_t i = 0; i < xs.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1.5e-7f) << "1 - |tanh(" << xs[i] << ")|";
  lt::set_lazy_backend(before);
}

// float32 erf where it nears +-1: MLIR's approximation returned exactly -1 at -3.8007 on the
// AVX2 path, where libm gives -0.99999994, so gelu's x (1 + erf(x / sqrt 2)) was 0 on lazy and
// -2.6e-7 on eager (the fuzzer, seed 49100000). Every 8th float in [1.5, 4.5] and its negation:
// erf within 1 ulp, 1 - |erf| zero exactly where eager's is, and gelu there.
TEST(MathUlp, ErfNearSaturationFollowsEager) {
  const std::string before = lt::lazy_backend();
  lt::set_lazy_backend("mlir");
  const std::vector<float> xs = every_8th_float(1.5f, 4.5f);
  check_op({"erf", [](const lt::Tensor& t) { return t.erf(); }, 1}, xs, ulps, "f32");
  const auto [want, got] =
      eager_and_lazy(xs, [](const lt::Tensor& t) { return 1.0f - t.erf().abs(); });
  for (size_t i = 0; i < xs.size(); ++i)
    ASSERT_EQ(got[i] == 0, want[i] == 0)
        << "1 - |erf(" << xs[i] << ")|: eager " << want[i] << ", compiled " << got[i];
  // gelu's negative tail (x = -3 - 2.375 as the fuzzer wrote it).
  const auto [ge, gl] =
      eager_and_lazy({-5.375f, -5.0f, -4.5f}, [](const lt::Tensor& t) { return t.gelu(); });
  for (size_t i = 0; i < ge.size(); ++i)
    EXPECT_EQ(gl[i] == 0, ge[i] == 0) << "gelu: eager " << ge[i] << ", compiled " << gl[i];
  lt::set_lazy_backend(before);
}

INSTANTIATE_TEST_SUITE_P(All, MathUlp, ::testing::ValuesIn(math_ops()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
