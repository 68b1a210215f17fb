// The storage dtypes int8, float16 and bfloat16 (libtorch's kChar, kHalf, kBFloat16).
// Semantics, as libtorch's CPU kernels: an op computes in the compute dtype (int32 or float32)
// and rounds its result to the storage dtype, once per op. So on cpu every op's result equals
// the float32 (int32) op on the widened inputs, rounded; on the lazy device fused code must round
// at every op boundary too, and conversions must agree bit for bit with eager's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lt/lt.h"
#include "values.h"

namespace {

using lt::Dtype;
using lt::Tensor;
using V = std::vector<double>;
using lt_test::vals;

// Equal values, NaN matching NaN; or within `ulps` units of the storage dtype's last place.
void expect_close(const Tensor& got, const Tensor& want, double ulps, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_TRUE(got.sizes().equals(want.sizes())) << what;
  const V g = vals(got), w = vals(want);
  const int bits = want.dtype() == lt::kFloat16 ? 10 : want.dtype() == lt::kBFloat16 ? 7 : 23;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " at " << i;
      continue;
    }
    if (g[i] == w[i]) continue;
    const double ulp = std::ldexp(1.0, std::max(std::ilogb(w[i]), -14) - bits);
    EXPECT_LE(std::fabs(g[i] - w[i]), ulps * ulp)
        << what << " at " << i << ": " << g[i] << " vs " << w[i];
  }
}

TEST(StorageDtypes, NamesSizesAndPromotion) {
  EXPECT_STREQ(lt::dtype_name(lt::kChar), "int8");
  EXPECT_STREQ(lt::dtype_name(lt::kHalf), "float16");
  EXPECT_STREQ(lt::dtype_name(lt::kBFloat16), "bfloat16");
  EXPECT_EQ(lt::dtype_size(lt::kInt8), 1u);
  EXPECT_EQ(lt::dtype_size(lt::kFloat16), 2u);
  EXPECT_EQ(lt::dtype_size(lt::kBFloat16), 2u);
  // torch.promote_types.
  EXPECT_EQ(lt::promote_types(lt::kHalf, lt::kBFloat16), lt::kFloat32);
  EXPECT_EQ(lt::promote_types(lt::kInt8, lt::kInt32), lt::kInt32);
  EXPECT_EQ(lt::promote_types(lt::kInt8, lt::kBool), lt::kInt8);
  EXPECT_EQ(lt::promote_types(lt::kInt64, lt::kHalf), lt::kHalf);
  EXPECT_EQ(lt::promote_types(lt::kHalf, lt::kFloat32), lt::kFloat32);
  EXPECT_EQ(lt::promote_types(lt::kBFloat16, lt::kFloat64), lt::kFloat64);
  EXPECT_EQ(lt::promote_types(lt::kInt8, lt::kBFloat16), lt::kBFloat16);
  // Host scalars and 0-d tensors do not widen a dimensioned tensor of their category.
  Tensor h = lt::ones({2}, lt::kHalf), c = lt::ones({2}, lt::kChar);
  EXPECT_EQ((h * 2.5).dtype(), lt::kHalf);
  EXPECT_EQ((c + 1000).dtype(), lt::kChar);
  EXPECT_EQ((c * 1.5).dtype(), lt::kFloat32);
  EXPECT_EQ((h + lt::ones({}, lt::kFloat64)).dtype(), lt::kHalf);
  EXPECT_EQ((h + lt::ones({2}, lt::kBFloat16)).dtype(), lt::kFloat32);
  EXPECT_EQ((c + lt::ones({2}, lt::kInt32)).dtype(), lt::kInt32);
  EXPECT_EQ(c.sum().dtype(), lt::kInt64);  // integer sums are int64, as PyTorch's
  EXPECT_EQ(h.sum().dtype(), lt::kHalf);
  EXPECT_EQ(c.exp().dtype(), lt::kFloat32);
  EXPECT_EQ(h.element_size(), 2);
  EXPECT_THROW(lt::set_default_dtype(lt::kHalf), lt::Error);
}

