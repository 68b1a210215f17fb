// libtorch's spellings through the lazytensor::torch drop-in headers, written as a libtorch
// program would write them (only <torch/torch.h>, the torch/at/c10 namespaces), each case on the
// cpu and on the lazy device. libtorch 1.13's behaviour is the reference.
#include <ATen/ATen.h>
#include <c10/util/irange.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

class TorchCompat : public ::testing::TestWithParam<std::string> {
 protected:
  torch::Device device() const {
    return GetParam() == "lazy" ? torch::Device(torch::kLazy) : torch::Device(torch::kCPU);
  }
};

TEST_P(TorchCompat, TensorFromBracedValuesTakesLibtorchsDtypes) {
  auto opts = torch::TensorOptions().device(device());
  torch::Tensor i = torch::tensor({1, 2, 3}, opts);
  EXPECT_EQ(i.dtype(), torch::kLong);
  EXPECT_EQ(i.sizes(), std::vector<int64_t>({3}));
  torch::Tensor b = torch::tensor({true, false}, opts);
  EXPECT_EQ(b.scalar_type(), torch::kBool);
  torch::Tensor f = torch::tensor({{1.5, 2.0}, {3.0, 4.0}}, opts);
  EXPECT_EQ(f.dtype(), torch::kFloat32);  // floating values take the default dtype
  EXPECT_EQ(f.sizes(), std::vector<int64_t>({2, 2}));
  EXPECT_FLOAT_EQ(f.sum().item<float>(), 10.5f);
  torch::Tensor mixed = torch::tensor({1, 2}, opts).to(torch::kFloat) + torch::tensor({0.5, 1.5}, opts);
  EXPECT_TRUE(mixed.equal(torch::tensor({1.5, 3.5}, opts)));
  torch::Tensor s = torch::tensor(2.5, opts);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);
  torch::Tensor d = torch::tensor({1, 2}, torch::dtype(torch::kFloat64).device(device()));
  EXPECT_EQ(d.dtype(), torch::kDouble);
  EXPECT_EQ(d.device(), device());
  torch::Tensor r = torch::tensor({1.0, 2.0}, torch::requires_grad().device(device()));
  EXPECT_TRUE(r.requires_grad());
  EXPECT_EQ(torch::tensor({}, opts).numel(), 0);
  torch::Tensor fv =
      torch::tensor(std::vector<double>{1.5, 2.5}, opts);  // the element type's dtype
  EXPECT_EQ(fv.dtype(), torch::kDouble);
  EXPECT_EQ(fv.device(), device());
  EXPECT_EQ(torch::tensor(std::vector<int64_t>{4}, torch::dtype(torch::kFloat)).item<float>(),
            4.0f);
  // Every factory taking options honours requires_grad: a leaf that requires grad.
  for (const torch::Tensor& t :
       {torch::zeros({2}, torch::requires_grad().device(device())),
        torch::randn({2}, torch::requires_grad().device(device())),
        torch::arange(3.0, torch::requires_grad().device(device())),
        torch::full({2}, 1.5, torch::requires_grad().device(device()))}) {
    EXPECT_TRUE(t.requires_grad());
    EXPECT_TRUE(t.is_leaf());
  }
  EXPECT_FALSE(torch::ones({2}, opts).requires_grad());
  torch::Tensor w = torch::ones({2}, opts).set_requires_grad(true);
  EXPECT_TRUE(w.requires_grad());
  torch::Tensor wd = (w * 2).data();  // values without history
  EXPECT_FALSE(wd.requires_grad());
  EXPECT_EQ(wd.sum().item<float>(), 4.0f);
  if (GetParam() == "cpu") {
    torch::Tensor h = torch::tensor({1.0f, 2.0f});
    EXPECT_EQ(static_cast<float*>(h.data_ptr())[1], 2.0f);
    EXPECT_EQ(h.data_ptr(), static_cast<void*>(h.data_ptr<float>()));
  }
}

TEST_P(TorchCompat, RaggedNestedListsAreAnErrorAtTheCall) {
  try {
    torch::tensor({{1, 2}, {3}});
    FAIL() << "no error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor"), std::string::npos) << e.what();
  }
}

