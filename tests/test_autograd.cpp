// Reverse-mode autograd: finite-difference gradchecks of every differentiable primitive and of
// the composites built from them, the semantics of backward/grad/detach/NoGradGuard/in-place
// ops, and lazy-device gradients equal to eager ones.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gradcheck.h"

namespace {

const lt::Device kCpu("cpu");
const lt::Device kLazy("lazy");

using namespace lt_test;

// ---- inputs

// Every call draws different values; the sequence is fixed, so the tests are deterministic.
std::mt19937& rng() {
  static std::mt19937 g(20240611u);
  return g;
}

// Uniform in [lo, hi].
In rnd(std::vector<int64_t> sizes, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  In in{std::vector<double>(numel_of(sizes)), sizes};
  for (double& x : in.v) x = d(rng());
  return in;
}

// |x| in [lo, hi] with a random sign: keeps clear of kinks at 0 (abs, relu, norm-1).
In away0(std::vector<int64_t> sizes, double lo = 0.3, double hi = 1.5) {
  In in = rnd(sizes, lo, hi);
  std::bernoulli_distribution coin(0.5);
  for (double& x : in.v) x = coin(rng()) ? x : -x;
  return in;
}

// A shuffle of {offset, offset + 0.1, offset + 0.2, ...} - 1: pairwise gaps >= 0.1, far more than
// the finite-difference step, so max/min-style ops have no ties and no switching.
In distinct(std::vector<int64_t> sizes, double offset = 0) {
  In in{std::vector<double>(numel_of(sizes)), sizes};
  for (size_t i = 0; i < in.v.size(); ++i) in.v[i] = offset + 0.1 * static_cast<double>(i) - 1;
  std::shuffle(in.v.begin(), in.v.end(), rng());
  return in;
}

lt::Tensor ints(std::vector<int64_t> v, std::vector<int64_t> sizes) { return lt::tensor(v, sizes); }

// A constant (index, condition, target) moved to the device of `like`.
lt::Tensor on(const lt::Tensor& c, const lt::Tensor& like) { return c.to(like.device()); }

// ---- primitives

// Each unary op's own gradcheck is a row of test_op_sweep's unary table (OpSweep.UnaryGradients,
// on cpu and lazy); here: operator-, more shapes and chains through several nodes.
TEST(Gradcheck, Unary) {
  const std::vector<int64_t> s = {2, 3};
  gradcheck("operator-", [](Ts x) { return -x[0]; }, {rnd(s)});
  // Unary ops of 0-d and 3-d tensors, and chains (gradients flowing through several nodes).
  gradcheck("exp 0-d", [](Ts x) { return x[0].exp(); }, {rnd({})});
  gradcheck("tanh 3-d", [](Ts x) { return x[0].tanh(); }, {rnd({2, 1, 3})});
  gradcheck("chain", [](Ts x) { return x[0].sin().exp().mul(x[0]).sigmoid(); }, {rnd(s)});
}

TEST(Gradcheck, Binary) {
  const std::vector<int64_t> s = {2, 3};
  gradcheck("add", [](Ts x) { return x[0] + x[1]; }, {rnd(s), rnd(s)});
  gradcheck("add alpha", [](Ts x) { return x[0].add(x[1], 2.5); }, {rnd(s), rnd(s)});
  gradcheck("add scalar", [](Ts x) { return x[0] + 2.0; }, {rnd(s)});
  gradcheck("sub", [](Ts x) { return x[0] - x[1]; }, {rnd(s), rnd(s)});
  gradcheck("sub alpha", [](Ts x) { return x[0].sub(x[1], -1.5); }, {rnd(s), rnd(s)});
  gradcheck("rsub scalar", [](Ts x) { return 3.0 - x[0]; }, {rnd(s)});
  gradcheck("mul", [](Ts x) { return x[0] * x[1]; }, {rnd(s), rnd(s)});
  gradcheck("mul self", [](Ts x) { return x[0] * x[0]; }, {rnd(s)});
  gradcheck("mul scalar", [](Ts x) { return x[0] * -1.7; }, {rnd(s)});
  gradcheck("div", [](Ts x) { return x[0] / x[1]; }, {rnd(s), away0(s, 0.5, 2)});
  gradcheck("div scalar", [](Ts x) { return x[0] / 3.0; }, {rnd(s)});
  gradcheck("rdiv scalar", [](Ts x) { return 2.0 / x[0]; }, {away0(s, 0.5, 2)});
  gradcheck("pow tensor^tensor", [](Ts x) { return x[0].pow(x[1]); },
            {rnd(s, 0.5, 2), rnd(s, -1.5, 1.5)});
  gradcheck("pow tensor^3", [](Ts x) { return x[0].pow(3); }, {rnd(s)});
  gradcheck("pow tensor^0.5", [](Ts x) { return x[0].pow(0.5); }, {rnd(s, 0.5, 2)});
  gradcheck("pow tensor^-2", [](Ts x) { return x[0].pow(-2.0); }, {away0(s, 0.5, 2)});
  gradcheck("pow scalar^tensor", [](Ts x) { return lt::pow(2.5, x[0]); }, {rnd(s)});
  gradcheck("maximum", [](Ts x) { return lt::maximum(x[0], x[1]); },
            {distinct(s), distinct(s, 0.05)});
  gradcheck("minimum", [](Ts x) { return x[0].minimum(x[1]); }, {distinct(s), distinct(s, 0.05)});
  // fmod/remainder: 1 for a, -trunc(a / b) / -floor(a / b) for b (a / b well off integers).
  gradcheck("fmod", [](Ts x) { return lt::fmod(x[0] * 4.0, x[1]); }, {rnd(s), away0(s, 0.5, 2)});
  gradcheck("remainder", [](Ts x) { return x[0] * 4.0 % x[1]; }, {rnd(s), away0(s, 0.5, 2)});
  gradcheck("remainder scalar", [](Ts x) { return (x[0] * 4.0).remainder(-1.5); }, {rnd(s)});
  const lt::Tensor cond = lt::tensor(std::vector<double>{1, -1, -1, 1, 1, -1}, s) > 0.0;
  gradcheck("where", [&](Ts x) { return lt::where(on(cond, x[0]), x[0], x[1]); }, {rnd(s), rnd(s)});
  gradcheck("where method", [&](Ts x) { return x[0].where(on(cond, x[0]), x[1]); },
            {rnd(s), rnd(s)});
  gradcheck("where scalar other", [&](Ts x) { return lt::where(on(cond, x[0]), x[0], 0.5); },
            {rnd(s)});
  gradcheck("where scalar self", [&](Ts x) { return lt::where(on(cond, x[0]), -2.0, x[0]); },
            {rnd(s)});
}

// The elementwise math composites differentiate through their primitives; each against finite
// differences, inside its domain and away from the points where it is not smooth.
TEST(Gradcheck, MathComposites) {
  const std::vector<int64_t> s = {2, 3};
  for (const char* dev : {"cpu", "lazy"}) {
    const lt::Device d(dev);
    gradcheck(
        "tan", [](Ts x) { return lt::tan(x[0]); }, {rnd(s)}, d);
    gradcheck(
        "sinh", [](Ts x) { return x[0].sinh(); }, {rnd(s, -3, 3)}, d);
    gradcheck(
        "cosh", [](Ts x) { return lt::cosh(x[0]); }, {rnd(s, -3, 3)}, d);
    gradcheck(
        "asinh", [](Ts x) { return lt::asinh(x[0]); }, {rnd(s, -5, 5)}, d);
    gradcheck(
        "acosh", [](Ts x) { return x[0].acosh(); }, {rnd(s, 1.2, 6)}, d);
    gradcheck(
        "atanh", [](Ts x) { return lt::atanh(x[0]); }, {rnd(s, -0.9, 0.9)}, d);
    gradcheck(
        "asin", [](Ts x) { return lt::asin(x[0]); }, {rnd(s, -0.9, 0.9)}, d);
    gradcheck(
        "acos", [](Ts x) { return x[0].acos(); }, {rnd(s, -0.9, 0.9)}, d);
    gradcheck(
        "log2", [](Ts x) { return lt::log2(x[0]); }, {rnd(s, 0.3, 2)}, d);
    gradcheck(
        "log10", [](Ts x) { return x[0].log10(); }, {rnd(s, 0.3, 2)}, d);
    gradcheck(
        "exp2", [](Ts x) { return lt::exp2(x[0]); }, {rnd(s, -3, 3)}, d);
    gradcheck(
        "frac", [](Ts x) { return lt::frac(x[0] * 3.0); }, {rnd(s, 0.05, 0.3)}, d);
    gradcheck(
        "atan2", [](Ts x) { return lt::atan2(x[0], x[1]); }, {away0(s), away0({3})}, d);
    gradcheck(
        "atan2 x<0", [](Ts x) { return x[0].atan2(-x[1]); }, {away0(s), rnd(s, 0.3, 2)}, d);
    // The sign source has no gradient (PyTorch's is zeros): a constant here.
    gradcheck(
        "copysign",
        [](Ts x) {
          return lt::copysign(
              x[0], on(lt::tensor(std::vector<double>{-1, 2, -0.5, 1, -3, 0.5}, {2, 3}), x[0]));
        },
        {away0(s)}, d);
    gradcheck(
        "xlogy", [](Ts x) { return lt::xlogy(x[0], x[1]); }, {rnd(s), rnd(s, 0.3, 2)}, d);
    gradcheck(
        "lerp", [](Ts x) { return lt::lerp(x[0], x[1], x[2]); }, {rnd(s), rnd({3}), rnd(s, 0, 1)},
        d);
    gradcheck(
        "lerp scalar", [](Ts x) { return x[0].lerp(x[1], 0.75); }, {rnd(s), rnd(s)}, d);
    gradcheck(
        "clamp tensors", [](Ts x) { return lt::clamp(x[0], x[1], x[2]); },
        {distinct(s), distinct({3}, -0.35), distinct({2, 1}, 0.45)}, d);
  }
}

// Gradients of broadcast operands must be summed back to each operand's own shape.
// x.pow(1/3) in float64: the exponent's gradient term e - 1 is computed from the saved wrapped
// scalar; it was rounded to float32 (relative error ~5e-8) until it kept e's dtype.
TEST(Gradcheck, PowByAFractionalScalarIsExactInFloat64) {
  for (const lt::Device& d : {kCpu, kLazy}) {
    lt::Tensor x = lt::tensor(std::vector<double>{0.3, 0.7, 2.5}, {3}).to(d).requires_grad_();
    lt::pow(x, 1.0 / 3).sum().backward();
    std::vector<double> g = x.grad().cpu().to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) {
      const double v = std::vector<double>{0.3, 0.7, 2.5}[i];
      EXPECT_NEAR(g[i], std::pow(v, -2.0 / 3) / 3, 1e-15) << d.str() << " [" << i << "]";
    }
  }
}

