// Finite-difference gradient checks in float64, shared by test_autograd (primitives and
// composites) and test_op_sweep (the rows of its op tables that name a gradient domain).
#pragma once
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace lt_test {

using Ts = const std::vector<lt::Tensor>&;
using Fn = std::function<lt::Tensor(Ts)>;

// One gradcheck input: float64 values and a shape.
struct In {
  std::vector<double> v;
  std::vector<int64_t> sizes;
};

inline int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

inline lt::Tensor make(const In& in, lt::Device dev) { return lt::tensor(in.v, in.sizes).to(dev); }

// An input of the given shape, values uniform in [lo, hi) from a fixed seed (the default range
// keeps clear of the kinks and poles at 0).
inline In uniform_input(std::vector<int64_t> sizes, uint32_t seed, double lo = 0.5,
                        double hi = 1.5) {
  In in{std::vector<double>(static_cast<size_t>(numel_of(sizes))), std::move(sizes)};
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (double& v : in.v) v = u(g);
  return in;
}

// Central differences in float64 with step kEps = 1e-6. For the O(1)-O(10) losses used here the
// truncation error is ~kEps^2 * |f'''| ~ 1e-12 and the rounding error ~1e-16 * |loss| / kEps
// ~ 1e-9, so |analytic - numeric| <= kTol * (1 + |numeric|) with kTol = 1e-6 leaves three orders
// of magnitude of margin, while a wrong formula (a factor, a sign, a missing term or broadcast
// reduction) is off by O(1).
inline constexpr double kEps = 1e-6;
inline constexpr double kTol = 1e-6;

// The scalar loss: (f(x) * w).sum() with fixed pseudo-random weights |w| in [0.5, 1.5], so that
// every output element contributes with its own weight.
inline std::vector<double> loss_weights(int64_t n) {
  std::mt19937 g(12345u);
  std::uniform_real_distribution<double> d(0.5, 1.5);
  std::vector<double> w(static_cast<size_t>(n));
  for (size_t i = 0; i < w.size(); ++i) w[i] = (i % 3 == 1 ? -1 : 1) * d(g);
  return w;
}

inline lt::Tensor weighted_loss(const lt::Tensor& y, const std::vector<double>& w) {
  return (y * lt::tensor(w, y.sizes()).to(y.device())).sum();
}

inline void gradcheck(const std::string& name, const Fn& f, const std::vector<In>& ins,
               lt::Device dev = lt::Device("cpu")) {
  SCOPED_TRACE(name + " on " + dev.str());
  std::vector<lt::Tensor> leaves;
  for (const In& in : ins) {
    lt::Tensor t = make(in, dev);
    t.requires_grad_();
    leaves.push_back(t);
  }
  lt::Tensor y = f(leaves);
  ASSERT_TRUE(y.requires_grad()) << "the output has no history";
  ASSERT_FALSE(y.is_leaf());
  const std::vector<double> w = loss_weights(y.numel());
  weighted_loss(y, w).backward();
  std::vector<std::vector<double>> analytic;
  for (size_t i = 0; i < leaves.size(); ++i) {
    lt::Tensor g = leaves[i].grad();
    ASSERT_TRUE(g.defined()) << "input " << i << " got no gradient";
    EXPECT_EQ(g.dtype(), lt::kFloat64) << "input " << i;
    EXPECT_EQ(g.device(), dev) << "input " << i;
    ASSERT_EQ(g.sizes().vec(), ins[i].sizes) << "input " << i << ": gradient shape";
    analytic.push_back(g.to_vector<double>());
  }
  lt::NoGradGuard no_grad;
  std::vector<In> cur = ins;
  auto eval = [&]() {
    std::vector<lt::Tensor> xs;
    for (const In& in : cur) xs.push_back(make(in, dev));
    return weighted_loss(f(xs), w).item<double>();
  };
  for (size_t i = 0; i < ins.size(); ++i) {
    for (size_t j = 0; j < ins[i].v.size(); ++j) {
      cur[i].v[j] = ins[i].v[j] + kEps;
      const double up = eval();
      cur[i].v[j] = ins[i].v[j] - kEps;
      const double down = eval();
      cur[i].v[j] = ins[i].v[j];
      const double numeric = (up - down) / (2 * kEps);
      EXPECT_NEAR(analytic[i][j], numeric, kTol * (1 + std::abs(numeric)))
          << "input " << i << " element " << j;
    }
  }
}

}  // namespace lt_test
