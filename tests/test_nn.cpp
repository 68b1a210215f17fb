// lt::nn modules: every forward against a reference written out by hand (plain loops in double,
// or lt ops on cpu), run on cpu and on lazy (the two must agree within 1e-5); PyTorch's default
// initialization; Module::to, train/eval, zero_grad, state dicts and their safetensors files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "lt/lt.h"
#include "lt/serialize.h"

namespace fs = std::filesystem;

namespace {

using lt::Tensor;
const lt::Device kLazy("lazy");
const lt::Device kCpu("cpu");
constexpr uint64_t kSeed = 1234;
constexpr double kDeviceTol = 1e-5;  // cpu vs lazy, float32
constexpr double kRefTol = 2e-5;     // float32 module vs a double reference

std::vector<double> dv(const Tensor& t) { return t.cpu().to(lt::kFloat64).to_vector<double>(); }

std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

// |a - b| <= atol + rtol * |b| elementwise, with the first few failures named.
void expect_close(const Tensor& a, const Tensor& b, double atol, double rtol = 0,
                  const std::string& what = "") {
  ASSERT_EQ(shape(a), shape(b)) << what;
  std::vector<double> x = dv(a), y = dv(b);
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    bool same_nonfinite = (std::isnan(x[i]) && std::isnan(y[i])) || x[i] == y[i];
    if (!same_nonfinite && !(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i]))) {
      if (++bad <= 5) ADD_FAILURE() << what << " [" << i << "]: " << x[i] << " vs " << y[i];
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << x.size() << " elements differ";
}

void expect_close(const Tensor& a, const std::vector<double>& ref, double atol,
                  const std::string& what = "") {
  expect_close(a, lt::tensor(ref, a.sizes()), atol, 0, what);
}

// Runs `f` on cpu and then on lazy, reseeding before each so that module initialization and
// random inputs are the same; the lazy result must be a lazy tensor that matches the cpu one
// within 1e-5. Returns the cpu result.
Tensor run_both(const std::function<Tensor(lt::Device)>& f, double tol = kDeviceTol) {
  lt::manual_seed(kSeed);
  Tensor c = f(kCpu);
  lt::manual_seed(kSeed);
  Tensor l = f(kLazy);
  EXPECT_TRUE(c.device().is_cpu());
  EXPECT_TRUE(l.device().is_lazy());
  expect_close(l, c, tol, 0, "lazy vs cpu");
  return c;
}

std::vector<double> snapshot(const lt::nn::Module& m) {
  std::vector<double> all;
  for (auto& [n, t] : m.state_dict()) {
    std::vector<double> v = dv(t);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

std::string temp_path(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path d = fs::path(::testing::TempDir()) / (std::string("lt_nn_") + info->name());
  fs::create_directories(d);
  return (d / name).string();
}

class Nn : public ::testing::Test {
 protected:
  void SetUp() override { lt::mark_step(); }
  void TearDown() override { lt::mark_step(); }
};

// ---------------------------------------------------------------- Linear

TEST_F(Nn, LinearMatchesReference) {
  lt::nn::Linear keep(1, 1);
  Tensor x;
  Tensor y = run_both([&](lt::Device d) {
    lt::nn::Linear m(5, 3);
    x = lt::randn({2, 4, 5});
    if (d.is_cpu()) keep = m;
    m->to(d);
    return m(x.to(d));
  });
  EXPECT_EQ(shape(y), (std::vector<int64_t>{2, 4, 3}));
  std::vector<double> xv = dv(x), w = dv(keep->weight), b = dv(keep->bias), ref;
  for (int r = 0; r < 8; ++r)
    for (int o = 0; o < 3; ++o) {
      double s = b[o];
      for (int i = 0; i < 5; ++i) s += xv[r * 5 + i] * w[o * 5 + i];
      ref.push_back(s);
    }
  expect_close(y, ref, kRefTol);
}

TEST_F(Nn, LinearWithoutBias) {
  lt::nn::Linear m(4, 2, false);
  EXPECT_FALSE(m->bias.defined());
  EXPECT_EQ(m->parameters().size(), 1u);
  Tensor x = lt::randn({3, 4});
  expect_close(m(x), lt::matmul(x, m->weight.t()), 1e-6);
  EXPECT_THROW(lt::nn::Linear(0, 3), lt::Error);
  EXPECT_THROW(m(lt::randn({3, 5})), lt::Error);
}

// ---------------------------------------------------------------- Conv2d

// Direct convolution in double: x [N, C, H, W], w [O, C/g, K, K].
std::vector<double> conv_ref(const Tensor& xt, const Tensor& wt, const Tensor& bt, int64_t stride,
                             int64_t pad, int64_t dil, int64_t groups, int64_t* oh_out,
                             int64_t* ow_out) {
  const int64_t N = xt.size(0), C = xt.size(1), H = xt.size(2), W = xt.size(3);
  const int64_t O = wt.size(0), Cg = wt.size(1), K = wt.size(2);
  const int64_t OH = (H + 2 * pad - dil * (K - 1) - 1) / stride + 1;
  const int64_t OW = (W + 2 * pad - dil * (K - 1) - 1) / stride + 1;
  *oh_out = OH;
  *ow_out = OW;
  std::vector<double> x = dv(xt), w = dv(wt), b = bt.defined() ? dv(bt) : std::vector<double>(O);
  std::vector<double> out;
  const int64_t Og = O / groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = b[o];
          const int64_t g = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t ki = 0; ki < K; ++ki)
              for (int64_t kj = 0; kj < K; ++kj) {
                int64_t hi = i * stride - pad + ki * dil, wj = j * stride - pad + kj * dil;
                if (hi < 0 || hi >= H || wj < 0 || wj >= W) continue;
                s += x[((n * C + g * Cg + c) * H + hi) * W + wj] *
                     w[((o * Cg + c) * K + ki) * K + kj];
              }
          out.push_back(s);
        }
  (void)C;
  return out;
}

