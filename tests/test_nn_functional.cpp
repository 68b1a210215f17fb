// The losses and activations of lt/ops.h and their libtorch spellings (F::XxxFuncOptions, the
// loss and activation modules): each against a reference written out in double, on cpu and on
// lazy, with gradients checked by finite differences in float64, and the errors they raise.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "error_message.h"
#include "gradcheck.h"
#include "lt/lt.h"

namespace {

using lt::Tensor;
namespace F = lt::nn::functional;

std::vector<double> dv(const Tensor& t) { return t.cpu().to(lt::kFloat64).to_vector<double>(); }

class NnFunctional : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
  Tensor on(const Tensor& t) const { return t.to(dev()); }
};

void expect_near_all(const Tensor& got, const std::vector<double>& want, double tol,
                     const std::string& what) {
  std::vector<double> g = dv(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " [" << i << "]";
}

// ---- class-index losses

struct ClassCase {
  std::vector<double> logits;  // [N, C]
  std::vector<int64_t> target;
  std::vector<double> weight;  // empty: none
  int64_t n, c;
};

ClassCase class_case() {
  lt::manual_seed(7);
  ClassCase k;
  k.n = 6;
  k.c = 4;
  k.logits = dv(lt::randn({6, 4}) * 2.0);
  k.target = {0, 3, -100, 2, 1, 3};
  k.weight = {0.5, 2.0, 1.0, 1.5};
  return k;
}

// PyTorch's definition: per-sample -w[t] * logp[t] (0 where ignored); the mean divides by the
// summed weights of the samples kept.
std::vector<double> ref_cross_entropy(const ClassCase& k, bool weighted, double smoothing,
                                      int reduction, bool log_softmax_first) {
  std::vector<double> per(static_cast<size_t>(k.n));
  double wsum = 0;
  for (int64_t i = 0; i < k.n; ++i) {
    std::vector<double> lp(static_cast<size_t>(k.c));
    double mx = -1e300, s = 0;
    for (int64_t j = 0; j < k.c; ++j) mx = std::max(mx, k.logits[size_t(i * k.c + j)]);
    for (int64_t j = 0; j < k.c; ++j) s += std::exp(k.logits[size_t(i * k.c + j)] - mx);
    for (int64_t j = 0; j < k.c; ++j)
      lp[size_t(j)] = log_softmax_first ? k.logits[size_t(i * k.c + j)] - mx - std::log(s)
                                        : k.logits[size_t(i * k.c + j)];
    const int64_t t = k.target[size_t(i)];
    if (t == -100) {
      per[size_t(i)] = 0;
      continue;
    }
    auto w = [&](int64_t j) { return weighted ? k.weight[size_t(j)] : 1.0; };
    double smooth = 0;
    for (int64_t j = 0; j < k.c; ++j) smooth -= w(j) * lp[size_t(j)];
    per[size_t(i)] = -(1 - smoothing) * w(t) * lp[size_t(t)] + smoothing / double(k.c) * smooth;
    wsum += w(t);
  }
  double total = 0;
  for (double v : per) total += v;
  if (reduction == lt::Reduction::None) return per;
  if (reduction == lt::Reduction::Sum) return {total};
  return {total / wsum};
}

TEST_P(NnFunctional, CrossEntropyWeightsIgnoreIndexSmoothingAndReductions) {
  const ClassCase k = class_case();
  Tensor x = on(lt::tensor(k.logits, {k.n, k.c}));
  Tensor t = on(lt::tensor(k.target, {k.n}));
  Tensor w = on(lt::tensor(k.weight, {k.c}));
  for (int red : {lt::Reduction::None, lt::Reduction::Mean, lt::Reduction::Sum})
    for (bool weighted : {false, true})
      for (double smoothing : {0.0, 0.2}) {
        const std::string what = "reduction " + std::to_string(red) + " weighted " +
                                 std::to_string(weighted) + " smoothing " +
                                 std::to_string(smoothing);
        Tensor got = lt::cross_entropy(x, t, weighted ? w : Tensor(), red, -100, smoothing);
        expect_near_all(got, ref_cross_entropy(k, weighted, smoothing, red, true), 1e-5, what);
        // The same through the options and the module.
        auto o = F::CrossEntropyFuncOptions()
                     .reduction(static_cast<lt::Reduction::Reduction>(red))
                     .label_smoothing(smoothing);
        if (weighted) o.weight(w);
        expect_near_all(F::cross_entropy(x, t, o), dv(got), 1e-6, what + " (F)");
        lt::nn::CrossEntropyLoss m(o);
        expect_near_all(m(x, t), dv(got), 1e-6, what + " (module)");
      }
}

TEST_P(NnFunctional, NllLossMatchesReferenceAndLibtorchSpellings) {
  const ClassCase k = class_case();
  Tensor lp = on(lt::log_softmax(lt::tensor(k.logits, {k.n, k.c}), 1));
  ClassCase kl = k;
  kl.logits = dv(lp);
  Tensor t = on(lt::tensor(k.target, {k.n}));
  Tensor w = on(lt::tensor(k.weight, {k.c}));
  for (int red : {lt::Reduction::None, lt::Reduction::Mean, lt::Reduction::Sum})
    expect_near_all(lt::nll_loss(lp, t, w, red), ref_cross_entropy(kl, true, 0, red, false), 1e-5,
                    "nll_loss reduction " + std::to_string(red));
  // libtorch's positional spelling, as its MNIST example writes it, and the tag spelling.
  Tensor sum = lt::nll_loss(lp, t, {}, lt::Reduction::Sum);
  expect_near_all(sum, ref_cross_entropy(kl, false, 0, lt::Reduction::Sum, false), 1e-5, "sum");
  expect_near_all(F::nll_loss(lp, t, F::NLLLossFuncOptions().reduction(lt::kSum)), dv(sum), 1e-6,
                  "F::nll_loss");
  Tensor t3 = on(lt::tensor(std::vector<int64_t>{0, 3, 1, 2, 1, 3}));
  Tensor by_module = lt::nn::NLLLoss(lt::nn::NLLLossOptions().ignore_index(3))(lp, t3);
  const std::vector<double> lpv = dv(lp);
  expect_near_all(by_module, {-(lpv[0] + lpv[9] + lpv[14] + lpv[17]) / 4}, 1e-5,
                  "NLLLoss module, ignore_index 3");
}

TEST_P(NnFunctional, CrossEntropyOverSpatialDimsAndProbabilityTargets) {
  lt::manual_seed(3);
  Tensor x = lt::randn({2, 3, 4});  // [N, C, L]
  Tensor t = lt::randint(0, 3, {2, 4});
  // [N, C, L] is the same as moving C last and flattening.
  Tensor flat = x.permute({0, 2, 1}).reshape({8, 3});
  expect_near_all(lt::cross_entropy(on(x), on(t)), dv(lt::cross_entropy(flat, t.reshape({8}))),
                  1e-5, "spatial");
  Tensor p = lt::softmax(lt::randn({5, 3}), 1);
  Tensor logits = lt::randn({5, 3});
  double want = 0;
  std::vector<double> pv = dv(p), lv = dv(lt::log_softmax(logits, 1));
  for (size_t i = 0; i < pv.size(); ++i) want -= pv[i] * lv[i];
  expect_near_all(lt::cross_entropy(on(logits), on(p)), {want / 5}, 1e-5, "probabilities");
}

// ---- elementwise losses

TEST_P(NnFunctional, ElementwiseLossesMatchReference) {
  lt::manual_seed(11);
  Tensor a = lt::randn({3, 5}) * 2.0, b = lt::randn({3, 5}) * 2.0;
  Tensor prob = lt::rand({3, 5}) * 0.98 + 0.01, y = (lt::rand({3, 5}) > 0.5).to(lt::kFloat32);
  Tensor pw = lt::rand({5}) + 0.5;
  const std::vector<double> av = dv(a), bv = dv(b), pv = dv(prob), yv = dv(y), pwv = dv(pw);
  using Ref = std::function<double(size_t)>;
  auto mean_of = [&](const Ref& f) {
    double s = 0;
    for (size_t i = 0; i < av.size(); ++i) s += f(i);
    return s / double(av.size());
  };
  const Ref l1 = [&](size_t i) { return std::fabs(av[i] - bv[i]); };
  const Ref mse = [&](size_t i) { return (av[i] - bv[i]) * (av[i] - bv[i]); };
  const Ref smooth = [&](size_t i) {
    double d = std::fabs(av[i] - bv[i]);
    return d < 0.5 ? 0.5 * d * d / 0.5 : d - 0.25;  // beta 0.5
  };
  const Ref huber = [&](size_t i) {
    double d = std::fabs(av[i] - bv[i]);
    return d < 1.5 ? 0.5 * d * d : 1.5 * (d - 0.75);  // delta 1.5
  };
  const Ref bce = [&](size_t i) {
    return -(yv[i] * std::log(pv[i]) + (1 - yv[i]) * std::log(1 - pv[i]));
  };
  const Ref bcel = [&](size_t i) {
    double s = 1 / (1 + std::exp(-av[i])), p = pwv[i % 5];
    return -(p * yv[i] * std::log(s) + (1 - yv[i]) * std::log(1 - s));
  };
  Tensor A = on(a), B = on(b);
  expect_near_all(lt::l1_loss(A, B), {mean_of(l1)}, 1e-5, "l1");
  expect_near_all(lt::mse_loss(A, B), {mean_of(mse)}, 1e-5, "mse");
  expect_near_all(lt::mse_loss(A, B, lt::Reduction::Sum), {mean_of(mse) * 15}, 1e-5, "mse sum");
  expect_near_all(lt::smooth_l1_loss(A, B, lt::Reduction::Mean, 0.5), {mean_of(smooth)}, 1e-5,
                  "smooth_l1");
  expect_near_all(F::huber_loss(A, B, F::HuberLossFuncOptions().delta(1.5)), {mean_of(huber)}, 1e-5,
                  "huber");
  expect_near_all(lt::nn::BCELoss()(on(prob), on(y)), {mean_of(bce)}, 1e-5, "bce");
  expect_near_all(
      lt::nn::BCEWithLogitsLoss(lt::nn::BCEWithLogitsLossOptions().pos_weight(on(pw)))(A, on(y)),
      {mean_of(bcel)}, 1e-5, "bce_with_logits");
  Tensor none = lt::l1_loss(A, B, lt::kNone);
  EXPECT_EQ(none.sizes().vec(), (std::vector<int64_t>{3, 5}));
  // Saturated inputs stay finite: log(0) is clamped at -100, logits of +-100 use log1p.
  Tensor edge =
      lt::binary_cross_entropy(on(lt::tensor({0.0f, 1.0f})), on(lt::tensor({1.0f, 1.0f})));
  expect_near_all(edge, {50.0}, 1e-6, "bce at 0 and 1");
  Tensor big = lt::binary_cross_entropy_with_logits(on(lt::tensor({100.0f, -100.0f})),
                                                    on(lt::tensor({0.0f, 1.0f})));
  expect_near_all(big, {100.0}, 1e-6, "bce_with_logits at +-100");
}

TEST_P(NnFunctional, KlDivReductionsAndLogTarget) {
  lt::manual_seed(5);
  Tensor input = lt::log_softmax(lt::randn({4, 3}), 1);
  Tensor target = lt::softmax(lt::randn({4, 3}), 1);
  std::vector<double> iv = dv(input), tv = dv(target);
  double s = 0;
  for (size_t i = 0; i < iv.size(); ++i) s += tv[i] * (std::log(tv[i]) - iv[i]);
  Tensor I = on(input), T = on(target);
  expect_near_all(lt::kl_div(I, T, lt::kSum), {s}, 1e-5, "sum");
  expect_near_all(lt::kl_div(I, T, lt::kBatchMean), {s / 4}, 1e-5, "batchmean");
  expect_near_all(lt::kl_div(I, T), {s / 12}, 1e-5, "mean");
  expect_near_all(lt::nn::KLDivLoss(lt::nn::KLDivLossOptions().log_target(true).reduction(
                      lt::kSum))(I, lt::log(T)),
                  {s}, 1e-5, "log_target");
  // A zero target contributes 0, not 0 * log 0.
  expect_near_all(lt::kl_div(on(lt::tensor({-1.0f})), on(lt::tensor({0.0f})), lt::kSum), {0.0}, 0,
                  "zero target");
}

// ---- activations

TEST_P(NnFunctional, ActivationsMatchReference) {
  const std::vector<double> xs = {-30, -5, -1.5, -0.25, 0, 0.25, 1.5, 5, 30};
  Tensor x = on(lt::tensor(xs, {static_cast<int64_t>(xs.size())}).to(lt::kFloat32));
  struct Row {
    const char* name;
    std::function<Tensor(const Tensor&)> f;
    std::function<double(double)> ref;
  };
  auto sp = [](double v) { return v > 20 ? v : std::log1p(std::exp(v)); };
  const double sa = 1.6732632423543772848170429916717, ss = 1.0507009873554804934193349852946;
  const std::vector<Row> rows = {
      {"leaky_relu", [](const Tensor& t) { return lt::leaky_relu(t, 0.2); },
       [](double v) { return v > 0 ? v : 0.2 * v; }},
      {"elu", [](const Tensor& t) { return lt::elu(t, 0.7); },
       [](double v) { return v > 0 ? v : 0.7 * std::expm1(v); }},
      {"selu", [](const Tensor& t) { return lt::selu(t); },
       [&](double v) { return ss * (v > 0 ? v : sa * std::expm1(v)); }},
      {"celu", [](const Tensor& t) { return lt::celu(t, 2.0); },
       [](double v) { return v > 0 ? v : 2.0 * std::expm1(v / 2.0); }},
      {"softplus", [](const Tensor& t) { return lt::softplus(t); }, sp},
      {"softplus beta 2", [](const Tensor& t) { return lt::softplus(t, 2.0, 10.0); },
       [](double v) { return 2 * v > 10 ? v : std::log1p(std::exp(2 * v)) / 2; }},
      {"log_sigmoid", [](const Tensor& t) { return lt::log_sigmoid(t); },
       [](double v) { return -(v < 0 ? -v + std::log1p(std::exp(v)) : std::log1p(std::exp(-v))); }},
      {"mish", [](const Tensor& t) { return lt::mish(t); },
       [&](double v) { return v * std::tanh(sp(v)); }},
      {"hardtanh", [](const Tensor& t) { return lt::hardtanh(t, -2, 1); },
       [](double v) { return std::min(1.0, std::max(-2.0, v)); }},
      {"relu6", [](const Tensor& t) { return lt::relu6(t); },
       [](double v) { return std::min(6.0, std::max(0.0, v)); }},
      {"hardsigmoid", [](const Tensor& t) { return lt::hardsigmoid(t); },
       [](double v) { return std::min(1.0, std::max(0.0, v / 6 + 0.5)); }},
      {"hardswish", [](const Tensor& t) { return lt::hardswish(t); },
       [](double v) { return v * std::min(6.0, std::max(0.0, v + 3)) / 6; }},
      {"softsign", [](const Tensor& t) { return lt::softsign(t); },
       [](double v) { return v / (1 + std::fabs(v)); }},
      {"threshold", [](const Tensor& t) { return lt::threshold(t, 0.5, -3); },
       [](double v) { return v > 0.5 ? v : -3; }},
  };
  for (const Row& r : rows) {
    std::vector<double> want;
    for (double v : xs) want.push_back(r.ref(v));
    expect_near_all(r.f(x), want, 2e-6, r.name);
    // No NaN reaches the gradient from the branch not taken (exp overflow at +-30).
    Tensor xg = x.detach().requires_grad_();
    r.f(xg).sum().backward();
    for (double g : dv(xg.grad())) EXPECT_TRUE(std::isfinite(g)) << r.name << " gradient";
  }
}

TEST_P(NnFunctional, GluSoftminNormalizeAndDropout2d) {
  lt::manual_seed(2);
  Tensor a = lt::randn({3, 4});
  std::vector<double> av = dv(a), want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      want.push_back(av[size_t(i * 4 + j)] / (1 + std::exp(-av[size_t(i * 4 + j + 2)])));
  expect_near_all(lt::glu(on(a)), want, 1e-6, "glu");
  expect_near_all(F::softmin(on(a), F::SoftminFuncOptions(1)), dv(lt::softmax(-a, 1)), 1e-6,
                  "softmin");
  Tensor n = F::normalize(on(a), F::NormalizeFuncOptions().dim(1));
  for (double r : dv(n.pow(2).sum(1))) EXPECT_NEAR(r, 1.0, 1e-5);
  // Dropout2d zeroes whole channels and scales the rest by 1 / (1 - p).
  Tensor x = on(lt::ones({4, 6, 3, 3}));
  Tensor y = lt::nn::Dropout2d(lt::nn::Dropout2dOptions(0.5))(x);
  std::vector<double> yv = dv(y);
  int zero_channels = 0;
  for (size_t c = 0; c < 24; ++c) {
    const double first = yv[c * 9];
    EXPECT_TRUE(first == 0 || first == 2) << first;
    for (size_t k = 0; k < 9; ++k) EXPECT_EQ(yv[c * 9 + k], first) << "channel " << c;
    zero_channels += first == 0;
  }
  EXPECT_GT(zero_channels, 0);
  EXPECT_LT(zero_channels, 24);
  lt::nn::Dropout2d eval_drop(0.5);
  eval_drop->eval();
  expect_near_all(eval_drop(x), dv(x), 0, "eval");
}

TEST_P(NnFunctional, GradientsMatchFiniteDifferences) {
  using lt_test::In;
  const In x{{-1.2, -0.3, 0.4, 2.1, 0.9, -2.5}, {2, 3}};
  const In y{{0.3, -0.2, 1.4, 0.8, -1.9, 0.1}, {2, 3}};
  const In p{{0.2, 0.7, 0.45, 0.9, 0.35, 0.6}, {2, 3}};
  using V = std::vector<Tensor>;
  lt_test::gradcheck(
      "smooth_l1", [](const V& v) { return lt::smooth_l1_loss(v[0], v[1], 0, 0.5); }, {x, y},
      dev());
  lt_test::gradcheck(
      "huber", [](const V& v) { return lt::huber_loss(v[0], v[1], 2, 0.7); }, {x, y}, dev());
  lt_test::gradcheck(
      "bce", [](const V& v) { return lt::binary_cross_entropy(v[0], v[1]); }, {p, p}, dev());
  lt_test::gradcheck(
      "bce_with_logits",
      [](const V& v) { return lt::binary_cross_entropy_with_logits(v[0], v[1], {}, 0); }, {x, p},
      dev());
  lt_test::gradcheck(
      "kl_div", [](const V& v) { return lt::kl_div(v[0], v[1], 0); }, {x, p}, dev());
  for (auto [name, f] : std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>>{
           {"elu", [](const Tensor& t) { return lt::elu(t, 0.7); }},
           {"selu", [](const Tensor& t) { return lt::selu(t); }},
           {"softplus", [](const Tensor& t) { return lt::softplus(t, 1.5, 20); }},
           {"log_sigmoid", [](const Tensor& t) { return lt::log_sigmoid(t); }},
           {"mish", [](const Tensor& t) { return lt::mish(t); }},
           {"hardswish", [](const Tensor& t) { return lt::hardswish(t); }},
           {"glu", [](const Tensor& t) { return lt::glu(t, 0); }}})
    lt_test::gradcheck(
        name, [f = f](const V& v) { return f(v[0]); }, {x}, dev());
  const In logits{{0.5, -1.0, 2.0, 0.1, 0.3, -0.7}, {2, 3}};
  lt_test::gradcheck(
      "cross_entropy weighted smoothed",
      [&](const V& v) {
        Tensor t = lt::tensor(std::vector<int64_t>{2, 0}).to(dev());
        Tensor w = lt::tensor(std::vector<double>{0.5, 1.0, 2.0}).to(dev());
        return lt::cross_entropy(v[0], t, w, lt::Reduction::Mean, -100, 0.1);
      },
      {logits}, dev());
  // Without smoothing the loss picks x - max at the targets, less each row's log-sum-exp (the
  // [N, C] log-probabilities are never formed): plain, weighted with an ignored sample, and with
  // a spatial dim.
  lt_test::gradcheck(
      "cross_entropy",
      [&](const V& v) {
        return lt::cross_entropy(v[0], lt::tensor(std::vector<int64_t>{2, 0}).to(dev()));
      },
      {logits}, dev());
  lt_test::gradcheck(
      "cross_entropy weighted, one ignored",
      [&](const V& v) {
        Tensor t = lt::tensor(std::vector<int64_t>{1, -100}).to(dev());
        Tensor w = lt::tensor(std::vector<double>{0.5, 1.0, 2.0}).to(dev());
        return lt::cross_entropy(v[0], t, w, lt::Reduction::Sum, -100, 0.0);
      },
      {logits}, dev());
  lt_test::gradcheck(
      "cross_entropy [N, C, d]",
      [&](const V& v) {
        Tensor t = lt::tensor(std::vector<int64_t>{2, 0, 1, 1}, {2, 2}).to(dev());
        return lt::cross_entropy(v[0].reshape({2, 3, 2}), t);
      },
      {{{0.5, -1.0, 2.0, 0.1, 0.3, -0.7, 1.5, 0.2, -0.4, 0.9, 0.0, -1.2}, {2, 6}}}, dev());
}

TEST_P(NnFunctional, BadArgumentsThrowNamingTheOp) {
  Tensor x = on(lt::randn({4, 3})), t = on(lt::tensor(std::vector<int64_t>{0, 1, 2, 1}));
  auto throws_with = [](const std::function<void()>& f, const std::string& part) {
    try {
      f();
    } catch (const lt::Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "no error; expected one naming " << part;
  };
  throws_with([&] { lt::nll_loss(x, t, {}, 7); }, "nll_loss: reduction");
  throws_with([&] { lt::cross_entropy(x, t.narrow(0, 0, 3)); }, "cross_entropy");
  throws_with([&] { lt::cross_entropy(x, t, on(lt::ones({4}))); }, "weight must be [3]");
  throws_with(
      [&] {
        lt::nll_loss(x, on(lt::tensor(std::vector<int64_t>{0, 5, 1, 1})));
      },
      "target index 5");
  throws_with([&] { lt::mse_loss(x, x, lt::Reduction::BatchMean); }, "mse_loss");
  throws_with([&] { lt::binary_cross_entropy(x, x.narrow(0, 0, 2)); }, "same shape");
  throws_with([&] { lt::glu(on(lt::ones({3}))); }, "even size");
  // The pending graph stays usable after the failures.
  EXPECT_TRUE(std::isfinite(lt::cross_entropy(x, t).item<float>()));
}

// ---- batch_norm: its closed-form backward against autograd through the composite

// Batch norm written out of primitives (mean, variance, rsqrt), as autograd differentiates it.
Tensor composite_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  std::vector<int64_t> dims{0}, shape(static_cast<size_t>(x.dim()), 1);
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  shape[1] = x.size(1);
  Tensor mean = x.mean(dims, true), c = x - mean;
  Tensor y = c * lt::rsqrt((c * c).mean(dims, true) + eps);
  return y * w.reshape(shape) + b.reshape(shape);
}

TEST_P(NnFunctional, BatchNormMatchesTheCompositeInValuesGradientsAndSecondGradients) {
  lt::manual_seed(11);
  const double eps = 1e-3;
  // A 4-d non-contiguous input, a 3-d and a 2-d one.
  for (const Tensor& base : {lt::randn({5, 4, 3, 2}).transpose(1, 2) * 3.0 + 1.0,
                             lt::randn({4, 3, 7}), lt::randn({6, 3}) - 2.0}) {
    SCOPED_TRACE(lt::Tensor(base).sizes().vec().size());
    const Tensor w0 = lt::randn({3}), b0 = lt::randn({3});
    Tensor x = on(base).detach().requires_grad_(), w = on(w0).requires_grad_(),
           b = on(b0).requires_grad_();
    Tensor xr = on(base).detach().requires_grad_(), wr = on(w0).requires_grad_(),
           br = on(b0).requires_grad_();
    Tensor rm = on(lt::zeros({3})), rv = on(lt::ones({3}));
    Tensor y = F::batch_norm(x, rm, rv,
                             F::BatchNormFuncOptions().weight(w).bias(b).training(true).eps(eps));
    Tensor yr = composite_batch_norm(xr, wr, br, eps);
    expect_near_all(y, dv(yr), 1e-5, "forward");
    // Running statistics: momentum 0.1 towards the mean and the unbiased variance.
    const std::vector<int64_t> dims = base.dim() == 2   ? std::vector<int64_t>{0}
                                      : base.dim() == 3 ? std::vector<int64_t>{0, 2}
                                                        : std::vector<int64_t>{0, 2, 3};
    Tensor bx = on(base);
    expect_near_all(rm, dv(bx.mean(dims) * 0.1), 1e-5, "running_mean");
    expect_near_all(rv, dv(bx.var(dims, true) * 0.1 + 0.9), 1e-5, "running_var");
    // First gradients, weighted so that no sum is trivially zero.
    Tensor v = on(lt::randn(base.sizes()));
    auto g = lt::autograd::grad({(y * v).sum()}, {x, w, b}, {}, true, true);
    auto gr = lt::autograd::grad({(yr * v).sum()}, {xr, wr, br}, {}, true, true);
    const char* names[] = {"dx", "dw", "db"};
    for (int i = 0; i < 3; ++i) expect_near_all(g[i], dv(gr[i]), 1e-4, names[i]);
    // Second gradients through dx (create_graph), for x and w.
    Tensor u = on(lt::randn(base.sizes()));
    auto h = lt::autograd::grad({(g[0] * u).sum()}, {x, w});
    auto hr = lt::autograd::grad({(gr[0] * u).sum()}, {xr, wr});
    expect_near_all(h[0], dv(hr[0]), 1e-3, "d(dx)/dx");
    expect_near_all(h[1], dv(hr[1]), 1e-3, "d(dx)/dw");
    // Evaluation: the running statistics normalize.
    Tensor e = F::batch_norm(on(base), rm, rv, F::BatchNormFuncOptions().weight(on(w0)).eps(eps));
    std::vector<int64_t> shape(static_cast<size_t>(base.dim()), 1);
    shape[1] = 3;
    expect_near_all(e,
                    dv((on(base) - rm.reshape(shape)) * lt::rsqrt(rv.reshape(shape) + eps) *
                       on(w0).reshape(shape)),
                    1e-5, "eval");
  }
  // Only some inputs needing a gradient: each that does gets the composite's.
  {
    const Tensor base = lt::randn({4, 3, 5}), w0 = lt::randn({3}), b0 = lt::randn({3}),
                 v = on(lt::randn({4, 3, 5}));
    for (int mask : {1, 2, 4, 6}) {  // bit 0: x, bit 1: w, bit 2: b
      SCOPED_TRACE(mask);
      Tensor ins[2][3];
      for (Tensor* t : ins) {
        t[0] = on(base).detach().requires_grad_(mask & 1);
        t[1] = on(w0).detach().requires_grad_((mask & 2) != 0);
        t[2] = on(b0).detach().requires_grad_((mask & 4) != 0);
      }
      Tensor y = lt::batch_norm(ins[0][0], ins[0][1], ins[0][2], {}, {}, true, 0.1, eps);
      Tensor yr = composite_batch_norm(ins[1][0], ins[1][1], ins[1][2], eps);
      (y * v).sum().backward();
      (yr * v).sum().backward();
      for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(ins[0][i].grad().defined(), ((mask >> i) & 1) != 0) << i;
        if (ins[0][i].grad().defined())
          expect_near_all(ins[0][i].grad(), dv(ins[1][i].grad()), 1e-4, "partial");
      }
    }
  }
  // float64 finite differences, with and without the affine parameters.
  using lt_test::In;
  using V = std::vector<Tensor>;
  const In x{{-1.2, -0.3, 0.4, 2.1, 0.9, -2.5, 0.7, 1.1, -0.4, 0.2, 1.6, -0.8}, {2, 2, 3}};
  const In w{{1.3, -0.6}, {2}}, b{{0.2, 0.5}, {2}};
  lt_test::gradcheck(
      "batch_norm",
      [](const V& t) { return lt::batch_norm(t[0], t[1], t[2], {}, {}, true, 0.1, 1e-5); },
      {x, w, b}, dev());
  lt_test::gradcheck(
      "batch_norm without affine",
      [](const V& t) { return lt::batch_norm(t[0], {}, {}, {}, {}, true, 0.1, 1e-5); }, {x}, dev());
}

