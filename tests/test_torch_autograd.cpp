// torch::autograd as libtorch spells it, through the lazytensor::torch drop-in headers:
// autograd::grad and backward with retain_graph/create_graph (higher-order gradients),
// retain_grad, grad_fn, detach_, and custom autograd::Function classes. Each case runs on the
// cpu and on the lazy device; gradients are checked against closed forms (float64).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

using namespace torch::autograd;

namespace {

class TorchAutograd : public ::testing::TestWithParam<std::string> {
 protected:
  torch::Device device() const {
    return GetParam() == "lazy" ? torch::Device(torch::kLazy) : torch::Device(torch::kCPU);
  }
  torch::TensorOptions f64() const { return torch::device(device()).dtype(torch::kFloat64); }
  // A leaf on the device under test holding `values`.
  torch::Tensor leaf(std::vector<double> values) const {
    return torch::tensor(values, torch::kFloat64).to(device()).requires_grad_();
  }
};

void expect_near(const torch::Tensor& got, const torch::Tensor& want, double tol = 1e-10) {
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(got.cpu().allclose(want.cpu(), tol, tol)) << got.cpu() << "\nwant\n" << want.cpu();
}

TEST_P(TorchAutograd, GradFnNamesTheRecordedOp) {
  torch::Tensor x = leaf({1, 2});
  EXPECT_EQ(x.grad_fn(), nullptr);
  EXPECT_TRUE(x.is_leaf());
  torch::Tensor y = x * 2;
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  EXPECT_EQ(y.grad_fn()->num_inputs(), 2u);
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(torch::exp(y).grad_fn()->name(), "ExpBackward0");
  EXPECT_EQ((y + x).grad_fn()->name(), "AddBackward0");
  torch::NoGradGuard no_grad;
  EXPECT_EQ((x * 2).grad_fn(), nullptr);
}

TEST_P(TorchAutograd, GradReturnsGradientsAndLeavesGradUntouched) {
  torch::Tensor x = leaf({1, -2, 3});
  torch::Tensor w = leaf({0.5, 0.25, 2});
  torch::Tensor y = (x * x * w).sum();
  variable_list g = torch::autograd::grad({y}, {x, w});
  ASSERT_EQ(g.size(), 2u);
  expect_near(g[0], 2 * x.detach() * w.detach());
  expect_near(g[1], x.detach() * x.detach());
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  EXPECT_FALSE(g[0].requires_grad());  // no create_graph: plain values
}

TEST_P(TorchAutograd, GradWithRespectToAnIntermediate) {
  torch::Tensor x = leaf({1, 2, 3});
  torch::Tensor h = x * 3;
  torch::Tensor y = (h * h).sum() + x.sum();
  expect_near(torch::autograd::grad({y}, {h})[0], 2 * h.detach());
  // Several outputs, weighted by grad_outputs.
  torch::Tensor a = x * 2, b = x * x;
  torch::Tensor v = torch::tensor({1.0, 0.5, 0.25}, torch::kFloat64).to(device());
  torch::Tensor g = torch::autograd::grad({a, b}, {x}, {v, torch::ones_like(b)})[0];
  expect_near(g, 2 * v + 2 * x.detach());
}

TEST_P(TorchAutograd, HigherOrderGradientsThroughCreateGraph) {
  torch::Tensor x = leaf({-1.5, 0.3, 2.0});
  torch::Tensor y = x.pow(3).sum() + torch::tanh(x).sum() + torch::exp(x * 0.5).sum();
  torch::Tensor g = torch::autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_TRUE(g.requires_grad());
  torch::Tensor xv = x.detach();
  torch::Tensor t = torch::tanh(xv);
  expect_near(g, 3 * xv * xv + (1 - t * t) + 0.5 * torch::exp(xv * 0.5));
  torch::Tensor g2 = torch::autograd::grad({g.sum()}, {x}, {}, true, true)[0];
  expect_near(g2, 6 * xv - 2 * t * (1 - t * t) + 0.25 * torch::exp(xv * 0.5));
  torch::Tensor g3 = torch::autograd::grad({g2.sum()}, {x})[0];
  expect_near(g3, 6 + (-2 + 6 * t * t) * (1 - t * t) + 0.125 * torch::exp(xv * 0.5));
}

TEST_P(TorchAutograd, GradientPenaltyReachesTheWeights) {
  // d/dW of sum_i (||grad_x (x W^T)_i||^2) with grad_outputs of ones is d/dW (n ||W^T 1||^2).
  torch::manual_seed(3);
  torch::Tensor w = torch::randn({3, 4}, torch::kFloat64).to(device()).requires_grad_();
  torch::Tensor x = torch::randn({5, 4}, torch::kFloat64).to(device()).requires_grad_();
  torch::Tensor out = torch::matmul(x, w.t());
  torch::Tensor gx = torch::autograd::grad({out}, {x}, {torch::ones_like(out)}, std::nullopt,
                                           /*create_graph=*/true)[0];
  torch::Tensor wv = w.detach();
  expect_near(gx, wv.sum(0).unsqueeze(0).expand({5, 4}));
  torch::Tensor penalty = gx.pow(2).sum();
  penalty.backward();
  // penalty = 5 * sum_k (sum_j W_jk)^2, so dW_jk = 10 * sum_j W_jk.
  expect_near(w.grad(), (10 * wv.sum(0)).unsqueeze(0).expand({3, 4}));
  EXPECT_FALSE(x.grad().defined() && x.grad().abs().sum().item<double>() > 0);
}

TEST_P(TorchAutograd, UnusedInputsNeedAllowUnused) {
  torch::Tensor x = leaf({1, 2});
  torch::Tensor z = leaf({3});
  torch::Tensor y = (x * x).sum();
  EXPECT_THROW(torch::autograd::grad({y}, {x, z}, {}, true), c10::Error);
  variable_list g = torch::autograd::grad({y}, {x, z}, {}, true, false, /*allow_unused=*/true);
  expect_near(g[0], 2 * x.detach());
  EXPECT_FALSE(g[1].defined());
  torch::Tensor c = torch::ones({2}, f64());
  EXPECT_THROW(torch::autograd::grad({y}, {c}), c10::Error);  // does not require grad
  EXPECT_THROW(torch::autograd::grad({c.sum()}, {x}), c10::Error);
}

TEST_P(TorchAutograd, SecondBackwardNeedsRetainGraph) {
  torch::Tensor x = leaf({1, 2, 3});
  torch::Tensor y = (x * x).sum();
  y.backward(/*gradient=*/{}, /*retain_graph=*/true);
  y.backward();
  expect_near(x.grad(), 4 * x.detach());
  try {
    y.backward();
    FAIL() << "a third backward through freed values did not throw";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("retain_graph"), std::string::npos) << e.what();
  }
  // Nothing was half-updated, and ops that saved nothing can be walked again.
  expect_near(x.grad(), 4 * x.detach());
  torch::Tensor s = (x + 1).sum();
  s.backward();
  s.backward();
  expect_near(x.grad(), 4 * x.detach() + 2);
}