struct ConvCase {
  int64_t in, out, k, stride, pad, dil, groups;
  bool bias;
};

TEST_F(Nn, Conv2dStridePaddingGroupsMatchReference) {
  const std::vector<ConvCase> cases = {
      {3, 4, 3, 1, 0, 1, 1, true},  {3, 4, 3, 2, 1, 1, 1, true}, {4, 6, 3, 1, 1, 1, 2, true},
      {4, 4, 3, 2, 2, 1, 4, false}, {2, 3, 2, 1, 1, 2, 1, true}, {6, 3, 1, 1, 0, 1, 3, true},
  };
  for (const ConvCase& cc : cases) {
    SCOPED_TRACE("in " + std::to_string(cc.in) + " out " + std::to_string(cc.out) + " k " +
                 std::to_string(cc.k) + " stride " + std::to_string(cc.stride) + " pad " +
                 std::to_string(cc.pad) + " groups " + std::to_string(cc.groups));
    lt::nn::Conv2d keep(1, 1, 1);
    Tensor x;
    Tensor y = run_both([&](lt::Device d) {
      lt::nn::Conv2d m(lt::nn::Conv2dOptions(cc.in, cc.out, cc.k)
                           .stride(cc.stride)
                           .padding(cc.pad)
                           .dilation(cc.dil)
                           .groups(cc.groups)
                           .bias(cc.bias));
      x = lt::randn({2, cc.in, 7, 6});
      if (d.is_cpu()) keep = m;
      m->to(d);
      return m(x.to(d));
    });
    EXPECT_EQ(shape(keep->weight), (std::vector<int64_t>{cc.out, cc.in / cc.groups, cc.k, cc.k}));
    EXPECT_EQ(keep->bias.defined(), cc.bias);
    int64_t oh = 0, ow = 0;
    std::vector<double> ref =
        conv_ref(x, keep->weight, keep->bias, cc.stride, cc.pad, cc.dil, cc.groups, &oh, &ow);
    EXPECT_EQ(shape(y), (std::vector<int64_t>{2, cc.out, oh, ow}));
    expect_close(y, ref, kRefTol);
  }
  EXPECT_THROW(lt::nn::Conv2d(lt::nn::Conv2dOptions(3, 4, 3).groups(2)), lt::Error);
  EXPECT_THROW(lt::nn::Conv2d(lt::nn::Conv2dOptions(4, 3, 3).groups(2)), lt::Error);
}

// ---------------------------------------------------------------- LayerNorm

TEST_F(Nn, LayerNormMatchesReference) {
  lt::nn::LayerNorm keep(std::vector<int64_t>{1});
  Tensor x;
  Tensor y = run_both([&](lt::Device d) {
    lt::nn::LayerNorm m(std::vector<int64_t>{3, 4});
    {
      lt::NoGradGuard g;  // non-trivial affine parameters
      m->weight.copy_(lt::randn({3, 4}));
      m->bias.copy_(lt::randn({3, 4}));
    }
    x = lt::randn({2, 3, 4}) * 3.0 + 1.0;
    if (d.is_cpu()) keep = m;
    m->to(d);
    return m(x.to(d));
  });
  std::vector<double> xv = dv(x), w = dv(keep->weight), b = dv(keep->bias), ref;
  for (int n = 0; n < 2; ++n) {
    double mean = 0, var = 0;
    for (int i = 0; i < 12; ++i) mean += xv[n * 12 + i] / 12;
    for (int i = 0; i < 12; ++i) var += (xv[n * 12 + i] - mean) * (xv[n * 12 + i] - mean) / 12;
    for (int i = 0; i < 12; ++i)
      ref.push_back((xv[n * 12 + i] - mean) / std::sqrt(var + 1e-5) * w[i] + b[i]);
  }
  expect_close(y, ref, kRefTol);

  lt::nn::LayerNorm plain(lt::nn::LayerNormOptions({4}).elementwise_affine(false));
  EXPECT_TRUE(plain->parameters().empty());
  Tensor z = plain(lt::randn({5, 4}));
  expect_close(z.mean(1), std::vector<double>(5, 0.0), 1e-6);
  EXPECT_THROW(plain(lt::randn({4, 3})), lt::Error);
}

// ---------------------------------------------------------------- BatchNorm2d