// c10's conversions: round to nearest even, overflow to infinity, subnormal halves, NaN.
TEST(StorageDtypes, ScalarConversionsRoundToNearestEven) {
  EXPECT_EQ(lt::Half(0.1f).x, 0x2e66);
  EXPECT_EQ(lt::BFloat16(0.1f).x, 0x3dcd);
  EXPECT_EQ(lt::Half(65504.f).x, 0x7bff);
  EXPECT_EQ(lt::Half(65519.f).x, 0x7bff);
  EXPECT_EQ(lt::Half(65520.f).x, 0x7c00);  // the tie above the largest half rounds to inf
  EXPECT_EQ(lt::Half(-1e9f).x, 0xfc00);
  EXPECT_EQ(lt::Half(6e-8f).x, 0x0001);  // the smallest subnormal, 2^-24
  EXPECT_EQ(lt::Half(2.9e-8f).x, 0x0000);
  EXPECT_EQ(lt::Half(-0.f).x, 0x8000);
  EXPECT_EQ(lt::Half(1.f + 0x1p-11f).x, 0x3c00);      // tie to even (down)
  EXPECT_EQ(lt::Half(1.f + 3 * 0x1p-11f).x, 0x3c02);  // tie to even (up)
  EXPECT_EQ(lt::BFloat16(1.f + 0x1p-8f).x, 0x3f80);
  EXPECT_EQ(lt::BFloat16(1.f + 3 * 0x1p-8f).x, 0x3f82);
  EXPECT_EQ(lt::Half(NAN).x & 0x7e00, 0x7e00);
  EXPECT_EQ(lt::BFloat16(NAN).x, 0x7fc0);
  EXPECT_EQ(lt::BFloat16(3.4e38f).x, 0x7f80);  // rounds past the largest bfloat16
  EXPECT_FLOAT_EQ(float(lt::Half(0x3555, lt::Half::from_bits())), 0.333251953125f);
  // Every non-NaN bit pattern survives a round trip through float.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    if ((h & 0x7c00) != 0x7c00 || (h & 0x3ff) == 0)
      ASSERT_EQ(lt::Half(float(lt::Half(h, lt::Half::from_bits()))).x, h) << b;
    if ((h & 0x7f80) != 0x7f80 || (h & 0x7f) == 0)
      ASSERT_EQ(lt::BFloat16(float(lt::BFloat16(h, lt::BFloat16::from_bits()))).x, h) << b;
  }
  // Arithmetic on the scalar types is float arithmetic, rounded for two 16-bit operands.
  lt::Half a(1000.f), b(0.1f);
  EXPECT_EQ((a + b).x, lt::Half(1000.1f).x);
  EXPECT_FLOAT_EQ(a * 2.0f, 2000.f);
  EXPECT_TRUE(a > b);
}

class StorageOps : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
};