// Slices of one intermediate, read one at a time as an RNN reads its input projections: their
// gradients are added into the slices of one gradient the engine owns (engine.cpp). Overlapping
// slices, strided slices, selects, a first gradient the engine did not make (sum's expanded
// ones, add's shared g, which it must copy before adding into) and slices after it, on cpu and
// lazy.
TEST(Gradcheck, SlicesOfOneIntermediateSumIntoItsGradient) {
  const Fn rnn_like = [](Ts x) {
    lt::Tensor h = x[0] * x[1];  // an intermediate [5, 3, 4]
    lt::Tensor acc = lt::zeros({3, 4}, h.options());
    for (int64_t t = 0; t < 5; ++t) acc = (acc + h.select(0, t)).tanh();
    return acc;
  };
  const Fn mixed = [](Ts x) {
    lt::Tensor h = x[0].exp();
    return h.sum() + h.narrow(0, 1, 3).sum(0) * h.narrow(0, 2, 3).sum(0) +
           h.slice(2, 0, 4, 3).sum() + h.select(1, 2).narrow(0, 1, 3) * 2 + (h + h).select(0, 4);
  };
  // The whole of h reaches its gradient first (sum's expanded ones), then a slice, in either
  // order of the terms.
  const Fn whole_first = [](Ts x) {
    lt::Tensor h = x[0] * 3;
    return h.sum(0) + h.select(0, 1).exp().exp() * h.select(0, 3);
  };
  const Fn whole_last = [](Ts x) {
    lt::Tensor h = x[0] * 3;
    return h.select(0, 1).exp().exp() * h.select(0, 3) + h.sum(0);
  };
  for (lt::Device d : {kCpu, kLazy}) {
    gradcheck("rnn-like slices", rnn_like, {rnd({5, 3, 4}), rnd({5, 3, 4})}, d);
    gradcheck("mixed slices", mixed, {rnd({5, 3, 4})}, d);
    gradcheck("whole first", whole_first, {rnd({5, 3, 4}, -0.3, 0.3)}, d);
    gradcheck("whole last", whole_last, {rnd({5, 3, 4}, -0.3, 0.3)}, d);
  }
}

TEST(Gradcheck, Broadcasting) {
  gradcheck("add [2,3]+[3]", [](Ts x) { return x[0] + x[1]; }, {rnd({2, 3}), rnd({3})});
  gradcheck("sub [3]-[2,3]", [](Ts x) { return x[0] - x[1]; }, {rnd({3}), rnd({2, 3})});
  gradcheck("mul [2,1]*[1,3]", [](Ts x) { return x[0] * x[1]; }, {rnd({2, 1}), rnd({1, 3})});
  gradcheck("mul [2,3,2]*[3,1]", [](Ts x) { return x[0] * x[1]; }, {rnd({2, 3, 2}), rnd({3, 1})});
  gradcheck("mul by 0-d", [](Ts x) { return x[0] * x[1]; }, {rnd({2, 3}), rnd({})});
  gradcheck("div [2,3]/[2,1]", [](Ts x) { return x[0] / x[1]; },
            {rnd({2, 3}), away0({2, 1}, 0.5, 2)});
  gradcheck("div 0-d/[2,2]", [](Ts x) { return x[0] / x[1]; }, {rnd({}), away0({2, 2}, 0.5, 2)});
  gradcheck("pow [3,1]^[2]", [](Ts x) { return x[0].pow(x[1]); }, {rnd({3, 1}, 0.5, 2), rnd({2})});
  gradcheck("maximum [2,3],[3]", [](Ts x) { return lt::maximum(x[0], x[1]); },
            {distinct({2, 3}), distinct({3}, 0.05)});
  gradcheck("minimum [2,1],[1,3]", [](Ts x) { return lt::minimum(x[0], x[1]); },
            {distinct({2, 1}), distinct({1, 3}, 0.05)});
  const lt::Tensor cond = lt::tensor(std::vector<double>{1, -1, -1, 1, 1, -1}, {2, 3}) > 0.0;
  gradcheck("where cond[2,3] a[3] b[2,1]",
            [&](Ts x) { return lt::where(on(cond, x[0]), x[0], x[1]); }, {rnd({3}), rnd({2, 1})});
  const lt::Tensor cond_row = lt::tensor(std::vector<double>{1, -1, 1}, {3}) > 0.0;
  gradcheck("where cond[3] a[2,3] b[]",
            [&](Ts x) { return lt::where(on(cond_row, x[0]), x[0], x[1]); },
            {rnd({2, 3}), rnd({})});
}

TEST(Gradcheck, Reductions) {
  const std::vector<int64_t> s = {2, 3, 4};
  gradcheck("sum", [](Ts x) { return x[0].sum(); }, {rnd(s)});
  gradcheck("sum dim 1", [](Ts x) { return x[0].sum(1); }, {rnd(s)});
  gradcheck("sum dim -1 keepdim", [](Ts x) { return x[0].sum(-1, true); }, {rnd(s)});
  gradcheck("sum dims {0,2}", [](Ts x) { return x[0].sum({0, 2}); }, {rnd(s)});
  gradcheck("sum dims {0,2} keepdim", [](Ts x) { return x[0].sum({0, 2}, true); }, {rnd(s)});
  gradcheck("prod", [](Ts x) { return x[0].prod(); }, {away0({2, 3}, 0.7, 1.4)});
  gradcheck("prod dim 1", [](Ts x) { return x[0].prod(1); }, {away0(s, 0.5, 1.5)});
  gradcheck("prod dim 0 keepdim", [](Ts x) { return x[0].prod(0, true); }, {away0(s, 0.5, 1.5)});
  gradcheck("prod dims {0,2} keepdim",
            [](Ts x) {
              return x[0].prod({0, 2}, true);
            },
            {away0(s, 0.7, 1.4)});
  gradcheck("amax", [](Ts x) { return x[0].amax(); }, {distinct(s)});
  gradcheck("amax dim 1", [](Ts x) { return x[0].amax(1); }, {distinct(s)});
  gradcheck("amax dim 2 keepdim", [](Ts x) { return x[0].amax(2, true); }, {distinct(s)});
  gradcheck("amax dims {0,2}", [](Ts x) { return x[0].amax({0, 2}); }, {distinct(s)});
  gradcheck("amin", [](Ts x) { return x[0].amin(); }, {distinct(s)});
  gradcheck("amin dim 0", [](Ts x) { return x[0].amin(0); }, {distinct(s)});
  gradcheck("amin dims {1,2} keepdim", [](Ts x) { return x[0].amin({1, 2}, true); }, {distinct(s)});
  gradcheck("max", [](Ts x) { return x[0].max(); }, {distinct(s)});
  gradcheck("max(dim) values", [](Ts x) { return std::get<0>(x[0].max(1)); }, {distinct(s)});
  gradcheck("min(dim) values keepdim", [](Ts x) { return std::get<0>(x[0].min(2, true)); },
            {distinct(s)});
}

