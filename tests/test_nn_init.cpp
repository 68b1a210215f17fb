// torch::nn::init (lt/nn/init.h) on cpu and lazy: gains and fans as PyTorch defines them, the
// bounds and moments of the random fills on large tensors, exact fills (constant, eye, dirac),
// orthogonality, seeding, that parameters keep their identity and gather no history, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "error_message.h"
#include "lt/lt.h"

namespace {

using lt::Tensor;
namespace init = lt::nn::init;

std::vector<double> dv(const Tensor& t) { return t.cpu().to(lt::kFloat64).to_vector<double>(); }

struct Moments {
  double mean = 0, sd = 0, max_abs = 0;
};
Moments moments(const Tensor& t) {
  std::vector<double> v = dv(t);
  Moments m;
  for (double x : v) m.mean += x / static_cast<double>(v.size());
  for (double x : v) {
    m.sd += (x - m.mean) * (x - m.mean) / static_cast<double>(v.size());
    m.max_abs = std::max(m.max_abs, std::fabs(x));
  }
  m.sd = std::sqrt(m.sd);
  return m;
}

class NnInit : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
  // A parameter-like leaf on the device.
  Tensor param(std::vector<int64_t> sizes) const {
    return lt::empty(sizes).to(dev()).requires_grad_();
  }
};