TEST_P(NnFunctional, BatchNormChecksItsArgumentsAtTheCall) {
  Tensor x = on(lt::randn({4, 3, 2})), c3 = on(lt::ones({3}));
  using lt_test::error_message;
  auto bn = [&](const Tensor& in, const Tensor& w, const Tensor& rm, bool training) {
    return lt::batch_norm(in, w, {}, rm, rm, training, 0.1, 1e-5);
  };
  EXPECT_NE(error_message([&] {
              bn(x, on(lt::ones({4})), {}, true);
            }).find("batch_norm: weight should contain 3 elements"),
            std::string::npos);
  EXPECT_NE(error_message([&] { bn(x, {}, on(lt::zeros({2})), true); }).find("running_mean"),
            std::string::npos);
  EXPECT_NE(error_message([&] {
              bn(on(lt::randn({1, 3})), {}, {}, true);
            }).find("more than 1 value per channel"),
            std::string::npos);
  EXPECT_NE(error_message([&] { bn(x, {}, {}, false); }).find("needs running_mean"),
            std::string::npos);
  EXPECT_NE(error_message([&] { bn(on(lt::randn({3})), {}, {}, true); }).find("at least 2 dims"),
            std::string::npos);
  // Evaluation of a single sample is fine; an empty batch gives an empty result.
  EXPECT_EQ(bn(on(lt::randn({1, 3})), c3, c3, false).sizes().vec(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(bn(on(lt::randn({0, 3, 2})), c3, {}, true).sizes().vec(),
            (std::vector<int64_t>{0, 3, 2}));
  // The pending graph stays usable after the failures.
  EXPECT_TRUE(std::isfinite(bn(x, c3, {}, true).sum().item<float>()));
}

// ---- pooling: dilation, ceil_mode, count_include_pad, divisor_override, 1-d pools

TEST_P(NnFunctional, PoolingOptionsFollowPytorchsWindowRules) {
  // Dilation 2: each 2x2 window reads x[i][j], x[i][j+2], x[i+2][j], x[i+2][j+2].
  Tensor x = on(lt::arange(25, lt::kFloat32).reshape({1, 1, 5, 5}));
  expect_near_all(lt::max_pool2d(x, {2, 2}, {1, 1}, {0, 0}, {2, 2}),
                  {12, 13, 14, 17, 18, 19, 22, 23, 24}, 0, "dilated max_pool2d");
  // ceil_mode adds the partial window at the end; its avg divides by the part inside.
  Tensor r = on(lt::arange(5, lt::kFloat32).reshape({1, 1, 5}));
  expect_near_all(lt::max_pool1d(r, {2}), {1, 3}, 0, "max_pool1d floor");
  expect_near_all(lt::max_pool1d(r, {2}, {2}, {0}, {1}, true), {1, 3, 4}, 0, "max_pool1d ceil");
  expect_near_all(lt::avg_pool1d(r, {2}, {2}, {0}, true), {0.5, 2.5, 4}, 1e-7, "avg_pool1d ceil");
  // The last window must start inside the input or its left padding: 5 + 2 * 1 padded, k 2,
  // stride 2 gives 3 windows with ceil_mode, not 4.
  EXPECT_EQ(lt::max_pool1d(r, {2}, {2}, {1}, {1}, true).size(-1), 3);
  // count_include_pad: a window over the padding divides by 3 or by the 2 values it covers.
  Tensor v = on(lt::tensor(std::vector<float>{1, 2, 3, 4}).reshape({1, 1, 4}));
  expect_near_all(lt::avg_pool1d(v, {3}, {1}, {1}), {1, 2, 3, 7.0 / 3}, 1e-6, "avg include pad");
  expect_near_all(lt::avg_pool1d(v, {3}, {1}, {1}, false, false), {1.5, 2, 3, 3.5}, 1e-6,
                  "avg exclude pad");
  Tensor q = on(lt::tensor(std::vector<float>{1, 2, 3, 4}).reshape({1, 1, 2, 2}));
  expect_near_all(lt::avg_pool2d(q, {2, 2}, {}, {0, 0}, false, true, 3), {10.0 / 3}, 1e-6,
                  "divisor_override");
  // libtorch's option spellings, modules and functionals.
  lt::nn::MaxPool2d mp(lt::nn::MaxPool2dOptions(2).stride(1).dilation(2));
  expect_near_all(mp->forward(x), {12, 13, 14, 17, 18, 19, 22, 23, 24}, 0, "MaxPool2d module");
  EXPECT_EQ(mp->options.dilation()[0], 2);
  lt::nn::AvgPool2d ap(lt::nn::AvgPool2dOptions({2, 2}).divisor_override(3));
  expect_near_all(ap(q), {10.0 / 3}, 1e-6, "AvgPool2d module");
  lt::nn::MaxPool1d mp1(lt::nn::MaxPool1dOptions(2).ceil_mode(true));
  expect_near_all(mp1(r), {1, 3, 4}, 0, "MaxPool1d module");
  lt::nn::AvgPool1d ap1(lt::nn::AvgPool1dOptions(3).stride(1).padding(1).count_include_pad(false));
  expect_near_all(ap1(v), {1.5, 2, 3, 3.5}, 1e-6, "AvgPool1d module");
  expect_near_all(F::avg_pool2d(q, F::AvgPool2dFuncOptions(2).ceil_mode(true)), {2.5}, 1e-6,
                  "F::avg_pool2d");
  expect_near_all(F::max_pool1d(r, F::MaxPool1dFuncOptions(3).stride(2)), {2, 4}, 0,
                  "F::max_pool1d");
  EXPECT_THROW(lt::max_pool2d(x, {2, 2}, {1, 1}, {2, 2}), lt::Error);  // padding over half k
  EXPECT_THROW(lt::max_pool2d(x, {2, 2}, {1, 1}, {0, 0}, {0, 1}), lt::Error);
  EXPECT_THROW(lt::avg_pool2d(q, {2, 2}, {}, {0, 0}, false, true, 0), lt::Error);
}

TEST_P(NnFunctional, PoolingWithOptionsMatchesEagerAndDifferentiates) {
  std::mt19937 g(5);
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t h = 6 + g() % 5, w = 6 + g() % 6, k = 2 + g() % 2, s = 1 + g() % 2;
    const int64_t d = 1 + g() % 2, p = g() % 2;
    const bool ceil = g() % 2, include = g() % 2;
    Tensor x = lt::randn({2, 3, h, w});
    Tensor xt = lt::randn({2, 3, w, h}).transpose(2, 3);  // a non-contiguous input
    for (const Tensor& in : {x, xt}) {
      Tensor m = lt::max_pool2d(in, {k, k}, {s, s}, {p, p}, {d, d}, ceil);
      expect_near_all(lt::max_pool2d(on(in), {k, k}, {s, s}, {p, p}, {d, d}, ceil), dv(m), 0,
                      "max_pool2d options");
      Tensor a = lt::avg_pool2d(in, {k, k}, {s, s}, {p, p}, ceil, include);
      expect_near_all(lt::avg_pool2d(on(in), {k, k}, {s, s}, {p, p}, ceil, include), dv(a), 1e-6,
                      "avg_pool2d options");
    }
  }
  using lt_test::gradcheck;
  using lt_test::In;
  using lt_test::Ts;
  In img{{}, {1, 2, 5, 6}};
  for (int i = 0; i < 60; ++i) img.v.push_back(std::sin(1.7 * i) * 3 + 0.01 * i);  // no ties
  gradcheck(
      "max_pool2d dilation ceil",
      [](Ts t) {
        return lt::max_pool2d(t[0], {2, 2}, {2, 2}, {1, 0}, {2, 1}, true);
      },
      {img}, dev());
  gradcheck(
      "avg_pool2d ceil exclude pad",
      [](Ts t) {
        return lt::avg_pool2d(t[0], {3, 2}, {2, 2}, {1, 1}, true, false);
      },
      {img}, dev());
  gradcheck(
      "avg_pool2d divisor",
      [](Ts t) {
        return lt::avg_pool2d(t[0], {2, 3}, {1, 2}, {1, 1}, false, true, 5);
      },
      {img}, dev());
  gradcheck(
      "max_pool1d",
      [](Ts t) {
        return lt::max_pool1d(t[0].reshape({2, 30}), {4}, {3}, {2}, {1}, true);
      },
      {img}, dev());
}

// ---- adaptive average pooling, interpolate/Upsample, GroupNorm (PyTorch's values by hand)

TEST_P(NnFunctional, AdaptivePoolingAndInterpolationFollowPytorchsIndexRules) {
  Tensor r = on(lt::arange(5, lt::kFloat32).reshape({1, 1, 5}));
  expect_near_all(lt::adaptive_avg_pool1d(r, {3}), {0.5, 2, 3.5}, 1e-6, "adaptive 1d");
  Tensor g = on(lt::arange(16, lt::kFloat32).reshape({1, 1, 4, 4}));
  expect_near_all(lt::adaptive_avg_pool2d(g, {2, 2}), {2.5, 4.5, 10.5, 12.5}, 1e-6, "adaptive 2d");
  expect_near_all(F::adaptive_avg_pool2d(g, F::AdaptiveAvgPool2dFuncOptions(1)), {7.5}, 1e-6,
                  "global average");
  Tensor v = on(lt::tensor(std::vector<float>{0, 1, 2}).reshape({1, 1, 3}));
  expect_near_all(lt::interpolate(v, {5}), {0, 0, 1, 1, 2}, 0, "nearest by size");
  expect_near_all(
      F::interpolate(v, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2})),
      {0, 0, 1, 1, 2, 2}, 0, "nearest by scale");
  expect_near_all(lt::interpolate(v, {5}, {}, lt::kLinear), {0, 0.4, 1, 1.6, 2}, 1e-6, "linear");
  expect_near_all(lt::interpolate(v, {5}, {}, lt::kLinear, true), {0, 0.5, 1, 1.5, 2}, 1e-6,
                  "linear align_corners");
  Tensor q = on(lt::tensor(std::vector<float>{0, 1, 2, 3}).reshape({1, 1, 2, 2}));
  lt::nn::Upsample up(lt::nn::UpsampleOptions()
                          .scale_factor(std::vector<double>{2, 2})
                          .mode(lt::kBilinear)
                          .align_corners(false));
  expect_near_all(up(q),
                  {0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3},
                  1e-6, "Upsample bilinear");
  Tensor ints = on(lt::tensor(std::vector<int64_t>{4, 7}).reshape({1, 1, 2}));
  EXPECT_EQ(dv(lt::interpolate(ints, {4})), (std::vector<double>{4, 4, 7, 7}));  // any dtype
  lt::nn::AdaptiveAvgPool2d gap(lt::nn::AdaptiveAvgPool2dOptions({1, 1}));
  EXPECT_EQ(gap(g).sizes()[3], 1);
  lt::nn::GroupNorm gn(lt::nn::GroupNormOptions(2, 4).eps(1e-3));
  EXPECT_EQ(gn->parameters().size(), 2u);
  Tensor x = on(lt::randn({2, 4, 3}));
  gn->to(dev());
  expect_near_all(gn(x), dv(lt::group_norm(x, 2, {}, {}, 1e-3)), 1e-6, "GroupNorm module");
  EXPECT_THROW(lt::interpolate(v, {5}, {}, lt::kBilinear), lt::Error);       // 3-d input
  EXPECT_THROW(lt::interpolate(v, {5}, {2.0}), lt::Error);                   // size and scale
  EXPECT_THROW(lt::interpolate(ints, {4}, {}, lt::kLinear), lt::Error);      // linear of ints
  EXPECT_THROW(lt::adaptive_avg_pool2d(v.reshape({3}), {2, 2}), lt::Error);  // needs 3 or 4 dims
}