// prod's gradient is the product of the other elements; it must not divide by a zero element.
TEST(Gradcheck, ProdWithZeros) {
  In one_zero = away0({2, 3}, 0.5, 1.5);
  one_zero.v[4] = 0;
  gradcheck("prod dim 1, one zero", [](Ts x) { return x[0].prod(1); }, {one_zero});
  gradcheck("prod all, one zero", [](Ts x) { return x[0].prod(); }, {one_zero});
  In two_zeros = one_zero;
  two_zeros.v[3] = 0;
  gradcheck("prod dim 1, two zeros", [](Ts x) { return x[0].prod(1); }, {two_zeros});
  gradcheck("prod dim 0 keepdim, two zeros", [](Ts x) { return x[0].prod(0, true); }, {two_zeros});
}

TEST(Gradcheck, Movement) {
  gradcheck("reshape", [](Ts x) { return x[0].reshape({6, 4}); }, {rnd({2, 3, 4})});
  gradcheck("reshape -1", [](Ts x) { return x[0].reshape({4, -1}); }, {rnd({2, 3, 2})});
  gradcheck("view", [](Ts x) { return x[0].view({3, 2}); }, {rnd({6})});
  gradcheck("flatten", [](Ts x) { return x[0].flatten(1); }, {rnd({2, 3, 2})});
  gradcheck("unsqueeze/squeeze", [](Ts x) { return x[0].unsqueeze(1).squeeze(); },
            {rnd({2, 1, 3})});
  gradcheck("permute", [](Ts x) { return x[0].permute({2, 0, 1}); }, {rnd({2, 3, 4})});
  gradcheck("transpose", [](Ts x) { return x[0].transpose(0, 2) * 1.0; }, {rnd({2, 3, 2})});
  gradcheck("t", [](Ts x) { return x[0].t(); }, {rnd({2, 3})});
  gradcheck("expand [1,3]->[2,3]", [](Ts x) { return x[0].expand({2, 3}); }, {rnd({1, 3})});
  gradcheck("expand [3]->[2,3]", [](Ts x) { return x[0].expand({2, 3}); }, {rnd({3})});
  gradcheck("expand [3,1]->[2,3,4]", [](Ts x) { return x[0].expand({2, 3, 4}); }, {rnd({3, 1})});
  gradcheck("broadcast_to",
            [](Ts x) {
              return lt::broadcast_to(x[0], {2, 2, 3});
            },
            {rnd({2, 1, 3})});
  gradcheck("slice", [](Ts x) { return x[0].slice(1, 1, 4); }, {rnd({2, 5})});
  gradcheck("slice step 2", [](Ts x) { return x[0].slice(1, 0, 5, 2); }, {rnd({2, 5})});
  gradcheck("slice step 3 neg start", [](Ts x) { return x[0].slice(0, -5, 7, 3); }, {rnd({7, 2})});
  gradcheck("slice of slice", [](Ts x) { return x[0].slice(0, 1, 6, 2).slice(1, 1, 3); },
            {rnd({6, 3})});
  gradcheck("narrow", [](Ts x) { return x[0].narrow(1, 1, 2); }, {rnd({2, 4})});
  gradcheck("select", [](Ts x) { return x[0].select(0, 1); }, {rnd({3, 2})});
  gradcheck("slice_scatter", [](Ts x) { return lt::slice_scatter(x[0], x[1], 1, 0, 5, 2); },
            {rnd({2, 5}), rnd({2, 3})});
  gradcheck("slice_scatter dim 0 step 1",
            [](Ts x) { return lt::slice_scatter(x[0], x[1], 0, 1, 3); },
            {rnd({4, 2}), rnd({2, 2})});
  gradcheck("clone", [](Ts x) { return x[0].clone(); }, {rnd({2, 3})});
  gradcheck("contiguous of a transpose", [](Ts x) { return x[0].t().contiguous(); }, {rnd({2, 3})});
  gradcheck("contiguous of a slice", [](Ts x) { return x[0].slice(1, 0, 4, 2).contiguous(); },
            {rnd({3, 4})});
  gradcheck("cat dim 0",
            [](Ts x) {
              return lt::cat({x[0], x[1], x[2]}, 0);
            },
            {rnd({1, 3}), rnd({2, 3}), rnd({3, 3})});
  gradcheck("cat dim 1", [](Ts x) { return lt::cat({x[0], x[1]}, 1); }, {rnd({2, 2}), rnd({2, 3})});
  gradcheck("cat dim -1 same input twice",
            [](Ts x) {
              return lt::cat({x[0], x[0]}, -1);
            },
            {rnd({2, 2})});
  gradcheck("stack", [](Ts x) { return lt::stack({x[0], x[1]}, 1); }, {rnd({2, 3}), rnd({2, 3})});
  gradcheck("split", [](Ts x) { return lt::split(x[0], 2, 1)[1]; }, {rnd({2, 5})});
  gradcheck("chunk", [](Ts x) { return x[0].chunk(3, 0)[2] * x[0].chunk(3, 0)[0]; }, {rnd({3, 2})});
  gradcheck("repeat", [](Ts x) { return x[0].repeat({2, 1, 3}); }, {rnd({2, 2})});
  gradcheck("pad positive", [](Ts x) { return lt::pad(x[0], {1, 2}); }, {rnd({2, 3})});
  gradcheck("pad positive 2-d, value",
            [](Ts x) {
              return lt::pad(x[0], {1, 0, 2, 1}, 0.5);
            },
            {rnd({2, 3})});
  gradcheck("pad negative", [](Ts x) { return lt::pad(x[0], {-1, -1}); }, {rnd({2, 4})});
  gradcheck("pad mixed", [](Ts x) { return lt::pad(x[0], {1, -1, -1, 2}); }, {rnd({3, 3})});
}

TEST(Gradcheck, Matmul) {
  gradcheck("matmul 2-d", [](Ts x) { return lt::matmul(x[0], x[1]); }, {rnd({2, 3}), rnd({3, 4})});
  gradcheck("matmul batched", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({2, 2, 3}), rnd({2, 3, 2})});
  gradcheck("matmul batched @ 2-d", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({2, 2, 3}), rnd({3, 4})});
  // B without real batch dims: its gradient is one product of A's stacked rows.
  gradcheck("matmul 4-d @ 2-d", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({2, 3, 2, 3}), rnd({3, 4})});
  gradcheck("matmul batched @ [1,3,4]", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({2, 2, 3}), rnd({1, 3, 4})});
  gradcheck("matmul transposed batched view @ 2-d",
            [](Ts x) { return lt::matmul(x[0].transpose(0, 2), x[1]); },
            {rnd({3, 2, 2}), rnd({3, 4})});
  gradcheck("matmul 2-d @ batched", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({2, 3}), rnd({2, 3, 2})});
  gradcheck("matmul broadcast batch [2,1,2,3]@[3,3,2]", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({2, 1, 2, 3}), rnd({3, 3, 2})});
  gradcheck("matmul 1-d @ 1-d", [](Ts x) { return lt::matmul(x[0], x[1]); }, {rnd({3}), rnd({3})});
  gradcheck("matmul 1-d @ 2-d", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({3}), rnd({3, 2})});
  gradcheck("matmul 2-d @ 1-d", [](Ts x) { return x[0].matmul(x[1]); }, {rnd({2, 3}), rnd({3})});
  gradcheck("matmul batched @ 1-d", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({2, 2, 3}), rnd({3})});
  gradcheck("matmul 1-d @ batched", [](Ts x) { return lt::matmul(x[0], x[1]); },
            {rnd({3}), rnd({2, 3, 2})});
  gradcheck("mm", [](Ts x) { return lt::mm(x[0], x[1]); }, {rnd({3, 2}), rnd({2, 2})});
  gradcheck("bmm", [](Ts x) { return lt::bmm(x[0], x[1]); }, {rnd({2, 1, 3}), rnd({2, 3, 2})});
  gradcheck("matmul same operand", [](Ts x) { return lt::matmul(x[0], x[0].t()); }, {rnd({2, 3})});
}

TEST(Gradcheck, Conv2d) {
  gradcheck("conv2d", [](Ts x) { return lt::conv2d(x[0], x[1]); },
            {rnd({1, 2, 4, 4}), rnd({2, 2, 3, 3})});
  gradcheck("conv2d bias", [](Ts x) { return lt::conv2d(x[0], x[1], x[2]); },
            {rnd({2, 1, 4, 3}), rnd({3, 1, 2, 2}), rnd({3})});
  gradcheck("conv2d stride 2 padding 1",
            [](Ts x) {
              return lt::conv2d(x[0], x[1], x[2], {2, 2}, {1, 1});
            },
            {rnd({1, 2, 5, 5}), rnd({2, 2, 3, 3}), rnd({2})});
  gradcheck("conv2d asymmetric stride/padding",
            [](Ts x) {
              return lt::conv2d(x[0], x[1], {}, {2, 1}, {0, 1});
            },
            {rnd({1, 1, 5, 4}), rnd({2, 1, 3, 2})});
  gradcheck("conv2d dilation 2", [](Ts x) { return lt::conv2d(x[0], x[1], {}, 1, 1, 2); },
            {rnd({1, 1, 5, 5}), rnd({2, 1, 2, 2})});
  gradcheck("conv2d groups 2", [](Ts x) { return lt::conv2d(x[0], x[1], x[2], 1, 0, 1, 2); },
            {rnd({1, 4, 3, 3}), rnd({4, 2, 2, 2}), rnd({4})});
  gradcheck("conv2d everything",
            [](Ts x) {
              return lt::conv2d(x[0], x[1], x[2], {2, 2}, {1, 2}, {2, 1}, 2);
            },
            {rnd({2, 2, 5, 4}), rnd({4, 1, 2, 3}), rnd({4})});
  gradcheck("conv2d unbatched", [](Ts x) { return lt::conv2d(x[0], x[1], x[2], 1, 1); },
            {rnd({1, 3, 3}), rnd({2, 1, 2, 2}), rnd({2})});
}

