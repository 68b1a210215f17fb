// The ops of src/api/libtorch_extras.cpp (dot, vdot, inner, addcmul, addcdiv, index_fill,
// unflatten, split_with_sizes, the method and in-place spellings) and the norms and functional
// spellings added with them: values PyTorch 1.13 gives on small inputs, errors at the call,
// lazy against eager on random shapes (empty and non-contiguous included), and float64
// gradchecks, on cpu and on the lazy device.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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
using lt_test::error_message;
using lt_test::gradcheck;
using lt_test::In;
using lt_test::shape;
using lt_test::Ts;
using lt_test::vals;
namespace F = lt::nn::functional;

class Extras : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
  Tensor iota(std::vector<int64_t> sizes, lt::Dtype dt = lt::kFloat32) const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return lt::arange(n, lt::TensorOptions(dt)).reshape(sizes).to(dev());
  }
  Tensor vec(const V& v) const { return lt::tensor(v).to(lt::kFloat32).to(dev()); }
  Tensor ivec(const std::vector<int64_t>& v) const { return lt::tensor(v).to(dev()); }
};

TEST_P(Extras, ProductsMatchPyTorch) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(vals(lt::dot(vec({1, 2, 3}), vec({4, 5, 6}))), (V{32}));
  EXPECT_EQ(vals(vec({1, 2, 3}).vdot(vec({4, 5, 6}))), (V{32}));
  EXPECT_EQ(shape(lt::dot(vec({}), vec({}))), (std::vector<int64_t>{}));
  EXPECT_EQ(vals(lt::dot(vec({}), vec({}))), (V{0}));
  EXPECT_EQ(vals(lt::inner(x, vec({1, 2, 3}))), (V{8, 26}));
  Tensor xx = x.inner(x);
  EXPECT_EQ(shape(xx), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(vals(xx), (V{5, 14, 14, 50}));
  Tensor ii = lt::inner(iota({2, 3}, lt::kInt64), iota({3}, lt::kInt64));
  EXPECT_EQ(ii.dtype(), lt::kInt64);
  EXPECT_EQ(vals(ii), (V{5, 14}));
  EXPECT_EQ(vals(lt::inner(x, lt::full({}, 2.0).to(dev()))), vals(x * 2));  // 0-d multiplies
  EXPECT_EQ(shape(lt::inner(iota({2, 0}), iota({4, 0}))), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(vals(lt::inner(iota({2, 0}), iota({4, 0})).sum()), (V{0}));
  EXPECT_EQ(vals(x.mv(vec({1, 0, -1}))), (V{-2, -2}));
  Tensor a = lt::zeros({2, 2}).to(dev());
  a.addmm_(iota({2, 3}), iota({3, 2}), 0, 1);
  EXPECT_EQ(vals(a), vals(lt::mm(iota({2, 3}), iota({3, 2}))));
}

TEST_P(Extras, PointwiseUpdatesMatchPyTorch) {
  Tensor x = iota({2, 3});
  Tensor one = lt::ones({2, 1}).to(dev());
  EXPECT_EQ(vals(lt::addcmul(one, x, vec({1, 2, 3}), 0.5)), (V{1, 2, 4, 2.5, 5, 8.5}));
  EXPECT_EQ(vals(one.addcdiv(x, vec({1, 2, 4}), 2)), (V{1, 2, 2, 7, 5, 3.5}));
  Tensor y = lt::ones({2, 3}).to(dev());
  y.addcmul_(x, x);
  EXPECT_EQ(vals(y), (V{1, 2, 5, 10, 17, 26}));
  y.addcdiv_(x + 1, x + 1, -1);
  EXPECT_EQ(vals(y), (V{0, 1, 4, 9, 16, 25}));
  Tensor w = vec({0, 1, 4});
  w.sqrt_().neg_();
  EXPECT_EQ(vals(w), (V{0, -1, -2}));
  Tensor e = vec({0, 1});
  EXPECT_EQ(&e.exp_(), &e);
  EXPECT_NEAR(vals(e)[1], 2.718281828, 1e-6);
  Tensor l = vec({1, 2});
  l.lerp_(vec({3, 4}), 0.5);
  EXPECT_EQ(vals(l), (V{2, 3}));
  // In place keeps the tensor's dtype: a float result cannot go into an int64 tensor.
  Tensor i = ivec({1, 2, 3});
  EXPECT_NE(error_message([&] { i.exp_(); }).find("can't be cast"), std::string::npos);
  EXPECT_NE(error_message([&] {
              i.addcmul_(vec({1, 1, 1}), vec({1, 1, 1}));
            }).find("addcmul_"),
            std::string::npos);
  EXPECT_EQ(vals(i), (V{1, 2, 3}));
  i.abs_().neg_();
  EXPECT_EQ(vals(i), (V{-1, -2, -3}));
  EXPECT_NE(error_message([&] { lt::addcdiv(i, i, i); }).find("integer division"),
            std::string::npos);
}

TEST_P(Extras, IndexFillMatchesPyTorchAndChecksItsArguments) {
  Tensor x = iota({3, 4});
  EXPECT_EQ(vals(x.index_fill(1, ivec({0, -1}), -1.0)),
            (V{-1, 1, 2, -1, -1, 5, 6, -1, -1, 9, 10, -1}));
  EXPECT_EQ(vals(iota({3}).index_fill(0, lt::tensor(int64_t{1}).to(dev()), 7)), (V{0, 7, 2}));
  Tensor v = lt::full({}, 5.0).to(dev());
  EXPECT_EQ(vals(x.index_fill(0, ivec({1, 1}), v).select(0, 1)), (V{5, 5, 5, 5}));
  Tensor y = iota({2, 2}, lt::kInt64);
  y.index_fill_(0, ivec({0}), 9);
  EXPECT_EQ(vals(y), (V{9, 9, 2, 3}));
  EXPECT_EQ(vals(x.index_fill(0, ivec({}), 1.0)), vals(x));
  EXPECT_NE(error_message([&] { x.index_fill(0, ivec({3}), 1.0); }).find("out of range"),
            std::string::npos);
  EXPECT_NE(error_message([&] { x.index_fill(0, vec({1}), 1.0); }).find("int64"),
            std::string::npos);
  EXPECT_NE(error_message([&] {
              x.index_fill(0, ivec({1}), vec({1, 2}));
            }).find("0-d"),
            std::string::npos);
  EXPECT_THROW(x.index_fill(2, ivec({0}), 1.0), lt::Error);
  EXPECT_EQ(vals(x.sum()), (V{66}));  // every failure left x as it was
}

TEST_P(Extras, ShapesAndNorms) {
  Tensor x = iota({2, 6});
  Tensor u = x.unflatten(1, {3, -1});
  EXPECT_EQ(shape(u), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(vals(u), vals(x));
  EXPECT_EQ(shape(lt::unflatten(x, -2, {1, 2, 1})), (std::vector<int64_t>{1, 2, 1, 6}));
  EXPECT_NE(error_message([&] { x.unflatten(1, {4, -1}); }).find("unflatten"), std::string::npos);
  EXPECT_THROW(x.unflatten(1, {-1, -1}), lt::Error);
  std::vector<Tensor> s = x.split_with_sizes({1, 5}, 1);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(shape(s[1]), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(lt::split_with_sizes(x, {2}).size(), 1u);
  EXPECT_EQ(vals(vec({0, 1, -2, 0}).norm(0)), (V{2}));
  EXPECT_NEAR(vals(lt::norm(vec({1, 2, 4}), -1))[0], 4.0 / 7.0, 1e-6);
  EXPECT_EQ(vals(vec({3, -4}).norm(1)), (V{7}));
  EXPECT_EQ(vals(iota({2, 2}).norm(0, {1})), (V{1, 2}));
  EXPECT_EQ(vals(x.count_nonzero(1)), (V{5, 6}));
  EXPECT_EQ(vals(iota({3}).diag().sum()), (V{3}));
  EXPECT_EQ(x.tensor_split(3, 1).size(), 3u);
  EXPECT_EQ(vals(vec({1, 2}).repeat_interleave(2)), (V{1, 1, 2, 2}));
  // sgn of a real tensor is sign; std_mean is (std, mean), unbiased by default.
  EXPECT_EQ(vals(vec({-2, 0, 3}).sgn()), (V{-1, 0, 1}));
  auto [sd, mn] = lt::std_mean(vec({1, 2, 3, 6}));
  EXPECT_NEAR(vals(sd)[0], std::sqrt(14.0 / 3.0), 1e-6);
  EXPECT_EQ(vals(mn), (V{3}));
  auto [sd1, mn1] = lt::std_mean(iota({2, 2}), {1}, false, true);
  EXPECT_EQ(shape(sd1), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(vals(sd1), (V{0.5, 0.5}));
  EXPECT_EQ(vals(mn1), (V{0.5, 2.5}));
}

TEST_P(Extras, MethodSpellingsAgreeWithTheFunctions) {
  Tensor x = iota({3, 2});
  Tensor idx = ivec({2, 0});
  Tensor src = lt::ones({2, 2}).to(dev());
  EXPECT_EQ(vals(x.index_copy(0, idx, src)), vals(lt::index_copy(x, 0, idx, src)));
  EXPECT_EQ(vals(x.index_add(0, idx, src, 2)), vals(lt::index_add(x, 0, idx, src * 2)));
  Tensor y = x.clone();
  y.index_add_(0, idx, src).index_copy_(0, ivec({1}), src.narrow(0, 0, 1));
  EXPECT_EQ(vals(y), (V{1, 2, 1, 1, 5, 6}));
  Tensor g = lt::zeros({2, 3}).to(dev());
  Tensor gi = ivec({0, 1, 2, 0, 1, 2}).reshape({2, 3});
  g.scatter_(1, gi, 4.0).scatter_add_(1, gi, lt::ones({2, 3}).to(dev()));
  EXPECT_EQ(vals(g), (V{5, 5, 5, 5, 5, 5}));
  g.scatter_reduce_(1, gi.narrow(1, 0, 1), lt::full({2, 1}, 2.0).to(dev()), "prod");
  EXPECT_EQ(vals(g), (V{10, 5, 5, 10, 5, 5}));
  Tensor m = iota({2, 2});
  m.masked_scatter_(m > 1, vec({7, 8}));
  EXPECT_EQ(vals(m), (V{0, 1, 7, 8}));
  EXPECT_EQ(vals(x.take_along_dim(ivec({1, 0}).reshape({1, 2}), 1)), (V{1, 0, 3, 2, 5, 4}));
  Tensor b = vec({1, 0});
  EXPECT_EQ(vals(b.logical_xor(vec({1, 1}))), (V{0, 1}));
  EXPECT_EQ(vals(b.xlogy(2.0)), vals(lt::xlogy(b, 2.0)));
  EXPECT_EQ(vals(vec({1, -2}).copysign(-1.0)), (V{-1, -2}));
  EXPECT_EQ(vals(vec({-1, 0, 2}).heaviside(vec({0.5}))), (V{0, 0.5, 1}));
  Tensor bb = lt::ones({2, 2}).to(dev());
  EXPECT_EQ(vals(bb.baddbmm(iota({1, 2, 1}), iota({1, 1, 2}))), (V{1, 1, 1, 2}));
  EXPECT_EQ(vals(bb.addbmm(iota({1, 2, 1}), iota({1, 1, 2}))), (V{1, 1, 1, 2}));
}

TEST_P(Extras, FunctionalSpellings) {
  lt::manual_seed(3);
  Tensor x = lt::randn({2, 4, 3}).to(dev());
  Tensor w = lt::rand({4}).to(dev()), b = lt::rand({4}).to(dev());
  EXPECT_EQ(vals(F::group_norm(x, F::GroupNormFuncOptions(2).weight(w).bias(b).eps(1e-3))),
            vals(lt::group_norm(x, 2, w, b, 1e-3)));
  EXPECT_EQ(vals(F::group_norm(x, 4)), vals(lt::group_norm(x, 4)));
  EXPECT_EQ(vals(F::logsigmoid(x)), vals(lt::log_sigmoid(x)));
  // libtorch's alpha dropouts default to evaluation; dropout2d's to training.
  EXPECT_EQ(vals(F::alpha_dropout(x)), vals(x));
  EXPECT_EQ(vals(F::feature_alpha_dropout(x)), vals(x));
  Tensor d = F::dropout2d(lt::ones({8, 16, 2}).to(dev()));
  V dv = vals(d);
  int zeros = 0;
  for (double v : dv) {
    EXPECT_TRUE(v == 0 || v == 2) << v;
    zeros += v == 0;
  }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, static_cast<int>(dv.size()));
}

// erfinv against PyTorch's float64 values, within what an ulp of erf near +-1 moves the result
// (dx/dy = sqrt(pi)/2 exp(x^2): 1.4e5 at 0.999999); float32 inputs against the float64 value of
// the rounded input, within an ulp (PyTorch's float32 kernel is 1.4e-5 off at float(0.999999):
// 3.457088 where the value is 3.457075); erfc in its tail.
TEST_P(Extras, ErfinvAndErfc) {
  const V y = {-0.999, -0.5, 0, 0.3, 0.9, 0.999999};
  const V want = {-2.3267537655135153, -0.4769362762044699, 0.0,
                  0.2724627147267544,  1.1630871536766743,  3.458910737283175};
  Tensor y64 = lt::tensor(y).to(dev());
  V got = vals(lt::erfinv(y64));
  for (size_t i = 0; i < y.size(); ++i) {
    const double slope = 0.8862269254527580 * std::exp(want[i] * want[i]);
    EXPECT_NEAR(got[i], want[i], 1e-14 + 2.3e-16 * slope) << y[i];
  }
  Tensor y32 = y64.to(lt::kFloat32);
  V got32 = vals(y32.erfinv()), at32 = vals(y32.to(lt::kFloat64).erfinv());
  for (size_t i = 0; i < y.size(); ++i) {
    const double w = static_cast<float>(at32[i]);
    EXPECT_NEAR(got32[i], w, 1.2e-7 * std::abs(w)) << y[i];
  }
  V sp = vals(vec({1, -1, 1.5, -0.0}).erfinv());
  EXPECT_EQ(sp[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(sp[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(sp[2]));
  EXPECT_EQ(sp[3], 0.0);
  EXPECT_EQ(lt::erfinv(ivec({0})).dtype(), lt::kFloat32);
  Tensor e = vec({0.5});
  e.erfinv_();
  EXPECT_NEAR(vals(e)[0], 0.4769362762044699, 1e-7);
  EXPECT_THROW(ivec({0}).erfinv_(), lt::Error);
  const V xe = {-2, 0, 3, 9};
  const V we = {1.9953222650189528, 1.0, 2.209049699858544e-05, 4.13703174651381e-37};
  V ge = vals(lt::tensor(xe).to(dev()).erfc());
  for (size_t i = 0; i < xe.size(); ++i) EXPECT_NEAR(ge[i], we[i], 1e-15 * we[i]) << xe[i];
  V ge32 = vals(lt::erfc(lt::tensor(xe).to(lt::kFloat32).to(dev())));
  for (size_t i = 0; i < xe.size(); ++i) EXPECT_NEAR(ge32[i], we[i], 2.5e-7 * we[i]) << xe[i];
}

// Convolutions padded by name, against PyTorch 1.13's values: "same" with an even kernel (the
// odd element after), with dilation, through a module with reflect padding; "valid"; errors.
TEST_P(Extras, ConvolutionPaddingByName) {
  namespace nn = lt::nn;
  Tensor x = iota({1, 1, 4, 4});
  Tensor w = lt::ones({1, 1, 2, 2}).to(dev());
  EXPECT_EQ(vals(lt::conv2d(x, w, {}, {1, 1}, "same")),
            (V{10, 14, 18, 10, 26, 30, 34, 18, 42, 46, 50, 26, 25, 27, 29, 15}));
  EXPECT_EQ(vals(F::conv2d(x, w, F::Conv2dFuncOptions().padding(lt::kSame))),
            vals(lt::conv2d(x, w, {}, {1, 1}, "same")));
  EXPECT_EQ(shape(F::conv2d(x, w, F::Conv2dFuncOptions().padding(lt::kValid))),
            (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(vals(lt::conv2d(x, w, {}, {1, 1}, "valid")), vals(lt::conv2d(x, w)));
  Tensor x1 = iota({1, 1, 5});
  Tensor w1 = vec({1, 2}).reshape({1, 1, 2});
  EXPECT_EQ(vals(F::conv1d(x1, w1, F::Conv1dFuncOptions().padding(lt::kSame).dilation(3))),
            (V{4, 6, 9, 2, 3}));
  nn::Conv2d m(
      nn::Conv2dOptions(1, 1, {2, 3}).padding(lt::kSame).padding_mode(lt::kReflect).bias(false));
  m->to(dev());
  {
    lt::NoGradGuard g;
    m->weight.fill_(1.0);
  }
  EXPECT_EQ(vals(m->forward(x)),
            (V{16, 18, 24, 26, 40, 42, 48, 50, 64, 66, 72, 74, 64, 66, 72, 74}));
  nn::Conv1d m1(nn::Conv1dOptions(1, 2, 4).padding(lt::kSame));
  m1->to(dev());
  EXPECT_EQ(shape(m1->forward(x1)), (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(nn::Conv2dOptions(1, 1, 3).padding({1, 2}).padding()[1], 2);
  EXPECT_NE(error_message([&] {
              lt::conv2d(x, w, {}, {2, 2}, "same");
            }).find("stride 1"),
            std::string::npos);
  EXPECT_NE(error_message([&] {
              lt::conv2d(x, w, {}, {1, 1}, "full");
            }).find("\"full\""),
            std::string::npos);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(1, 1, 3).stride(2).padding(lt::kSame)), lt::Error);
}

// Max pooling's indices, against PyTorch 1.13's (return_indices=True): ties take the first
// maximum; padding, ceil_mode, stride, dilation; 1-d; the modules' forward_with_indices.
TEST_P(Extras, MaxPoolIndicesMatchPyTorch) {
  Tensor x =
      vec({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4}).reshape({1, 1, 4, 5});
  auto [v, i] = lt::max_pool2d_with_indices(x, {2, 2});
  EXPECT_EQ(vals(v), (V{9, 6, 8, 9}));
  EXPECT_EQ(vals(i), (V{5, 7, 11, 12}));
  EXPECT_EQ(i.dtype(), lt::kInt64);
  auto [v2, i2] = F::max_pool2d_with_indices(
      x, F::MaxPool2dFuncOptions({2, 3}).stride({1, 2}).padding(1).ceil_mode(true));
  EXPECT_EQ(shape(v2), (std::vector<int64_t>{1, 1, 5, 3}));
  EXPECT_EQ(vals(v2), (V{3, 4, 5, 9, 6, 5, 9, 9, 9, 8, 9, 9, 3, 8, 8}));
  EXPECT_EQ(vals(i2), (V{0, 2, 4, 5, 7, 4, 5, 12, 14, 11, 12, 14, 15, 18, 18}));
  auto [v3, i3] = lt::max_pool2d_with_indices(x.squeeze(0), {2, 2}, {}, {0, 0}, {2, 2});
  EXPECT_EQ(vals(v3), (V{9, 9}));
  EXPECT_EQ(vals(i3), (V{12, 12}));
  EXPECT_EQ(shape(i3), (std::vector<int64_t>{1, 1, 2}));
  lt::nn::MaxPool1d m(lt::nn::MaxPool1dOptions(3).stride(2).padding(1));
  auto [v4, i4] = m->forward_with_indices(vec({1, 3, 2, 3, 0, 7}).reshape({1, 1, 6}));
  EXPECT_EQ(vals(v4), (V{3, 3, 7}));
  EXPECT_EQ(vals(i4), (V{1, 1, 5}));
  lt::nn::MaxPool2d m2(2);
  EXPECT_EQ(vals(std::get<1>(m2->forward_with_indices(x))), (V{5, 7, 11, 12}));
  EXPECT_EQ(vals(m2->forward(x)), (V{9, 6, 8, 9}));
  auto [ve, ie] = lt::max_pool2d_with_indices(lt::zeros({0, 2, 4, 4}).to(dev()), {2, 2});
  EXPECT_EQ(shape(ie), (std::vector<int64_t>{0, 2, 2, 2}));
  EXPECT_THROW(lt::max_pool2d_with_indices(iota({4, 4}), {2, 2}), lt::Error);
  // The values keep max_pool2d's gradient.
  Tensor xg = x.detach().requires_grad_();
  std::get<0>(lt::max_pool2d_with_indices(xg, {2, 2})).sum().backward();
  V g = vals(xg.grad());
  EXPECT_EQ(g[5] + g[7] + g[11] + g[12], 4);
  EXPECT_EQ(vals(xg.grad().sum()), (V{4}));
}

// unique and unique_consecutive against PyTorch 1.13's values; on lazy, one sync each.
TEST_P(Extras, UniqueMatchesPyTorch) {
  Tensor x = ivec({3, 1, 3, 2, 1, 1}).reshape({2, 3});
  lt::metrics::reset();
  auto [u, inv, cnt] = lt::_unique2(x, true, true, true);
  EXPECT_EQ(vals(u), (V{1, 2, 3}));
  EXPECT_EQ(shape(inv), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(vals(inv), (V{2, 0, 2, 1, 0, 0}));
  EXPECT_EQ(vals(cnt), (V{3, 1, 2}));
  if (dev().is_lazy()) EXPECT_EQ(lt::metrics::counter("DataDependentSync"), 1);
  auto [u1, i1] = lt::_unique(vec({2.5, -1, 2.5}));
  EXPECT_EQ(vals(u1), (V{-1, 2.5}));
  EXPECT_EQ(i1.numel(), 0);
  Tensor y = ivec({1, 1, 2, 2, 3, 1, 1, 2});
  auto [c, ci, cc] = y.unique_consecutive(true, true);
  EXPECT_EQ(vals(c), (V{1, 2, 3, 1, 2}));
  EXPECT_EQ(vals(ci), (V{0, 0, 1, 1, 2, 3, 3, 4}));
  EXPECT_EQ(vals(cc), (V{2, 2, 1, 2, 1}));
  Tensor z = ivec({1, 2, 1, 2, 3, 4, 1, 2}).reshape({4, 2});
  auto [zd, zi, zc] = lt::unique_consecutive(z, true, true, 0);
  EXPECT_EQ(vals(zd), (V{1, 2, 3, 4, 1, 2}));
  EXPECT_EQ(vals(zi), (V{0, 0, 1, 2}));
  EXPECT_EQ(vals(zc), (V{2, 1, 1}));
  auto [zt, zti, ztc] = lt::unique_consecutive(z.t(), false, true, 1);
  EXPECT_EQ(shape(zt), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(vals(zt), (V{1, 3, 1, 2, 4, 2}));
  EXPECT_EQ(vals(ztc), (V{2, 1, 1}));
  auto [e, ei, ec] = lt::unique(vec({}), true, true, true);
  EXPECT_EQ(e.numel() + ei.numel() + ec.numel(), 0);
  V nan = vals(std::get<0>(lt::unique(vec({NAN, 1, NAN}))));
  ASSERT_EQ(nan.size(), 3u);  // NaNs are distinct, as PyTorch's
  EXPECT_EQ(nan[0], 1);
  EXPECT_TRUE(std::isnan(nan[1]) && std::isnan(nan[2]));
}

// mode, repeat_interleave by a tensor, interpolate's area and nearest-exact, and the free
// masked_fill and method movedim, against PyTorch 1.13's values.
TEST_P(Extras, ModeRepeatsAndResampling) {
  Tensor x = vec({1, 2, 2, 1, 3, 5, 4, 4, 5, 0, 7, 7, 7, 1, 1}).reshape({3, 5});
  auto [mv, mi] = x.mode(1);
  EXPECT_EQ(vals(mv), (V{1, 4, 7}));  // ties: the smallest value, at its last index
  EXPECT_EQ(vals(mi), (V{3, 2, 2}));
  auto [cv, ci] = lt::mode(ivec({1, 1, 2, 2, 2, 3}).reshape({3, 2}), 0, true);
  EXPECT_EQ(shape(cv), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(vals(cv), (V{2, 1}));
  EXPECT_EQ(vals(ci), (V{2, 0}));
  EXPECT_EQ(vals(std::get<1>(vec({3, 1, 2}).mode())), (V{1}));
  EXPECT_THROW(lt::mode(lt::zeros({2, 0}).to(dev()), 1), lt::Error);
  Tensor m = ivec({1, 2, 3, 4}).reshape({2, 2});
  lt::metrics::reset();
  EXPECT_EQ(vals(m.repeat_interleave(ivec({1, 2}), 0)), (V{1, 2, 3, 4, 3, 4}));
  if (dev().is_lazy()) EXPECT_EQ(lt::metrics::counter("DataDependentSync"), 1);
  EXPECT_EQ(vals(lt::repeat_interleave(ivec({2, 0, 1}))), (V{0, 0, 2}));
  EXPECT_EQ(vals(lt::repeat_interleave(m, lt::tensor(int64_t{2}).to(dev()))),
            (V{1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(lt::repeat_interleave(ivec({0, 0})).numel(), 0);
  EXPECT_THROW(lt::repeat_interleave(ivec({1, -1})), lt::Error);
  EXPECT_THROW(m.repeat_interleave(ivec({1, 2, 3}), 0), lt::Error);
  Tensor img = iota({1, 1, 4, 5});
  EXPECT_EQ(vals(F::interpolate(
                img, F::InterpolateFuncOptions().size(std::vector<int64_t>{3, 2}).mode(lt::kArea))),
            (V{3.5, 5.5, 8.5, 10.5, 13.5, 15.5}));
  EXPECT_EQ(vals(F::interpolate(img, F::InterpolateFuncOptions()
                                         .scale_factor(std::vector<double>{0.5})
                                         .mode(lt::kNearestExact))),
            (V{6, 8, 16, 18}));
  EXPECT_EQ(vals(F::interpolate(
                iota({1, 1, 5}),
                F::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(lt::kNearestExact))),
            (V{0, 0, 1, 2, 2, 3, 4, 4}));
  // Bicubic: PyTorch's values (Keys' kernel, A = -0.75, taps clamped at the borders).
  Tensor sq = vec({0, 1, 4, 2, 3, 1, 5, 0, 2}).reshape({1, 1, 3, 3});
  auto bicubic = [&](F::InterpolateFuncOptions o, const V& want) {
    V got = vals(F::interpolate(sq, o.mode(lt::kBicubic)));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-6) << i;
  };
  bicubic(F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 5}),
          {-0.239555, 0.002606, 0.856446, 2.984084,  4.537786, 0.790426, 1.639383,
           2.608887,  2.338078, 1.909973, 3.412344,  2.929652, 2.138672, 1.37696,
           0.924403,  5.736676, 2.943561, -0.215332, 0.793372, 2.29134});
  bicubic(F::InterpolateFuncOptions().size(std::vector<int64_t>{2, 4}).align_corners(true),
          {0.0, 0.351852, 2.055555, 4.0, 5.0, 1.351853, 0.074073, 2.0});
  bicubic(F::InterpolateFuncOptions().scale_factor(std::vector<double>{0.5}), {1.488281});
  EXPECT_EQ(vals(lt::masked_fill(vec({1, 2}), vec({1, 2}) > 1.5, 0)), (V{1, 0}));
  EXPECT_EQ(shape(iota({2, 3, 4}).movedim({0, 1}, {2, 0})), (std::vector<int64_t>{3, 4, 2}));
}

// unique along a dim, trilinear resizing, a clamp method with tensor bounds and the scans'
// dtype on the method, against PyTorch 1.13's values.
TEST_P(Extras, UniqueDimTrilinearAndMethodSpellings) {
  Tensor z = ivec({1, 3, 1, 2, 1, 2, 1, 3, 1, 0, 5, 0}).reshape({4, 3});
  auto [rows, ri, rc] = lt::unique_dim(z, 0, true, true, true);
  EXPECT_EQ(shape(rows), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(vals(rows), (V{0, 5, 0, 1, 3, 1, 2, 1, 2}));
  EXPECT_EQ(vals(ri), (V{1, 2, 1, 0}));
  EXPECT_EQ(vals(rc), (V{1, 2, 1}));
  auto [cols, ci, cc] = lt::unique_dim(z, -1, true, true, true);
  EXPECT_EQ(shape(cols), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(vals(cols), (V{1, 3, 2, 1, 1, 3, 0, 5}));
  EXPECT_EQ(vals(ci), (V{0, 1, 0}));
  EXPECT_EQ(vals(cc), (V{2, 1}));
  EXPECT_EQ(vals(std::get<0>(lt::unique_dim(vec({2, 1, 1, 5, 2, 0}).reshape({3, 2}), 0))),
            (V{1, 5, 2, 0, 2, 1}));  // lexicographic: the first column decides first
  EXPECT_THROW(lt::unique_dim(z, 2), lt::Error);

  Tensor cube = vec({0, 1, 4, 2, 3, 1, 5, 0, 2, 7, 1, 3}).reshape({1, 1, 2, 2, 3});
  auto near = [](const Tensor& got, const V& want) {
    V g = vals(got);
    ASSERT_EQ(g.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-6) << i;
  };
  near(F::interpolate(
           cube,
           F::InterpolateFuncOptions().size(std::vector<int64_t>{3, 3, 4}).mode(lt::kTrilinear)),
       {0.0, 0.625, 2.125,  4.0, 1.0, 1.625,   2.1875,  2.5, 2.0, 2.625,  2.25, 1.0,
        2.5, 1.25,  1.4375, 3.0, 3.5, 2.09375, 1.71875, 2.5, 4.5, 2.9375, 2.0,  2.0,
        5.0, 1.875, 0.75,   2.0, 6.0, 2.5625,  1.25,    2.5, 7.0, 3.25,   1.75, 3.0});
  near(F::interpolate(cube, F::InterpolateFuncOptions()
                                .size(std::vector<int64_t>{3, 2, 2})
                                .mode(lt::kTrilinear)
                                .align_corners(true)),
       {0.0, 4.0, 2.0, 1.0, 2.5, 3.0, 4.5, 2.0, 5.0, 2.0, 7.0, 3.0});
  EXPECT_THROW(
      F::interpolate(
          cube.squeeze(0),
          F::InterpolateFuncOptions().size(std::vector<int64_t>{2, 2}).mode(lt::kTrilinear)),
      lt::Error);  // trilinear is for 5-d input only

  Tensor x = vec({-2, 0.5, 3, 7});
  EXPECT_EQ(vals(x.clamp(vec({0, 1, 0, 0}), vec({1, 2, 2, 9}))), (V{0, 1, 2, 7}));
  EXPECT_EQ(vals(x.clamp_min(vec({0}))), (V{0, 0.5, 3, 7}));
  EXPECT_EQ(vals(x.clamp_max(vec({1, 1, 1, 8}))), (V{-2, 0.5, 1, 7}));
  Tensor y = x.clone();
  y.clamp_(std::nullopt, vec({1}));
  EXPECT_EQ(vals(y), (V{-2, 0.5, 1, 1}));
  Tensor n = ivec({1, 2, 3});
  EXPECT_THROW(n.clamp_(vec({0.5}), std::nullopt), lt::Error);  // float result into int64
  EXPECT_EQ(vals(n), (V{1, 2, 3}));
  Tensor c = n.cumsum(0, lt::kFloat64);
  EXPECT_EQ(c.dtype(), lt::kFloat64);
  EXPECT_EQ(vals(c), (V{1, 3, 6}));
  EXPECT_EQ(n.cumprod(0, lt::kFloat32).dtype(), lt::kFloat32);
}

// Every activation module no other test builds: its options reach the function, its name and
// clone() work, on both devices (the functions themselves are checked against references in the
// op sweep and test_nn_functional).
TEST_P(Extras, ActivationModulesApplyTheirFunctions) {
  namespace nn = lt::nn;
  lt::manual_seed(7);
  Tensor x = (lt::randn({3, 4}) * 3).to(dev());
  auto check = [&](const char* name, nn::AnyModule m, const Tensor& want) {
    Tensor got = m.forward(x);
    EXPECT_EQ(m.ptr()->name(), name);
    EXPECT_EQ(vals(got), vals(want)) << name;
    EXPECT_EQ(vals(m.clone().forward(x)), vals(want)) << name << " clone";
  };
  check("Hardtanh", nn::AnyModule(nn::Hardtanh(nn::HardtanhOptions().min_val(-2).max_val(0.5))),
        lt::hardtanh(x, -2, 0.5));
  check("SELU", nn::AnyModule(nn::SELU()), lt::selu(x));
  check("CELU", nn::AnyModule(nn::CELU(nn::CELUOptions().alpha(0.5))), lt::celu(x, 0.5));
  check("Mish", nn::AnyModule(nn::Mish()), lt::mish(x));
  check("Hardswish", nn::AnyModule(nn::Hardswish()), lt::hardswish(x));
  check("Hardsigmoid", nn::AnyModule(nn::Hardsigmoid()), lt::hardsigmoid(x));
  check("LogSigmoid", nn::AnyModule(nn::LogSigmoid()), lt::log_sigmoid(x));
  check("GLU", nn::AnyModule(nn::GLU(1)), lt::glu(x, 1));
  check("Softmin", nn::AnyModule(nn::Softmin(1)), lt::softmin(x, 1));
  check("ReLU6", nn::AnyModule(nn::ReLU6()), lt::relu6(x));
  check("Softsign", nn::AnyModule(nn::Softsign()), lt::softsign(x));
  check("Threshold", nn::AnyModule(nn::Threshold(0.1, 20)), lt::threshold(x, 0.1, 20));
  check("SiLU", nn::AnyModule(nn::SiLU()), lt::silu(x));
  Tensor s = x.unsqueeze(0);
  nn::AdaptiveAvgPool1d pool(2);
  EXPECT_EQ(vals(pool->forward(s)), vals(lt::adaptive_avg_pool1d(s, {2})));
  EXPECT_EQ(pool->name(), "AdaptiveAvgPool1d");
}

// EmbeddingBag::from_pretrained (frozen copy, the options' mode) and InstanceNorm on one sample
// without its batch dim, as libtorch's.
TEST_P(Extras, PretrainedBagsAndUnbatchedInstanceNorm) {
  namespace nn = lt::nn;
  Tensor table = iota({4, 2});
  nn::EmbeddingBag bag = nn::EmbeddingBag::from_pretrained(
      table, nn::EmbeddingBagFromPretrainedOptions().mode(lt::kSum));
  bag->to(dev());
  EXPECT_FALSE(bag->weight.requires_grad());
  EXPECT_EQ(vals(bag->forward(ivec({0, 3, 1, 1}).reshape({2, 2}))), (V{6, 8, 4, 6}));
  table.fill_(0.0);  // a copy: the bag keeps its rows
  EXPECT_EQ(vals(bag->weight.sum()), (V{28}));
  nn::EmbeddingBag mean = nn::EmbeddingBag::from_pretrained(
      iota({3, 1}), nn::EmbeddingBagFromPretrainedOptions().freeze(false));
  EXPECT_TRUE(mean->weight.requires_grad());
  EXPECT_EQ(vals(mean->forward(ivec({0, 2}).reshape({1, 2}))), (V{1}));
  nn::InstanceNorm1d in(nn::InstanceNorm1dOptions(2));
  in->to(dev());
  Tensor one = vec({1, 2, 3, 5, 5, 5}).reshape({2, 3});
  Tensor y = in->forward(one);
  EXPECT_EQ(shape(y), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(vals(y), vals(in->forward(one.unsqueeze(0)).squeeze(0)));
  EXPECT_THROW(in->forward(iota({3, 3})), lt::Error);
}

// Lazy against eager on random shapes, layouts (transposed) and empty sizes.
TEST_P(Extras, LazyMatchesEagerOnRandomShapes) {
  if (dev().is_cpu()) GTEST_SKIP() << "compares the lazy device with cpu";
  std::mt19937 gen(17);
  for (int trial = 0; trial < 10; ++trial) {
    std::uniform_int_distribution<int64_t> sz(trial == 0 ? 0 : 1, 5);
    const int64_t n = sz(gen), m = sz(gen) + 1, k = sz(gen);
    Tensor x = lt::randn({m, n, k + 1});
    if (trial % 2) x = x.transpose(0, 2).contiguous().transpose(0, 2);  // non-contiguous
    Tensor t = lt::randn({k + 1}), q = lt::rand({n, 1}) + 0.5;
    Tensor y = x.to(dev()), tl = t.to(dev()), ql = q.to(dev());
    auto same = [&](const std::string& what, const Tensor& e, const Tensor& l) {
      ASSERT_EQ(shape(e), shape(l)) << what;
      V a = vals(e), c = vals(l);
      // Sums of up to 6 products in another order: float32 rounding, 1e-5 of values ~ 1.
      for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], c[i], 1e-5) << what << " " << i;
    };
    same("inner", x.inner(t), y.inner(tl));
    same("dot", t.dot(t), tl.dot(tl));
    same("addcmul", x.addcmul(q, t, 0.25), y.addcmul(ql, tl, 0.25));
    same("addcdiv", x.addcdiv(t, q, -2), y.addcdiv(tl, ql, -2));
    Tensor idx = lt::tensor(std::vector<int64_t>{0, -1});
    same("index_fill", x.index_fill(0, idx, 3.0), y.index_fill(0, idx.to(dev()), 3.0));
    same("unflatten", x.unflatten(2, {1, -1}), y.unflatten(2, {1, -1}));
    same("norm0", x.norm(0, {1}), y.norm(0, {1}));
    same("norm3", x.norm(3, {0, 2}), y.norm(3, {0, 2}));
    auto [emv, emi] = x.round().mode(2);
    auto [lmv, lmi] = y.round().mode(2);
    same("mode values", emv, lmv);
    same("mode indices", emi, lmi);
    if (n > 0) {
      Tensor xp = x.unsqueeze(0), yp = y.unsqueeze(0);
      auto [ev, ei] = lt::max_pool2d_with_indices(xp, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true);
      auto [lv, li] = lt::max_pool2d_with_indices(yp, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true);
      same("max_pool2d values", ev, lv);
      same("max_pool2d indices", ei, li);
      same("conv2d same", lt::conv2d(xp, xp.narrow(2, 0, 1), {}, {1, 1}, "same"),
           lt::conv2d(yp, yp.narrow(2, 0, 1), {}, {1, 1}, "same"));
      const auto tri =
          F::InterpolateFuncOptions().size(std::vector<int64_t>{2, n + 1, 3}).mode(lt::kTrilinear);
      same("trilinear", F::interpolate(xp.unsqueeze(0), tri), F::interpolate(yp.unsqueeze(0), tri));
    }
    auto [eu, eui, euc] = lt::unique_dim(x.round(), 1, true, true, true);
    auto [lu, lui, luc] = lt::unique_dim(y.round(), 1, true, true, true);
    same("unique_dim", eu, lu);
    same("unique_dim inverse", eui, lui);
    same("unique_dim counts", euc, luc);
  }
}

TEST(ExtrasGrad, Gradcheck) {
  for (const char* d : {"cpu", "lazy"}) {
    const lt::Device dev(d);
    auto rnd = [](std::vector<int64_t> s, uint32_t seed) {
      return lt_test::uniform_input(std::move(s), seed);
    };
    gradcheck(
        "dot", [](Ts x) { return lt::dot(x[0], x[1]); }, {rnd({4}, 1), rnd({4}, 2)}, dev);
    gradcheck(
        "inner", [](Ts x) { return lt::inner(x[0], x[1]); }, {rnd({2, 3}, 3), rnd({4, 3}, 4)}, dev);
    gradcheck(
        "addcmul", [](Ts x) { return lt::addcmul(x[0], x[1], x[2], 0.5); },
        {rnd({2, 1}, 5), rnd({2, 3}, 6), rnd({3}, 7)}, dev);
    gradcheck(
        "addcdiv", [](Ts x) { return lt::addcdiv(x[0], x[1], x[2], -2); },
        {rnd({3}, 8), rnd({2, 3}, 9), rnd({2, 1}, 10)}, dev);
    gradcheck(
        "index_fill",
        [](Ts x) {
          return x[0].index_fill(1, lt::tensor(std::vector<int64_t>{2}).to(x[0].device()),
                                 x[1].sum());
        },
        {rnd({2, 3}, 11), rnd({2}, 12)}, dev);
    gradcheck(
        "unflatten",
        [](Ts x) {
          return x[0].unflatten(0, {2, 3}).sum(1);
        },
        {rnd({6}, 13)}, dev);
    gradcheck(
        "erfinv", [](Ts x) { return (x[0] - 1.2).erfinv(); }, {rnd({2, 3}, 15)}, dev);
    gradcheck(
        "erfc", [](Ts x) { return (x[0] * 2 - 1.5).erfc(); }, {rnd({2, 3}, 16)}, dev);
    gradcheck(
        "conv2d same",
        [](Ts x) {
          return lt::conv2d(x[0], x[1], {}, {1, 1}, "same", {1, 2});
        },
        {rnd({1, 2, 3, 4}, 17), rnd({1, 2, 2, 3}, 18)}, dev);
    gradcheck(
        "bicubic",
        [](Ts x) {
          return F::interpolate(
              x[0],
              F::InterpolateFuncOptions().size(std::vector<int64_t>{3, 4}).mode(lt::kBicubic));
        },
        {rnd({1, 1, 2, 3}, 19)}, dev);
    gradcheck(
        "trilinear",
        [](Ts x) {
          return F::interpolate(x[0], F::InterpolateFuncOptions()
                                          .size(std::vector<int64_t>{3, 2, 4})
                                          .mode(lt::kTrilinear)
                                          .align_corners(true));
        },
        {rnd({1, 1, 2, 3, 2}, 20)}, dev);
    gradcheck(
        "clamp tensor bounds", [](Ts x) { return x[0].clamp(x[1], x[2]); },
        {rnd({2, 3}, 21), rnd({3}, 22), rnd({2, 1}, 23)}, dev);
    gradcheck(
        "norm3", [](Ts x) { return x[0].norm(3, {1}); }, {rnd({2, 3}, 14)}, dev);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Extras, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