TEST_F(Nn, BatchNorm2dTrainUsesBatchStatsAndUpdatesRunningStats) {
  const int64_t N = 3, C = 2, H = 2, W = 3, per = N * H * W;
  const double momentum = 0.2, eps = 1e-5;
  lt::manual_seed(kSeed);
  const Tensor x1 = lt::randn({N, C, H, W}) * 2.0 + 0.5, x2 = lt::randn({N, C, H, W}) - 1.0;
  const std::vector<double> gamma = {1.5, -0.5}, beta = {0.25, 2.0};

  // Reference: biased batch variance normalizes, the unbiased one enters running_var.
  std::vector<double> rm = {0, 0}, rv = {1, 1};
  std::vector<std::vector<double>> y_ref;
  for (const Tensor& xt : {x1, x2}) {
    std::vector<double> x = dv(xt), y(x.size());
    for (int64_t c = 0; c < C; ++c) {
      double mean = 0, var = 0;
      auto at = [&](int64_t n, int64_t k) { return (n * C + c) * H * W + k; };
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < H * W; ++k) mean += x[at(n, k)] / per;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < H * W; ++k) var += std::pow(x[at(n, k)] - mean, 2) / per;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < H * W; ++k)
          y[at(n, k)] = (x[at(n, k)] - mean) / std::sqrt(var + eps) * gamma[c] + beta[c];
      rm[c] = (1 - momentum) * rm[c] + momentum * mean;
      rv[c] = (1 - momentum) * rv[c] + momentum * var * per / (per - 1);
    }
    y_ref.push_back(y);
  }

  std::vector<Tensor> outs[2];
  for (lt::Device d : {kCpu, kLazy}) {
    SCOPED_TRACE(d.str());
    lt::nn::BatchNorm2d bn(lt::nn::BatchNorm2dOptions(C).eps(eps).momentum(momentum));
    {
      lt::NoGradGuard g;
      bn->weight.copy_(lt::tensor(gamma).to(lt::kFloat32));
      bn->bias.copy_(lt::tensor(beta).to(lt::kFloat32));
    }
    bn->to(d);
    EXPECT_TRUE(bn->is_training());
    Tensor y1 = bn(x1.to(d));
    Tensor y2 = bn(x2.to(d));
    EXPECT_TRUE(y2.device() == d);
    expect_close(y1, y_ref[0], kRefTol, "batch 1");
    expect_close(y2, y_ref[1], kRefTol, "batch 2");
    expect_close(bn->running_mean, rm, 1e-6, "running_mean");
    expect_close(bn->running_var, rv, 1e-5, "running_var");
    EXPECT_EQ(bn->num_batches_tracked.dtype(), lt::kInt64);
    EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
    outs[d.is_lazy()] = {y1, y2, bn->running_mean, bn->running_var};

    // Eval: the running statistics normalize, and nothing is updated.
    bn->eval();
    std::vector<double> x = dv(x1), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const int64_t c = static_cast<int64_t>(i) / (H * W) % C;
      y[i] = (x[i] - rm[c]) / std::sqrt(rv[c] + eps) * gamma[c] + beta[c];
    }
    expect_close(bn(x1.to(d)), y, kRefTol, "eval");
    expect_close(bn->running_mean, rm, 1e-6, "running_mean after eval");
    EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  }
  for (size_t i = 0; i < outs[0].size(); ++i) expect_close(outs[1][i], outs[0][i], kDeviceTol);
  lt::nn::BatchNorm2d bn(3);
  EXPECT_THROW(bn(lt::randn({2, 4, 3, 3})), lt::Error);
  EXPECT_THROW(bn(lt::randn({2, 3, 3})), lt::Error);
}

// ---------------------------------------------------------------- Embedding

TEST_F(Nn, EmbeddingGathersRows) {
  lt::nn::Embedding keep(1, 1);
  const std::vector<int64_t> idx = {3, 0, 9, 3, 5, 1};
  Tensor y = run_both([&](lt::Device d) {
    lt::nn::Embedding m(10, 4);
    if (d.is_cpu()) keep = m;
    m->to(d);
    return m(lt::tensor(idx, {2, 3}).to(d));
  });
  EXPECT_EQ(shape(y), (std::vector<int64_t>{2, 3, 4}));
  std::vector<double> w = dv(keep->weight), ref;
  for (int64_t i : idx)
    for (int j = 0; j < 4; ++j) ref.push_back(w[i * 4 + j]);
  expect_close(y, ref, 0);
  EXPECT_THROW(keep(lt::tensor(std::vector<int64_t>{10})), lt::Error);
}

// ---------------------------------------------------------------- Dropout

TEST_F(Nn, DropoutTrainScalesKeptValuesAndEvalIsIdentity) {
  const int64_t n = 4000;
  for (double p : {0.25, 0.5, 0.8}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    Tensor x;
    Tensor y = run_both(
        [&](lt::Device d) {  // same seed: the same mask on both devices
          lt::nn::Dropout m(p);
          x = lt::randn({n}) + 3.0;  // never 0
          return m(x.to(d));
        },
        0);
    std::vector<double> xv = dv(x), yv = dv(y);
    int64_t zeros = 0, bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (yv[i] == 0) {
        ++zeros;
      } else if (std::fabs(yv[i] - xv[i] / (1 - p)) > 1e-5 * std::fabs(yv[i])) {
        ++bad;
      }
    }
    EXPECT_EQ(bad, 0) << "kept values must be x / (1 - p)";
    EXPECT_NEAR(static_cast<double>(zeros) / n, p, 0.04);
  }
  for (lt::Device d : {kCpu, kLazy}) {
    SCOPED_TRACE(d.str());
    Tensor x = (lt::randn({200}) + 3.0).to(d);
    lt::nn::Dropout m(0.5);
    m->eval();
    expect_close(m(x), x, 0, 0, "eval");
    m->train();
    lt::nn::Dropout none(0.0);
    expect_close(none(x), x, 0, 0, "p = 0");
    lt::nn::Dropout all(1.0);
    expect_close(all(x), std::vector<double>(200, 0.0), 0, "p = 1");
    all->eval();
    expect_close(all(x), x, 0, 0, "p = 1, eval");
    lt::nn::Dropout bad(1.5);
    EXPECT_THROW(bad(x), lt::Error);
  }
}

// ---------------------------------------------------------------- activations, shape modules