TEST_P(TorchCompat, SizesCompareAsIntArrayRef) {
  torch::Tensor a = torch::zeros({2, 3}, torch::TensorOptions().device(device()));
  torch::Tensor b = torch::ones({2, 3}).to(device());
  ASSERT_EQ(a.sizes(), b.sizes());
  ASSERT_EQ(a.sizes(), std::vector<int64_t>({2, 3}));
  ASSERT_NE(a.t().sizes(), a.sizes());
  EXPECT_TRUE(std::vector<int64_t>({2, 3}) == a.sizes());
  std::ostringstream os;
  os << a.sizes();
  EXPECT_EQ(os.str(), "[2, 3]");
}

TEST_P(TorchCompat, OptionBuildersAndTensorQueries) {
  torch::Tensor x = torch::randn({4, 5}, torch::dtype(torch::kFloat32).device(device()));
  EXPECT_EQ(x.options().dtype(), torch::kFloat);
  EXPECT_EQ(x.options().device(), device());
  EXPECT_EQ(x.layout(), torch::kStrided);
  EXPECT_TRUE(x.is_variable());
  torch::Tensor y = torch::zeros({2}, torch::dtype<int64_t>().device(device()));
  EXPECT_EQ(y.dtype(), torch::kInt64);
  torch::Tensor z = x.to(x.options().dtype(torch::kDouble));
  EXPECT_EQ(z.scalar_type(), c10::ScalarType::Float64);
  EXPECT_TRUE(z.to(torch::kCPU).device().is_cpu());
}

TEST_P(TorchCompat, EqualAndAllclose) {
  torch::Tensor a = torch::arange(6, torch::TensorOptions().device(device())).to(torch::kFloat);
  torch::Tensor b = a.clone();
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_TRUE(a.equal(b));
  EXPECT_FALSE(a.equal(b + 1));
  EXPECT_FALSE(a.equal(b.view({2, 3})));  // same values, other sizes
  EXPECT_TRUE(a.allclose(b * (1 + 1e-6)));  // within rtol 1e-5
  EXPECT_TRUE(at::allclose(a, b));
  EXPECT_FALSE(a.allclose(b + 1e-2));
}

TEST_P(TorchCompat, IrangeAndNamespaces) {
  std::vector<int64_t> seen;
  for (const auto i : c10::irange(3)) seen.push_back(i);
  EXPECT_EQ(seen, std::vector<int64_t>({0, 1, 2}));
  seen.clear();
  for (const auto i : c10::irange(2, 5)) seen.push_back(i);
  EXPECT_EQ(seen, std::vector<int64_t>({2, 3, 4}));
  int n = 0;
  for (const auto i : c10::irange(5, 2)) n += static_cast<int>(i) + 1;
  EXPECT_EQ(n, 0);  // an empty range when end <= begin

  namespace F = torch::nn::functional;
  torch::nn::Linear lin(3, 2);
  lin->to(device());
  torch::Tensor x = torch::ones({4, 3}).to(device());
  torch::Tensor y = F::relu(lin->forward(x));
  EXPECT_EQ(y.sizes(), std::vector<int64_t>({4, 2}));
  torch::optim::SGD opt(lin->parameters(), torch::optim::SGDOptions(0.1));
  opt.zero_grad();
  y.sum().backward();
  opt.step();
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE((lin->forward(x) * 2).requires_grad());
  }
}

// libtorch's in-place methods are const (a Tensor is a handle): they work on const references,
// as in `for (const auto& p : model->parameters()) p.zero_();`.
TEST_P(TorchCompat, InPlaceMethodsWorkOnConstTensors) {
  const torch::Tensor t = torch::zeros({3}, torch::TensorOptions().device(device()));
  t.add_(1).mul_(2);
  t.index_put_({0}, 5);
  auto bump = [](const torch::Tensor& x) { x.sub_(1).clamp_(0, 3); };
  bump(t);
  EXPECT_TRUE(t.to(torch::kCPU).equal(torch::tensor({3.0f, 1.0f, 1.0f})));
  torch::nn::Linear lin(2, 2);
  lin->to(device());
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : lin->parameters()) p.fill_(0.5);
  }
  for (const auto& p : lin->parameters()) p.requires_grad_(false);
  torch::Tensor y = lin->forward(torch::ones({1, 2}).to(device()));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(y.to(torch::kCPU).equal(torch::full({1, 2}, 1.5)));
}