// Random float bit patterns (every exponent, NaN and infinity among them) converted on the
// device: the lazy device's compiled conversion (vcvtps2ph, or LLVM's half routines on hosts
// without F16C, and integer code for bfloat16) must give eager's bits.
TEST_P(StorageOps, ConversionsMatchEagerBitForBit) {
  std::mt19937 rng(7);
  std::vector<float> f(20000);
  for (size_t i = 0; i < f.size(); ++i) {
    uint32_t bits = rng();
    std::memcpy(&f[i], &bits, 4);
    if (i % 3 == 0) f[i] = std::ldexp(static_cast<float>(rng() % 4096), -int(rng() % 40));
  }
  Tensor x = lt::tensor(f);
  for (Dtype s : {lt::kHalf, lt::kBFloat16}) {
    Tensor want = x.to(s).to(lt::kFloat32);
    Tensor got = x.to(dev()).to(s).to(lt::kFloat32);
    const V w = vals(want), g = vals(got);
    ASSERT_EQ(w.size(), g.size());
    for (size_t i = 0; i < w.size(); ++i)
      if (!(std::isnan(w[i]) && std::isnan(g[i])))
        ASSERT_EQ(w[i], g[i]) << lt::dtype_name(s) << " of " << f[i];
  }
  // float64 and integers reach a 16-bit float through float32, as eager's conversions do.
  Tensor d = lt::tensor(std::vector<double>{1.0 + 0x1p-11 + 0x1p-40, 65519.99, -3e-8, 2049.0});
  Tensor i = lt::tensor(std::vector<int64_t>{2049, 16777217, -70000, 3});
  for (Dtype s : {lt::kHalf, lt::kBFloat16, lt::kInt8}) {
    expect_close(d.to(dev()).to(s), d.to(s), 0, std::string("f64 to ") + lt::dtype_name(s));
    expect_close(i.to(dev()).to(s), i.to(s), 0, std::string("i64 to ") + lt::dtype_name(s));
    Tensor back = i.to(s);
    expect_close(back.to(dev()).to(lt::kInt64), back.to(lt::kInt64), 0, "back to int64");
  }
  EXPECT_EQ(vals(i.to(lt::kChar)), (V{1, 1, -112, 3}));  // wraps, as a C++ narrowing
}

struct OpCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> f;
  double ulps;  // allowed difference on the lazy device (0: exactly eager's)
};

// Each op on storage-dtype inputs: cpu equals the float32/int32 op on widened inputs, rounded
// once; the lazy device equals cpu (exactly for correctly rounded arithmetic; within the stated
// storage ulps where compiled math or a reassociated reduction differs from eager's by a float32
// ulp, which rounding can carry into the last place of the storage dtype).
TEST_P(StorageOps, OpsRoundOncePerOpOnBothDevices) {
  const std::vector<OpCase> floating = {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }, 0},
      {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }, 0},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }, 0},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }, 0},
      {"maximum", [](const Tensor& a, const Tensor& b) { return lt::maximum(a, b); }, 0},
      {"neg", [](const Tensor& a, const Tensor&) { return -a; }, 0},
      {"abs", [](const Tensor& a, const Tensor&) { return a.abs(); }, 0},
      {"relu", [](const Tensor& a, const Tensor&) { return a.relu(); }, 0},
      {"sqrt", [](const Tensor& a, const Tensor&) { return a.abs().sqrt(); }, 0},
      {"exp", [](const Tensor& a, const Tensor&) { return a.exp(); }, 1},
      {"tanh", [](const Tensor& a, const Tensor&) { return a.tanh(); }, 1},
      {"sigmoid", [](const Tensor& a, const Tensor&) { return a.sigmoid(); }, 1},
      {"log", [](const Tensor& a, const Tensor&) { return a.abs().log(); }, 1},
      {"scalar", [](const Tensor& a, const Tensor&) { return a * 2.5; }, 0},
      {"gelu", [](const Tensor& a, const Tensor&) { return lt::gelu(a); }, 1},
      {"silu", [](const Tensor& a, const Tensor&) { return lt::silu(a); }, 1},
      {"var", [](const Tensor& a, const Tensor&) { return a.var(-1); }, 1},
      {"log_softmax", [](const Tensor& a, const Tensor&) { return lt::log_softmax(a, 0); }, 1},
      {"layer_norm", [](const Tensor& a, const Tensor&) { return lt::layer_norm(a, {a.size(-1)}); },
       1},
      {"where", [](const Tensor& a, const Tensor& b) { return lt::where(a > b, a, b); }, 0},
      {"sum", [](const Tensor& a, const Tensor&) { return a.sum(-1); }, 1},
      {"mean", [](const Tensor& a, const Tensor&) { return a.mean(0); }, 1},
      {"amax", [](const Tensor& a, const Tensor&) { return a.amax(-1); }, 0},
      {"softmax", [](const Tensor& a, const Tensor&) { return lt::softmax(a, -1); }, 1},
      {"matmul", [](const Tensor& a, const Tensor& b) { return a.matmul(b.t()); }, 1},
      {"cat",
       [](const Tensor& a, const Tensor& b) {
         return lt::cat({a, b}, 0);
       },
       0},
      {"transpose", [](const Tensor& a, const Tensor& b) { return a.t() * b.t(); }, 0},
  };
  const std::vector<OpCase> integer = {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }, 0},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }, 0},
      {"neg", [](const Tensor& a, const Tensor&) { return -a; }, 0},
      {"scalar", [](const Tensor& a, const Tensor&) { return a * 3; }, 0},
      {"maximum", [](const Tensor& a, const Tensor& b) { return lt::maximum(a, b); }, 0},
      {"sum", [](const Tensor& a, const Tensor&) { return a.sum(-1); }, 0},
      {"amax", [](const Tensor& a, const Tensor&) { return a.amax(0); }, 0},
      {"lt", [](const Tensor& a, const Tensor& b) { return a < b; }, 0},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }, 0},
      {"cat",
       [](const Tensor& a, const Tensor& b) {
         return lt::cat({a, b}, 1);
       },
       0},
  };
  std::mt19937 rng(11);
  for (Dtype s : {lt::kHalf, lt::kBFloat16, lt::kChar}) {
    const bool fl = s != lt::kChar;
    for (const OpCase& c : fl ? floating : integer) {
      for (int trial = 0; trial < 3; ++trial) {
        const int64_t r = 1 + rng() % 9, k = 1 + rng() % 40;
        // float inputs spread over the storage range; int8 inputs over all of it
        Tensor a32 = fl ? lt::randn({r, k}) * (s == lt::kHalf ? 30.0 : 1e4)
                        : lt::randint(-128, 128, {r, k}).to(lt::kFloat32);
        Tensor b32 = fl ? lt::randn({r, k}) * 4 : lt::randint(-128, 128, {r, k}).to(lt::kFloat32);
        Tensor a = a32.to(s), b = b32.to(s);
        const Dtype wide = fl ? lt::kFloat32 : lt::kInt32;
        Tensor ref = c.f(a.to(wide), b.to(wide));
        const Dtype out = c.f(a, b).dtype();
        if (lt::is_storage_dtype(out)) ref = ref.to(out);
        const std::string what =
            std::string(c.name) + " on " + lt::dtype_name(s) + " " + GetParam();
        Tensor got = c.f(a.to(dev()), b.to(dev()));
        if (dev().is_cpu()) {
          expect_close(got, ref.to(out), 0, what);
        } else {
          expect_close(got, c.f(a, b), c.ulps, what);
        }
      }
    }
  }
}

