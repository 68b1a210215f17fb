// torch::linalg's singular values (svdvals, matrix_norm "nuc", 2 and -2, nuclear_norm, norm with a
// string order): PyTorch 1.13's values and gradients on small float64 matrices, dims and keepdim,
// batches, empty matrices, the lazy device's one sync, lazy against eager on random shapes, and
// float64 gradchecks, on cpu and on the lazy device.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "error_message.h"
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

// LAPACK's float64 SVD against PyTorch's (also LAPACK's): agreement to rounding.
void expect_near(const Tensor& got, const V& want, double tol = 1e-12) {
  V g = vals(got);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(g[i], want[i], tol) << i;
}

class Linalg : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
  Tensor a() const {  // [2, 3]
    return lt::tensor(V{1, 2, 0, 3, -1, 4}, {2, 3}).to(dev());
  }
  Tensor b() const {  // [2, 3, 2]; the second matrix has rank 1
    return lt::tensor(V{0.5, 1, 2, -1, 0, 3, 1, 1, 1, 1, 0, 0}, {2, 3, 2}).to(dev());
  }
};

TEST_P(Linalg, SingularValuesMatchPyTorch) {
  lt::metrics::reset();
  expect_near(lt::linalg::svdvals(a()), {5.103676278415834, 2.22541871231809});
  if (dev().is_lazy()) EXPECT_EQ(lt::metrics::counter("DataDependentSync"), 1);
  Tensor s = lt::linalg::svdvals(b());
  EXPECT_EQ(shape(s), (std::vector<int64_t>{2, 2}));
  expect_near(s, {3.3642713439426286, 1.9828460162923545, 2.0, 0.0});
  expect_near(lt::linalg::svdvals(a().to(lt::kFloat32)), {5.103676278415834, 2.22541871231809},
              2e-6);  // float32: u^T x v rounded at float32's ~6e-8 relative
  EXPECT_EQ(lt::linalg::svdvals(a().to(lt::kFloat32)).dtype(), lt::kFloat32);
  EXPECT_EQ(shape(lt::linalg::svdvals(lt::zeros({2, 0, 3}).to(dev()))),
            (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(shape(lt::linalg::svdvals(lt::zeros({0, 4, 3}).to(dev()))),
            (std::vector<int64_t>{0, 3}));
}

TEST_P(Linalg, SingularValueNormsMatchPyTorch) {
  namespace la = lt::linalg;
  expect_near(la::matrix_norm(b(), "nuc"), {5.347117360234983, 2.0});
  expect_near(la::matrix_norm(b(), 2.0), {3.3642713439426286, 2.0});
  expect_near(la::matrix_norm(b(), -2.0), {1.9828460162923545, 0.0});
  expect_near(la::matrix_norm(b(), 2.0, {0, 2}), {1.7807764064044151, 2.3027756377319952, 3.0});
  Tensor k = la::matrix_norm(b(), "nuc", {2, 0}, true);
  EXPECT_EQ(shape(k), (std::vector<int64_t>{1, 3, 1}));
  expect_near(k, {2.0615528128088303, 3.6055512754639896, 3.0});
  expect_near(lt::nuclear_norm(a()), {7.329094990733924});
  expect_near(lt::nuclear_norm(b(), {1, 2}), {5.347117360234983, 2.0});
  expect_near(la::norm(a(), "nuc"), {7.329094990733924});
  expect_near(la::norm(a(), 2.0), {5.103676278415834});
  expect_near(la::norm(a(), "fro"), {std::sqrt(31.0)});
  expect_near(la::matrix_norm(lt::zeros({0, 3}).to(dev()), "nuc"), {0.0});
  EXPECT_THROW(la::matrix_norm(lt::zeros({0, 3}).to(dev()), 2.0), lt::Error);
  EXPECT_THROW(la::norm(b(), "nuc"), lt::Error);  // a matrix norm of a 3-d input needs dim
  EXPECT_THROW(la::matrix_norm(b(), "nuc", {1, -2}), lt::Error);  // one dim twice
  std::string m = lt_test::error_message([&] { la::svdvals(lt::ones({3}).to(dev())); });
  EXPECT_NE(m.find("linalg.svdvals"), std::string::npos) << m;
  EXPECT_NE(m.find("[3]"), std::string::npos) << m;
}

// PyTorch's gradients of the three norms of a(): nuc u v^T summed, 2 and -2 one pair's u_i v_i^T.
TEST_P(Linalg, GradientsMatchPyTorch) {
  const std::vector<std::pair<double, V>> cases = {
      {0,
       {0.41274360454782594, 0.90957885140717, -0.04805236703515319, 0.5775107669101206,
        -0.22053413640721303, 0.7860318115585454}},
      {2,
       {0.028306243336001513, -0.00840570925107068, 0.03715325481318498, 0.5957759836892972,
        -0.17691926258874133, 0.7819835599813348}},
      {-2,
       {0.3844373612118244, 0.9179845606582406, -0.08520562184833817, -0.018265216779176592,
        -0.0436148738184717, 0.004048251577210581}}};
  for (const auto& [ord, want] : cases) {
    Tensor x = a().set_requires_grad(true);
    Tensor n = ord == 0 ? lt::linalg::matrix_norm(x, "nuc") : lt::linalg::matrix_norm(x, ord);
    n.backward();
    expect_near(x.grad(), want, 1e-12);
  }
}

TEST_P(Linalg, LazyMatchesEagerOnRandomShapes) {
  if (dev().is_cpu()) GTEST_SKIP() << "compares the lazy device with cpu";
  std::mt19937 gen(5);
  std::uniform_int_distribution<int64_t> sz(1, 6);
  for (int trial = 0; trial < 8; ++trial) {
    const int64_t m = sz(gen), n = sz(gen);
    Tensor x = lt::randn({2, n, m});
    if (trial % 2)
      x = x.transpose(1, 2).contiguous().transpose(1, 2);  // non-contiguous
    else
      x = x.transpose(1, 2);
    Tensor y = x.to(dev());
    auto same = [&](const char* what, const Tensor& e, const Tensor& l) {
      ASSERT_EQ(shape(e), shape(l)) << what;
      V p = vals(e), q = vals(l);
      // The same LAPACK vectors; u^T x v in float32 in another order: 1e-5 of values ~ 1-5.
      for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(p[i], q[i], 1e-5) << what << " " << i;
    };
    same("svdvals", lt::linalg::svdvals(x), lt::linalg::svdvals(y));
    same("nuc", lt::linalg::matrix_norm(x, "nuc"), lt::linalg::matrix_norm(y, "nuc"));
    same("2 over (0, 2)", lt::linalg::matrix_norm(x, 2.0, {0, 2}, true),
         lt::linalg::matrix_norm(y, 2.0, {0, 2}, true));
    same("-2", lt::linalg::matrix_norm(x, -2.0), lt::linalg::matrix_norm(y, -2.0));
  }
}

TEST(LinalgGrad, Gradcheck) {
  for (const char* d : {"cpu", "lazy"}) {
    const lt::Device dev(d);
    auto rnd = [](std::vector<int64_t> s, uint32_t seed) {
      return lt_test::uniform_input(std::move(s), seed, -1.5, 1.5);
    };
    gradcheck(
        "svdvals", [](Ts x) { return lt::linalg::svdvals(x[0]); }, {rnd({2, 3, 4}, 1)}, dev);
    gradcheck(
        "nuc", [](Ts x) { return lt::linalg::matrix_norm(x[0], "nuc"); }, {rnd({4, 3}, 2)}, dev);
    gradcheck(
        "2",
        [](Ts x) {
          return lt::linalg::matrix_norm(x[0], 2.0, {0, 2});
        },
        {rnd({3, 2, 2}, 3)}, dev);
    gradcheck(
        "-2", [](Ts x) { return lt::linalg::matrix_norm(x[0], -2.0); }, {rnd({3, 3}, 4)}, dev);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Linalg, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