// torch::optim as libtorch programs write it: a learning rate where options go, option
// setters and getters, parameter groups with their own options, step(closure), LRScheduler.
TEST_P(TorchCompat, OptimizerSpellings) {
  namespace optim = torch::optim;
  auto leaf = [&] { return torch::ones({2}, torch::requires_grad().device(device())); };
  torch::Tensor a = leaf(), b = leaf(), c = leaf();
  optim::SGD plain({c}, 0.5);  // SGDOptions from a learning rate
  EXPECT_DOUBLE_EQ(plain.defaults().get_lr(), 0.5);
  std::vector<optim::OptimizerParamGroup> groups{
      optim::OptimizerParamGroup({a}),
      optim::OptimizerParamGroup({b}, std::make_unique<optim::SGDOptions>(0.01))};
  optim::SGD opt(groups, optim::SGDOptions(0.1).momentum(0));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].options().get_lr(), 0.01);
  auto& first = static_cast<optim::SGDOptions&>(opt.param_groups()[0].options());
  EXPECT_DOUBLE_EQ(first.lr(), 0.1);  // the defaults, copied into the group
  first.lr(0.2);
  auto closure = [&] {
    opt.zero_grad();
    torch::Tensor loss = (a * 2 + b * 3).sum();
    loss.backward();
    return loss;
  };
  torch::Tensor loss = opt.step(closure);
  EXPECT_FLOAT_EQ(loss.item<float>(), 10.0f);
  EXPECT_TRUE(a.to(torch::kCPU).allclose(torch::full({2}, 0.6)));   // 1 - 0.2 * 2
  EXPECT_TRUE(b.to(torch::kCPU).allclose(torch::full({2}, 0.97)));  // 1 - 0.01 * 3
  optim::StepLR sched(opt, /*step_size=*/1, /*gamma=*/0.5);
  sched.step();
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].options().get_lr(), 0.005);
  opt.zero_grad(/*set_to_none=*/false);  // zeroed in place (libtorch 1.13 defaults to this)
  EXPECT_EQ(a.grad().abs().sum().item<float>(), 0.0f);
  optim::Adam adam({c}, optim::AdamOptions(1e-2).betas({0.9, 0.98}).eps(1e-6));
  auto& ao = static_cast<optim::AdamOptions&>(adam.param_groups()[0].options());
  EXPECT_DOUBLE_EQ(std::get<1>(ao.betas()), 0.98);
  EXPECT_DOUBLE_EQ(ao.eps(), 1e-6);
  adam.add_param_group(optim::OptimizerParamGroup({leaf()}));
  EXPECT_EQ(adam.param_groups().size(), 2u);
  EXPECT_EQ(adam.params().size(), 2u);
}