TEST_P(NnFunctional, ResamplingMatchesEagerAndDifferentiates) {
  for (int trial = 0; trial < 4; ++trial) {
    Tensor x = lt::randn({2, 3, 5 + trial, 7 - trial});
    if (trial % 2) x = lt::randn({2, 3, 7 - trial, 5 + trial}).transpose(2, 3);
    const std::vector<int64_t> o = {3 + trial, 2 + trial};
    expect_near_all(lt::adaptive_avg_pool2d(on(x), o), dv(lt::adaptive_avg_pool2d(x, o)), 1e-5,
                    "adaptive lazy vs eager");
    expect_near_all(lt::interpolate(on(x), o, {}, lt::kBilinear, trial % 2 == 0),
                    dv(lt::interpolate(x, o, {}, lt::kBilinear, trial % 2 == 0)), 1e-5,
                    "bilinear lazy vs eager");
  }
  using lt_test::gradcheck;
  using lt_test::In;
  using lt_test::Ts;
  In img{{}, {1, 2, 3, 4}};
  for (int i = 0; i < 24; ++i) img.v.push_back(std::sin(0.7 * i));
  gradcheck(
      "adaptive_avg_pool2d",
      [](Ts t) {
        return lt::adaptive_avg_pool2d(t[0], {2, 3});
      },
      {img}, dev());
  gradcheck(
      "bilinear",
      [](Ts t) {
        return lt::interpolate(t[0], {5, 3}, {}, lt::kBilinear);
      },
      {img}, dev());
  gradcheck(
      "nearest", [](Ts t) { return lt::interpolate(t[0], {}, {2.0}); }, {img}, dev());
}