TEST_F(Nn, ReluGeluFlattenMatchReference) {
  Tensor x;
  Tensor r = run_both([&](lt::Device d) {
    x = lt::randn({3, 7}) * 2.0;
    return lt::nn::ReLU()(x.to(d));
  });
  std::vector<double> xv = dv(x), ref;
  for (double v : xv) ref.push_back(v > 0 ? v : 0);
  expect_close(r, ref, 0);

  Tensor g = run_both([&](lt::Device d) { return lt::nn::GELU()(x.to(d)); });
  Tensor gt = run_both([&](lt::Device d) {
    return lt::nn::GELU(lt::nn::GELUOptions().approximate("tanh"))(x.to(d));
  });
  std::vector<double> exact, approx;
  for (double v : xv) {
    exact.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    approx.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  expect_close(g, exact, 1e-5, "gelu");
  expect_close(gt, approx, 1e-5, "gelu tanh");

  Tensor f = run_both([&](lt::Device d) {
    x = lt::randn({2, 3, 4, 5});
    return lt::nn::Flatten()(x.to(d));
  });
  EXPECT_EQ(shape(f), (std::vector<int64_t>{2, 60}));
  expect_close(f, dv(x), 0);
  EXPECT_EQ(shape(lt::nn::Flatten(lt::nn::FlattenOptions().start_dim(0).end_dim(1))(x)),
            (std::vector<int64_t>{6, 4, 5}));
  EXPECT_EQ(shape(lt::nn::Flatten(lt::nn::FlattenOptions().start_dim(2))(x)),
            (std::vector<int64_t>{2, 3, 20}));
}

TEST_F(Nn, MaxPool2dMatchesReference) {
  for (auto [k, s] : {std::pair<int64_t, int64_t>{2, 0}, {3, 2}, {2, 1}}) {
    SCOPED_TRACE("kernel " + std::to_string(k) + " stride " + std::to_string(s));
    Tensor x;
    Tensor y = run_both([&](lt::Device d) {
      x = lt::randn({2, 3, 7, 6});
      lt::nn::MaxPool2dOptions o(k);
      if (s) o.stride(s);
      return lt::nn::MaxPool2d(o)(x.to(d));
    });
    const int64_t st = s ? s : k, OH = (7 - k) / st + 1, OW = (6 - k) / st + 1;
    EXPECT_EQ(shape(y), (std::vector<int64_t>{2, 3, OH, OW}));
    std::vector<double> xv = dv(x), ref;
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t a = 0; a < k; ++a)
            for (int64_t b = 0; b < k; ++b)
              m = std::max(m, xv[(p * 7 + i * st + a) * 6 + j * st + b]);
          ref.push_back(m);
        }
    expect_close(y, ref, 0);
  }
}

// ---------------------------------------------------------------- Sequential

TEST_F(Nn, SequentialRunsInOrderAndNamesParameters) {
  lt::nn::Sequential keep{lt::nn::ReLU()};
  lt::nn::Linear a(1, 1), b(1, 1);
  Tensor x;
  Tensor y = run_both([&](lt::Device d) {
    lt::nn::Linear l1(6, 5), l2(5, 2);
    lt::nn::Sequential s(l1, lt::nn::ReLU(), l2);
    x = lt::randn({4, 6});
    if (d.is_cpu()) {
      keep = s;
      a = l1;
      b = l2;
    }
    s->to(d);
    return s(x.to(d));
  });
  EXPECT_EQ(keep->size(), 3u);
  lt::NoGradGuard g;
  expect_close(y, b(lt::relu(a(x))), 1e-6);

  lt::nn::NamedTensors np = keep->named_parameters().pairs();
  std::vector<std::string> names;
  for (auto& [n, t] : np) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  std::vector<Tensor> ps = keep->parameters();
  ASSERT_EQ(ps.size(), 4u);
  EXPECT_TRUE(ps[0].is_same(a->weight));
  EXPECT_TRUE(ps[1].is_same(a->bias));
  EXPECT_TRUE(ps[2].is_same(b->weight));
  EXPECT_TRUE(ps[3].is_same(b->bias));
  EXPECT_TRUE(keep->parameters(false).empty());
  EXPECT_EQ(keep->children().size(), 3u);
}

// ---------------------------------------------------------------- MultiheadAttention

// The attention of one (batch, head) pair at a time, from the module's parameters, in double:
// q/k/v are [N, L, E] (batch-major); masks as PyTorch's (bool true = may not attend).
std::pair<Tensor, Tensor> mha_reference(lt::nn::MultiheadAttentionImpl& m, const Tensor& q,
                                        const Tensor& k, const Tensor& v, const Tensor& kpm,
                                        const Tensor& attn_mask) {
  const auto f64 = [](const Tensor& t) { return t.cpu().to(lt::kFloat64); };
  const int64_t E = m.options.embed_dim(), H = m.options.num_heads(), D = E / H;
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
  Tensor W = f64(m.in_proj_weight), B = f64(m.in_proj_bias);
  Tensor Wo = f64(m.out_proj->weight), Bo = f64(m.out_proj->bias);
  Tensor ninf = lt::full({L, S}, -std::numeric_limits<double>::infinity(), lt::kFloat64);
  std::vector<Tensor> outs, weights;
  for (int64_t n = 0; n < N; ++n) {
    Tensor qn = f64(q).select(0, n), kn = f64(k).select(0, n), vn = f64(v).select(0, n);
    std::vector<Tensor> heads;
    Tensor wsum = lt::zeros({L, S}, lt::kFloat64);
    for (int64_t h = 0; h < H; ++h) {
      auto proj = [&](const Tensor& x, int64_t which) {
        Tensor w = W.narrow(0, which * E + h * D, D), b = B.narrow(0, which * E + h * D, D);
        return lt::matmul(x, w.t()) + b;  // [len, D]
      };
      Tensor Q = proj(qn, 0), K = proj(kn, 1), V = proj(vn, 2);
      Tensor s = lt::matmul(Q, K.t()) / std::sqrt(static_cast<double>(D));
      if (attn_mask.defined())
        s = attn_mask.dtype() == lt::kBool ? lt::where(attn_mask.cpu(), ninf, s)
                                           : s + f64(attn_mask);
      if (kpm.defined()) s = lt::where(kpm.cpu().select(0, n).unsqueeze(0).expand({L, S}), ninf, s);
      Tensor e = lt::exp(s - std::get<0>(s.max(1, true)));
      Tensor p = e / e.sum(1, true);
      wsum = wsum + p / static_cast<double>(H);
      heads.push_back(lt::matmul(p, V));
    }
    outs.push_back(lt::matmul(lt::cat(heads, 1), Wo.t()) + Bo);
    weights.push_back(wsum);
  }
  return {lt::stack(outs), lt::stack(weights)};
}

