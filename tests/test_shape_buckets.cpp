// Shape bucketing (LT_SHAPE_BUCKETS, src/lazy/buckets.h): a graph whose size changed runs its
// bucket's static code on zero-padded inputs, and padding never changes a result. Every result
// is checked against the eager device, with rtol 1e-5 / atol 1e-6 where a sum or a matmul may add
// in another order (float32; the padded entries add exact zeros), else exactly.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "lazy_vs_eager.h"

namespace {

const lt::Device kLazy("lazy");

int64_t counter(const char* name) { return lt::metrics::counter(name); }

class ShapeBuckets : public lt_test::MlirFromScratch {
 protected:
  void SetUp() override {
    MlirFromScratch::SetUp();
    setenv("LT_SHAPE_BUCKETS", "pow2", 1);
  }
  void TearDown() override {
    unsetenv("LT_SHAPE_BUCKETS");
    MlirFromScratch::TearDown();
  }
};

TEST_F(ShapeBuckets, SizesOfOneBucketShareOneCompile) {
  // Sizes 5, 6, 7 and 8 pad to 8, 12 and 16 to 16: after the first graph (static code at its
  // own size), one compile per bucket.
  auto f = [](const std::vector<lt::Tensor>& v) {
    return std::vector<lt::Tensor>{(v[0] * 2 + 1).relu(), v[0].sum(1)};
  };
  for (int64_t n : {5, 6, 7, 8, 12, 16, 7})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 3})}, 1e-5, 1e-6, "relu");
  EXPECT_EQ(counter("UncachedCompile"), 3) << lt::metrics::report();
  EXPECT_EQ(counter("BucketedGraphs"), 5);  // the last 7 is a cache hit
  EXPECT_EQ(counter("DynamicCompile"), 0);
  EXPECT_EQ(counter("BucketRefused"), 0);
}

TEST_F(ShapeBuckets, ReductionsAndContractionsOverThePaddedDimReadItMasked) {
  // log of zero padding is -inf, and -inf - -inf is NaN: every read across the padded dim must
  // be masked for these to match. Sum, mean, prod, amax, amin, argmax, softmax, logsumexp, any,
  // all, x^T x (contracts the padded dim), and an integer division by a padded divisor.
  auto f = [](const std::vector<lt::Tensor>& v) {
    lt::Tensor l = v[0].abs().add(0.5).log();
    lt::Tensor z = l - l;  // NaN where l is infinite
    return std::vector<lt::Tensor>{l.sum(0),          (l + z).mean(0), l.exp().prod(0),
                                   l.amax(0),         l.amin(0),       l.argmax(0),
                                   lt::softmax(l, 0), l.logsumexp(0),  (l > 0).any(0),
                                   (l > -5).all(0),   l.t().matmul(l), lt::fmod(v[1], v[2]).sum(0)};
  };
  for (int64_t n : {5, 7, 3, 13, 6}) {
    lt::Tensor a = lt::randn({n, 4}), i = lt::randint(-50, 50, {n, 2});
    lt::Tensor d = lt::randint(1, 7, {n, 2});
    lt_test::lazy_matches_eager(f, {a, i, d}, 1e-5, 1e-5, "size " + std::to_string(n));
  }
  EXPECT_GE(counter("BucketedGraphs"), 4) << lt::metrics::report();
  EXPECT_EQ(counter("BucketRefused"), 0);
}

TEST_F(ShapeBuckets, AReshapeThatMergesThePaddedDimKeepsTrackOfItsRealEntries) {
  // [2, S, 3] -> [2S, 3]: the padded dim is not the outermost, so the real rows of the merged
  // dim are 0..S-1 and B..B+S-1. Reductions and a contraction over it, an output cut from it, and
  // the split back to [2, S, 3].
  auto f = [](const std::vector<lt::Tensor>& v) {
    const int64_t n = v[0].size(1);
    lt::Tensor y = v[0].reshape({2 * n, 3}).exp();
    return std::vector<lt::Tensor>{y * 2, y.sum(0), y.amin(0), y.t().matmul(y),
                                   y.reshape({2, n, 3}).sum(1)};
  };
  for (int64_t n : {5, 7, 3, 6})
    lt_test::lazy_matches_eager(f, {lt::randn({2, n, 3})}, 1e-5, 1e-5, std::to_string(n));
  EXPECT_EQ(counter("BucketedGraphs"), 3) << lt::metrics::report();
  EXPECT_EQ(counter("BucketRefused"), 0);
}