TEST_P(NnFunctional, InstanceNormPerSampleAndChannelWithRunningStats) {
  // [1, 2, 3]: channel 0 is 1, 2, 3 (mean 2, biased var 2/3), channel 1 is 4, 4, 4.
  Tensor x = on(lt::tensor(std::vector<float>{1, 2, 3, 4, 4, 4}).reshape({1, 2, 3}));
  const double s = 1 / std::sqrt(2.0 / 3 + 1e-5);
  expect_near_all(F::instance_norm(x), {-s, 0, s, 0, 0, 0}, 1e-5, "instance_norm");
  Tensor rm = on(lt::zeros({2})), rv = on(lt::ones({2}));
  F::instance_norm(x, F::InstanceNormFuncOptions().running_mean(rm).running_var(rv).momentum(0.5));
  expect_near_all(rm, {1, 2}, 1e-6, "running mean");        // 0.5 * 0 + 0.5 * (2, 4)
  expect_near_all(rv, {1, 0.5}, 1e-6, "running variance");  // unbiased: 1 and 0
  lt::nn::InstanceNorm1d in1(
      lt::nn::InstanceNorm1dOptions(2).affine(true).track_running_stats(true));
  in1->to(dev());
  EXPECT_EQ(in1->parameters().size(), 2u);
  expect_near_all(in1(x), {-s, 0, s, 0, 0, 0}, 1e-5, "InstanceNorm1d training");
  expect_near_all(in1->running_mean, {0.2, 0.4}, 1e-6, "module running mean");
  in1->eval();
  Tensor y = in1(x);  // running stats now: (x - rm) / sqrt(rv + eps)
  expect_near_all(y.select(1, 1), dv((x.select(1, 1) - 0.4) / std::sqrt(0.9 + 1e-5)), 1e-5,
                  "InstanceNorm1d eval");
  lt::nn::InstanceNorm2d in2(3);
  EXPECT_EQ(in2->parameters().size(), 0u);
  EXPECT_EQ(in2(on(lt::randn({2, 3, 4, 5}))).sizes()[3], 5);
  EXPECT_THROW(in2(x), lt::Error);
}