TEST_F(Nn, MultiheadAttentionMatchesPerHeadReference) {
  const int64_t E = 8, H = 2, N = 3, L = 4, S = 5;
  for (bool batch_first : {false, true}) {
    for (int mask_kind = 0; mask_kind < 4; ++mask_kind) {  // none, kpm, bool mask, float mask
      SCOPED_TRACE(std::string("batch_first ") + (batch_first ? "true" : "false") + ", mask kind " +
                   std::to_string(mask_kind));
      lt::nn::MultiheadAttention keep(E, H);
      Tensor q, k, v, kpm, am;
      Tensor weights[2];
      Tensor out = run_both([&](lt::Device d) {
        lt::nn::MultiheadAttention m(
            lt::nn::MultiheadAttentionOptions(E, H).batch_first(batch_first));
        {
          lt::NoGradGuard g;  // PyTorch zero-initializes the biases: make them count
          m->in_proj_bias.copy_(lt::randn({3 * E}) * 0.5);
          m->out_proj->bias.copy_(lt::randn({E}) * 0.5);
        }
        // Batch-major inputs; the module sees [L, N, E] when not batch_first.
        q = lt::randn({N, L, E});
        k = lt::randn({N, S, E});
        v = lt::randn({N, S, E});
        kpm = Tensor();
        am = Tensor();
        if (mask_kind == 1)
          kpm = lt::tensor(std::vector<bool>{false, false, false, true, true,    //
                                             false, false, false, false, false,  //
                                             true, false, false, false, false},
                           {N, S});
        if (mask_kind == 2) am = lt::rand({L, S}) < 0.4;
        if (mask_kind == 2)  // keep one key per query attendable
          am = lt::logical_and(am, lt::arange(S).unsqueeze(0).expand({L, S}) != 0);
        if (mask_kind == 3) am = lt::randn({L, S});
        if (d.is_cpu()) keep = m;
        m->to(d);
        auto in = [&](const Tensor& t) {
          return (batch_first ? t : t.transpose(0, 1).contiguous()).to(d);
        };
        auto [o, w] =
            m(in(q), in(k), in(v), kpm.defined() ? kpm.to(d) : kpm, am.defined() ? am.to(d) : am);
        weights[d.is_lazy()] = w;
        return batch_first ? o : o.transpose(0, 1);  // compared batch-major
      });
      expect_close(weights[1], weights[0], kDeviceTol, 0, "attention weights lazy vs cpu");
      auto [ref_out, ref_w] = mha_reference(*keep, q, k, v, kpm, am);
      expect_close(out, ref_out, kRefTol, 0, "output");
      EXPECT_EQ(shape(weights[0]), (std::vector<int64_t>{N, L, S}));
      expect_close(weights[0], ref_w, kRefTol, 0, "averaged weights");
      expect_close(weights[0].sum(-1), std::vector<double>(N * L, 1.0), 1e-5, "rows sum to 1");
      if (mask_kind == 1) {  // padded keys get no weight
        std::vector<double> w = dv(weights[0]);
        for (int64_t l = 0; l < L; ++l) {
          EXPECT_EQ(w[(0 * L + l) * S + 3], 0.0);
          EXPECT_EQ(w[(0 * L + l) * S + 4], 0.0);
          EXPECT_EQ(w[(2 * L + l) * S + 0], 0.0);
        }
      }
      if (mask_kind == 2) {  // bool true = masked
        std::vector<bool> mv = am.to_vector<bool>();
        std::vector<double> w = dv(weights[0]);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t i = 0; i < L * S; ++i)
            if (mv[i]) EXPECT_EQ(w[n * L * S + i], 0.0);
      }
    }
  }
}

TEST_F(Nn, MultiheadAttentionShapesAndErrors) {
  lt::nn::MultiheadAttention m(8, 4);
  Tensor x = lt::randn({5, 2, 8});  // [L, N, E]
  auto [o, w] = m(x, x, x);
  EXPECT_EQ(shape(o), (std::vector<int64_t>{5, 2, 8}));
  EXPECT_EQ(shape(w), (std::vector<int64_t>{2, 5, 5}));
  EXPECT_THROW(lt::nn::MultiheadAttention(10, 4), lt::Error);
  EXPECT_THROW(m(lt::randn({5, 2, 7}), x, x), lt::Error);
  EXPECT_THROW(m(x, x, x, lt::zeros({2, 4}, lt::kBool)), lt::Error);
  // Without biases: two parameters, and the same result on both devices.
  Tensor y = run_both([&](lt::Device d) {
    lt::nn::MultiheadAttention nb(lt::nn::MultiheadAttentionOptions(8, 2).bias(false));
    EXPECT_EQ(nb->parameters().size(), 2u);
    nb->to(d);
    return std::get<0>(nb(x.to(d), x.to(d), x.to(d)));
  });
  EXPECT_EQ(shape(y), (std::vector<int64_t>{5, 2, 8}));
  std::vector<std::string> names;
  for (auto& [n, t] : m->state_dict()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                             "out_proj.bias"}));
}