// torch::nn::utils's gradient clipping; the norm is read only when the program reads it.
TEST_P(TorchCompat, GradientClipping) {
  auto leaf = [&](std::vector<float> v) {
    return torch::tensor(v, torch::requires_grad().device(device()));
  };
  torch::Tensor a = leaf({1, 2}), b = leaf({2});
  auto grads = [&](float s) {  // gradients (3, 4) and (12) times s: 2-norm 13 s
    a.mutable_grad() = torch::tensor({3.0f, 4.0f}).to(device()) * s;
    b.mutable_grad() = torch::tensor({12.0f}).to(device()) * s;
  };
  grads(1);
  lt::metrics::reset();
  torch::nn::utils::clip_grad_norm_({a, b}, 6.5);  // the norm ignored: nothing is read
  if (GetParam() == "lazy") EXPECT_EQ(lt::metrics::counter("TransferFromDevice"), 0);
  EXPECT_TRUE(a.grad().to(torch::kCPU).allclose(torch::tensor({1.5f, 2.0f}), 1e-5, 1e-5));
  EXPECT_TRUE(b.grad().to(torch::kCPU).allclose(torch::tensor({6.0f}), 1e-5, 1e-5));
  grads(1);
  double n = torch::nn::utils::clip_grad_norm_(std::vector<torch::Tensor>({a, b}), 100.0);
  EXPECT_NEAR(n, 13.0, 1e-5);  // below max_norm: unchanged
  EXPECT_TRUE(b.grad().to(torch::kCPU).allclose(torch::tensor({12.0f})));
  double inf_norm = torch::nn::utils::clip_grad_norm_({a, b}, 3.0, INFINITY);
  EXPECT_NEAR(inf_norm, 12.0, 1e-5);
  EXPECT_TRUE(b.grad().to(torch::kCPU).allclose(torch::tensor({3.0f}), 1e-5, 1e-5));
  grads(1);
  EXPECT_NEAR(torch::nn::utils::clip_grad_norm_(a, 1.0, 1.0), 7.0, 1e-5);  // 1-norm of a alone
  EXPECT_TRUE(a.grad().to(torch::kCPU).allclose(torch::tensor({3.0f / 7, 4.0f / 7}), 1e-5, 1e-5));
  torch::nn::utils::clip_grad_value_({a, b}, 0.5);
  EXPECT_TRUE(b.grad().to(torch::kCPU).equal(torch::tensor({0.5f})));
  grads(NAN);
  EXPECT_THROW(torch::nn::utils::clip_grad_norm_({a, b}, 1.0, 2.0, true), c10::Error);
}

// Indexing as libtorch programs write it: torch::indexing, t[i][j] = v, index_put_.
TEST_P(TorchCompat, IndexingSpellings) {
  using namespace torch::indexing;
  torch::Tensor t = torch::zeros({3, 4}, torch::TensorOptions().device(device()));
  t[1][2] = 5;
  t.index_put_({Slice(), 0}, 1.5);
  t.index_put_({2, Slice(1, None, 2)}, torch::tensor({7.0, 8.0}).to(device()));
  t.index({0, Slice(2, 4)}) = -1;
  torch::Tensor want =
      torch::tensor({{1.5, 0.0, -1.0, -1.0}, {1.5, 0.0, 5.0, 0.0}, {1.5, 7.0, 0.0, 8.0}});
  EXPECT_TRUE(t.to(torch::kCPU).equal(want.to(torch::kFloat)));
  EXPECT_EQ(t.index({"...", torch::indexing::None}).sizes(), std::vector<int64_t>({3, 4, 1}));
  EXPECT_EQ(t[torch::tensor({2, 0}).to(device())].sizes(), std::vector<int64_t>({2, 4}));
  EXPECT_EQ(t.index({t > 1}).numel(), 6);
  at::Tensor u = at::indexing::Slice(1, 2).step() == 1 ? t.masked_fill(t < 0, 0) : t;
  EXPECT_EQ(u.min().item<float>(), 0.0f);
}

