// The shape, indexing, scan and linear-algebra composites (src/api/shape_composites.cpp): values
// PyTorch gives on small inputs, lazy against eager on random shapes (empty and non-contiguous
// included), and float64 gradchecks, each on cpu and on the lazy device.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "lt/lt.h"
#include "values.h"

namespace {

using lt::Tensor;
using V = std::vector<double>;
using lt_test::gradcheck;
using lt_test::In;
using lt_test::shape;
using lt_test::Ts;
using lt_test::vals;

class ShapeComposites : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
  Tensor iota(std::vector<int64_t> sizes, lt::Dtype dt = lt::kFloat32) const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return lt::arange(n, lt::TensorOptions(dt)).reshape(sizes).to(dev());
  }
};

TEST_P(ShapeComposites, SplittingAndMovingDims) {
  Tensor x = iota({5, 2});
  std::vector<Tensor> u = lt::unbind(x, 1);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(vals(u[1]), (V{1, 3, 5, 7, 9}));
  std::vector<Tensor> s = x.split({1, 4});
  EXPECT_EQ(shape(s[1]), (std::vector<int64_t>{4, 2}));
  EXPECT_THROW(x.split({1, 3}), lt::Error);
  std::vector<Tensor> t3 = lt::tensor_split(x, 3);  // 5 rows: 2, 2, 1
  EXPECT_EQ(shape(t3[0])[0], 2);
  EXPECT_EQ(shape(t3[2])[0], 1);
  std::vector<Tensor> ti = lt::tensor_split(x, {1, 4, 9});
  ASSERT_EQ(ti.size(), 4u);
  EXPECT_EQ(shape(ti[1])[0], 3);
  EXPECT_EQ(shape(ti[3])[0], 0);
  Tensor m = lt::movedim(iota({2, 3, 4}), 0, -1);
  EXPECT_EQ(shape(m), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_EQ(vals(m.select(2, 1).select(0, 0)), (V{12, 13, 14, 15}));
  EXPECT_EQ(shape(lt::movedim(iota({2, 3, 4}), {0, 1}, {2, 0})), (std::vector<int64_t>{3, 4, 2}));
  std::vector<Tensor> g = lt::meshgrid({iota({2}), iota({3})}, "xy");
  EXPECT_EQ(shape(g[0]), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(vals(g[0]), (V{0, 1, 0, 1, 0, 1}));
  std::vector<Tensor> gij = lt::meshgrid({iota({2}), iota({3})});
  EXPECT_EQ(vals(gij[1]), (V{0, 1, 2, 0, 1, 2}));
  std::vector<Tensor> b = lt::broadcast_tensors({iota({3, 1}), iota({2})});
  EXPECT_EQ(shape(b[1]), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(shape(lt::hstack({iota({2}), iota({3})})), (std::vector<int64_t>{5}));
  EXPECT_EQ(shape(lt::vstack({iota({3}), iota({2, 3})})), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(shape(lt::dstack({iota({2, 3}), iota({2, 3})})), (std::vector<int64_t>{2, 3, 2}));
}

TEST_P(ShapeComposites, TrianglesDiagonalsFlipsRolls) {
  Tensor x = iota({3, 4});
  EXPECT_EQ(vals(x.tril()), (V{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0}));
  EXPECT_EQ(vals(lt::triu(x, 1)), (V{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11}));
  EXPECT_EQ(vals(lt::tril(x, -1)), (V{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0}));
  EXPECT_EQ(vals(x.diagonal()), (V{0, 5, 10}));
  EXPECT_EQ(vals(x.diagonal(1)), (V{1, 6, 11}));
  EXPECT_EQ(vals(x.diagonal(-2)), (V{8}));
  EXPECT_EQ(shape(x.diagonal(5)), (std::vector<int64_t>{0}));
  EXPECT_EQ(vals(lt::diagonal(iota({2, 2, 3}), 0, 1, 2)), (V{0, 4, 6, 10}));
  EXPECT_EQ(vals(lt::diag(iota({2}), 1)), (V{0, 0, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(vals(lt::diag(iota({2}), -1)), (V{0, 0, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(vals(lt::diag(x)), (V{0, 5, 10}));
  EXPECT_EQ(vals(x.flip({0, 1})), (V{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(vals(x.roll({1}, {1})), (V{3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10}));
  EXPECT_EQ(vals(x.roll({-13})), (V{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0}));
  EXPECT_EQ(vals(lt::repeat_interleave(iota({2, 2}), 2, 0)), (V{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(vals(lt::repeat_interleave(iota({3}), 2)), (V{0, 0, 1, 1, 2, 2}));
}

TEST_P(ShapeComposites, IndexingComposites) {
  Tensor x = iota({3, 4});
  Tensor idx = lt::tensor(std::vector<int64_t>{3, 0, 1, 2, 2, 2}, {3, 2}).to(dev());
  EXPECT_EQ(vals(lt::take_along_dim(x, idx, 1)), (V{3, 0, 5, 6, 10, 10}));
  EXPECT_EQ(vals(lt::take_along_dim(x, lt::tensor(std::vector<int64_t>{11, 0}).to(dev()))),
            (V{11, 0}));
  Tensor rows = lt::tensor(std::vector<int64_t>{0, 2, 0}).to(dev());
  Tensor src = lt::ones({3, 4}).to(dev());
  EXPECT_EQ(vals(x.index_add(0, rows, src)), (V{2, 3, 4, 5, 4, 5, 6, 7, 9, 10, 11, 12}));
  EXPECT_EQ(vals(lt::index_add(x, 0, rows, src, 2)).front(), 4.0);
  EXPECT_EQ(vals(lt::index_copy(x, 1, lt::tensor(std::vector<int64_t>{3}).to(dev()),
                                lt::zeros({3, 1}).to(dev()))),
            (V{0, 1, 2, 0, 4, 5, 6, 0, 8, 9, 10, 0}));
  EXPECT_EQ(vals(x.masked_select(x.remainder(5) == 0)), (V{0, 5, 10}));
  EXPECT_EQ(vals(lt::count_nonzero(x.remainder(3), {1})), (V{2, 3, 3}));
  EXPECT_EQ(lt::count_nonzero(x).dtype(), lt::kInt64);
  EXPECT_THROW(lt::index_add(x, 0, rows, lt::ones({2, 4}).to(dev())), lt::Error);
}

TEST_P(ShapeComposites, ScansMatchALeftToRightLoop) {
  Tensor x = iota({2, 5}, lt::kInt32);
  Tensor c = x.cumsum(1);
  EXPECT_EQ(c.dtype(), lt::kInt64);
  EXPECT_EQ(vals(c), (V{0, 1, 3, 6, 10, 5, 11, 18, 26, 35}));
  EXPECT_EQ(vals(lt::cumprod(x + 1, 1)), (V{1, 2, 6, 24, 120, 6, 42, 336, 3024, 30240}));
  EXPECT_EQ(vals(lt::cumsum(x, 0)), (V{0, 1, 2, 3, 4, 5, 7, 9, 11, 13}));
  EXPECT_EQ(shape(lt::cumsum(iota({0, 3}), 1)), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(vals(lt::cumsum(lt::scalar_tensor(4.0).to(dev()), 0)), (V{4}));
  // Floats: within log2(n) roundings of the running sum of |x| (a tree order, not a loop).
  std::mt19937 gen(3);
  std::normal_distribution<double> d;
  std::vector<float> v(1000);
  for (float& f : v) f = static_cast<float>(d(gen));
  Tensor f = lt::tensor(v).to(dev());
  V got = vals(f.cumsum(0));
  double run = 0, mag = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    run += v[i];
    mag += std::abs(v[i]);
    EXPECT_NEAR(got[i], run, 11 * 0x1p-24 * mag) << i;
  }
}

TEST_P(ShapeComposites, LinearAlgebraAndNn) {
  Tensor a = iota({2}), b = iota({3});
  EXPECT_EQ(vals(lt::outer(a + 1, b)), (V{0, 1, 2, 0, 2, 4}));
  EXPECT_EQ(vals(lt::mv(iota({2, 3}), b)), (V{5, 14}));
  Tensor in = lt::ones({2, 2}).to(dev());
  EXPECT_EQ(vals(lt::addmm(in, iota({2, 3}), iota({3, 2}), 0.5, 2)), (V{20.5, 26.5, 56.5, 80.5}));
  Tensor nan_in = lt::full({2, 2}, std::nan("")).to(dev());
  EXPECT_EQ(vals(lt::addmm(nan_in, iota({2, 3}), iota({3, 2}), 0)), (V{10, 13, 28, 40}));
  Tensor b1 = iota({2, 2, 3}), b2 = iota({2, 3, 2});
  Tensor bb = lt::baddbmm(lt::zeros({2, 2}).to(dev()), b1, b2);
  EXPECT_EQ(shape(bb), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(vals(lt::addbmm(lt::zeros({2, 2}).to(dev()), b1, b2)), vals(bb.sum({0})));
  Tensor u = lt::tensor(std::vector<float>{1, 0, 3, 4}, {2, 2}).to(dev());
  Tensor w = lt::tensor(std::vector<float>{1, 0, -3, -4}, {2, 2}).to(dev());
  V cs = vals(lt::cosine_similarity(u, w));
  EXPECT_NEAR(cs[0], 1.0, 1e-6);
  EXPECT_NEAR(cs[1], -1.0, 1e-6);
  V pd = vals(lt::pairwise_distance(u, w));
  EXPECT_NEAR(pd[0], 0.0, 1e-5);
  EXPECT_NEAR(pd[1], 10.0, 1e-5);
  Tensor ps = lt::pixel_shuffle(iota({1, 4, 1, 2}), 2);
  EXPECT_EQ(shape(ps), (std::vector<int64_t>{1, 1, 2, 4}));
  EXPECT_EQ(vals(ps), (V{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_EQ(vals(lt::pixel_unshuffle(ps, 2)), vals(iota({1, 4, 1, 2})));
  Tensor gn = lt::group_norm(iota({2, 4, 3}), 2);
  V g = vals(gn);
  EXPECT_NEAR(g[0], -1.4638, 1e-3);  // the first group: 0..5, mean 2.5, biased var 35/12
  EXPECT_NEAR(lt::mean(gn).item<double>(), 0.0, 1e-6);
  EXPECT_THROW(lt::group_norm(iota({2, 3, 3}), 2), lt::Error);
  auto [var, mean] = lt::var_mean(iota({4}), {0});
  EXPECT_NEAR(var.item<double>(), 5.0 / 3.0, 1e-6);
  EXPECT_NEAR(mean.item<double>(), 1.5, 1e-6);
}

// cummax/cummin (PyTorch's index rule: ties and NaN take the latest position), unfold windows,
// diag_embed and narrow_copy, on values worked out by hand.
TEST_P(ShapeComposites, RunningExtremesWindowsAndEmbeddedDiagonals) {
  const double nan = std::nan("");
  Tensor x = lt::tensor(std::vector<float>{1, 3, 2, 3, 0, 5}).to(dev());
  auto [mv, mi] = x.cummax(0);
  EXPECT_EQ(vals(mv), (V{1, 3, 3, 3, 3, 5}));
  EXPECT_EQ(vals(mi), (V{0, 1, 1, 3, 3, 5}));  // the tie at 3 moves the index
  auto [nv, ni] = lt::cummin(x, 0);
  EXPECT_EQ(vals(nv), (V{1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(vals(ni), (V{0, 0, 0, 0, 4, 4}));
  auto [qv, qi] = lt::tensor(std::vector<float>{1, nan, 4, nan}).to(dev()).cummax(0);
  V q = vals(qv);
  EXPECT_EQ(q[0], 1);
  EXPECT_TRUE(std::isnan(q[1]) && std::isnan(q[2]) && std::isnan(q[3]));
  EXPECT_EQ(vals(qi), (V{0, 1, 1, 3}));
  Tensor im = lt::tensor(std::vector<int64_t>{INT64_MAX, 2, INT64_MAX}).to(dev());
  EXPECT_EQ(vals(std::get<1>(im.cummin(0))), (V{0, 1, 1}));  // the int64 identity is exact
  EXPECT_EQ(vals(std::get<1>(iota({2, 3}).cummax(1))), (V{0, 1, 2, 0, 1, 2}));
  Tensor u = iota({2, 5}).unfold(1, 2, 2);  // windows [0,1], [2,3] of each row
  EXPECT_EQ(shape(u), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(vals(u), (V{0, 1, 2, 3, 5, 6, 7, 8}));
  EXPECT_EQ(shape(iota({4, 2}).unfold(0, 3, 1)), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(vals(iota({4, 2}).unfold(0, 3, 1).select(0, 1)), (V{2, 4, 6, 3, 5, 7}));
  EXPECT_THROW(iota({3}).unfold(0, 4, 1), lt::Error);
  Tensor e = iota({2, 2}).diag_embed();  // [[0, 0], [0, 1]], [[2, 0], [0, 3]]
  EXPECT_EQ(shape(e), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(vals(e), (V{0, 0, 0, 1, 2, 0, 0, 3}));
  Tensor e1 = lt::diag_embed(iota({2}), 1);  // 3x3 with 0, 1 above the diagonal
  EXPECT_EQ(vals(e1), (V{0, 0, 0, 0, 0, 1, 0, 0, 0}));
  Tensor e2 = lt::diag_embed(iota({1, 2}) + 1, -1, 0, 2);  // dims (0, 2) of a [3, 1, 3]
  EXPECT_EQ(shape(e2), (std::vector<int64_t>{3, 1, 3}));
  EXPECT_EQ(vals(e2), (V{0, 0, 0, 1, 0, 0, 0, 2, 0}));
  Tensor c = iota({3, 2}).narrow_copy(0, 1, 2);
  EXPECT_EQ(vals(c), (V{2, 3, 4, 5}));
}

// Lazy against eager on random shapes, layouts (transposed) and empty sizes.
TEST_P(ShapeComposites, LazyMatchesEagerOnRandomShapes) {
  if (dev().is_cpu()) GTEST_SKIP() << "compares the lazy device with cpu";
  std::mt19937 gen(11);
  for (int trial = 0; trial < 12; ++trial) {
    std::uniform_int_distribution<int64_t> sz(trial == 0 ? 0 : 1, 5);
    const int64_t n = sz(gen), m = sz(gen) + 1, k = sz(gen);
    Tensor x = lt::randn({m, n + 1, k + 1});
    if (trial % 2) x = x.transpose(0, 2);  // non-contiguous
    Tensor y = x.to(dev());
    auto same = [&](const std::string& what, const Tensor& e, const Tensor& l) {
      ASSERT_EQ(shape(e), shape(l)) << what;
      V a = vals(e), b = vals(l);
      for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << what << " " << i;
    };
    same("cumsum", x.cumsum(1), y.cumsum(1));
    same("cumprod", lt::cumprod(x, -1), lt::cumprod(y, -1));
    same("tril", x.tril(1), y.tril(1));
    same("diagonal", x.diagonal(0, 0, 2), y.diagonal(0, 0, 2));
    same("flip", x.flip({0, 2}), y.flip({0, 2}));
    same("roll", x.roll({2, -1}, {0, 1}), y.roll({2, -1}, {0, 1}));
    same("movedim", lt::movedim(x, 0, 2), lt::movedim(y, 0, 2));
    same("repeat_interleave", lt::repeat_interleave(x, 2, 1), lt::repeat_interleave(y, 2, 1));
    same("group_norm", lt::group_norm(x, 1), lt::group_norm(y, 1));
    same("cummax", std::get<0>(x.cummax(1)), std::get<0>(y.cummax(1)));
    same("cummin idx", std::get<1>(x.round().cummin(0)), std::get<1>(y.round().cummin(0)));
    same("unfold", x.unfold(0, 1, 2), y.unfold(0, 1, 2));
    same("diag_embed", x.diag_embed(1, 0, 2), y.diag_embed(1, 0, 2));
  }
}

TEST(ShapeCompositesGrad, Gradcheck) {
  for (const char* d : {"cpu", "lazy"}) {
    const lt::Device dev(d);
    auto rnd = [](std::vector<int64_t> s) { return lt_test::uniform_input(std::move(s), 5); };
    gradcheck(
        "cumsum", [](Ts x) { return x[0].cumsum(1); }, {rnd({2, 5})}, dev);
    gradcheck(
        "cumprod", [](Ts x) { return lt::cumprod(x[0], 0); }, {rnd({5, 2})}, dev);
    gradcheck(
        "diagonal", [](Ts x) { return x[0].diagonal(1); }, {rnd({3, 4})}, dev);
    gradcheck(
        "diag", [](Ts x) { return lt::diag(x[0], -1); }, {rnd({3})}, dev);
    gradcheck(
        "triu", [](Ts x) { return x[0].triu(); }, {rnd({3, 3})}, dev);
    gradcheck(
        "flip/roll", [](Ts x) { return x[0].flip({1}).roll({1}, {0}); }, {rnd({3, 2})}, dev);
    gradcheck(
        "take_along_dim",
        [&](Ts x) {
          return lt::take_along_dim(
              x[0], lt::tensor(std::vector<int64_t>{2, 0, 1}, {1, 3}).to(x[0].device()), 0);
        },
        {rnd({3, 3})}, dev);
    gradcheck(
        "index_add",
        [&](Ts x) {
          return lt::index_add(x[0], 0, lt::tensor(std::vector<int64_t>{1, 1}).to(x[0].device()),
                               x[1]);
        },
        {rnd({3, 2}), rnd({2, 2})}, dev);
    gradcheck(
        "addmm", [](Ts x) { return lt::addmm(x[0], x[1], x[2], 0.5, 2); },
        {rnd({2, 2}), rnd({2, 3}), rnd({3, 2})}, dev);
    gradcheck(
        "group_norm", [](Ts x) { return lt::group_norm(x[0], 2, x[1], x[2]); },
        {rnd({2, 4, 3}), rnd({4}), rnd({4})}, dev);
    gradcheck(
        "pixel_shuffle", [](Ts x) { return lt::pixel_shuffle(x[0], 2); }, {rnd({1, 4, 2, 1})}, dev);
    gradcheck(
        "cummax", [](Ts x) { return std::get<0>(x[0].cummax(1)); }, {rnd({2, 5})}, dev);
    gradcheck(
        "unfold", [](Ts x) { return x[0].unfold(1, 3, 1); }, {rnd({2, 5})}, dev);
    gradcheck(
        "diag_embed", [](Ts x) { return x[0].diag_embed(-1); }, {rnd({2, 3})}, dev);
    gradcheck(
        "cosine_similarity", [](Ts x) { return lt::cosine_similarity(x[0], x[1]); },
        {rnd({2, 3}), rnd({2, 3})}, dev);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ShapeComposites, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