// Images large enough for the kernels' other paths (eager conv.cpp: the batch split over the
// threads, chunks of images of many pixels), where finite
// differences would be slow. conv2d is linear in x and in w, so with L = sum(y * g):
// <x, dL/dx> = <w, dL/dw> = L - <b, dL/db>, and dL/db is g summed over images and pixels; each
// exact up to float64 rounding. On cpu and lazy.
TEST(Gradcheck, Conv2dOnLargeImagesSatisfiesTheAdjointIdentities) {
  struct Case {
    int64_t n, c, o, h, w, k, stride, pad, dil, groups;
  };
  const Case cases[] = {{5, 3, 8, 33, 30, 3, 1, 1, 1, 1},
                        {4, 4, 6, 40, 36, 3, 2, 1, 1, 2},
                        {3, 6, 4, 24, 26, 2, 1, 0, 2, 2},
                        {6, 8, 8, 20, 20, 1, 1, 0, 1, 1},
                        {7, 2, 3, 9, 11, 3, 1, 1, 1, 1}};
  auto dot = [](const lt::Tensor& a, const lt::Tensor& b) {
    return (a * b).sum().to(kCpu).item<double>();
  };
  for (const Case& t : cases)
    for (const lt::Device& dev : {kCpu, kLazy}) {
      auto make = [&](std::vector<int64_t> sizes) {
        return lt::tensor(rnd(sizes).v, sizes).to(dev).requires_grad_();
      };
      lt::Tensor x = make({t.n, t.c, t.h, t.w}), w = make({t.o, t.c / t.groups, t.k, t.k}),
                 b = make({t.o});
      lt::Tensor y = lt::conv2d(x, w, b, t.stride, t.pad, t.dil, t.groups);
      lt::Tensor g = lt::tensor(rnd(y.sizes().vec()).v, y.sizes().vec()).to(dev);
      lt::Tensor loss = (y * g).sum();
      loss.backward();
      const std::string what = "conv2d " + std::to_string(t.h) + "x" + std::to_string(t.w) +
                               " stride " + std::to_string(t.stride) + " groups " +
                               std::to_string(t.groups) + " on " + dev.str();
      const double l = loss.to(kCpu).item<double>(), lb = dot(b, b.grad());
      const double scale = std::sqrt(dot(y, y) * dot(g, g));
      EXPECT_NEAR(dot(x, x.grad()), l - lb, 1e-12 * scale) << what;
      EXPECT_NEAR(dot(w, w.grad()), l - lb, 1e-12 * scale) << what;
      EXPECT_TRUE(lt::allclose(b.grad().to(kCpu), g.sum({0, 2, 3}).to(kCpu), 1e-12, 1e-12)) << what;
    }
}

TEST(Gradcheck, Pooling) {
  gradcheck("max_pool2d 2",
            [](Ts x) {
              return lt::max_pool2d(x[0], {2, 2});
            },
            {distinct({1, 2, 4, 4})});
  gradcheck("max_pool2d 3 stride 2 padding 1 (overlapping)",
            [](Ts x) {
              return lt::max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1});
            },
            {distinct({2, 1, 5, 5})});
  gradcheck("max_pool2d stride 1 (overlapping)",
            [](Ts x) {
              return lt::max_pool2d(x[0], {2, 2}, {1, 1});
            },
            {distinct({1, 1, 3, 4})});
  gradcheck("max_pool2d unbatched",
            [](Ts x) {
              return lt::max_pool2d(x[0], {2, 1});
            },
            {distinct({2, 4, 3})});
  gradcheck("avg_pool2d 2", [](Ts x) { return lt::avg_pool2d(x[0], {2, 2}); }, {rnd({1, 2, 4, 4})});
  gradcheck("avg_pool2d 3 stride 2 padding 1",
            [](Ts x) {
              return lt::avg_pool2d(x[0], {3, 3}, {2, 2}, {1, 1});
            },
            {rnd({2, 1, 5, 5})});
  gradcheck("avg_pool2d asymmetric",
            [](Ts x) {
              return lt::avg_pool2d(x[0], {2, 3}, {1, 2}, {1, 1});
            },
            {rnd({1, 1, 4, 5})});
}

TEST(Gradcheck, Indexing) {
  const lt::Tensor gi = ints({2, 0, 0, 1, 1, 1}, {2, 3});
  gradcheck("gather dim 1", [&](Ts x) { return x[0].gather(1, on(gi, x[0])); }, {rnd({2, 4})});
  const lt::Tensor gi0 = ints({1, 0, 2, 2, 1, 0}, {2, 3});
  gradcheck("gather dim 0", [&](Ts x) { return lt::gather(x[0], 0, on(gi0, x[0])); },
            {rnd({3, 3})});
  const lt::Tensor si = ints({0, 2, 2, 1, 2, 0, 0, 1}, {2, 4});
  gradcheck("scatter_add dim 0", [&](Ts x) { return x[0].scatter_add(0, on(si, x[0]), x[1]); },
            {rnd({3, 4}), rnd({2, 4})});
  const lt::Tensor si1 = ints({1, 1, 0, 2, 0, 2}, {3, 2});
  gradcheck("scatter_add dim 1",
            [&](Ts x) { return lt::scatter_add(x[0], 1, on(si1, x[0]), x[1]); },
            {rnd({3, 3}), rnd({3, 2})});
  const lt::Tensor ii = ints({2, 0, 2, 1}, {4});
  gradcheck("index_select dim 0", [&](Ts x) { return x[0].index_select(0, on(ii, x[0])); },
            {rnd({3, 2})});
  gradcheck("index_select dim 1", [&](Ts x) { return lt::index_select(x[0], 1, on(ii, x[0])); },
            {rnd({2, 3})});
  gradcheck("index_select 3-d dim 1", [&](Ts x) { return lt::index_select(x[0], 1, on(ii, x[0])); },
            {rnd({2, 3, 2})});
}

// Casts: the gradient comes back in the input's dtype. Values through float32 make finite
// differences meaningless, so these compare with the exact gradients instead.
TEST(Gradcheck, Casts) {
  {  // float64 leaf -> float32 -> float64 loss: the leaf's gradient is float64.
    lt::Tensor x = lt::tensor(std::vector<double>{0.5, -1.0, 2.0, 0.25}, {2, 2});
    x.requires_grad_();
    lt::Tensor y = x.to(lt::kFloat32) * 3.0f;
    EXPECT_EQ(y.dtype(), lt::kFloat32);
    lt::Tensor w = lt::tensor(std::vector<double>{1, 2, 3, 4}, {2, 2});
    (y * w).sum().backward();
    ASSERT_TRUE(x.grad().defined());
    EXPECT_EQ(x.grad().dtype(), lt::kFloat64);
    std::vector<double> g = x.grad().to_vector<double>();
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(g[i], 3.0 * (i + 1), 1e-6);
  }
  {  // float32 leaf -> float64 -> sin: the gradient is float32.
    std::vector<float> xv = {0.5f, -1.0f, 2.0f};
    lt::Tensor x = lt::tensor(xv, {3});
    x.requires_grad_();
    lt::Tensor y = x.to(lt::kFloat64).sin();
    EXPECT_EQ(y.dtype(), lt::kFloat64);
    y.sum().backward();
    ASSERT_TRUE(x.grad().defined());
    EXPECT_EQ(x.grad().dtype(), lt::kFloat32);
    std::vector<float> g = x.grad().to_vector<float>();
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(g[i], std::cos(static_cast<double>(xv[i])), 1e-6);
  }
  {  // Mixed-dtype binary ops: float32 * float64 promotes, each gradient keeps its input dtype.
    lt::Tensor a = lt::tensor(std::vector<float>{1.5f, -2.0f}, {2});
    lt::Tensor b = lt::tensor(std::vector<double>{0.5, 4.0}, {2, 1});
    a.requires_grad_();
    b.requires_grad_();
    lt::Tensor y = a * b + a;  // [2, 2], float64
    EXPECT_EQ(y.dtype(), lt::kFloat64);
    y.sum().backward();
    EXPECT_EQ(a.grad().dtype(), lt::kFloat32);
    EXPECT_EQ(b.grad().dtype(), lt::kFloat64);
    EXPECT_EQ(a.grad().sizes().vec(), (std::vector<int64_t>{2}));
    EXPECT_EQ(b.grad().sizes().vec(), (std::vector<int64_t>{2, 1}));
    std::vector<float> ga = a.grad().to_vector<float>();
    std::vector<double> gb = b.grad().to_vector<double>();
    EXPECT_NEAR(ga[0], 0.5 + 4.0 + 2, 1e-6);
    EXPECT_NEAR(ga[1], 0.5 + 4.0 + 2, 1e-6);
    EXPECT_NEAR(gb[0], 1.5 - 2.0, 1e-6);
    EXPECT_NEAR(gb[1], 1.5 - 2.0, 1e-6);
  }
  {  // cat of float32 and float64 inputs.
    lt::Tensor a = lt::tensor(std::vector<float>{1, 2}, {2});
    lt::Tensor b = lt::tensor(std::vector<double>{3}, {1});
    a.requires_grad_();
    b.requires_grad_();
    (lt::cat({a, b}) * lt::tensor(std::vector<double>{1, 2, 3}, {3})).sum().backward();
    EXPECT_EQ(a.grad().dtype(), lt::kFloat32);
    EXPECT_EQ(b.grad().dtype(), lt::kFloat64);
    EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{1, 2}));
    EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{3}));
  }
  // A float64 -> float64 cast is a no-op, and float64 -> float32 -> float64 in the middle of a
  // float64 graph still gets a gradient (to float32 precision: checked against 1e-5 below).
  lt::Tensor x = lt::tensor(std::vector<double>{0.3, -0.7, 1.1}, {3});
  x.requires_grad_();
  (x.to(lt::kFloat64).to(lt::kFloat32).to(lt::kFloat64).exp()).sum().backward();
  std::vector<double> g = x.grad().to_vector<double>();
  EXPECT_NEAR(g[0], std::exp(0.3), 1e-5);
  EXPECT_NEAR(g[1], std::exp(-0.7), 1e-5);
  EXPECT_NEAR(g[2], std::exp(1.1), 1e-5);
}