TEST_P(TorchCompat, RemainderFollowsTheDivisorsSignAndFmodTheDividends) {
  torch::Tensor a = torch::tensor({-7, 7, -6, 5}).to(device());
  EXPECT_EQ((a % 3).to(torch::kCPU).tolist<int64_t>(), (std::vector<int64_t>{2, 1, 0, 2}));
  EXPECT_EQ((a % -3).to(torch::kCPU).tolist<int64_t>(), (std::vector<int64_t>{-1, -2, 0, -1}));
  EXPECT_EQ(a.fmod(3).to(torch::kCPU).tolist<int64_t>(), (std::vector<int64_t>{-1, 1, 0, 2}));
  EXPECT_EQ((a % -1).to(torch::kCPU).tolist<int64_t>(), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ((a % 3).dtype(), torch::kLong);
  torch::Tensor x = torch::tensor({-5.5, 5.5, 2.0}).to(device());
  torch::Tensor d = torch::tensor({2.0, -2.0, 2.0}).to(device());
  EXPECT_TRUE((x % d).allclose(torch::tensor({0.5, -0.5, 0.0}).to(device())));
  EXPECT_TRUE(torch::fmod(x, d).allclose(torch::tensor({-1.5, 1.5, 0.0}).to(device())));
  EXPECT_TRUE(torch::remainder(x, 2).allclose(torch::tensor({0.5, 1.5, 0.0}).to(device())));
  EXPECT_EQ((torch::tensor({7}) % 2.5).dtype(), torch::kFloat);  // a float scalar promotes
  // Integer division by zero, as libtorch's ZeroDivisionError; the operands stay usable.
  EXPECT_THROW(a % torch::zeros({4}, torch::kLong).to(device()), c10::Error);
  EXPECT_THROW(a.fmod(0), c10::Error);
  EXPECT_THROW(torch::tensor({true}).to(device()) % torch::tensor({true}).to(device()), c10::Error);
  EXPECT_EQ((a % 4).sum().item<int64_t>(), 1 + 3 + 2 + 1);
}

TEST_P(TorchCompat, DefaultDtypeDecidesFloatingFactories) {
  EXPECT_EQ(torch::get_default_dtype(), torch::kFloat);
  torch::set_default_dtype(caffe2::TypeMeta::Make<double>());
  EXPECT_EQ(torch::get_default_dtype(), torch::kDouble);
  EXPECT_EQ(torch::ones({2}, torch::device(device())).dtype(), torch::kDouble);
  EXPECT_EQ(torch::tensor({1.5, 2.0}).dtype(), torch::kDouble);
  EXPECT_EQ(torch::randn({2}).dtype(), torch::kDouble);
  EXPECT_EQ(torch::arange(0.0, 1.0, 0.5).dtype(), torch::kDouble);
  EXPECT_EQ((torch::tensor({1, 2}).to(device()) / 2).dtype(), torch::kDouble);
  EXPECT_EQ(torch::tensor({1, 2}).dtype(), torch::kLong);  // integers stay int64
  torch::nn::Linear layer(2, 3);
  EXPECT_EQ(layer->weight.dtype(), torch::kDouble);
  EXPECT_THROW(torch::set_default_dtype(torch::kInt), c10::Error);
  torch::set_default_dtype(torch::kFloat);
  EXPECT_EQ(torch::zeros({1}).dtype(), torch::kFloat);
}

TEST_P(TorchCompat, RandomFillsInPlace) {
  torch::manual_seed(7);
  torch::Tensor t = torch::empty({1000}, torch::device(device()));
  t.random_(3, 9);
  EXPECT_EQ(t.min().item<float>(), 3.0f);
  EXPECT_EQ(t.max().item<float>(), 8.0f);
  EXPECT_TRUE(t.eq(t.floor()).all().item<bool>());
  torch::Tensor i = torch::zeros({1000}, torch::dtype(torch::kInt).device(device()));
  i.random_(5);
  EXPECT_GE(i.min().item<int>(), 0);
  EXPECT_EQ(i.max().item<int>(), 4);
  torch::Tensor b = torch::zeros({200}, torch::dtype(torch::kBool).device(device()));
  b.random_();
  EXPECT_TRUE(b.any().item<bool>());
  EXPECT_THROW(i.random_(0, int64_t{1} << 40), c10::Error);  // beyond int32
  EXPECT_THROW(t.random_(4, 4), c10::Error);
  t.uniform_(-2, -1);
  EXPECT_GE(t.min().item<float>(), -2.0f);
  EXPECT_LT(t.max().item<float>(), -1.0f);
  t.normal_(10, 0.5);
  EXPECT_NEAR(t.mean().item<float>(), 10.0f, 0.1f);
  EXPECT_NEAR(t.std().item<float>(), 0.5f, 0.05f);
  // Seeded as the factories: the same seed gives the same draws.
  torch::manual_seed(3);
  torch::Tensor u = torch::empty({5}, torch::device(device())).random_(100);
  torch::manual_seed(3);
  torch::Tensor v = torch::empty({5}, torch::device(device())).random_(100);
  EXPECT_TRUE(u.equal(v));
}

TEST_P(TorchCompat, ResizeKeepsLeadingElements) {
  torch::Tensor t = torch::arange(6, torch::dtype(torch::kFloat).device(device()));
  torch::Tensor same = t;
  t.resize_({2, 2});
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(same.sizes(), (std::vector<int64_t>{2, 2}));  // every handle sees it
  EXPECT_EQ(t.to(torch::kCPU).view({-1}).tolist<float>(), (std::vector<float>{0, 1, 2, 3}));
  t.resize_({5});
  EXPECT_EQ(t.to(torch::kCPU).tolist<float>(), (std::vector<float>{0, 1, 2, 3, 0}));
  torch::Tensor w = torch::ones({2}, torch::requires_grad());
  EXPECT_THROW(w.resize_({3}), c10::Error);
  EXPECT_THROW(t.resize_({-1}), c10::Error);
  EXPECT_EQ(t.numel(), 5);
}

TEST_P(TorchCompat, StorageOfCpuTensors) {
  torch::Tensor t = torch::zeros({3, 4});
  torch::Tensor row = t[1];
  // Allocations round up to a size bucket (libtorch's nbytes is exact; ours is the capacity).
  EXPECT_GE(t.storage().nbytes(), 3u * 4u * sizeof(float));
  EXPECT_LT(t.storage().nbytes(), 2 * 3u * 4u * sizeof(float) + 64);
  EXPECT_TRUE(row.storage().is_alias_of(t.storage()));
  EXPECT_FALSE(t.clone().storage().is_alias_of(t.storage()));
  EXPECT_EQ(t.storage().data(), t.data_ptr());
  if (device().is_lazy()) {
    EXPECT_THROW(t.to(device()).storage(), c10::Error);
  }
}

// kHalf, kBFloat16 and kChar as libtorch programs spell them (values from libtorch 1.13).
TEST_P(TorchCompat, HalfBFloat16AndCharTensors) {
  torch::Tensor x = torch::tensor({0.1, 1000.7, -3.0}, torch::dtype(torch::kHalf).device(device()));
  EXPECT_EQ(x.scalar_type(), torch::kHalf);
  EXPECT_EQ(x.dtype(), torch::kFloat16);
  EXPECT_EQ(x.element_size(), 2);
  EXPECT_FLOAT_EQ(x[1].item<float>(), 1000.5f);  // the nearest half
  at::Half h = x[0].item<at::Half>();
  EXPECT_FLOAT_EQ(static_cast<float>(h), 0.0999755859375f);
  EXPECT_EQ((x * 2).scalar_type(), torch::kHalf);
  EXPECT_EQ((x + x.to(torch::kBFloat16)).scalar_type(), torch::kFloat);
  torch::Tensor b = x.to(torch::kBFloat16);
  EXPECT_FLOAT_EQ(b[1].item<c10::BFloat16>(), 1000.0f);  // bfloat16 keeps 8 bits
  torch::Tensor c =
      torch::tensor({100, -100, 27}, torch::TensorOptions(torch::kChar).device(device()));
  EXPECT_EQ(c.scalar_type(), torch::kChar);
  EXPECT_EQ((c + c)[0].item<int8_t>(), -56);  // wraps, as int8 arithmetic does in libtorch
  EXPECT_EQ(c.sum().item<int64_t>(), 27);
  EXPECT_EQ(c.sum().scalar_type(), torch::kLong);
  torch::Tensor cpu_half = x.to(torch::kCPU).contiguous();
  EXPECT_EQ(cpu_half.data_ptr<at::Half>()[2], at::Half(-3.0f));
  EXPECT_TRUE(torch::allclose(torch::softmax(x, 0).to(torch::kFloat),
                              torch::softmax(x.to(torch::kFloat), 0), 1e-3, 1e-3));
}

INSTANTIATE_TEST_SUITE_P(Devices, TorchCompat, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
