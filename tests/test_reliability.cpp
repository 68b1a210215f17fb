// Regressions for wrong results and accepted bad input found by an outside random-program
// tester: each case runs on cpu and on the lazy device with both backends (interp, mlir), and
// the lazy results must equal eager's, the errors name the op the user called.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using lt::Tensor;

const lt::Device kCpu = lt::kCPU;
const lt::Device kLazy("lazy");

// Runs the body once per lazy backend, restoring the process's backend afterwards.
void for_each_backend(const std::function<void(const std::string&)>& body) {
  const std::string before = lt::lazy_backend();
  for (const char* b : {"interp", "mlir"}) {
    SCOPED_TRACE(std::string("backend ") + b);
    lt::set_lazy_backend(b);
    body(b);
  }
  lt::set_lazy_backend(before);
}

// Expects `f` to throw an lt::Error whose message contains every part.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const lt::Error& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "\"" << p << "\" not in: " << e.what();
    return;
  }
  ADD_FAILURE() << "did not throw; expected an error with \"" << parts.front() << "\"";
}

Tensor f32(std::vector<float> v, lt::IntList s) { return lt::tensor(v, s); }
Tensor i64(std::vector<int64_t> v, lt::IntList s) { return lt::tensor(v, s); }

// ---- 1. in-place writes through a view of a buffer that a compiled step also reads

// The bias b is read by `y = x @ w^T + b` and then updated in place through a reshape-type
// view: the MLIR backend used to donate b's buffer to y while the view, another input of the
// same compiled step, still had to read b's old value (b came out as y - y = 0).
Tensor bias_update(lt::Device dev, int product, int view_kind, int op) {
  Tensor x1 = f32({-0.5, -1.25, -1.75}, {3}).to(dev);
  Tensor w = f32({-2, 1.5, -0.25, 0, -3, -0.25}, {2, 3}).to(dev);
  Tensor b = f32({2.5, -3.25}, {2}).to(dev);
  Tensor y;
  switch (product) {
    case 0:
      y = lt::matmul(x1, w.t()) + b;
      break;  // vector @ matrix
    case 1:
      y = lt::matmul(w, x1) + b;
      break;  // matrix @ vector
    default:
      y = lt::nn::functional::linear(x1, w, b);
      break;
  }
  Tensor v = view_kind == 0   ? b.view({2})
             : view_kind == 1 ? b.unsqueeze(0).squeeze(0)
                              : b.reshape({1, 2}).view({2});
  if (op == 0) v.sub_(y);
  if (op == 1) v.div_(y);
  if (op == 2) v.mul_(y).add_(1);
  lt::mark_step();
  return lt::stack({b, y});
}

TEST(Reliability, InplaceThroughViewOfBiasAfterProductMatchesEager) {
  for_each_backend([](const std::string&) {
    for (int product = 0; product < 3; ++product)
      for (int view = 0; view < 3; ++view)
        for (int op = 0; op < 3; ++op) {
          SCOPED_TRACE("product " + std::to_string(product) + " view " + std::to_string(view) +
                       " op " + std::to_string(op));
          Tensor e = bias_update(kCpu, product, view, op);
          Tensor l = bias_update(kLazy, product, view, op);
          EXPECT_TRUE(lt::allclose(l.to(kCpu), e, 1e-6, 1e-6)) << e << "\n" << l;
        }
  });
}

// ---- 2. to(options) keeps the device when the options name none

TEST(Reliability, ToOptionsWithoutDeviceKeepsTheDevice) {
  for (lt::Device dev : {kCpu, kLazy}) {
    SCOPED_TRACE(dev.str());
    Tensor t = f32({1.5, -2}, {2}).to(dev);
    Tensor d = t.to(lt::TensorOptions().dtype(lt::kFloat64));
    EXPECT_EQ(d.device(), dev);
    EXPECT_EQ(d.dtype(), lt::kFloat64);
    EXPECT_EQ((d + t).device(), dev);  // no "tensors on cpu and lazy"
    // Nothing to change: the tensor itself, so writes through the result reach it.
    Tensor same = t.to(lt::TensorOptions().dtype(lt::kFloat32));
    same.add_(1);
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{2.5, -1}));
    Tensor s2 = t.to(lt::TensorOptions());
    s2.mul_(2);
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{5, -2}));
    // Options that name a device move it; factories without a device make cpu tensors.
    EXPECT_EQ(t.to(lt::TensorOptions(kCpu).dtype(lt::kInt64)).device(), kCpu);
    EXPECT_EQ(lt::zeros({2}, lt::TensorOptions().dtype(lt::kInt32)).device(), kCpu);
    EXPECT_EQ(lt::zeros_like(t, lt::TensorOptions().dtype(lt::kInt32)).device(), dev);
    EXPECT_EQ(lt::ones_like(t).device(), dev);
  }
}