TEST_F(ShapeBuckets, TrainingWithVariableBatchesMatchesEager) {
  // An MLP with dropout trained with Adam on both devices from equal weights and seeds; the batch
  // changes every step. Its dropout masks are random numbers over the padded batch: the real
  // rows' numbers are the unpadded ones' (element i depends on i alone).
  lt::manual_seed(7);
  auto make = [] {
    return lt::nn::Sequential{lt::nn::Linear(20, 16), lt::nn::ReLU(), lt::nn::Dropout(0.25),
                              lt::nn::Linear(16, 5)};
  };
  lt::nn::Sequential cpu = make(), lazy = make();
  {
    lt::NoGradGuard g;
    auto pc = cpu->parameters(), pl = lazy->parameters();
    for (size_t i = 0; i < pc.size(); ++i) pl[i].copy_(pc[i]);
  }
  lazy->to(kLazy);
  lt::optim::Adam oc(cpu->parameters(), lt::optim::AdamOptions(0.01)),
      ol(lazy->parameters(), lt::optim::AdamOptions(0.01));
  int step = 0;
  for (int64_t b : {16, 24, 9, 31, 40, 17, 12, 29}) {
    lt::Tensor x = lt::randn({b, 20}), y = lt::randint(0, 5, {b});
    for (bool on_lazy : {false, true}) {
      lt::manual_seed(100 + step);
      auto& m = on_lazy ? lazy : cpu;
      auto& o = on_lazy ? ol : oc;
      o.zero_grad();
      lt::Tensor loss =
          lt::cross_entropy(m->forward(on_lazy ? x.to(kLazy) : x), on_lazy ? y.to(kLazy) : y);
      loss.backward();
      o.step();
      lt::mark_step();
    }
    ++step;
    auto pc = cpu->parameters(), pl = lazy->parameters();
    for (size_t i = 0; i < pc.size(); ++i)
      ASSERT_TRUE(lt::allclose(pl[i].to("cpu"), pc[i], 1e-4, 1e-5)) << "batch " << b;
  }
  EXPECT_GE(counter("BucketedGraphs"), 5) << lt::metrics::report();
  EXPECT_EQ(counter("BucketRefused"), 0) << lt::metrics::report();
  EXPECT_EQ(counter("DynamicCompile"), 0);
}

TEST_F(ShapeBuckets, TransformerSequenceLengthsMatchEager) {
  // A TransformerEncoderLayer (eval) forward and backward over changing lengths: attention's
  // softmax and its product with V both reduce over the padded length.
  lt::manual_seed(8);
  lt::nn::TransformerEncoderLayer cpu(
      lt::nn::TransformerEncoderLayerOptions(16, 2).dim_feedforward(32));
  cpu->eval();
  lt::nn::TransformerEncoderLayer lazy(
      std::dynamic_pointer_cast<lt::nn::TransformerEncoderLayerImpl>(cpu->clone()));
  lazy->to(kLazy);
  for (int64_t s : {7, 12, 20, 9, 16, 11}) {
    lt::Tensor x = lt::randn({s, 3, 16});
    lt::Tensor xc = x.clone().requires_grad_(true), xl = x.to(kLazy).requires_grad_(true);
    lt::Tensor oc = cpu->forward(xc), ol = lazy->forward(xl);
    (oc * oc).sum().backward();
    (ol * ol).sum().backward();
    lt::mark_step();
    EXPECT_TRUE(lt::allclose(ol.to("cpu"), oc, 1e-4, 1e-5)) << "length " << s;
    EXPECT_TRUE(lt::allclose(xl.grad().to("cpu"), xc.grad(), 1e-4, 1e-4)) << "length " << s;
  }
  EXPECT_GE(counter("BucketedGraphs"), 3) << lt::metrics::report();
  EXPECT_EQ(counter("BucketRefused"), 0) << lt::metrics::report();
}

TEST_F(ShapeBuckets, AGraphThatCannotBePaddedExactlyGetsGenericCode) {
  // A slice of part of the padded dim (x[1:] - x[:-1]) and a cat along it, and a reshape that
  // transposes it: padding would move real entries, so bucketing refuses and shape-generic code
  // runs, as without buckets.
  auto f = [](const std::vector<lt::Tensor>& v) {
    const int64_t n = v[0].size(0);
    lt::Tensor d = v[0].slice(0, 1, n) - v[0].slice(0, 0, n - 1);
    return std::vector<lt::Tensor>{d, lt::cat({v[0], v[0]}, 0)};
  };
  for (int64_t n : {5, 7, 12, 9})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 3})}, 0, 0, "slices");
  // [S, 2] read as [2, S]: the real entries would land in both output dims.
  auto g = [](const std::vector<lt::Tensor>& v) {
    return std::vector<lt::Tensor>{v[0].reshape({2, v[0].size(0)}).sum(1)};
  };
  for (int64_t n : {5, 7, 12})
    lt_test::lazy_matches_eager(g, {lt::randn({n, 2})}, 1e-5, 1e-6, "transposing reshape");
  EXPECT_GE(counter("BucketRefused"), 3) << lt::metrics::report();
  EXPECT_EQ(counter("BucketedGraphs"), 0);
  EXPECT_GE(counter("DynamicCompile"), 1);
}

TEST_F(ShapeBuckets, SizesBeyondTheLastListedBucketGetGenericCode) {
  setenv("LT_SHAPE_BUCKETS", "8,16", 1);
  auto f = [](const std::vector<lt::Tensor>& v) { return std::vector<lt::Tensor>{v[0].sum(0)}; };
  for (int64_t n : {5, 7, 12, 20, 33})
    lt_test::lazy_matches_eager(f, {lt::randn({n, 3})}, 1e-5, 1e-6, "list");
  EXPECT_EQ(counter("BucketedGraphs"), 2) << lt::metrics::report();  // 7 -> 8, 12 -> 16
  EXPECT_EQ(counter("BucketRefused"), 2);                            // 20 and 33
  EXPECT_GE(counter("DynamicCacheHit"), 1);
  EXPECT_GE(counter("DynamicCompile"), 1);
}

}  // namespace