TEST_P(TorchAutograd, RetainGradFillsIntermediates) {
  torch::Tensor x = leaf({1, 2});
  torch::Tensor h = x * 3;
  h.retain_grad();
  EXPECT_TRUE(h.retains_grad());
  torch::Tensor y = (h * h).sum();
  y.backward();
  expect_near(h.grad(), 2 * h.detach());
  expect_near(x.grad(), 18 * x.detach());
  torch::Tensor u = x * 4;
  EXPECT_FALSE(u.retains_grad());
  (u * 2).sum().backward();
  EXPECT_FALSE(u.grad().defined());
}

TEST_P(TorchAutograd, BackwardOfSeveralRootsIntoChosenInputs) {
  torch::Tensor x = leaf({1, 2});
  torch::Tensor w = leaf({3, 4});
  torch::Tensor a = (x * w).sum(), b = (x * x).sum();
  torch::autograd::backward({a, b}, {}, std::nullopt, false, /*inputs=*/{x});
  expect_near(x.grad(), w.detach() + 2 * x.detach());
  EXPECT_FALSE(w.grad().defined());
}

TEST_P(TorchAutograd, BackwardWithCreateGraphGivesGradsWithHistory) {
  torch::Tensor x = leaf({0.5, -1});
  torch::Tensor y = x.pow(4).sum();
  y.backward({}, std::nullopt, /*create_graph=*/true);
  torch::Tensor gx = x.grad();
  EXPECT_TRUE(gx.requires_grad());
  torch::Tensor g2 = torch::autograd::grad({gx.sum()}, {x})[0];
  expect_near(g2, 12 * x.detach() * x.detach());
  x.mutable_grad() = torch::Tensor();  // the grad's history holds x: drop the cycle
}