// Fused code rounds at each op: in float16 300 * 300 overflows to inf before the division, and
// in bfloat16 256 + 1 rounds back to 256; in int8 100 + 100 wraps to -56 before the halving.
TEST_P(StorageOps, FusedChainsRoundBetweenOps) {
  lt::metrics::reset();
  Tensor h = lt::full({4}, 300.0, lt::kHalf).to(dev());
  EXPECT_TRUE(std::isinf(vals((h * h) / h)[0]));
  Tensor b = lt::full({4}, 256.0, lt::kBFloat16).to(dev());
  EXPECT_EQ(vals((b + 1) - b)[0], 0.0);
  Tensor c = lt::full({4}, 100, lt::kChar).to(dev());
  EXPECT_EQ(vals((c + c) / 2)[0], -28.0);
  Tensor s = lt::full({3000}, 1.0, lt::kHalf).to(dev());
  EXPECT_EQ(vals(s.sum())[0], 3000.0);  // accumulated in float32, then rounded (3000 is a half)
  EXPECT_EQ(vals(s.cumsum(0)).back(), 3000.0);
  lt::mark_step();
  // The compiled backend lowers the storage dtypes itself: no op became a library step for
  // want of a lowering, and no graph fell back to the interpreter.
  EXPECT_EQ(lt::metrics::counter("CompileFallback"), 0);
  EXPECT_EQ(lt::metrics::report().find("MlirUnlowered"), std::string::npos);
}