// ---- composites (no formulas of their own: they differentiate through their primitives)

TEST(Gradcheck, Composites) {
  const std::vector<int64_t> s = {2, 4};
  gradcheck("softmax dim 1", [](Ts x) { return lt::softmax(x[0], 1); }, {rnd(s, -2, 2)});
  gradcheck("softmax dim 0", [](Ts x) { return x[0].softmax(0); }, {rnd({3, 2}, -2, 2)});
  gradcheck("log_softmax dim -1", [](Ts x) { return lt::log_softmax(x[0], -1); }, {rnd(s, -2, 2)});
  gradcheck("log_softmax 3-d dim 1", [](Ts x) { return x[0].log_softmax(1); },
            {rnd({2, 3, 2}, -2, 2)});
  gradcheck("logsumexp dim 1", [](Ts x) { return lt::logsumexp(x[0], {1}); }, {rnd(s, -2, 2)});
  gradcheck("logsumexp dims keepdim",
            [](Ts x) {
              return x[0].logsumexp({0, 2}, true);
            },
            {rnd({2, 3, 2}, -2, 2)});
  gradcheck("layer_norm weight bias", [](Ts x) { return lt::layer_norm(x[0], {4}, x[1], x[2]); },
            {rnd({2, 3, 4}, -2, 2), rnd({4}, 0.5, 1.5), rnd({4})});
  gradcheck("layer_norm 2 dims",
            [](Ts x) {
              return lt::layer_norm(x[0], {2, 3}, x[1], x[2]);
            },
            {rnd({2, 2, 3}, -2, 2), rnd({2, 3}, 0.5, 1.5), rnd({2, 3})});
  gradcheck("layer_norm no affine", [](Ts x) { return lt::layer_norm(x[0], {3}); },
            {rnd({2, 3}, -2, 2)});
  gradcheck("gelu", [](Ts x) { return lt::gelu(x[0]); }, {rnd(s, -3, 3)});
  gradcheck("gelu tanh", [](Ts x) { return x[0].gelu("tanh"); }, {rnd(s, -3, 3)});
  gradcheck("silu", [](Ts x) { return lt::silu(x[0]); }, {rnd(s, -3, 3)});
  gradcheck("square", [](Ts x) { return x[0].square(); }, {rnd(s)});
  gradcheck("clamp", [](Ts x) { return x[0].clamp(-0.5, 0.5); }, {distinct({2, 5}, 0.05)});
  gradcheck("mean", [](Ts x) { return x[0].mean(); }, {rnd(s)});
  gradcheck("mean dim keepdim", [](Ts x) { return x[0].mean(1, true); }, {rnd(s)});
  gradcheck("var", [](Ts x) { return x[0].var(); }, {rnd(s)});
  gradcheck("var dim biased keepdim", [](Ts x) { return x[0].var(1, false, true); }, {rnd(s)});
  gradcheck("var dims", [](Ts x) { return lt::var(x[0], {0, 2}); }, {rnd({2, 3, 2})});
  gradcheck("std", [](Ts x) { return x[0].std(); }, {rnd(s)});
  gradcheck("std dim 0", [](Ts x) { return x[0].std(int64_t{0}); }, {rnd({3, 2})});
  gradcheck("norm", [](Ts x) { return x[0].norm(); }, {rnd(s)});
  gradcheck("norm 2 dim", [](Ts x) { return x[0].norm(2.0, {1}, true); }, {rnd(s)});
  gradcheck("norm 1", [](Ts x) { return x[0].norm(1.0, {0}); }, {away0(s)});
  gradcheck("norm 3", [](Ts x) { return lt::norm(x[0], 3.0, {1}); }, {away0(s)});
  gradcheck("norm inf", [](Ts x) { return lt::norm(x[0], INFINITY, {1}); }, {distinct(s, 0.05)});
  const lt::Tensor targets = ints({2, 0, 3}, {3});
  gradcheck("cross_entropy", [&](Ts x) { return lt::cross_entropy(x[0], on(targets, x[0])); },
            {rnd({3, 4}, -2, 2)});
  gradcheck("cross_entropy label smoothing",
            [&](Ts x) { return lt::cross_entropy(x[0], on(targets, x[0]), 0.1); },
            {rnd({3, 4}, -2, 2)});
  gradcheck("cross_entropy 1-d logits",
            [&](Ts x) { return lt::cross_entropy(x[0], on(ints({1}, {}), x[0])); },
            {rnd({4}, -2, 2)});
  gradcheck("cross_entropy probability targets",
            [](Ts x) { return lt::cross_entropy(x[0], lt::softmax(x[1], 1), 0.2); },
            {rnd({2, 3}, -2, 2), rnd({2, 3})});
  gradcheck("nll_loss",
            [&](Ts x) { return lt::nll_loss(lt::log_softmax(x[0], 1), on(targets, x[0])); },
            {rnd({3, 4}, -2, 2)});
  gradcheck("nll_loss raw", [&](Ts x) { return lt::nll_loss(x[0], on(targets, x[0])); },
            {rnd({3, 4})});
  gradcheck("mse_loss", [](Ts x) { return lt::mse_loss(x[0], x[1]); }, {rnd(s), rnd(s)});
  gradcheck("linear", [](Ts x) { return lt::linear(x[0], x[1], x[2]); },
            {rnd({2, 3}), rnd({4, 3}), rnd({4})});
  gradcheck("linear no bias, 3-d input", [](Ts x) { return lt::linear(x[0], x[1]); },
            {rnd({2, 2, 3}), rnd({2, 3})});
  gradcheck("linear 1-d input", [](Ts x) { return lt::linear(x[0], x[1], x[2]); },
            {rnd({3}), rnd({2, 3}), rnd({2})});
  gradcheck("sdpa", [](Ts x) { return lt::scaled_dot_product_attention(x[0], x[1], x[2]); },
            {rnd({2, 3, 4}), rnd({2, 2, 4}), rnd({2, 2, 3})});
  gradcheck("sdpa causal",
            [](Ts x) { return lt::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0, true); },
            {rnd({1, 2, 3, 2}), rnd({1, 2, 3, 2}), rnd({1, 2, 3, 2})});
  gradcheck("sdpa float mask",
            [](Ts x) { return lt::scaled_dot_product_attention(x[0], x[1], x[2], x[3]); },
            {rnd({3, 2}), rnd({2, 2}), rnd({2, 2}), rnd({3, 2})});
  const lt::Tensor idx = ints({1, 3, 1, 0, 2, 3}, {2, 3});
  gradcheck("embedding weight", [&](Ts x) { return lt::embedding(on(idx, x[0]), x[0]); },
            {rnd({4, 3})});
  gradcheck("dropout eval is identity", [](Ts x) { return lt::dropout(x[0] * 2.0, 0.5, false); },
            {rnd(s)});
}

// ---- semantics

std::vector<double> grad_of(const lt::Tensor& t) { return t.grad().to_vector<double>(); }

lt::Tensor leaf(std::vector<double> v, std::vector<int64_t> sizes) {
  lt::Tensor t = lt::tensor(v, sizes);
  t.requires_grad_();
  return t;
}