// ---- padding modes, Conv2d's padding_mode, Embedding's options

TEST_P(NnFunctional, PaddingModesConvPaddingModeAndEmbeddingOptions) {
  Tensor r = on(lt::tensor(std::vector<float>{1, 2, 3}).reshape({1, 1, 3}));
  expect_near_all(F::pad(r, F::PadFuncOptions({2, 1}).mode(lt::kReflect)), {3, 2, 1, 2, 3, 2}, 0,
                  "reflect");
  expect_near_all(F::pad(r, F::PadFuncOptions({2, 1}).mode(lt::kReplicate)), {1, 1, 1, 2, 3, 3}, 0,
                  "replicate");
  expect_near_all(F::pad(r, F::PadFuncOptions({2, 1}).mode(lt::kCircular)), {2, 3, 1, 2, 3, 1}, 0,
                  "circular");
  expect_near_all(F::pad(r, F::PadFuncOptions({1, 0}).value(9)), {9, 1, 2, 3}, 0, "constant");
  Tensor q = on(lt::tensor(std::vector<float>{1, 2, 3, 4}).reshape({1, 1, 2, 2}));
  expect_near_all(lt::pad(q, {1, 1, 1, 1}, lt::kReflect),
                  {4, 3, 4, 3, 2, 1, 2, 1, 4, 3, 4, 3, 2, 1, 2, 1}, 0, "reflect 2-d");
  EXPECT_THROW(lt::pad(r, {3, 0}, lt::kReflect), lt::Error);  // at most size - 1
  EXPECT_THROW(lt::pad(r, {4, 0}, lt::kCircular), lt::Error);
  // Conv2d with a non-zero padding mode pads first, then convolves without padding.
  lt::nn::Conv2d conv(lt::nn::Conv2dOptions(1, 2, 3).padding(1).padding_mode(lt::kCircular));
  conv->to(dev());
  Tensor img = on(lt::randn({1, 1, 4, 5}));
  Tensor want = lt::conv2d(lt::pad(img, {1, 1, 1, 1}, lt::kCircular), conv->weight, conv->bias);
  expect_near_all(conv(img), dv(want), 1e-5, "Conv2d padding_mode");
  // Embedding: the padding row starts at zero and takes no gradient; max_norm renormalizes.
  lt::nn::Embedding emb(lt::nn::EmbeddingOptions(4, 3).padding_idx(1));
  emb->to(dev());
  expect_near_all(emb->weight.select(0, 1), {0, 0, 0}, 0, "padding row");
  Tensor idx = on(lt::tensor(std::vector<int64_t>{1, 2, 1}));
  emb(idx).sum().backward();
  expect_near_all(emb->weight.grad().select(0, 1), {0, 0, 0}, 0, "no gradient to padding_idx");
  expect_near_all(emb->weight.grad().select(0, 2), {1, 1, 1}, 0, "gradient to row 2");
  Tensor w = on(lt::tensor(std::vector<float>{3, 4, 0, 0, 1, 0}).reshape({3, 2}));
  Tensor e = F::embedding(on(lt::tensor(std::vector<int64_t>{0})), w,
                          F::EmbeddingFuncOptions().max_norm(1.0));
  expect_near_all(e, {0.6, 0.8}, 1e-6, "max_norm result");
  expect_near_all(w.select(0, 0), {0.6, 0.8}, 1e-6, "max_norm renormalizes the weight row");
  expect_near_all(w.select(0, 2), {1, 0}, 0, "rows not read are untouched");
  EXPECT_THROW(F::embedding(idx, w, F::EmbeddingFuncOptions().sparse(true)), lt::Error);
  EXPECT_THROW(lt::nn::Embedding(lt::nn::EmbeddingOptions(4, 3).padding_idx(7)), lt::Error);
}