// ---------------------------------------------------------------- TransformerEncoderLayer

TEST_F(Nn, TransformerEncoderLayerPostNormAndNormFirst) {
  const int64_t E = 8, N = 2, L = 5;
  for (bool norm_first : {false, true}) {
    for (std::string act : {"relu", "gelu"}) {
      SCOPED_TRACE(std::string(norm_first ? "norm_first" : "post-norm") + ", " + act);
      lt::nn::TransformerEncoderLayer keep(E, 2);
      Tensor x;
      Tensor y = run_both([&](lt::Device d) {
        lt::nn::TransformerEncoderLayer m(lt::nn::TransformerEncoderLayerOptions(E, 2)
                                              .dim_feedforward(16)
                                              .dropout(0.3)
                                              .activation(act)
                                              .norm_first(norm_first));
        {
          lt::NoGradGuard g;
          for (lt::nn::LayerNorm ln : {m->norm1, m->norm2}) {
            ln->weight.copy_(lt::rand({E}) + 0.5);
            ln->bias.copy_(lt::randn({E}) * 0.1);
          }
        }
        x = lt::randn({L, N, E});
        if (d.is_cpu()) keep = m;
        m->to(d);
        m->eval();
        Tensor a = m(x.to(d)), b = m(x.to(d));
        expect_close(a, b, 0, 0, "eval is deterministic");
        return a;
      });
      EXPECT_EQ(shape(y), (std::vector<int64_t>{L, N, E}));
      // Reference from the (separately tested) submodules.
      lt::NoGradGuard g;
      keep->to(kCpu);
      auto& m = *keep;
      auto sa = [&](const Tensor& t) { return std::get<0>(m.self_attn(t, t, t)); };
      auto ff = [&](const Tensor& t) {
        Tensor h = m.linear1(t);
        return m.linear2(act == "gelu" ? lt::gelu(h) : lt::relu(h));
      };
      Tensor ref;
      if (norm_first) {
        Tensor h = x + sa(m.norm1(x));
        ref = h + ff(m.norm2(h));
      } else {
        Tensor h = m.norm1(x + sa(x));
        ref = m.norm2(h + ff(h));
      }
      expect_close(y, ref, 1e-5, 0, "vs reference");

      // Training mode: dropout 0.3 changes the output and differs between draws.
      keep->train();
      Tensor t1 = keep(x), t2 = keep(x);
      EXPECT_GT(dv((t1 - ref).abs().max())[0], 1e-3);
      EXPECT_GT(dv((t1 - t2).abs().max())[0], 1e-3);
    }
  }
  EXPECT_THROW(lt::nn::TransformerEncoderLayer(
                   lt::nn::TransformerEncoderLayerOptions(8, 2).activation("tanh")),
               lt::Error);
}

TEST_F(Nn, TransformerEncoderLayerBatchFirstAndPaddingMask) {
  const int64_t E = 8, N = 2, L = 4;
  lt::manual_seed(kSeed);
  lt::nn::TransformerEncoderLayer a(
      lt::nn::TransformerEncoderLayerOptions(E, 4).dim_feedforward(12).dropout(0.0));
  lt::manual_seed(kSeed);
  lt::nn::TransformerEncoderLayer b(
      lt::nn::TransformerEncoderLayerOptions(E, 4).dim_feedforward(12).dropout(0.0).batch_first(
          true));
  Tensor x = lt::randn({N, L, E});
  Tensor kpm =
      lt::tensor(std::vector<bool>{false, false, true, true, false, false, false, false}, {N, L});
  for (lt::Device d : {kCpu, kLazy}) {
    a->to(d);
    b->to(d);
    Tensor ya = a(x.transpose(0, 1).to(d), Tensor(), kpm.to(d));
    Tensor yb = b(x.to(d), Tensor(), kpm.to(d));
    EXPECT_EQ(shape(yb), (std::vector<int64_t>{N, L, E}));
    expect_close(ya.transpose(0, 1), yb, 1e-5, 0, d.str());
  }
}

// ---------------------------------------------------------------- initialization

TEST_F(Nn, DefaultInitializationFollowsPyTorch) {
  auto check_uniform = [](const Tensor& t, double bound, const std::string& what) {
    std::vector<double> v = dv(t);
    double mx = 0;
    for (double x : v) {
      mx = std::max(mx, std::fabs(x));
      ASSERT_LE(std::fabs(x), bound) << what;
    }
    EXPECT_GT(mx, 0.9 * bound) << what << ": values should fill U(-bound, bound)";
  };
  lt::manual_seed(7);
  lt::nn::Linear lin(50, 40);
  check_uniform(lin->weight, 1 / std::sqrt(50.0), "Linear.weight");
  check_uniform(lin->bias, 1 / std::sqrt(50.0), "Linear.bias");
  lt::nn::Conv2d conv(lt::nn::Conv2dOptions(8, 16, 3).groups(2));
  check_uniform(conv->weight, 1 / std::sqrt(4 * 9.0), "Conv2d.weight");
  check_uniform(conv->bias, 1 / std::sqrt(4 * 9.0), "Conv2d.bias");
  lt::nn::MultiheadAttention mha(16, 4);
  check_uniform(mha->in_proj_weight, std::sqrt(6.0 / (16 + 48)), "in_proj_weight (xavier)");
  check_uniform(mha->out_proj->weight, 1 / std::sqrt(16.0), "out_proj.weight");
  expect_close(mha->in_proj_bias, std::vector<double>(48, 0.0), 0, "in_proj_bias");
  expect_close(mha->out_proj->bias, std::vector<double>(16, 0.0), 0, "out_proj.bias");
  lt::nn::Embedding emb(100, 50);  // N(0, 1)
  EXPECT_NEAR(emb->weight.mean().item<double>(), 0.0, 0.05);
  EXPECT_NEAR(emb->weight.std().item<double>(), 1.0, 0.05);
  lt::nn::LayerNorm ln(std::vector<int64_t>{6});
  expect_close(ln->weight, std::vector<double>(6, 1.0), 0);
  expect_close(ln->bias, std::vector<double>(6, 0.0), 0);
  lt::nn::BatchNorm2d bn(3);
  expect_close(bn->weight, std::vector<double>(3, 1.0), 0);
  expect_close(bn->bias, std::vector<double>(3, 0.0), 0);
  expect_close(bn->running_mean, std::vector<double>(3, 0.0), 0);
  expect_close(bn->running_var, std::vector<double>(3, 1.0), 0);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 0);
  for (const Tensor& p : lin->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
    EXPECT_EQ(p.dtype(), lt::kFloat32);
  }
  for (const Tensor& b : bn->buffers()) EXPECT_FALSE(b.requires_grad());
}

