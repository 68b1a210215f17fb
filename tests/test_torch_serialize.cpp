// torch::save / torch::load as libtorch programs call them: modules (holders and module objects),
// optimizers (a run resumed from a checkpoint continues exactly as the uninterrupted run) and
// tensors, on cpu and on lazy, and the errors that leave everything unchanged.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::vector<float> fv(const torch::Tensor& t) {
  return t.to(torch::kCPU).to(torch::kFloat32).contiguous().to_vector<float>();
}

class TorchSerialize : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lt_torch_serialize_" + std::to_string(::getpid()) + "_" + GetParam());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  torch::Device dev() const { return torch::Device(GetParam()); }
  fs::path dir_;
};

struct Small : torch::nn::Module {
  Small() {
    fc1 = register_module("fc1", torch::nn::Linear(3, 4));
    fc2 = register_module("fc2", torch::nn::Linear(4, 2));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::tanh(fc1(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

// Trains `steps` steps of `make_opt`'s optimizer from the module's current weights.
template <typename Opt>
void train(Small& m, Opt& opt, int steps, torch::Device d) {
  for (int s = 0; s < steps; ++s) {
    torch::manual_seed(100 + s);
    torch::Tensor x = torch::randn({8, 3}).to(d), y = torch::randn({8, 2}).to(d);
    opt.zero_grad();
    torch::mse_loss(m.forward(x), y).backward();
    opt.step();
  }
}

TEST_P(TorchSerialize, ModulesRoundTrip) {
  torch::manual_seed(1);
  torch::nn::Sequential a(torch::nn::Linear(3, 4), torch::nn::BatchNorm1d(4));
  a->to(dev());
  a->forward(torch::randn({5, 3}).to(dev()));  // running stats move
  torch::save(a, path("seq.pt"));
  torch::manual_seed(2);
  torch::nn::Sequential b(torch::nn::Linear(3, 4), torch::nn::BatchNorm1d(4));
  torch::load(b, path("seq.pt"));
  auto pa = a->named_parameters(), pb = b->named_parameters();
  for (const auto& item : pa) EXPECT_EQ(fv(item.value()), fv(pb[item.key()])) << item.key();
  for (const auto& item : a->named_buffers())
    EXPECT_EQ(fv(item.value()), fv(b->named_buffers()[item.key()])) << item.key();

  Small s1, s2;
  torch::save(s1, path("small.pt"));
  torch::load(s2, path("small.pt"));
  EXPECT_EQ(fv(s1.fc2->weight), fv(s2.fc2->weight));
  // A mismatched module throws and keeps its weights.
  torch::nn::Linear other(3, 5);
  const std::vector<float> before = fv(other->weight);
  EXPECT_THROW(torch::load(other, path("small.pt")), c10::Error);
  EXPECT_EQ(fv(other->weight), before);
}

TEST_P(TorchSerialize, OptimizerCheckpointResumesExactly) {
  for (int which = 0; which < 2; ++which) {
    SCOPED_TRACE(which == 0 ? "SGD with momentum" : "Adam");
    auto run = [&](bool checkpoint) {
      torch::manual_seed(7);
      Small m;
      m.to(dev());
      std::unique_ptr<torch::optim::Optimizer> opt;
      if (which == 0)
        opt = std::make_unique<torch::optim::SGD>(m.parameters(),
                                                  torch::optim::SGDOptions(0.05).momentum(0.9));
      else
        opt = std::make_unique<torch::optim::Adam>(m.parameters(), torch::optim::AdamOptions(0.01));
      train(m, *opt, 3, dev());
      if (!checkpoint) {
        train(m, *opt, 3, dev());
        return fv(m.fc1->weight);
      }
      torch::save(m, path("m.pt"));
      torch::save(*opt, path("opt.pt"));
      // A fresh process would build everything again, then load.
      torch::manual_seed(99);
      Small m2;
      m2.to(dev());
      std::unique_ptr<torch::optim::Optimizer> opt2;
      if (which == 0)
        opt2 = std::make_unique<torch::optim::SGD>(m2.parameters(),
                                                   torch::optim::SGDOptions(0.5).momentum(0.9));
      else
        opt2 =
            std::make_unique<torch::optim::Adam>(m2.parameters(), torch::optim::AdamOptions(0.5));
      torch::load(m2, path("m.pt"));
      torch::load(*opt2, path("opt.pt"));
      EXPECT_DOUBLE_EQ(opt2->param_groups()[0].options().get_lr(), which == 0 ? 0.05 : 0.01);
      train(m2, *opt2, 3, dev());
      return fv(m2.fc1->weight);
    };
    const std::vector<float> straight = run(false), resumed = run(true);
    ASSERT_EQ(straight.size(), resumed.size());
    for (size_t i = 0; i < straight.size(); ++i) EXPECT_NEAR(resumed[i], straight[i], 1e-6) << i;
  }
}

TEST_P(TorchSerialize, OptimizerStateIsCheckedBeforeLoading) {
  Small m;
  torch::optim::Adam adam(m.parameters());
  torch::save(adam, path("adam.pt"));
  torch::optim::SGD sgd(m.parameters(), 0.1);
  EXPECT_THROW(torch::load(sgd, path("adam.pt")), c10::Error);  // Adam's state names
  torch::nn::Linear lone(3, 4);
  torch::optim::Adam fewer(lone->parameters());
  const double lr = fewer.param_groups()[0].options().get_lr();
  EXPECT_THROW(torch::load(fewer, path("adam.pt")), c10::Error);  // more parameters
  EXPECT_DOUBLE_EQ(fewer.param_groups()[0].options().get_lr(), lr);
}

TEST_P(TorchSerialize, TensorsRoundTrip) {
  torch::Tensor t = torch::arange(6, torch::kFloat64).reshape({2, 3}).to(dev());
  torch::save(t.t(), path("t.pt"));  // non-contiguous
  torch::Tensor back;
  torch::load(back, path("t.pt"));
  EXPECT_EQ(back.device(), torch::Device(torch::kCPU));
  EXPECT_EQ(back.dtype(), torch::kFloat64);
  EXPECT_EQ(fv(back), fv(t.t()));
  std::vector<torch::Tensor> list{torch::ones({2}).to(dev()), torch::tensor({7, 8, 9})};
  torch::save(list, path("list.pt"));
  std::vector<torch::Tensor> list_back;
  torch::load(list_back, path("list.pt"));
  ASSERT_EQ(list_back.size(), 2u);
  EXPECT_EQ(list_back[1].dtype(), torch::kInt64);
  EXPECT_EQ(fv(list_back[1]), (std::vector<float>{7, 8, 9}));
  EXPECT_THROW(torch::load(back, path("list.pt")), c10::Error);
  EXPECT_THROW(torch::load(back, path("missing.pt")), c10::Error);
}

INSTANTIATE_TEST_SUITE_P(Devices, TorchSerialize, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