TEST_P(NnFunctional, Conv1dAsAHeightOneConv2d) {
  Tensor x = on(lt::tensor(std::vector<float>{1, 2, 3, 4, 5}).reshape({1, 1, 5}));
  Tensor w = on(lt::tensor(std::vector<float>{1, 0, -1}).reshape({1, 1, 3}));
  expect_near_all(lt::conv1d(x, w), {-2, -2, -2}, 0, "conv1d");
  expect_near_all(F::conv1d(x, w, F::Conv1dFuncOptions().padding(1)), {-2, -2, -2, -2, 4}, 0,
                  "conv1d padding");
  expect_near_all(lt::conv1d(x, w, {}, {2}, {0}, {2}), {-4}, 0, "conv1d stride and dilation");
  expect_near_all(lt::conv1d(x.squeeze(0), w, on(lt::ones({1}))), {-1, -1, -1}, 0,
                  "unbatched with bias");
  lt::nn::Conv1d conv(lt::nn::Conv1dOptions(4, 6, 3).stride(2).padding(1).groups(2));
  conv->to(dev());
  EXPECT_EQ(conv->weight.sizes()[1], 2);
  Tensor y = conv(on(lt::randn({2, 4, 9})));
  EXPECT_EQ(y.sizes()[1], 6);
  EXPECT_EQ(y.sizes()[2], 5);
  lt::nn::Conv1d circ(lt::nn::Conv1dOptions(1, 1, 3).padding(1).padding_mode(lt::kCircular));
  circ->to(dev());
  Tensor want = lt::conv1d(lt::pad(x, {1, 1}, lt::kCircular), circ->weight, circ->bias);
  expect_near_all(circ(x), dv(want), 1e-6, "Conv1d padding_mode");
  EXPECT_THROW(lt::conv1d(x, w.squeeze(0)), lt::Error);
  using lt_test::gradcheck;
  using lt_test::In;
  using lt_test::Ts;
  In in{{}, {2, 4, 6}}, k{{}, {4, 2, 3}};
  for (int j = 0; j < 48; ++j) in.v.push_back(std::sin(0.37 * j));
  for (int j = 0; j < 24; ++j) k.v.push_back(std::cos(0.53 * j));
  gradcheck(
      "conv1d groups", [](Ts t) { return lt::conv1d(t[0], t[1], {}, {2}, {1}, {1}, 2); }, {in, k},
      dev());
}