// ---- 3. a failed barrier leaves the runtime usable

TEST(Reliability, FailedBarrierMarksOnlyTheFailingTensors) {
  for_each_backend([](const std::string&) {
    Tensor x = lt::arange(6, lt::kFloat32).reshape({2, 3}).to(kLazy);
    Tensor idx = i64({1, 2}, {2}).to(kLazy) * 3;  // computed in the graph: {3, 6}
    Tensor bad = x.index_select(0, idx);
    Tensor good = x * 2;
    expect_error([] { lt::mark_step(); }, {"index_select", "index 3", "out of bounds"});
    EXPECT_EQ(good.to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
    // Later barriers run unrelated work and do not throw again.
    Tensor z = x + 1;
    EXPECT_NO_THROW(lt::mark_step());
    EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
    EXPECT_NO_THROW(lt::mark_step());
    // Reading or using the failed tensor throws the original error again.
    expect_error([&] { (void)bad.to_vector<float>(); }, {"index_select", "index 3"});
    expect_error([&] { (void)(bad + 1); }, {"index_select", "index 3"});
    expect_error([&] { (void)bad.view({6}).sum().item<float>(); }, {"index_select"});
    // A whole new value makes it usable again.
    bad = lt::zeros({2, 3}).to(kLazy);
    bad.fill_(1.0);
    EXPECT_EQ(bad.sum().item<float>(), 6.0f);
  });
}

TEST(Reliability, KnownIndicesAreCheckedAtTheCall) {
  for (lt::Device dev : {kCpu, kLazy}) {
    SCOPED_TRACE(dev.str());
    Tensor x = lt::arange(6, lt::kFloat32).reshape({2, 3}).to(dev);
    // Data moved to the device (and views of it) is checked where the op is called.
    expect_error(
        [&] {
          (void)x.index_select(0, i64({0, 5}, {2}).to(dev));
        },
        {"index_select", "index 5", "out of bounds", "size 2"});
    expect_error(
        [&] {
          (void)x.gather(1, i64({0, 3}, {2, 1}).to(dev).view({1, 2}));
        },
        {"gather", "index 3"});
    expect_error(
        [&] {
          (void)x.scatter_add(1, i64({4}, {1, 1}).to(dev), lt::ones({1, 1}).to(dev));
        },
        {"scatter_add", "index 4"});
    // Nothing was recorded: the next barrier has nothing to fail on.
    EXPECT_NO_THROW(lt::mark_step());
    EXPECT_EQ(x.sum().item<float>(), 15.0f);
  }
}

// ---- 4. bad input refused, as PyTorch refuses it

TEST(Reliability, NegativeIndicesAreOutOfRange) {
  for (lt::Device dev : {kCpu, kLazy}) {
    SCOPED_TRACE(dev.str());
    Tensor x = lt::arange(6, lt::kFloat32).reshape({2, 3}).to(dev);
    Tensor m1 = i64({-1}, {1}).to(dev);
    expect_error([&] { (void)x.index_select(0, m1); }, {"index_select", "index -1"});
    expect_error([&] { (void)x.gather(1, m1.view({1, 1})); }, {"gather", "index -1"});
    expect_error([&] { (void)lt::embedding(m1, x); }, {"embedding", "index -1"});
    expect_error(
        [&] {
          (void)lt::cross_entropy(x, i64({0, -1}, {2}).to(dev));
        },
        {"cross_entropy", "index -1"});
    expect_error(
        [&] {
          (void)lt::nll_loss(x, i64({-1, 0}, {2}).to(dev));
        },
        {"nll_loss", "index -1"});
    lt::nn::Embedding emb(4, 2);
    emb->to(dev);
    expect_error([&] { (void)emb->forward(i64({1, 4}, {2}).to(dev)); }, {"embedding", "index 4"});
    EXPECT_NO_THROW(lt::mark_step());
  }
}

TEST(Reliability, OtherBadValuesAreRefused) {
  for (lt::Device dev : {kCpu, kLazy}) {
    SCOPED_TRACE(dev.str());
    expect_error([&] { (void)lt::one_hot(i64({0, 3}, {2}).to(dev), 3); }, {"one_hot", "3"});
    expect_error([&] { (void)lt::one_hot(i64({-1}, {1}).to(dev), 3); }, {"one_hot", "-1"});
    // A computed class tensor is read at the call, as PyTorch does.
    expect_error([&] { (void)lt::one_hot(i64({1, 2}, {2}).to(dev) * 2, 3); }, {"one_hot"});
    EXPECT_EQ(lt::one_hot(i64({2, 0}, {2}).to(dev), 3).to_vector<int64_t>(),
              (std::vector<int64_t>{0, 0, 1, 1, 0, 0}));
    Tensor ints = i64({2, 3}, {2}).to(dev);
    expect_error([&] { (void)ints.pow(-1); }, {"pow", "negative integer powers"});
    expect_error([&] { (void)ints.pow(i64({1, -2}, {2}).to(dev)); }, {"pow", "-2"});
    expect_error([&] { (void)ints.pow(i64({1, -2}, {2}).to(dev) + 0); }, {"pow", "-2"});
    EXPECT_EQ(ints.pow(2).to_vector<int64_t>(), (std::vector<int64_t>{4, 9}));
    EXPECT_EQ(ints.pow(-1.0).dtype(), lt::kFloat32);  // a float exponent is fine
    expect_error(
        [&] {
          (void)lt::cross_entropy(i64({1, 2, 3, 4}, {2, 2}).to(dev), i64({0, 1}, {2}).to(dev));
        },
        {"cross_entropy", "int64"});
    expect_error([&] { (void)lt::bernoulli(lt::ones({3}).to(dev), -0.5); }, {"bernoulli", "-0.5"});
    expect_error([&] { (void)lt::bernoulli(lt::ones({3}).to(dev), 1.5); }, {"bernoulli"});
    EXPECT_NO_THROW(lt::mark_step());
  }
}

// ---- 5. errors name the op the user called

TEST(Reliability, ErrorsNameTheUsersOp) {
  for (lt::Device dev : {kCpu, kLazy}) {
    SCOPED_TRACE(dev.str());
    Tensor a = lt::ones({2, 3}).to(dev), b = lt::ones({4}).to(dev);
    expect_error([&] { (void)lt::mse_loss(a, b); }, {"mse_loss", "[2, 3]", "[4]"});
    expect_error([&] { (void)lt::max(a, 5); }, {"max", "5"});
    expect_error([&] { (void)lt::embedding(i64({9}, {1}).to(dev), a); }, {"embedding", "index 9"});
    expect_error(
        [&] {
          (void)lt::cross_entropy(a, i64({0, 7}, {2}).to(dev));
        },
        {"cross_entropy", "index 7"});
    expect_error([&] { (void)lt::nll_loss(a, i64({0, 7}, {2}).to(dev)); }, {"nll_loss", "index 7"});
    Tensor leaf = lt::ones({2}).to(dev).requires_grad_();
    expect_error([&] { leaf.sub_(1); }, {"sub_", "leaf"});
    expect_error([&] { leaf.mul_(lt::ones({2}).to(dev)); }, {"mul_", "leaf"});
    const std::string msg = [&] {
      try {
        (void)lt::mse_loss(a, b);
      } catch (const lt::Error& e) {
        return std::string(e.what());
      }
      return std::string();
    }();
    EXPECT_EQ(msg.rfind("mse_loss: ", 0), 0u) << msg;  // the user's op comes first
  }
}

// ---- 6. alpha never takes part in type promotion

TEST(Reliability, AlphaDoesNotChangeTheResultType) {
  for (lt::Device dev : {kCpu, kLazy}) {
    SCOPED_TRACE(dev.str());
    Tensor d0 = lt::scalar_tensor(1.5, lt::kFloat64).to(dev);
    Tensor i4 = i64({1, 2, 3, 4}, {4}).to(dev);
    Tensor r = d0.add(i4, -2.0);
    EXPECT_EQ(r.dtype(), lt::kFloat64);
    EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{-0.5, -2.5, -4.5, -6.5}));
    Tensor i32 = lt::tensor(std::vector<int32_t>{5, 6}, {2}).to(dev);
    Tensor bl = lt::tensor(std::vector<bool>{true, false}, {2}).to(dev);
    Tensor s = i32.add(bl, -1);
    EXPECT_EQ(s.dtype(), lt::kInt32);
    EXPECT_EQ(s.to_vector<int32_t>(), (std::vector<int32_t>{4, 6}));
    EXPECT_EQ(i32.sub(bl, 3).dtype(), lt::kInt32);
    EXPECT_EQ(lt::ones({2}).to(dev).add(i4.narrow(0, 0, 2), 2).dtype(), lt::kFloat32);
    expect_error([&] { (void)i32.add(i32, 0.5); }, {"add", "alpha", "int32"});
    expect_error([&] { (void)i32.add(i32, true); }, {"add", "alpha"});
  }
}

