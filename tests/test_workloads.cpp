// lt-train's own models. --model charlm (tools/charlm.h): the corpus reader (which files, the
// vocabulary, the unigram entropy), the model's causality on cpu and lazy (a token changes the
// logits of its own and later positions only), and a short training run whose loss falls below
// the unigram entropy of its text. --model resnet (tools/models.h): shapes, lazy against eager,
// and a few training steps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "charlm.h"
#include "models.h"

namespace {

namespace fs = std::filesystem;
using lt::Tensor;

// A fresh directory of text files for one test.
fs::path text_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("lt_charlm_" + name + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

TEST(CharLm, CorpusReadsTextFilesInNameOrderAndSkipsIndexes) {
  fs::path d = text_dir("corpus");
  std::string a(3000, 'a'), b;
  for (int i = 0; i < 1000; ++i) b += "ab\n%";
  write(d / "zeta", a);
  write(d / "alpha", b);
  write(d / "alpha.dat", std::string(100, 'z'));  // strfile's index: skipped
  fs::create_symlink("alpha", d / "alpha.u8");    // Debian's .u8 links: skipped
  charlm::Corpus c = charlm::read_corpus(d.string());
  EXPECT_EQ(c.files, 2);
  ASSERT_EQ(c.tokens.size(), b.size() + a.size());
  EXPECT_EQ(c.vocab, (std::vector<unsigned char>{'\n', '%', 'a', 'b'}));
  EXPECT_EQ(c.vocab[static_cast<size_t>(c.tokens[0])], 'a');  // "alpha" first
  EXPECT_EQ(c.vocab[static_cast<size_t>(c.tokens[2])], '\n');
  EXPECT_EQ(c.vocab[static_cast<size_t>(c.tokens.back())], 'a');
  // Frequencies 4000 a, 1000 each of b, \n, %: H = -sum p ln p.
  const double n = 7000, h = -(4000 / n * std::log(4000 / n) + 3 * (1000 / n) * std::log(1000 / n));
  EXPECT_NEAR(c.unigram_nats, h, 1e-12);

  EXPECT_THROW(charlm::read_corpus((d / "missing").string()), lt::Error);
  fs::path small = text_dir("small");
  write(small / "one", "too little text");
  EXPECT_THROW(charlm::read_corpus(small.string()), lt::Error);
}

class CharLmDevices : public ::testing::TestWithParam<std::string> {};

// Changing the token at position 5 leaves the logits of positions 0..4 unchanged and changes
// those from 5 on: both the self-attention and the memory attention are causal.
TEST_P(CharLmDevices, LogitsDependOnlyOnEarlierTokens) {
  const lt::Device dev(GetParam());
  lt::manual_seed(4);
  charlm::CharLm m(10, 12, 16, 2, 2);
  m->to(dev);
  m->eval();
  std::vector<int64_t> t = {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2};
  Tensor a = m(lt::tensor(t, {1, 12}).to(dev)).cpu();
  t[5] = 9;
  Tensor b = m(lt::tensor(t, {1, 12}).to(dev)).cpu();
  ASSERT_EQ(a.sizes().vec(), (std::vector<int64_t>{1, 12, 10}));
  Tensor diff = (a - b).abs().amax(-1).reshape({12});
  std::vector<float> d = diff.to_vector<float>();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(d[static_cast<size_t>(i)], 0.0f) << "position " << i;
  for (int i = 5; i < 12; ++i) EXPECT_GT(d[static_cast<size_t>(i)], 0.0f) << "position " << i;
  // Shorter sequences use the leading part of the positions and the mask.
  EXPECT_EQ(m(lt::tensor(std::vector<int64_t>{1, 2, 3}, {1, 3}).to(dev)).sizes().vec(),
            (std::vector<int64_t>{1, 3, 10}));
}

INSTANTIATE_TEST_SUITE_P(Devices, CharLmDevices, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

// A text whose next character is mostly predictable: a small model gets below the unigram
// entropy in 60 steps on the lazy device, and the run reports it.
TEST(CharLm, ShortTrainingFallsBelowTheUnigramEntropy) {
  fs::path d = text_dir("train");
  std::string text;
  uint32_t s = 1;
  for (int i = 0; i < 3000; ++i) {
    s = s * 1103515245u + 12345u;
    text += "the " + std::string(1, static_cast<char>('a' + (s >> 16) % 4)) + "ox ";
  }
  write(d / "text", text);
  charlm::Config c;
  c.data_dir = d.string();
  c.batch_size = 8, c.seq_len = 16, c.d_model = 16, c.nhead = 2, c.layers = 1;
  c.max_steps = 60, c.quiet = true;
  std::vector<double> losses;
  ::testing::internal::CaptureStdout();
  const int rc = charlm::train(c, &losses);
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(rc, 0) << out;
  ASSERT_EQ(losses.size(), 60u);
  const double h = charlm::read_corpus(d.string()).unigram_nats;
  double last = 0;
  for (size_t i = 40; i < 60; ++i) last += losses[i] / 20;
  EXPECT_LT(last, h) << out;
  EXPECT_NE(out.find("fell below the unigram entropy at step"), std::string::npos) << out;
  EXPECT_NE(out.find("sample: "), std::string::npos) << out;
}

// The ResNet: [N, 1, 28, 28] -> [N, 10]; the lazy device computes what eager does, in training
// (batch statistics, running stats updated) and in eval mode; Adam steps fit a fixed batch.
TEST(Resnet, LazyMatchesEagerAndTrains) {
  lt::manual_seed(6);
  lt::nn::Sequential cpu_net = models::resnet(8);
  lt::manual_seed(6);
  lt::nn::Sequential lazy_net = models::resnet(8);
  lazy_net->to(lt::Device("lazy"));
  Tensor x = lt::rand({4, 1, 28, 28}), y = lt::tensor(std::vector<int64_t>{0, 3, 3, 9}, {4});
  Tensor a = cpu_net->forward(x), b = lazy_net->forward(x.to(lt::Device("lazy")));
  ASSERT_EQ(a.sizes().vec(), (std::vector<int64_t>{4, 10}));
  // float32 through 7 convolutions and batch norms: sums in other orders.
  EXPECT_TRUE(b.cpu().allclose(a, 1e-4, 1e-4));
  auto stats = [](lt::nn::Sequential& n) { return n->named_buffers()["1.running_mean"].cpu(); };
  EXPECT_TRUE(stats(lazy_net).allclose(stats(cpu_net), 1e-5, 1e-6));
  EXPECT_GT(stats(cpu_net).abs().max().item<float>(), 0.0f);  // moved from zero
  cpu_net->eval();
  lazy_net->eval();
  EXPECT_TRUE(
      lazy_net->forward(x.to(lt::Device("lazy"))).cpu().allclose(cpu_net->forward(x), 1e-4, 1e-4));
  lazy_net->train();
  lt::optim::Adam opt(lazy_net->parameters(), lt::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  for (int step = 0; step < 8; ++step) {
    opt.zero_grad();
    Tensor loss =
        lt::cross_entropy(lazy_net->forward(x.to(lt::Device("lazy"))), y.to(lt::Device("lazy")));
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, first * 0.7) << first << " -> " << last;
}

}  // namespace