TEST_P(StorageOps, ValuesAndHostAccess) {
  Tensor h = lt::tensor(std::vector<float>{0.1f, -2.5f, 70000.f}).to(lt::kHalf).to(dev());
  EXPECT_EQ(h.dtype(), lt::kHalf);
  EXPECT_EQ(h.scalar_type(), lt::kHalf);
  EXPECT_EQ(vals(h), (V{0.0999755859375, -2.5, INFINITY}));
  EXPECT_EQ(h[1].item<lt::Half>().x, lt::Half(-2.5f).x);
  EXPECT_FLOAT_EQ(h[0].item<float>(), 0.0999755859375f);
  Tensor hc = h.to(lt::kCPU);
  EXPECT_EQ(hc.data_ptr<lt::Half>()[1].x, lt::Half(-2.5f).x);
  std::vector<lt::BFloat16> bv = h.to(lt::kBFloat16).to_vector<lt::BFloat16>();
  EXPECT_EQ(bv[0].x, lt::BFloat16(0.0999755859375f).x);
  Tensor c = lt::tensor(std::vector<int8_t>{-128, 0, 127}).to(dev());
  EXPECT_EQ(c.dtype(), lt::kChar);
  EXPECT_EQ(c[0].item<int8_t>(), -128);
  EXPECT_EQ(c.to(lt::kCPU).data_ptr<int8_t>()[2], 127);
  EXPECT_EQ(vals(lt::zeros({2}, lt::kBFloat16).to(dev()) + 1), (V{1, 1}));
  EXPECT_EQ(vals(lt::arange(0, 3, 1, lt::kHalf).to(dev())), (V{0, 1, 2}));
  Tensor r = lt::randn({1000}, lt::TensorOptions(lt::kHalf).device(dev()));
  EXPECT_EQ(r.dtype(), lt::kHalf);
  EXPECT_LT(std::fabs(r.to(lt::kFloat32).mean().item<float>()), 0.2f);
  EXPECT_NE(h.toString().find("float16"), std::string::npos);
  // Strided views of storage dtypes read and write through their base.
  Tensor m = lt::arange(6, lt::kFloat32).reshape({2, 3}).to(lt::kBFloat16).to(dev());
  Tensor col = m.t()[1];
  EXPECT_EQ(vals(col), (V{1, 4}));
  m.t()[2].fill_(-1);
  EXPECT_EQ(vals(m), (V{0, 1, -1, 3, 4, -1}));
}

TEST_P(StorageOps, GradientsKeepTheStorageDtype) {
  Tensor x = lt::tensor(std::vector<float>{1.5f, -2.f, 3.f}).to(lt::kHalf).to(dev());
  x.set_requires_grad(true);
  Tensor y = (x * x).sum();
  y.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), lt::kHalf);
  EXPECT_EQ(vals(x.grad()), (V{3, -4, 6}));
  Tensor w = lt::randn({4, 3}).to(lt::kBFloat16).to(dev());
  w.set_requires_grad(true);
  Tensor in = lt::randn({2, 3}).to(lt::kBFloat16).to(dev());
  lt::linear(in, w).relu().sum().backward();
  EXPECT_EQ(w.grad().dtype(), lt::kBFloat16);
  EXPECT_EQ(w.grad().sizes()[0], 4);
}

TEST_P(StorageOps, ErrorsNameTheDtype) {
  Tensor h = lt::ones({2}, lt::TensorOptions(lt::kHalf).device(dev()));
  try {
    h.data_ptr<float>();
    if (dev().is_cpu()) ADD_FAILURE() << "data_ptr<float> of a float16 tensor";
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("float16"), std::string::npos) << e.what();
  }
  try {
    lt::where(h, h, h);
    ADD_FAILURE() << "where with a float16 condition";
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("float16"), std::string::npos) << e.what();
  }
  EXPECT_EQ(vals(h), (V{1, 1}));  // still usable
}

INSTANTIATE_TEST_SUITE_P(Devices, StorageOps, ::testing::Values("cpu", "lazy"));

}  // namespace