// ---- ranking and embedding losses: PyTorch 1.13's values (tests/reference/loss_golden.py)
const std::vector<double> k_margin_ranking = {0.14193164115180715, 0.40107013944953784, 0,
                                              0.015103483812644342};
const std::vector<double> k_margin_ranking_mean = {0.085750445150336238};
const std::vector<double> k_cosine_embedding = {0.29130435810286037, 0.82626665475674277,
                                                0.71700331707380704, 0.32499209635280613};
const std::vector<double> k_cosine_embedding_sum = {1.7595664262862165};
const std::vector<double> k_triplet = {0.54616106997472413, 0.62392425143548202,
                                       0.53733836937311907, 0.50907289582132598};
const std::vector<double> k_triplet_swap_p1 = {0, 0.60859269730152232, 0.19214075236520567,
                                               0.27702030543138578};
const std::vector<double> k_triplet_mean = {0.054124146651162802};

// Element j of the k-th filled tensor, as loss_golden.py: 0.4 sin(1.7 j + 0.9 k + 0.1).
Tensor filled(std::vector<int64_t> sizes, int k) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j)
    v[static_cast<size_t>(j)] = 0.4 * std::sin(1.7 * j + 0.9 * k + 0.1);
  return lt::tensor(v, sizes);
}

TEST_P(NnFunctional, RankingAndEmbeddingLossesMatchPyTorch) {
  Tensor a = on(filled({4, 5}, 1)), b = on(filled({4, 5}, 2)), c = on(filled({4, 5}, 3));
  Tensor sign = on(lt::tensor(std::vector<double>{1, -1, -1, 1}, {4}));
  Tensor a0 = a.select(1, 0), b0 = b.select(1, 0);  // non-contiguous columns
  const double tol = 1e-12;
  expect_near_all(
      F::margin_ranking_loss(a0, b0, sign,
                             F::MarginRankingLossFuncOptions().margin(0.1).reduction(lt::kNone)),
      k_margin_ranking, tol, "margin_ranking none");
  expect_near_all(lt::nn::MarginRankingLoss()(a0, b0, sign), k_margin_ranking_mean, tol,
                  "MarginRankingLoss");
  expect_near_all(
      F::cosine_embedding_loss(
          a, b, sign, F::CosineEmbeddingLossFuncOptions().margin(-0.2).reduction(lt::kNone)),
      k_cosine_embedding, tol, "cosine_embedding none");
  expect_near_all(lt::nn::CosineEmbeddingLoss(
                      lt::nn::CosineEmbeddingLossOptions().reduction(lt::kSum))(a, b, sign),
                  k_cosine_embedding_sum, tol, "CosineEmbeddingLoss sum");
  expect_near_all(
      F::triplet_margin_loss(a, b, c, F::TripletMarginLossFuncOptions().reduction(lt::kNone)),
      k_triplet, tol, "triplet none");
  expect_near_all(lt::triplet_margin_loss(a, b, c, 0.3, 1.0, 1e-6, true, lt::Reduction::None),
                  k_triplet_swap_p1, tol, "triplet swap p=1");
  expect_near_all(
      lt::nn::TripletMarginLoss(lt::nn::TripletMarginLossOptions().margin(0.5))(a, b, c),
      k_triplet_mean, tol, "TripletMarginLoss");
  // An empty batch sums to 0, as PyTorch's.
  Tensor e = on(lt::zeros({0, 5}));
  EXPECT_EQ(F::cosine_embedding_loss(e, e, on(lt::zeros({0})),
                                     F::CosineEmbeddingLossFuncOptions().reduction(lt::kSum))
                .item<float>(),
            0.0f);
  // Gradients by finite differences in float64 (every input but the sign target).
  lt_test::gradcheck(
      "margin_ranking_loss",
      [&](lt_test::Ts t) {
        return lt::margin_ranking_loss(t[0], t[1], sign, 0.1, lt::Reduction::None);
      },
      {{dv(a0), {4}}, {dv(b0), {4}}}, dev());
  lt_test::gradcheck(
      "cosine_embedding_loss",
      [&](lt_test::Ts t) {
        return lt::cosine_embedding_loss(t[0], t[1], sign, -0.2, lt::Reduction::None);
      },
      {{dv(a), {4, 5}}, {dv(b), {4, 5}}}, dev());
  lt_test::gradcheck(
      "triplet_margin_loss",
      [&](lt_test::Ts t) {
        return lt::triplet_margin_loss(t[0], t[1], t[2], 1.0, 2.0, 1e-6, true, lt::Reduction::None);
      },
      {{dv(a), {4, 5}}, {dv(b), {4, 5}}, {dv(c), {4, 5}}}, dev());
  auto message = lt_test::error_message;
  EXPECT_NE(message([&] {
              lt::margin_ranking_loss(a0, b0, on(lt::ones({3})));
            }).find("margin_ranking_loss: input1 [4], input2 [4] and target [3]"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lt::cosine_embedding_loss(a, b, on(lt::ones({4, 1})));
            }).find("cosine_embedding_loss: expected input1 and input2"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Devices, NnFunctional, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