TEST(AutogradSemantics, LeavesAndFlags) {
  lt::Tensor x = leaf({1, 2, 3}, {3});
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(x.grad().defined());
  lt::Tensor y = x * 2.0;
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  lt::Tensor c = lt::tensor(std::vector<double>{1, 1, 1}, {3});
  EXPECT_FALSE(c.requires_grad());
  EXPECT_TRUE(c.is_leaf());
  EXPECT_FALSE((c * 2.0).requires_grad());
  // Non-differentiable ops give results without history.
  EXPECT_FALSE((x > 1.0).requires_grad());
  EXPECT_FALSE(x.argmax().requires_grad());
  EXPECT_FALSE(x.floor().requires_grad());
  // backward() on a tensor that does not require grad throws.
  EXPECT_THROW(c.sum().backward(), lt::Error);
}

TEST(AutogradSemantics, AccumulatesOverTwoBackwards) {
  lt::Tensor x = leaf({1, -2, 3}, {3});
  (x * x).sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{2, -4, 6}));
  (x * x).sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{4, -8, 12}));
  (x * 3.0).sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{7, -5, 15}));
  x.mutable_grad() = lt::Tensor();  // dropping the gradient starts over
  x.sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{1, 1, 1}));
  // One graph reaching a leaf by several paths sums the paths.
  lt::Tensor z = leaf({2}, {});
  lt::Tensor a = z * 3.0;
  (a * a + a + z.exp() * 0.0).backward();
  EXPECT_NEAR(grad_of(z)[0], 2 * 6 * 3 + 3, 1e-12);
}

// Each leaf's .grad is its own contiguous tensor, even where the formulas pass one gradient on
// unchanged (add, sum's expand, backward on a leaf): in-place updates of one .grad (zeroing,
// clipping) work and do not show through another .grad or the caller's gradient.
TEST(AutogradSemantics, LeafGradsAreOwnTensors) {
  for (lt::Device dev : {kCpu, kLazy}) {
    SCOPED_TRACE(dev.str());
    lt::Tensor a = lt::tensor(std::vector<double>{1, 2}, {2}).to(dev);
    lt::Tensor b = lt::tensor(std::vector<double>{3, 4}, {2}).to(dev);
    a.requires_grad_();
    b.requires_grad_();
    (a + b).sum().backward();
    EXPECT_FALSE(a.grad().is_same(b.grad()));
    if (dev.is_cpu()) EXPECT_TRUE(a.grad().is_contiguous());
    {
      lt::NoGradGuard g;
      a.grad().mul_(10.0);
      b.grad().zero_();
    }
    EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{10, 10}));
    EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{0, 0}));
    lt::Tensor x = lt::tensor(std::vector<double>{1, 2}, {2}).to(dev);
    x.requires_grad_();
    lt::Tensor gx = lt::tensor(std::vector<double>{1, 1}, {2}).to(dev);
    (x + 0.0).backward(gx);
    lt::Tensor z = lt::tensor(std::vector<double>{5}, {1}).to(dev);
    z.requires_grad_();
    lt::Tensor gz = lt::tensor(std::vector<double>{2}, {1}).to(dev);
    z.backward(gz);
    {
      lt::NoGradGuard g;
      gx.mul_(5.0);
      gz.mul_(5.0);
    }
    EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 1}));
    EXPECT_EQ(z.grad().to_vector<double>(), (std::vector<double>{2}));
  }
  lt::mark_step();
}

TEST(AutogradSemantics, ExplicitGradientForNonScalar) {
  lt::Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  lt::Tensor y = x * x;
  y.backward(lt::tensor(std::vector<double>{1, 0, -1, 2, 0.5, 0}, {2, 3}));
  EXPECT_EQ(grad_of(x), (std::vector<double>{2, 0, -6, 16, 5, 0}));
  // Shape mismatch and a missing gradient for a non-scalar output throw.
  lt::Tensor y2 = x * 2.0;
  EXPECT_THROW(y2.backward(), lt::Error);
  EXPECT_THROW(y2.backward(lt::ones({3, 2}, lt::kFloat64)), lt::Error);
  // A one-element non-0-d output takes the implicit gradient.
  lt::Tensor x1 = leaf({3}, {1, 1});
  (x1 * x1).backward();
  EXPECT_EQ(grad_of(x1), (std::vector<double>{6}));
  // backward() directly on a leaf.
  lt::Tensor x2 = leaf({1, 2}, {2});
  x2.backward(lt::tensor(std::vector<double>{3, 4}, {2}));
  EXPECT_EQ(grad_of(x2), (std::vector<double>{3, 4}));
}

TEST(AutogradSemantics, NoGradGuard) {
  lt::Tensor x = leaf({1, 2}, {2});
  EXPECT_TRUE(lt::is_grad_enabled());
  {
    lt::NoGradGuard g;
    EXPECT_FALSE(lt::is_grad_enabled());
    lt::Tensor y = x * 2.0 + x.exp();
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(y.is_leaf());
    {
      lt::NoGradGuard nested;
      EXPECT_FALSE((x * 3.0).requires_grad());
    }
    EXPECT_FALSE(lt::is_grad_enabled());
  }
  EXPECT_TRUE(lt::is_grad_enabled());
  EXPECT_TRUE((x * 2.0).requires_grad());
  // A value computed without grad acts as a constant.
  lt::Tensor c;
  {
    lt::NoGradGuard g;
    c = x * 10.0;
  }
  (c * x).sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{10, 20}));
}

TEST(AutogradSemantics, DetachStopsGradients) {
  lt::Tensor x = leaf({1, 2}, {2});
  lt::Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{1, 2}));
  (d * 2.0 + x * x.detach()).sum().backward();  // only the second factor's x is tracked
  EXPECT_EQ(grad_of(x), (std::vector<double>{1, 2}));
  // Detaching a non-leaf cuts the graph there.
  lt::Tensor h = x * 3.0;
  lt::Tensor hd = h.detach();
  EXPECT_FALSE(hd.requires_grad());
  lt::Tensor y = leaf({5, 7}, {2});
  (hd * y).sum().backward();
  EXPECT_EQ(grad_of(y), (std::vector<double>{3, 6}));
  EXPECT_EQ(grad_of(x), (std::vector<double>{1, 2}));  // unchanged
  // A detached tensor shares the data.
  {
    lt::NoGradGuard g;
    d.mul_(2.0);
  }
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{2, 4}));
}

TEST(AutogradSemantics, RequiresGradNeedsFloatingPoint) {
  lt::Tensor i = lt::tensor(std::vector<int64_t>{1, 2}, {2});
  EXPECT_THROW(i.requires_grad_(), lt::Error);
  lt::Tensor i32 = lt::tensor(std::vector<int32_t>{1, 2}, {2});
  EXPECT_THROW(i32.requires_grad_(), lt::Error);
  lt::Tensor b = lt::tensor(std::vector<double>{1, -1}, {2}) > 0.0;
  EXPECT_THROW(b.requires_grad_(), lt::Error);
  EXPECT_FALSE(i.requires_grad());
  EXPECT_NO_THROW(i.requires_grad_(false));
  lt::Tensor f = lt::tensor(std::vector<float>{1, 2}, {2});
  f.requires_grad_();
  EXPECT_TRUE(f.requires_grad());
  f.requires_grad_(false);
  EXPECT_FALSE(f.requires_grad());
  // A non-leaf cannot turn its gradient off.
  lt::Tensor x = leaf({1}, {1});
  lt::Tensor y = x * 2.0;
  EXPECT_THROW(y.requires_grad_(false), lt::Error);
}

TEST(AutogradSemantics, InPlaceOnLeafThrowsOutsideNoGrad) {
  lt::Tensor x = leaf({1, 2, 3}, {3});
  EXPECT_THROW(x.add_(1.0), lt::Error);
  EXPECT_THROW(x.mul_(2.0), lt::Error);
  EXPECT_THROW(x.relu_(), lt::Error);
  EXPECT_THROW(x += lt::tensor(std::vector<double>{1, 1, 1}, {3}), lt::Error);
  EXPECT_THROW(x.zero_(), lt::Error);
  EXPECT_THROW(x.fill_(2.0), lt::Error);
  EXPECT_THROW(x.copy_(lt::tensor(std::vector<double>{4, 5, 6}, {3})), lt::Error);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{1, 2, 3}));  // nothing was written
  {
    lt::NoGradGuard g;
    x.mul_(2.0);
    x.add_(lt::tensor(std::vector<double>{1, 1, 1}, {3}));
    x.sub_(0.5);
  }
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{2.5, 4.5, 6.5}));
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  (x * x).sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{5, 9, 13}));
  // The optimizer-step pattern: update a leaf in place under NoGradGuard.
  {
    lt::NoGradGuard g;
    x.sub_(x.grad(), 0.1);
    x.mutable_grad() = lt::Tensor();
  }
  std::vector<double> xv = x.to_vector<double>();
  EXPECT_NEAR(xv[0], 2.0, 1e-12);
  EXPECT_NEAR(xv[1], 3.6, 1e-12);
  EXPECT_NEAR(xv[2], 5.2, 1e-12);
}