// ---- integer negation wraps (UBSan found -INT_MIN in the eager kernel, via a float -> int32
// conversion of -inf in the fuzzer's to() actions)

TEST(Reliability, IntegerNegAndAbsOfTheMinimumWrap) {
  const int32_t lo32 = std::numeric_limits<int32_t>::min();
  const int64_t lo64 = std::numeric_limits<int64_t>::min();
  for_each_backend([&](const std::string&) {
    for (lt::Device dev : {kCpu, kLazy}) {
      SCOPED_TRACE(dev.str());
      Tensor a = lt::tensor(std::vector<int32_t>{lo32, -5, 7}, {3}).to(dev);
      Tensor b = lt::tensor(std::vector<int64_t>{lo64, 3}, {2}).to(dev);
      EXPECT_EQ((-a).to_vector<int32_t>(), (std::vector<int32_t>{lo32, 5, -7}));
      EXPECT_EQ(a.abs().to_vector<int32_t>(), (std::vector<int32_t>{lo32, 5, 7}));
      EXPECT_EQ((-b).to_vector<int64_t>(), (std::vector<int64_t>{lo64, -3}));
      EXPECT_EQ(b.abs().to_vector<int64_t>(), (std::vector<int64_t>{lo64, 3}));
      Tensor c = lt::tensor(std::vector<float>{-INFINITY, 2.5f}, {2}).to(dev).to(lt::kInt32);
      EXPECT_EQ((-c).to_vector<int32_t>()[1], -2);
    }
  });
}