// ---------------------------------------------------------------- Module mechanics

TEST_F(Nn, ToDeviceMovesParametersInPlace) {
  lt::nn::Sequential s(lt::nn::Linear(4, 3), lt::nn::BatchNorm2d(3));
  lt::nn::Linear lin(4, 3);
  Tensor w = lin->weight;  // a handle taken before the move
  std::vector<double> before = dv(w);
  lin->to(kLazy);
  EXPECT_TRUE(w.device().is_lazy());
  EXPECT_TRUE(lin->weight.device().is_lazy());
  EXPECT_TRUE(lin->bias.device().is_lazy());
  EXPECT_TRUE(w.is_same(lin->parameters()[0]));
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
  EXPECT_EQ(dv(w), before);
  // Gradients flow to the moved leaves, on the lazy device.
  lin(lt::ones({2, 4}).to(kLazy)).sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_TRUE(w.grad().device().is_lazy());
  expect_close(w.grad(), std::vector<double>(12, 2.0), 0);
  lin->to(kCpu);
  EXPECT_TRUE(w.device().is_cpu());
  EXPECT_EQ(dv(w), before);
  // A gradient is never left behind on the old device (it moves or is dropped).
  EXPECT_TRUE(!w.grad().defined() || w.grad().device().is_cpu());

  for (const Tensor& b : s->buffers()) EXPECT_TRUE(b.device().is_cpu());
  s->to(kLazy);
  for (const Tensor& t : s->parameters()) EXPECT_TRUE(t.device().is_lazy());
  for (const Tensor& b : s->buffers()) EXPECT_TRUE(b.device().is_lazy());
  s->to(lt::kFloat64);
  for (auto& [n, t] : s->state_dict())
    EXPECT_EQ(t.dtype(), n == "1.num_batches_tracked" ? lt::kInt64 : lt::kFloat64) << n;
  for (const Tensor& t : s->parameters()) EXPECT_TRUE(t.requires_grad() && t.is_leaf());
}

TEST_F(Nn, TrainEvalPropagatesToChildren) {
  lt::nn::Sequential inner(lt::nn::Dropout(0.5), lt::nn::ReLU());
  lt::nn::Sequential outer(lt::nn::Linear(3, 3), inner);
  lt::nn::TransformerEncoderLayer enc(8, 2);
  std::function<void(const lt::nn::Module&, bool)> all = [&](const lt::nn::Module& m, bool on) {
    EXPECT_EQ(m.is_training(), on) << m.name();
    for (auto& c : m.children()) all(*c, on);
  };
  all(*outer, true);
  outer->eval();
  all(*outer, false);
  outer->train();
  all(*outer, true);
  outer->train(false);
  all(*outer, false);
  enc->eval();
  all(*enc, false);
  EXPECT_FALSE(enc->self_attn->is_training());
  EXPECT_FALSE(enc->self_attn->out_proj->is_training());
}

TEST_F(Nn, ZeroGradDropsGradients) {
  for (lt::Device d : {kCpu, kLazy}) {
    lt::nn::Sequential s(lt::nn::Linear(3, 4), lt::nn::ReLU(), lt::nn::Linear(4, 1));
    s->to(d);
    s(lt::randn({5, 3}).to(d)).sum().backward();
    for (const Tensor& p : s->parameters()) EXPECT_TRUE(p.grad().defined());
    s->zero_grad();
    for (const Tensor& p : s->parameters()) EXPECT_FALSE(p.grad().defined());
  }
}

TEST_F(Nn, StateDictNames) {
  lt::nn::Sequential s(lt::nn::Conv2d(1, 2, 3), lt::nn::BatchNorm2d(2), lt::nn::Flatten(),
                       lt::nn::Linear(8, 2, false));
  std::set<std::string> names;
  for (auto& [n, t] : s->state_dict()) EXPECT_TRUE(names.insert(n).second) << n;
  EXPECT_EQ(names,
            (std::set<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                                   "1.running_var", "1.num_batches_tracked", "3.weight"}));
  std::vector<std::string> buffers;
  for (auto& [n, t] : s->named_buffers()) buffers.push_back(n);
  EXPECT_EQ(buffers,
            (std::vector<std::string>{"1.running_mean", "1.running_var", "1.num_batches_tracked"}));
  lt::nn::Sequential nested(lt::nn::Linear(2, 2), lt::nn::Sequential(lt::nn::Linear(2, 3)));
  std::vector<std::string> nested_names;
  for (auto& [n, t] : nested->named_parameters()) nested_names.push_back(n);
  EXPECT_EQ(nested_names,
            (std::vector<std::string>{"0.weight", "0.bias", "1.0.weight", "1.0.bias"}));
  lt::nn::TransformerEncoderLayer enc(8, 2);
  std::set<std::string> enc_names;
  for (auto& [n, t] : enc->state_dict()) enc_names.insert(n);
  EXPECT_EQ(enc_names,
            (std::set<std::string>{
                "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"}));
}