TEST(NnInitGain, GainsAndFansAsPyTorch) {
  EXPECT_DOUBLE_EQ(init::calculate_gain(lt::kLinear), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(lt::kConv2D), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(lt::kSigmoid), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(lt::kTanh), 5.0 / 3);
  EXPECT_DOUBLE_EQ(init::calculate_gain(lt::kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain(lt::kLeakyReLU), std::sqrt(2.0 / (1 + 1e-4)));
  EXPECT_DOUBLE_EQ(init::calculate_gain(lt::kLeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
  auto [in, out] = init::_calculate_fan_in_and_fan_out(lt::empty({8, 3, 5, 5}));
  EXPECT_EQ(in, 75);
  EXPECT_EQ(out, 200);
}

// Statistical checks on 60,000 draws: the sample sd is within 2% of the target (its own
// relative spread is ~0.3% for uniform and normal draws, so 2% is > 6 sigma) and uniform draws
// stay inside their bound.
TEST_P(NnInit, RandomFillsHaveTheirBoundsAndSpread) {
  lt::manual_seed(11);
  Tensor w = param({300, 200});  // fan_in 200, fan_out 300
  Tensor same = init::xavier_uniform_(w, 2.0);
  EXPECT_TRUE(same.is_same(w));
  const double xa = 2.0 * std::sqrt(6.0 / 500);
  Moments m = moments(w);
  EXPECT_LE(m.max_abs, xa);
  EXPECT_NEAR(m.sd, xa / std::sqrt(3.0), 0.02 * xa / std::sqrt(3.0));
  EXPECT_NEAR(m.mean, 0, 0.02 * xa);
  init::xavier_normal_(w);
  m = moments(w);
  EXPECT_NEAR(m.sd, std::sqrt(2.0 / 500), 0.02 * std::sqrt(2.0 / 500));
  init::kaiming_uniform_(w, 0, lt::kFanIn, lt::kReLU);
  m = moments(w);
  const double ks = std::sqrt(2.0) / std::sqrt(200.0);
  EXPECT_LE(m.max_abs, std::sqrt(3.0) * ks);
  EXPECT_NEAR(m.sd, ks, 0.02 * ks);
  init::kaiming_normal_(w, 0, lt::kFanOut, lt::kReLU);
  m = moments(w);
  EXPECT_NEAR(m.sd, std::sqrt(2.0) / std::sqrt(300.0), 0.02 * std::sqrt(2.0 / 300));
  init::uniform_(w, -0.5, 1.5);
  m = moments(w);
  EXPECT_NEAR(m.mean, 0.5, 0.02);
  EXPECT_LE(m.max_abs, 1.5);
  init::normal_(w, 3.0, 0.25);
  m = moments(w);
  EXPECT_NEAR(m.mean, 3.0, 0.01);
  EXPECT_NEAR(m.sd, 0.25, 0.005);
  // In place on a leaf that requires grad: still a leaf, no history, grad still flows later.
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(w.device(), dev());
  (w * 2.0).sum().backward();
  EXPECT_EQ(dv(w.grad()), std::vector<double>(300 * 200, 2.0));
}

TEST_P(NnInit, SeededDrawsRepeat) {
  Tensor a = param({16, 8}), b = param({16, 8});
  lt::manual_seed(5);
  init::orthogonal_(a);
  init::kaiming_uniform_(a);
  lt::manual_seed(5);
  init::orthogonal_(b);
  init::kaiming_uniform_(b);
  EXPECT_EQ(dv(a), dv(b));
}

TEST_P(NnInit, ExactFills) {
  Tensor w = param({2, 3});
  init::constant_(w, 0.25);
  EXPECT_EQ(dv(w), std::vector<double>(6, 0.25));
  init::ones_(w);
  EXPECT_EQ(dv(w), std::vector<double>(6, 1.0));
  init::zeros_(w);
  EXPECT_EQ(dv(w), std::vector<double>(6, 0.0));
  init::eye_(w);
  EXPECT_EQ(dv(w), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  // dirac_: the identity convolution; a conv2d with it returns its input's first channels.
  Tensor k = param({2, 3, 3, 3});
  init::dirac_(k);
  lt::manual_seed(2);
  Tensor x = lt::randn({1, 3, 5, 5}).to(dev());
  Tensor y = lt::conv2d(x, k.detach(), {}, {1, 1}, {1, 1});
  EXPECT_EQ(dv(y), dv(x.narrow(1, 0, 2)));
}

// Q^T Q = I for the short side (rows > cols: columns orthonormal; rows < cols: rows), scaled by
// gain; a conv weight is seen as [out, in * k * k].
TEST_P(NnInit, OrthogonalIsOrthonormalTimesGain) {
  lt::manual_seed(8);
  for (std::vector<int64_t> sizes : {std::vector<int64_t>{7, 4}, {4, 7}, {6, 6}, {3, 2, 2, 2}}) {
    Tensor w = param(sizes);
    init::orthogonal_(w, 1.5);
    Tensor m = w.detach().reshape({sizes[0], -1}).cpu().to(lt::kFloat64);
    const bool tall = m.size(0) >= m.size(1);
    Tensor g = tall ? lt::matmul(m.transpose(0, 1), m) : lt::matmul(m, m.transpose(0, 1));
    std::vector<double> v = dv(g);
    const int64_t n = g.size(0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        EXPECT_NEAR(v[static_cast<size_t>(i * n + j)], i == j ? 2.25 : 0.0, 1e-5)
            << g.size(0) << " " << i << "," << j;  // float32 storage: ~1e-7 per entry
  }
}

TEST_P(NnInit, ErrorsNameTheInitializer) {
  auto message = lt_test::error_message;
  EXPECT_NE(message([&] { init::xavier_uniform_(param({5})); }).find("fan in and fan out"),
            std::string::npos);
  EXPECT_NE(message([&] {
              init::eye_(param({2, 2, 2}));
            }).find("eye_: expected a 2-d tensor"),
            std::string::npos);
  EXPECT_NE(message([&] { init::dirac_(param({2, 2})); }).find("dirac_"), std::string::npos);
  EXPECT_NE(message([&] { init::orthogonal_(param({4})); }).find("orthogonal_"), std::string::npos);
  EXPECT_NE(message([&] {
              lt::nn::RNN(lt::nn::RNNOptions(2, 3).nonlinearity(lt::kSigmoid));
            }).find("RNN: nonlinearity must be torch::kTanh or torch::kReLU"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Devices, NnInit, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