TEST_P(TorchAutograd, DetachInPlace) {
  torch::Tensor x = leaf({1, 2});
  torch::Tensor y = x * 2;
  y.detach_();
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(y.is_leaf());
  EXPECT_EQ(y.grad_fn(), nullptr);
  expect_near(y, torch::tensor({2.0, 4.0}, torch::kFloat64));
}

// ---- custom functions

struct Scale : Function<Scale> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, double k) {
    ctx->saved_data["k"] = k;
    return x * k;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->saved_data["k"].toDouble(), torch::Tensor()};
  }
};

struct Affine : Function<Affine> {  // x W^T (+ b), with an optional bias
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor w,
                               torch::Tensor b = torch::Tensor()) {
    ctx->save_for_backward({x, w, b});
    torch::Tensor y = x.mm(w.t());
    return b.defined() ? y + b : y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    variable_list s = ctx->get_saved_variables();
    torch::Tensor gb = s[2].defined() ? g[0].sum(0) : torch::Tensor();
    return {ctx->needs_input_grad(0) ? g[0].mm(s[1]) : torch::Tensor(), g[0].t().mm(s[0]), gb};
  }
};

struct ExpSavingOutput : Function<ExpSavingOutput> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x) {
    torch::Tensor y = torch::exp(x);
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};

struct SplitHalves : Function<SplitHalves> {  // two outputs, and an index output
  static variable_list forward(AutogradContext* ctx, torch::Tensor x) {
    torch::Tensor idx = torch::arange(x.size(0) / 2, torch::device(x.device()));
    ctx->mark_non_differentiable({idx});
    ctx->set_materialize_grads(false);
    return {x.narrow(0, 0, x.size(0) / 2).clone(), x.narrow(0, x.size(0) / 2, x.size(0) / 2) * 3,
            idx};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    torch::Tensor a = g[0].defined() ? g[0] : torch::zeros_like(g[1]);
    torch::Tensor b = g[1].defined() ? g[1] * 3 : torch::zeros_like(g[0]);
    return {torch::cat({a, b}, 0)};
  }
};

struct DoubleInPlace : Function<DoubleInPlace> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