lt::nn::Sequential small_net() {
  return lt::nn::Sequential(lt::nn::Conv2d(1, 2, 3), lt::nn::BatchNorm2d(2), lt::nn::Flatten(),
                            lt::nn::Linear(8, 2));
}

TEST_F(Nn, SaveLoadRoundTrip) {
  for (lt::Device d : {kCpu, kLazy}) {
    SCOPED_TRACE(d.str());
    const std::string path = temp_path("net_" + d.str() + ".safetensors");
    lt::manual_seed(1);
    lt::nn::Sequential a = small_net();
    a->to(d);
    a(lt::randn({4, 1, 4, 4}).to(d));  // running stats and num_batches_tracked move
    a->save(path);
    lt::manual_seed(2);
    lt::nn::Sequential b = small_net();
    b->to(d);
    EXPECT_NE(snapshot(*a), snapshot(*b));
    Tensor w = b->parameters()[0];
    b->load(path);
    EXPECT_EQ(snapshot(*a), snapshot(*b));
    EXPECT_TRUE(w.is_same(b->parameters()[0]));  // loaded in place
    EXPECT_TRUE(w.device() == d);
    EXPECT_TRUE(w.requires_grad() && w.is_leaf());
    for (const Tensor& p : b->parameters()) EXPECT_TRUE(p.device() == d);
    EXPECT_EQ(b->named_buffers()[2].second.item<int64_t>(), 1);
    lt::NamedTensors file = lt::load_safetensors(path);
    EXPECT_EQ(file.size(), a->state_dict().size());
    // Same outputs after loading.
    b->eval();
    a->eval();
    Tensor x = lt::randn({3, 1, 4, 4}).to(d);
    expect_close(b(x), a(x), 0);
  }
}

TEST_F(Nn, LoadStateDictErrorsLeaveModuleUnchanged) {
  lt::manual_seed(3);
  lt::nn::Sequential src = small_net();
  const lt::nn::NamedTensors good = src->state_dict();
  auto with = [&](const std::function<void(lt::nn::NamedTensors&)>& edit) {
    lt::nn::NamedTensors s;
    for (auto& [n, t] : good) s.emplace_back(n, t.detach().clone());
    edit(s);
    return s;
  };
  auto find = [](lt::nn::NamedTensors& s, const std::string& n) -> Tensor& {
    for (auto& [k, t] : s)
      if (k == n) return t;
    throw std::logic_error("no " + n);
  };
  struct Case {
    std::string what;
    std::function<void(lt::nn::NamedTensors&)> edit;
  };
  const std::vector<Case> cases = {
      {"wrong name", [](auto& s) { s[1].first = "0.bais"; }},
      {"wrong shape",
       [&](auto& s) {
         find(s, "3.weight") = lt::zeros({2, 9});
       }},
      {"wrong shape (transposed)",
       [&](auto& s) {
         find(s, "3.weight") = lt::zeros({8, 2});
       }},
      {"wrong dtype", [&](auto& s) { find(s, "3.bias") = lt::zeros({2}, lt::kFloat64); }},
      {"wrong buffer dtype",
       [&](auto& s) { find(s, "1.num_batches_tracked") = lt::zeros({}, lt::kFloat32); }},
      {"missing entry", [](auto& s) { s.pop_back(); }},
      {"extra entry", [](auto& s) { s.emplace_back("4.weight", lt::zeros({2})); }},
      {"duplicate entry", [](auto& s) { s.push_back(s.front()); }},
      {"undefined tensor", [&](auto& s) { find(s, "0.bias") = Tensor(); }},
  };
  for (lt::Device d : {kCpu, kLazy}) {
    lt::manual_seed(4);
    lt::nn::Sequential dst = small_net();
    dst->to(d);
    const std::vector<double> before = snapshot(*dst);
    for (const Case& c : cases) {
      SCOPED_TRACE(d.str() + ": " + c.what);
      lt::nn::NamedTensors bad = with(c.edit);
      EXPECT_THROW(dst->load_state_dict(bad), lt::Error);
      EXPECT_EQ(snapshot(*dst), before);
    }
    // Through files: a bad entry, and a truncated file.
    const std::string path = temp_path("bad_" + d.str() + ".safetensors");
    lt::save_safetensors(path, with([&](auto& s) {
                           find(s, "0.weight") = lt::zeros({2, 1, 3, 2});
                         }));
    EXPECT_THROW(dst->load(path), lt::Error);
    EXPECT_EQ(snapshot(*dst), before);
    src->save(path);
    const auto full = fs::file_size(path);
    for (auto size : {full - 1, full / 2, decltype(full){12}, decltype(full){0}}) {
      SCOPED_TRACE("truncated to " + std::to_string(size));
      src->save(path);
      fs::resize_file(path, size);
      EXPECT_THROW(dst->load(path), lt::Error);
      EXPECT_EQ(snapshot(*dst), before);
    }
    EXPECT_THROW(dst->load(temp_path("does_not_exist.safetensors")), lt::Error);
    EXPECT_EQ(snapshot(*dst), before);
    // And the good dict still loads afterwards.
    dst->load_state_dict(good);
    EXPECT_EQ(snapshot(*dst), snapshot(*src));
  }
}

}  // namespace