// Writes through a view would change the base behind autograd's back (for a leaf: its data), so
// in grad mode they are refused; a clone() of the view can be written.
TEST(AutogradSemantics, InPlaceThroughViewOfTensorRequiringGradThrows) {
  lt::Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(x.slice(0, 0, 1).mul_(2.0), lt::Error);
  EXPECT_THROW(x.t().add_(1.0), lt::Error);
  EXPECT_THROW(x.view({4}).zero_(), lt::Error);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  lt::Tensor h = x * 1.0;
  EXPECT_THROW(h.select(1, 0).mul_(2.0), lt::Error);
  EXPECT_THROW(h.narrow(0, 1, 1).copy_(lt::zeros({1, 2}, lt::kFloat64)), lt::Error);
  h.sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{1, 1, 1, 1}));
  lt::Tensor c = h.slice(0, 0, 1).clone();
  c.mul_(3.0);
  c.sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{4, 4, 1, 1}));
  {
    lt::NoGradGuard g;
    x.slice(0, 0, 1).mul_(2.0);
  }
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{2, 4, 3, 4}));
}

TEST(AutogradSemantics, InPlaceOnSavedTensorThrowsAtBackward) {
  lt::Tensor x = leaf({1, 2, 3}, {3});
  lt::Tensor b = leaf({4, 5, 6}, {3});
  lt::Tensor a = x * 1.0;
  lt::Tensor y = a * b;  // mul saves a and b
  a.mul_(2.0);
  try {
    y.sum().backward();
    ADD_FAILURE() << "backward used a saved tensor that was modified in place";
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("mul"), std::string::npos) << e.what();
  }
  // The same through a view of the saved tensor (views share the version counter), written
  // without grad (in grad mode a write through the view is refused at once).
  lt::Tensor a2 = x * 1.0;
  lt::Tensor y2 = a2.exp();  // exp saves its output
  {
    lt::NoGradGuard g;
    y2.slice(0, 0, 1).mul_(0.5);
  }
  try {
    y2.sum().backward();
    ADD_FAILURE() << "backward used a saved output that was modified in place";
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("exp"), std::string::npos) << e.what();
  }
}

TEST(AutogradSemantics, InPlaceOnNonLeafGivesCorrectGradients) {
  lt::Tensor x = leaf({1, 2, 3}, {3});
  lt::Tensor h = x * 2.0;
  h.add_(1.0);
  EXPECT_TRUE(h.requires_grad());
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{3, 5, 7}));
  h.sum().backward();
  EXPECT_EQ(grad_of(x), (std::vector<double>{2, 2, 2}));

  // A chain of in-place ops, some with tensor operands that require grad.
  lt::Tensor x2 = leaf({1, -2, 3}, {3});
  lt::Tensor w = leaf({0.5, 2, -1}, {3});
  lt::Tensor h2 = x2 * 1.0;
  h2.mul_(3.0);
  h2.add_(w, 2.0);
  h2.sub_(1.0);
  h2.div_(2.0);
  (h2 * h2).sum().backward();
  // h2 = (3 x + 2 w - 1) / 2; d/dx sum(h2^2) = 2 h2 * 1.5, d/dw = 2 h2 * 1.
  std::vector<double> xv = {1, -2, 3}, wv = {0.5, 2, -1};
  for (int i = 0; i < 3; ++i) {
    double hv = (3 * xv[i] + 2 * wv[i] - 1) / 2;
    EXPECT_NEAR(grad_of(x2)[i], 2 * hv * 1.5, 1e-12);
    EXPECT_NEAR(grad_of(w)[i], 2 * hv, 1e-12);
  }

  // In-place with the operand's gradient reading the destination's old value:
  // h3 = x3 * 1; h3 *= w3 (w3's gradient is the old h3, not the new one).
  lt::Tensor x3 = leaf({1, 2}, {2});
  lt::Tensor w3 = leaf({3, 4}, {2});
  lt::Tensor h3 = x3 * 1.0;
  h3.mul_(w3);
  EXPECT_EQ(h3.to_vector<double>(), (std::vector<double>{3, 8}));
  h3.sum().backward();
  EXPECT_EQ(grad_of(x3), (std::vector<double>{3, 4}));
  EXPECT_EQ(grad_of(w3), (std::vector<double>{1, 2}));

  // relu_ and clamp_ on a non-leaf.
  lt::Tensor x4 = leaf({-1, 2, 0.5}, {3});
  lt::Tensor h4 = x4 * 2.0;
  h4.relu_();
  h4.clamp_(std::nullopt, 3.0);
  h4.sum().backward();
  EXPECT_EQ(grad_of(x4), (std::vector<double>{0, 0, 2}));

  // copy_ into a non-leaf replaces its history: gradients go to the source.
  lt::Tensor x5 = leaf({1, 2}, {2});
  lt::Tensor s5 = leaf({5, 6}, {2});
  lt::Tensor h5 = x5 * 2.0;
  h5.copy_(s5 * 3.0);
  h5.sum().backward();
  EXPECT_EQ(grad_of(s5), (std::vector<double>{3, 3}));
  EXPECT_TRUE(!x5.grad().defined() || grad_of(x5) == (std::vector<double>{0, 0}));

  // Overwriting a non-leaf with a constant cuts the gradient to what it was computed from.
  lt::Tensor x6 = leaf({1, 2}, {2});
  lt::Tensor h6 = x6 * 2.0;
  h6.zero_();
  lt::Tensor y6 = h6 + x6;
  y6.sum().backward();
  EXPECT_EQ(grad_of(x6), (std::vector<double>{1, 1}));
}

// ---- lazy device

// Gradchecks on the lazy device: the forward, backward and finite differences all run lazily.
TEST(LazyGradcheck, Primitives) {
  lt::mark_step();
  const std::vector<int64_t> s = {2, 3};
  gradcheck(
      "exp", [](Ts x) { return x[0].exp(); }, {rnd(s)}, kLazy);
  gradcheck(
      "tanh", [](Ts x) { return x[0].tanh(); }, {rnd(s)}, kLazy);
  gradcheck(
      "relu", [](Ts x) { return x[0].relu(); }, {away0(s)}, kLazy);
  gradcheck(
      "div broadcast", [](Ts x) { return x[0] / x[1]; }, {rnd(s), away0({2, 1}, 0.5, 2)}, kLazy);
  gradcheck(
      "pow tensor^tensor", [](Ts x) { return x[0].pow(x[1]); }, {rnd(s, 0.5, 2), rnd({3})}, kLazy);
  gradcheck(
      "maximum", [](Ts x) { return lt::maximum(x[0], x[1]); }, {distinct(s), distinct({3}, 0.05)},
      kLazy);
  gradcheck(
      "remainder broadcast", [](Ts x) { return x[0] * 4.0 % x[1]; }, {rnd(s), away0({3}, 0.5, 2)},
      kLazy);
  gradcheck(
      "sum dims",
      [](Ts x) {
        return x[0].sum({0, 2});
      },
      {rnd({2, 3, 2})}, kLazy);
  gradcheck(
      "prod dim", [](Ts x) { return x[0].prod(1, true); }, {away0(s, 0.5, 1.5)}, kLazy);
  gradcheck(
      "amax dim", [](Ts x) { return x[0].amax(1); }, {distinct({3, 4})}, kLazy);
  gradcheck(
      "permute+reshape",
      [](Ts x) {
        return x[0].permute({1, 0}).reshape({6});
      },
      {rnd(s)}, kLazy);
  gradcheck(
      "expand",
      [](Ts x) {
        return x[0].expand({2, 3}) * x[0];
      },
      {rnd({1, 3})}, kLazy);
  gradcheck(
      "slice step 2", [](Ts x) { return x[0].slice(1, 0, 5, 2); }, {rnd({2, 5})}, kLazy);
  gradcheck(
      "slice_scatter", [](Ts x) { return lt::slice_scatter(x[0], x[1], 1, 1, 5, 2); },
      {rnd({2, 5}), rnd({2, 2})}, kLazy);
  gradcheck(
      "cat",
      [](Ts x) {
        return lt::cat({x[0], x[1]}, 1);
      },
      {rnd({2, 2}), rnd({2, 1})}, kLazy);
  gradcheck(
      "pad mixed",
      [](Ts x) {
        return lt::pad(x[0], {1, -1, -1, 2});
      },
      {rnd({3, 3})}, kLazy);
  gradcheck(
      "matmul batched broadcast", [](Ts x) { return lt::matmul(x[0], x[1]); },
      {rnd({2, 2, 3}), rnd({3, 2})}, kLazy);
  gradcheck(
      "conv2d", [](Ts x) { return lt::conv2d(x[0], x[1], x[2], 2, 1, 1, 2); },
      {rnd({1, 2, 4, 4}), rnd({4, 1, 2, 2}), rnd({4})}, kLazy);
  gradcheck(
      "max_pool2d",
      [](Ts x) {
        return lt::max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1});
      },
      {distinct({1, 1, 4, 4})}, kLazy);
  gradcheck(
      "avg_pool2d",
      [](Ts x) {
        return lt::avg_pool2d(x[0], {2, 2}, {1, 1}, {1, 1});
      },
      {rnd({1, 1, 3, 3})}, kLazy);
  const lt::Tensor gi = ints({2, 0, 0, 1, 1, 1}, {2, 3});
  gradcheck(
      "gather", [&](Ts x) { return x[0].gather(1, on(gi, x[0])); }, {rnd({2, 4})}, kLazy);
  gradcheck(
      "scatter_add", [&](Ts x) { return x[0].scatter_add(1, on(gi, x[0]), x[1]); },
      {rnd({2, 4}), rnd({2, 3})}, kLazy);
  const lt::Tensor ii = ints({1, 0, 1}, {3});
  gradcheck(
      "index_select", [&](Ts x) { return x[0].index_select(0, on(ii, x[0])); }, {rnd({2, 3})},
      kLazy);
  const lt::Tensor cond = lt::tensor(std::vector<double>{1, -1, -1, 1, 1, -1}, s) > 0.0;
  gradcheck(
      "where", [&](Ts x) { return lt::where(on(cond, x[0]), x[0], x[1]); }, {rnd(s), rnd({3})},
      kLazy);
  gradcheck(
      "softmax", [](Ts x) { return lt::softmax(x[0], 1); }, {rnd(s, -2, 2)}, kLazy);
  gradcheck(
      "layer_norm", [](Ts x) { return lt::layer_norm(x[0], {3}, x[1], x[2]); },
      {rnd(s), rnd({3}, 0.5, 1.5), rnd({3})}, kLazy);
  const lt::Tensor targets = ints({2, 0}, {2});
  gradcheck(
      "cross_entropy", [&](Ts x) { return lt::cross_entropy(x[0], on(targets, x[0])); },
      {rnd(s, -2, 2)}, kLazy);
  lt::mark_step();
}

