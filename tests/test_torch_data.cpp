// torch::data as libtorch programs spell it, through <torch/torch.h>: user datasets derived from
// Dataset<Self>, map() with transforms (Lambda, Normalize, Stack), the samplers, DataLoaderOptions
// and make_data_loader iterated with range-for, TensorDataset, and the MNIST reader on Debian's
// Fashion-MNIST files (an MNIST-format directory).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace {

// Example i is data [2] = {i, 10 i} and target i % 3.
struct Counting : torch::data::datasets::Dataset<Counting> {
  explicit Counting(size_t n) : n(n) {}
  torch::data::Example<> get(size_t i) override {
    const auto v = static_cast<float>(i);
    return {torch::tensor({v, 10 * v}), torch::tensor(static_cast<int64_t>(i % 3))};
  }
  torch::optional<size_t> size() const override { return n; }
  size_t n;
};

std::vector<float> fv(const torch::Tensor& t) { return t.to(torch::kFloat32).to_vector<float>(); }

std::string fashion_dir() {
  const char* d = std::getenv("LT_FASHION_MNIST_DIR");
  return d ? d : "/usr/share/datasets/fashion-mnist";
}

TEST(TorchData, UserDatasetStackedBySequentialLoader) {
  auto ds = Counting(10).map(torch::data::transforms::Stack<>());
  EXPECT_EQ(ds.size().value(), 10u);
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(ds), torch::data::DataLoaderOptions().batch_size(4));
  std::vector<int64_t> sizes;
  std::vector<float> firsts;
  for (int epoch = 0; epoch < 2; ++epoch) {
    sizes.clear();
    firsts.clear();
    for (auto& batch : *loader) {
      EXPECT_EQ(batch.data.dim(), 2);
      EXPECT_EQ(batch.target.dtype(), torch::kInt64);
      sizes.push_back(batch.data.size(0));
      firsts.push_back(batch.data[0][0].item<float>());
    }
    EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2})) << "epoch " << epoch;
    EXPECT_EQ(firsts, (std::vector<float>{0, 4, 8}));
  }
  // drop_last drops the short batch; a batch size as a plain number works too.
  auto dropping = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      Counting(10).map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions(4).drop_last(true));
  int n = 0;
  for (auto& b : *dropping) n += static_cast<int>(b.data.size(0));
  EXPECT_EQ(n, 8);
  auto by_number = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      Counting(5).map(torch::data::transforms::Stack<>()), 5);
  for (auto& b : *by_number) EXPECT_EQ(fv(b.target), (std::vector<float>{0, 1, 2, 0, 1}));
}