struct WrongCount : Function<WrongCount> {
  static torch::Tensor forward(AutogradContext*, torch::Tensor x, torch::Tensor y) { return x * y; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

struct WrongShape : Function<WrongShape> {
  static torch::Tensor forward(AutogradContext*, torch::Tensor x) { return x.sum(); }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

TEST_P(TorchAutograd, CustomFunctionWithSavedData) {
  torch::Tensor x = leaf({1, -2});
  torch::Tensor y = Scale::apply(x, 5.5);
  EXPECT_NE(y.grad_fn()->name().find("Scale"), std::string::npos) << y.grad_fn()->name();
  y.sum().backward();
  expect_near(x.grad(), torch::full({2}, 5.5, torch::kFloat64));
  expect_near(y, x.detach() * 5.5);
}

TEST_P(TorchAutograd, CustomFunctionWithOptionalArgumentAndSavedInputs) {
  torch::manual_seed(5);
  torch::Tensor x = torch::randn({2, 3}, torch::kFloat64).to(device()).requires_grad_();
  torch::Tensor w = torch::randn({4, 3}, torch::kFloat64).to(device()).requires_grad_();
  Affine::apply(x, w).sum().backward();  // bias defaulted: backward returns 3 for 2 arguments
  expect_near(x.grad(), torch::ones({2, 4}, torch::kFloat64).mm(w.detach().cpu()));
  expect_near(w.grad(), torch::ones({4, 2}, torch::kFloat64).mm(x.detach().cpu()));
  torch::Tensor b = torch::randn({4}, torch::kFloat64).to(device()).requires_grad_();
  torch::Tensor c = torch::randn({2, 3}, torch::kFloat64).to(device());  // needs no gradient
  Affine::apply(c, w, b).sum().backward();
  expect_near(b.grad(), torch::full({4}, 2.0, torch::kFloat64));
  // Same values as the built-in ops.
  torch::Tensor want = torch::matmul(c, w.detach().t()) + b.detach();
  expect_near(Affine::apply(c, w, b), want);
}

TEST_P(TorchAutograd, CustomFunctionSavingItsOutputIsTwiceDifferentiable) {
  torch::Tensor x = leaf({0.5, -1, 2});
  torch::Tensor y = ExpSavingOutput::apply(x);
  torch::Tensor g = torch::autograd::grad({y.sum()}, {x}, {}, std::nullopt, true)[0];
  expect_near(g, torch::exp(x.detach()));
  torch::Tensor g2 = torch::autograd::grad({g.sum()}, {x})[0];
  expect_near(g2, torch::exp(x.detach()));
  // Without retain_graph the saved output is gone.
  torch::Tensor z = ExpSavingOutput::apply(x);
  z.sum().backward();
  EXPECT_THROW(z.sum().backward(), c10::Error);
}

TEST_P(TorchAutograd, CustomFunctionWithSeveralOutputs) {
  torch::Tensor x = leaf({1, 2, 3, 4});
  variable_list out = SplitHalves::apply(x);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].output_nr(), 0u);
  EXPECT_EQ(out[1].output_nr(), 1u);
  EXPECT_FALSE(out[2].requires_grad());
  (out[0].sum() * 2 + out[1].sum()).backward();
  expect_near(x.grad(), torch::tensor({2.0, 2.0, 3.0, 3.0}, torch::kFloat64));
  x.mutable_grad() = torch::Tensor();
  SplitHalves::apply(x)[1].sum().backward();  // output 0 unused: undefined, not zeros
  expect_near(x.grad(), torch::tensor({0.0, 0.0, 3.0, 3.0}, torch::kFloat64));
}

TEST_P(TorchAutograd, CustomFunctionModifyingItsInputInPlace) {
  torch::Tensor x = leaf({1, 2});
  torch::Tensor h = x * 1.5;
  torch::Tensor r = DoubleInPlace::apply(h);
  EXPECT_TRUE(r.is_same(h));
  expect_near(h, x.detach() * 3);
  EXPECT_NE(h.grad_fn()->name().find("DoubleInPlace"), std::string::npos);
  h.sum().backward();
  expect_near(x.grad(), torch::full({2}, 3.0, torch::kFloat64));
  EXPECT_THROW(DoubleInPlace::apply(x), c10::Error);  // x is a leaf that requires grad
}

TEST_P(TorchAutograd, CustomFunctionErrorsNameTheFunction) {
  torch::Tensor x = leaf({1, 2});
  torch::Tensor y = leaf({3, 4});
  try {
    WrongCount::apply(x, y).sum().backward();
    FAIL() << "a backward returning too few gradients did not throw";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("WrongCount"), std::string::npos) << e.what();
  }
  try {
    WrongShape::apply(x).backward();
    FAIL() << "a gradient of the wrong shape did not throw";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(x.grad().defined());
  // Still usable afterwards.
  Scale::apply(x, 2.0).sum().backward();
  expect_near(x.grad(), torch::full({2}, 2.0, torch::kFloat64));
}

TEST_P(TorchAutograd, CustomFunctionWithoutGradientsRecordsNothing) {
  torch::Tensor x = torch::tensor({1.0, 2.0}).to(device());
  torch::Tensor y = Scale::apply(x, 3.0);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
  expect_near(y, torch::tensor({3.0f, 6.0f}));
}

TEST(IValue, HoldsWhatSavedDataStores) {
  torch::IValue d = 2.5, i = 3, b = true, s = "name";
  EXPECT_TRUE(d.isDouble());
  EXPECT_EQ(d.toDouble(), 2.5);
  EXPECT_EQ(i.toInt(), 3);
  EXPECT_TRUE(b.toBool());
  EXPECT_EQ(s.toStringRef(), "name");
  EXPECT_TRUE(torch::IValue().isNone());
  EXPECT_THROW(i.toDouble(), c10::Error);  // libtorch's IValue does not convert either
  torch::IValue t = torch::ones({2});
  EXPECT_EQ(t.toTensor().sum().item<float>(), 2.0f);
}

INSTANTIATE_TEST_SUITE_P(Devices, TorchAutograd, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