// Relative to the largest gradient magnitude of each parameter: float32 eager and lazy kernels
// may order sums differently, so elements near zero are not compared by their own magnitude.
void expect_close_grads(const std::vector<lt::Tensor>& eager, const std::vector<lt::Tensor>& lazy) {
  ASSERT_EQ(eager.size(), lazy.size());
  for (size_t i = 0; i < eager.size(); ++i) {
    SCOPED_TRACE("parameter " + std::to_string(i));
    ASSERT_TRUE(eager[i].grad().defined());
    ASSERT_TRUE(lazy[i].grad().defined());
    EXPECT_TRUE(lazy[i].grad().device().is_lazy());
    EXPECT_EQ(lazy[i].grad().dtype(), lt::kFloat32);
    std::vector<float> e = eager[i].grad().to_vector<float>();
    std::vector<float> l = lazy[i].grad().to_vector<float>();
    ASSERT_EQ(e.size(), l.size());
    float scale = 0;
    for (float v : e) scale = std::max(scale, std::abs(v));
    ASSERT_GT(scale, 0.f);
    for (size_t j = 0; j < e.size(); ++j) EXPECT_NEAR(l[j], e[j], 1e-5f * scale) << "element " << j;
  }
}

// Runs `loss(params, inputs)` with gradients on cpu and on lazy (the same float32 initial
// values, moved with .to(lazy) and made leaves there) and compares the parameter gradients.
void compare_lazy_eager(const std::vector<lt::Tensor>& init, const std::vector<lt::Tensor>& inputs,
                        const std::function<lt::Tensor(Ts params, Ts inputs)>& loss) {
  std::vector<lt::Tensor> pe, pl, il;
  for (const lt::Tensor& p : init) {
    pe.push_back(p.clone());
    pe.back().requires_grad_();
    pl.push_back(p.to(kLazy));
    pl.back().requires_grad_();
    EXPECT_TRUE(pl.back().is_leaf());
  }
  for (const lt::Tensor& t : inputs) il.push_back(t.to(kLazy));
  lt::Tensor le = loss(pe, inputs);
  le.backward();
  lt::Tensor ll = loss(pl, il);
  EXPECT_TRUE(ll.device().is_lazy());
  ll.backward();
  lt::mark_step();
  EXPECT_NEAR(ll.item<float>(), le.item<float>(), 1e-5f * std::abs(le.item<float>()));
  expect_close_grads(pe, pl);
}

TEST(LazyEqualsEager, Mlp) {
  lt::mark_step();
  lt::manual_seed(7);
  std::vector<lt::Tensor> params = {lt::randn({16, 6}) * 0.4f, lt::randn({16}) * 0.1f,
                                    lt::randn({4, 16}) * 0.3f, lt::randn({4}) * 0.1f};
  lt::Tensor x = lt::randn({8, 6});
  lt::Tensor targets = lt::randint(0, 4, {8});
  compare_lazy_eager(params, {x, targets}, [](Ts p, Ts in) {
    lt::Tensor h = lt::relu(lt::linear(in[0], p[0], p[1]));
    return lt::cross_entropy(lt::linear(h, p[2], p[3]), in[1]);
  });
}

TEST(LazyEqualsEager, ConvNet) {
  lt::mark_step();
  lt::manual_seed(11);
  std::vector<lt::Tensor> params = {lt::randn({4, 2, 3, 3}) * 0.3f, lt::randn({4}) * 0.1f,
                                    lt::randn({3, 16}) * 0.3f, lt::randn({3}) * 0.1f};
  lt::Tensor x = lt::randn({2, 2, 6, 6});
  lt::Tensor targets = lt::tensor(std::vector<int64_t>{2, 0}, {2});
  compare_lazy_eager(params, {x, targets}, [](Ts p, Ts in) {
    lt::Tensor h = lt::relu(lt::conv2d(in[0], p[0], p[1]));  // [2, 4, 4, 4]
    h = lt::max_pool2d(h, {2, 2}).flatten(1);                // [2, 16]
    return lt::cross_entropy(lt::linear(h, p[2], p[3]), in[1]);
  });
}

// Autograd semantics hold on the lazy device too: accumulation over two steps, NoGradGuard,
// the in-place checks.
TEST(LazyEqualsEager, Semantics) {
  lt::mark_step();
  lt::Tensor x = lt::tensor(std::vector<float>{1, -2, 3}, {3}).to(kLazy);
  x.requires_grad_();
  (x * x).sum().backward();
  lt::mark_step();
  (x * x).sum().backward();
  lt::mark_step();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{4, -8, 12}));
  EXPECT_THROW(x.add_(1.0), lt::Error);
  {
    lt::NoGradGuard g;
    EXPECT_FALSE((x * 2.0f).requires_grad());
    x.sub_(x.grad(), 0.5);
  }
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{-1, 2, -3}));
  lt::Tensor a = x * 1.0f;
  lt::Tensor y = a * x;
  a.mul_(2.0f);
  EXPECT_THROW(y.sum().backward(), lt::Error);
  // In-place ops on a non-leaf: h = x * 1; h *= w; h += 1 (w's gradient is the old h).
  lt::Tensor w = lt::tensor(std::vector<float>{2, 3, 4}, {3}).to(kLazy);
  w.requires_grad_();
  x.mutable_grad() = lt::Tensor();
  lt::Tensor h = x * 1.0f;
  h.mul_(w);
  h.add_(1.0f);
  h.sum().backward();
  lt::mark_step();
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{-1, 7, -11}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{-1, 2, -3}));
  lt::mark_step();
}

}  // namespace

namespace {

TEST(MatmulGrad, TransposedWeightGetsItsGradientInItsOwnLayout) {
  // y = x W^T (a Linear): W's gradient is G^T x, computed in W's layout (contiguous), not as
  // the transpose of x^T G, on both devices, with the same values (1e-4: float32 sums of 64
  // products in different orders); a plain B keeps the A^T G form. Batched A (a transformer's
  // rows) too.
  lt::manual_seed(3);
  for (const lt::Device d : {lt::Device("cpu"), kLazy}) {
    for (const std::vector<int64_t>& xs : {std::vector<int64_t>{64, 30}, {4, 16, 30}}) {
      lt::Tensor x = lt::randn(xs), w = lt::randn({20, 30}), g = lt::randn({20});
      lt::Tensor lw = w.to(d).detach().requires_grad_(true);
      lt::Tensor y = lt::matmul(x.to(d), lw.t());
      (y * g.to(d)).sum().backward();
      lt::Tensor got = lw.grad();
      EXPECT_TRUE(got.is_contiguous()) << d.str() << " " << xs.size();
      // Reference: dL/dW[j, k] = sum over rows r of g[j] x[r, k].
      lt::Tensor x2 = x.reshape({-1, 30});
      lt::Tensor want = lt::matmul(g.reshape({20, 1}).expand({20, x2.size(0)}), x2);
      EXPECT_TRUE(lt::allclose(got.to("cpu"), want, 1e-4, 1e-4)) << d.str() << " " << xs.size();
      // B not transposed: [30, 20] contiguous, its gradient contiguous as well.
      lt::Tensor b = lt::randn({30, 20}).to(d).requires_grad_(true);
      lt::matmul(x.to(d), b).sum().backward();
      EXPECT_TRUE(b.grad().is_contiguous());
      EXPECT_TRUE(lt::allclose(b.grad().to("cpu"), lt::matmul(x2.t(), lt::ones({x2.size(0), 20})),
                               1e-4, 1e-4));
    }
  }
}

}  // namespace