// The fuzzer (seed 41006376): the sum of a 0-d -0 was -0 on mlir (the element itself) where eager
// and PyTorch add it to the identity and give +0; 1 / sum then had the wrong infinity.
TEST(Reliability, SumOfNegativeZeroIsPositiveZero) {
  for_each_backend([&](const std::string&) {
    for (lt::Device dev : {kCpu, kLazy}) {
      SCOPED_TRACE(dev.str());
      Tensor z0 = lt::tensor(std::vector<float>{-0.5f}, {}).to(dev).round();  // -0
      Tensor z1 = lt::tensor(std::vector<double>{-0.0, -0.0}, {2}).to(dev);
      for (const Tensor& s : {z0.sum(), z0.sum({0}, false), z1.sum(), z1.sum({0}, true)}) {
        const double v = s.to(lt::kFloat64).to_vector<double>().at(0);
        EXPECT_EQ(v, 0.0);
        EXPECT_FALSE(std::signbit(v)) << "sum gave -0";
      }
      EXPECT_EQ((1.0f / z0.sum()).item<float>(), INFINITY);
      // prod, amax and amin of -0 keep it, as in PyTorch
      EXPECT_TRUE(std::signbit(z0.prod().item<float>()));
      EXPECT_TRUE(std::signbit(z0.amax().item<float>()));
    }
  });
}

// ---- a training step whose input is corrupted, then more training

struct Model {
  lt::nn::Sequential net{lt::nn::Linear(4, 8), lt::nn::ReLU(), lt::nn::Linear(8, 3)};
};

std::vector<std::vector<float>> params_of(const lt::nn::Sequential& net) {
  std::vector<std::vector<float>> r;
  for (const Tensor& p : net->parameters()) r.push_back(p.to(kCpu).to_vector<float>());
  return r;
}

std::vector<std::vector<float>> train_through_bad_label(lt::Device dev, bool* unchanged) {
  lt::manual_seed(3);
  Model m;
  m.net->to(dev);
  lt::optim::SGD opt(m.net->parameters(), lt::optim::SGDOptions(0.1).momentum(0.9));
  lt::manual_seed(4);
  Tensor x = lt::randn({5, 4});
  auto step = [&](const Tensor& y) {
    opt.zero_grad();
    Tensor loss = lt::cross_entropy(m.net->forward(x.to(dev)), y.to(dev));
    loss.backward();
    opt.step();
    return loss.item<float>();
  };
  step(i64({0, 1, 2, 1, 0}, {5}));
  const auto before = params_of(m.net);
  expect_error([&] { step(i64({0, 1, 3, 1, 0}, {5})); }, {"cross_entropy", "index 3"});
  *unchanged = params_of(m.net) == before;
  step(i64({2, 1, 0, 0, 1}, {5}));
  step(i64({1, 1, 2, 0, 2}, {5}));
  return params_of(m.net);
}

TEST(Reliability, TrainingGoesOnAfterABadLabel) {
  bool unchanged = false;
  const auto eager = train_through_bad_label(kCpu, &unchanged);
  EXPECT_TRUE(unchanged);
  for_each_backend([&](const std::string&) {
    bool lazy_unchanged = false;
    const auto lazy = train_through_bad_label(kLazy, &lazy_unchanged);
    EXPECT_TRUE(lazy_unchanged) << "the failed step changed the parameters";
    ASSERT_EQ(lazy.size(), eager.size());
    for (size_t i = 0; i < lazy.size(); ++i)
      for (size_t j = 0; j < lazy[i].size(); ++j)
        EXPECT_NEAR(lazy[i][j], eager[i][j], 1e-5) << "param " << i << " [" << j << "]";
  });
}

}  // namespace