TEST(TorchData, RandomSamplerIsAPermutationFixedBySeed) {
  auto epoch_order = [](torch::data::samplers::RandomSampler& s) {
    std::vector<size_t> all;
    s.reset();
    while (auto b = s.next(3)) all.insert(all.end(), b->begin(), b->end());
    return all;
  };
  torch::manual_seed(5);
  torch::data::samplers::RandomSampler a(20);
  std::vector<size_t> e1 = epoch_order(a), e2 = epoch_order(a);
  std::vector<size_t> sorted = e1;
  std::sort(sorted.begin(), sorted.end());
  std::vector<size_t> iota(20);
  std::iota(iota.begin(), iota.end(), size_t{0});
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(e1, e2);  // a new order each epoch
  torch::manual_seed(5);
  torch::data::samplers::RandomSampler b(20);
  EXPECT_EQ(epoch_order(b), e1);  // the seed fixes it
  // The default loader shuffles: every example comes once per epoch.
  auto loader = torch::data::make_data_loader(Counting(7).map(torch::data::transforms::Stack<>()),
                                              torch::data::DataLoaderOptions().batch_size(2));
  std::multiset<float> seen;
  for (auto& batch : *loader)
    for (float v : fv(batch.data.select(1, 0))) seen.insert(v);
  EXPECT_EQ(seen, (std::multiset<float>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(TorchData, DistributedSamplersSplitTheData) {
  std::multiset<size_t> all;
  for (size_t rank = 0; rank < 3; ++rank) {
    torch::data::samplers::DistributedRandomSampler s(10, 3, rank);
    s.set_epoch(2);
    s.reset();
    size_t mine = 0;
    while (auto b = s.next(2)) {
      all.insert(b->begin(), b->end());
      mine += b->size();
    }
    EXPECT_EQ(mine, 4u);  // ceil(10 / 3), padded by wrapping
  }
  EXPECT_EQ(all.size(), 12u);
  for (size_t i = 0; i < 10; ++i) EXPECT_GE(all.count(i), 1u) << i;
  EXPECT_THROW(torch::data::samplers::DistributedSequentialSampler(10, 2, 2), c10::Error);
}

TEST(TorchData, TransformsLambdaNormalizeAndTensorDataset) {
  using torch::data::Example;
  auto doubled = Counting(3)
                     .map(torch::data::transforms::Lambda<Example<>>([](Example<> e) {
                       e.data = e.data * 2;
                       return e;
                     }))
                     .map(torch::data::transforms::Normalize<>(1.0, 2.0))
                     .map(torch::data::transforms::Stack<>());
  auto batch = doubled.get_batch(std::vector<size_t>{2});
  // (2 * {2, 20} - 1) / 2; Normalize's [1, 1, 1] mean broadcasts the [2] row to [1, 1, 2].
  EXPECT_EQ(fv(batch.data.reshape({-1})), (std::vector<float>{1.5f, 19.5f}));
  // Per-channel values over [C, H, W] data.
  torch::data::transforms::Normalize<> per_channel({0.0, 1.0}, {1.0, 0.5});
  torch::Tensor img = torch::ones({2, 1, 2});
  EXPECT_EQ(fv(per_channel(img).reshape({-1})), (std::vector<float>{1, 1, 0, 0}));
  EXPECT_THROW(torch::data::transforms::Normalize<>(std::vector<double>{}, std::vector<double>{}),
               c10::Error);

  torch::data::datasets::TensorDataset td(torch::arange(12).reshape({4, 3}));
  auto stacked = td.map(torch::data::transforms::Stack<torch::data::TensorExample>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(stacked), 3);
  std::vector<int64_t> rows;
  for (auto& b : *loader) rows.push_back(b.data.size(0));
  EXPECT_EQ(rows, (std::vector<int64_t>{3, 1}));
  EXPECT_THROW(td.get(4), c10::Error);
}

TEST(TorchData, MnistReadsAnMnistFormatDirectory) {
  torch::data::datasets::MNIST test(fashion_dir(), torch::data::datasets::MNIST::Mode::kTest);
  EXPECT_FALSE(test.is_train());
  ASSERT_EQ(test.size().value(), 10000u);
  EXPECT_EQ(test.images().sizes(), std::vector<int64_t>({10000, 1, 28, 28}));
  EXPECT_EQ(test.targets().dtype(), torch::kInt64);
  auto e = test.get(0);
  EXPECT_EQ(e.data.sizes(), std::vector<int64_t>({1, 28, 28}));
  EXPECT_GE(e.data.min().item<float>(), 0.0f);
  EXPECT_LE(e.data.max().item<float>(), 1.0f);
  const int64_t label = e.target.item<int64_t>();
  EXPECT_TRUE(label >= 0 && label < 10) << label;
  // The libtorch example's pipeline, to a batch on the lazy device.
  auto ds = torch::data::datasets::MNIST(fashion_dir(), torch::data::datasets::MNIST::Mode::kTest)
                .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader(std::move(ds), 256);
  auto it = loader->begin();
  torch::Tensor data = it->data.to(torch::Device(torch::kLazy));
  EXPECT_EQ(data.sizes(), std::vector<int64_t>({256, 1, 28, 28}));
  EXPECT_EQ(it->target.sizes(), std::vector<int64_t>({256}));
  EXPECT_NEAR(data.mean().item<float>(), 0.0f, 0.2f);
  try {
    torch::data::datasets::MNIST missing("/nonexistent-dir");
    ADD_FAILURE() << "no error for a missing directory";
  } catch (const c10::Error& err) {
    EXPECT_NE(std::string(err.what()).find("train-images-idx3-ubyte"), std::string::npos)
        << err.what();
  }
}

}  // namespace
