// libtorch's indexing (lt/indexing.h): index / index_put_ with integers, Slice, None, Ellipsis,
// bools, integer and bool tensors; t[i][j] = v; masked_fill; scatter; nonzero. Each case runs on
// the cpu and on the lazy device with each backend. Expected values are libtorch 1.13's results
// for the same calls, worked out by hand on small tensors; random cases compare lazy with eager.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <random>
#include <string>
#include <vector>

#include "gradcheck.h"

namespace {

using namespace lt::indexing;
using lt::Tensor;

class Indexing : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    before_ = lt::lazy_backend();
    if (GetParam() != "cpu") lt::set_lazy_backend(GetParam());
    lt::metrics::reset();
  }
  void TearDown() override { lt::set_lazy_backend(before_); }
  lt::Device device() const { return GetParam() == "cpu" ? lt::Device("cpu") : lt::Device("lazy"); }
  Tensor on(const Tensor& t) const { return t.to(device()); }
  static Tensor host(const Tensor& t) { return t.to("cpu"); }
  // 0, 1, ..., n-1 as float32 in the given shape, on the device.
  Tensor iota(std::vector<int64_t> shape) const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return on(lt::arange(n, lt::TensorOptions().dtype(lt::kFloat32)).reshape(shape));
  }
  static void expect_values(const Tensor& got, const Tensor& want) {
    Tensor g = host(got);
    ASSERT_EQ(g.sizes(), want.sizes());
    EXPECT_TRUE(lt::equal(g, want)) << "got\n" << g << "\nwant\n" << want;
  }
  std::string before_;
};

TEST_P(Indexing, BasicIndicesAreViewsWithLibtorchsShapes) {
  Tensor x = iota({2, 3, 4});
  expect_values(x.index({1}), lt::arange(12, 24).reshape({3, 4}).to(lt::kFloat32));
  EXPECT_EQ(x.index({Slice(), 0}).sizes(), std::vector<int64_t>({2, 4}));
  expect_values(x.index({Slice(), 0, 1}), lt::tensor({1.f, 13.f}));
  expect_values(x.index({Ellipsis, 1}), lt::tensor({{1.f, 5.f, 9.f}, {13.f, 17.f, 21.f}}));
  expect_values(x.index({"...", 2, 3}), lt::tensor({11.f, 23.f}));
  EXPECT_EQ(x.index({None, Slice(1, None), Slice(None, None, 2)}).sizes(),
            std::vector<int64_t>({1, 1, 2, 4}));
  expect_values(x.index({0, Slice(None, None, 2), Slice(1, 3)}),
                lt::tensor({{1.f, 2.f}, {9.f, 10.f}}));
  expect_values(x.index({-1, Slice(-2, None), -1}), lt::tensor({19.f, 23.f}));
  EXPECT_EQ(x.index({Ellipsis, None}).sizes(), std::vector<int64_t>({2, 3, 4, 1}));
  EXPECT_EQ(x.index({true}).sizes(), std::vector<int64_t>({1, 2, 3, 4}));
  EXPECT_EQ(x.index({false}).sizes(), std::vector<int64_t>({0, 2, 3, 4}));
  EXPECT_EQ(x.index({Slice(5, 10)}).sizes(),
            std::vector<int64_t>({0, 3, 4}));  // clamped, as Python
  expect_values(x[1][2], lt::tensor({20.f, 21.f, 22.f, 23.f}));
  EXPECT_EQ(x[0][1][3].item<float>(), 7.f);
  Tensor s = on(lt::tensor(2.5));
  EXPECT_EQ(s.index({None}).sizes(), std::vector<int64_t>({1}));
  EXPECT_EQ(s.index({Ellipsis}).item<float>(), 2.5f);
}

TEST_P(Indexing, WritesThroughBasicIndicesUpdateTheBase) {
  Tensor y = iota({3, 4});
  y.index({Slice(), 1}).fill_(-1);
  y.index_put_({0, Slice(2, None)}, 7);
  y[2][0] = 5;
  y[1] = on(lt::tensor({10.f, 11.f, 12.f, 13.f}));
  y.index({Ellipsis, -1}) = on(lt::tensor({1.f, 2.f, 3.f}));
  y.index_put_({2, Slice(1, 3)}, on(lt::tensor({0.5f})), /*accumulate=*/true);
  expect_values(
      y, lt::tensor({{0.f, -1.f, 7.f, 1.f}, {10.f, 11.f, 12.f, 2.f}, {5.f, -0.5f, 10.5f, 3.f}}));
  // A named tensor is rebound, not written: libtorch's value semantics of the handle.
  Tensor row = y[0];
  row = on(lt::zeros({4}));
  EXPECT_EQ(y[0][2].item<float>(), 7.f);
}

TEST_P(Indexing, IntegerTensorIndicesGatherAsLibtorch) {
  Tensor x = iota({3, 4});
  expect_values(x.index({on(lt::tensor({2, 0}))}),
                lt::tensor({{8.f, 9.f, 10.f, 11.f}, {0.f, 1.f, 2.f, 3.f}}));
  expect_values(x.index({Slice(), on(lt::tensor({-1, 1}))}),
                lt::tensor({{3.f, 1.f}, {7.f, 5.f}, {11.f, 9.f}}));
  expect_values(x.index({on(lt::tensor({0, 2})), on(lt::tensor({1, 3}))}), lt::tensor({1.f, 11.f}));
  expect_values(x.index({on(lt::tensor({{0}, {2}})), on(lt::tensor({1, 3}))}),  // broadcast
                lt::tensor({{1.f, 3.f}, {9.f, 11.f}}));
  expect_values(x.index({on(lt::tensor(1))}), lt::tensor({4.f, 5.f, 6.f, 7.f}));  // 0-d index
  expect_values(x[on(lt::tensor(std::vector<int32_t>{2}, {1}))],
                lt::tensor({{8.f, 9.f, 10.f, 11.f}}));
  Tensor x3 = iota({2, 3, 4});
  // Adjacent tensor indices keep their place; separated ones go first.
  expect_values(x3.index({Slice(), on(lt::tensor({0, 2})), on(lt::tensor({1, 1}))}),
                lt::tensor({{1.f, 9.f}, {13.f, 21.f}}));
  expect_values(x3.index({on(lt::tensor({0, 1})), Slice(), on(lt::tensor({3, 0}))}),
                lt::tensor({{3.f, 7.f, 11.f}, {12.f, 16.f, 20.f}}));
  // An integer is a select, as libtorch's C++ applies it (numpy would move the tensor dim first).
  EXPECT_EQ(x3.index({0, Slice(), on(lt::tensor({1, 2}))}).sizes(), std::vector<int64_t>({3, 2}));
  EXPECT_EQ(x3.index({Slice(), None, on(lt::tensor({{0, 1}}))}).sizes(),
            std::vector<int64_t>({2, 1, 1, 2, 4}));
  Tensor e = on(lt::zeros({0, 3}));
  EXPECT_EQ(e.index({Slice(), on(lt::tensor({1}))}).sizes(), std::vector<int64_t>({0, 1}));
  EXPECT_EQ(x.index({on(lt::tensor(std::vector<int64_t>{}, {0}))}).sizes(),
            std::vector<int64_t>({0, 4}));
}

TEST_P(Indexing, BoolMasksSelectAsLibtorch) {
  Tensor x = iota({3, 4});
  expect_values(x.index({x.gt(8)}), lt::tensor({9.f, 10.f, 11.f}));
  expect_values(x.index({on(lt::tensor({true, false, true}))}),
                lt::tensor({{0.f, 1.f, 2.f, 3.f}, {8.f, 9.f, 10.f, 11.f}}));
  expect_values(x.index({Slice(), on(lt::tensor({false, true, false, true}))}),
                lt::tensor({{1.f, 3.f}, {5.f, 7.f}, {9.f, 11.f}}));
  EXPECT_EQ(x.index({on(lt::tensor(true))}).sizes(), std::vector<int64_t>({1, 3, 4}));
  EXPECT_EQ(x.index({on(lt::tensor(false))}).sizes(), std::vector<int64_t>({0, 3, 4}));
  expect_values(x.index({on(lt::tensor({{1, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 1}})).to(lt::kBool)}),
                lt::tensor({0.f, 11.f}));
  expect_values(on(lt::tensor({{0, 1}, {2, 0}})).nonzero(), lt::tensor({{0, 1}, {1, 0}}));
  // A mask read has a data-dependent shape: the lazy device evaluates the mask, and says so.
  EXPECT_EQ(lt::metrics::counter("DataDependentSync"), GetParam() == "cpu" ? 0 : 7);
}

TEST_P(Indexing, IndexPutWritesAsLibtorch) {
  Tensor y = on(lt::zeros({3, 4}));
  y.index_put_({on(lt::tensor({0, 2})), on(lt::tensor({1, 3}))}, on(lt::tensor({5.f, 6.f})));
  y.index_put_({on(lt::tensor({1, 1, 1}))}, on(lt::ones({4})), /*accumulate=*/true);  // adds up
  y.index_put_({Slice(), on(lt::tensor({0, 0}))},
               on(lt::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}})));
  expect_values(y, lt::tensor({{2.f, 5.f, 0.f, 0.f}, {4.f, 3.f, 3.f, 3.f}, {6.f, 0.f, 0.f, 6.f}}));
  Tensor x3 = on(lt::zeros({2, 3, 2}));
  x3.index_put_({on(lt::tensor({0, 1})), Slice(), on(lt::tensor({1, 0}))},
                on(lt::tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})));
  expect_values(
      x3, lt::tensor({{{0.f, 1.f}, {0.f, 2.f}, {0.f, 3.f}}, {{4.f, 0.f}, {5.f, 0.f}, {6.f, 0.f}}}));
  Tensor z = on(lt::zeros({2, 3, 2}));
  z.index_put_({Slice(), on(lt::tensor({2, 0})), 1},
               on(lt::tensor({7.f, 8.f})));  // adjacent, broadcast
  expect_values(
      z, lt::tensor({{{0.f, 8.f}, {0.f, 0.f}, {0.f, 7.f}}, {{0.f, 8.f}, {0.f, 0.f}, {0.f, 7.f}}}));
  Tensor i = on(lt::tensor({1, 2, 3}));
  i.index_put_({on(lt::tensor({-1}))}, 2.9);  // converted to the tensor's dtype, as libtorch
  expect_values(i, lt::tensor({1, 2, 2}));
}

TEST_P(Indexing, MaskWritesWithOneValueDoNotEvaluateTheMask) {
  Tensor y = iota({3, 4});
  y.index_put_({y.gt(6)}, 0);
  y.index_put_({on(lt::tensor({true, false, false}))}, on(lt::tensor(-1.f)), true);
  y.index_put_({Slice(), on(lt::tensor({false, true, false, false}))}, 9);
  expect_values(y, lt::tensor({{-1.f, 9.f, 1.f, 2.f}, {4.f, 9.f, 6.f, 0.f}, {0.f, 9.f, 0.f, 0.f}}));
  EXPECT_EQ(lt::metrics::counter("DataDependentSync"), 0);
  Tensor w = iota({2, 3});
  w.index_put_({w.lt(2)}, on(lt::tensor({10.f, 20.f})));  // one value per masked element
  expect_values(w, lt::tensor({{10.f, 20.f, 2.f}, {3.f, 4.f, 5.f}}));
  Tensor m = iota({2, 3});
  expect_values(m.masked_fill(m.ge(4), -2.5), lt::tensor({{0.f, 1.f, 2.f}, {3.f, -2.5f, -2.5f}}));
  m.masked_fill_(on(lt::tensor({true, false, true})), on(lt::tensor(7.f)));  // broadcast rows
  expect_values(m, lt::tensor({{7.f, 1.f, 7.f}, {7.f, 4.f, 7.f}}));
}

TEST_P(Indexing, ScatterOverwrites) {
  Tensor src = on(lt::arange(1, 11).reshape({2, 5}).to(lt::kFloat32));
  Tensor idx = on(lt::tensor({{0, 1, 2, 0}}));
  expect_values(
      on(lt::zeros({3, 5})).scatter(0, idx, src),
      lt::tensor(
          {{1.f, 0.f, 0.f, 4.f, 0.f}, {0.f, 2.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 3.f, 0.f, 0.f}}));
  expect_values(on(lt::zeros({2, 4})).scatter(1, on(lt::tensor({{1, 3}, {0, 0}})), 1.5),
                lt::tensor({{0.f, 1.5f, 0.f, 1.5f}, {1.5f, 0.f, 0.f, 0.f}}));
  expect_values(
      lt::scatter(on(lt::zeros({3})), 0, on(lt::tensor({1, 1})), on(lt::tensor({4.f, 5.f}))),
      lt::tensor({0.f, 5.f, 0.f}));  // the later write wins
}

TEST_P(Indexing, BadIndicesThrowAtTheCallAndLeaveTensorsUsable) {
  Tensor x = iota({3, 4});
  Tensor pending = x * 2;
  auto expect_error = [](auto f, const std::string& words) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one naming " << words;
    } catch (const lt::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error([&] { x.index({3}); },
               "index: index 3 is out of bounds for dimension 0 with size 3");
  expect_error([&] { x.index({0, 1, 2}); }, "too many indices for a tensor of dimension 2");
  expect_error([&] { x.index({Ellipsis, 0, Ellipsis}); }, "single Ellipsis");
  expect_error(
      [&] {
        x.index({on(lt::tensor({0, 4}))});
      },
      "index 4 is out of bounds for dimension 0 with size 3");
  expect_error([&] { x.index({on(lt::tensor({1.5f}))}); }, "must be int64, int32 or bool");
  expect_error(
      [&] {
        x.index({on(lt::tensor({true, false}))});
      },
      "the mask of shape [2] does not match");
  expect_error(
      [&] {
        x.index_put_({on(lt::tensor({0, 1}))}, on(lt::ones({3})));
      },
      "values of shape [3] cannot be broadcast to the indexed shape [2, 4]");
  expect_error([&] { x.masked_fill(x, 1.0); }, "masked_fill: expected a bool mask");
  expect_error([&] { Slice(0, 4, 0); }, "step must be greater than zero");
  expect_error([&] { x.index({"..x"}); }, "expected \"...\"");
  expect_values(pending, lt::arange(0, 24, 2).reshape({3, 4}).to(lt::kFloat32));
  expect_values(x.index({Slice(), 1}), lt::tensor({1.f, 5.f, 9.f}));
}

TEST_P(Indexing, IndicesComputedOnTheDeviceFailWhenRunNotWrong) {
  Tensor x = iota({3, 4});
  Tensor idx = on(lt::tensor({0, 1})) * 3;  // [0, 3]: 3 is out of range for dim 0
  try {                                     // eager throws at the call, lazy when the graph runs
    host(x.index({idx, on(lt::tensor({0, 1}))}));
    ADD_FAILURE() << "no error";
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of bounds"), std::string::npos) << e.what();
  }
  Tensor neg = on(lt::tensor({1, 2})) - 3;  // [-2, -1]: wrapped
  expect_values(x.index({neg}), lt::tensor({{4.f, 5.f, 6.f, 7.f}, {8.f, 9.f, 10.f, 11.f}}));
  expect_values(x.sum(), lt::tensor(66.f));
}

// Random shapes and index positions: the lazy device gives eager's values.
TEST_P(Indexing, RandomAdvancedIndicesMatchEager) {
  if (GetParam() == "cpu") GTEST_SKIP() << "compares the lazy device with cpu";
  std::mt19937 rng(11);
  auto uni = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 25; ++trial) {
    const int64_t nd = uni(1, 4);
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < nd; ++d) shape.push_back(uni(1, 5));
    lt::manual_seed(trial);
    Tensor x = lt::randn(shape, lt::TensorOptions().dtype(lt::kFloat64));
    if (trial % 3 == 0) x = x.transpose(0, nd - 1);  // non-contiguous
    std::vector<TensorIndex> ix, lix;
    const int64_t bl = uni(1, 3);
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t n = x.size(d);
      switch (uni(0, 3)) {
        case 0: {
          std::vector<int64_t> v;
          for (int64_t k = 0; k < bl; ++k) v.push_back(uni(-n, n - 1));
          Tensor t = lt::tensor(v, {bl});
          ix.emplace_back(t);
          lix.emplace_back(on(t));
        } break;
        case 1: {
          Slice s(uni(-n, n), uni(0, n) > 0 ? std::optional<int64_t>(uni(-n, n)) : std::nullopt,
                  uni(1, 2));
          ix.emplace_back(s);
          lix.emplace_back(s);
        } break;
        case 2: {
          const int64_t k = uni(-n, n - 1);
          ix.emplace_back(k);
          lix.emplace_back(k);
        } break;
        default:
          ix.emplace_back(None);
          lix.emplace_back(None);
          ix.emplace_back(Slice());
          lix.emplace_back(Slice());
      }
    }
    Tensor lx = on(x);
    Tensor want = x.index(ix), got = lx.index(lix);
    ASSERT_EQ(got.sizes(), want.sizes()) << "trial " << trial;
    EXPECT_TRUE(lt::allclose(host(got), want, 0, 0)) << "trial " << trial;
    for (bool acc : {false, true}) {
      Tensor v = lt::randn(want.sizes(), lt::TensorOptions().dtype(lt::kFloat64));
      Tensor xe = x.clone(), xl = on(x.clone());
      xe.index_put_(ix, v, acc);
      xl.index_put_(lix, on(v), acc);
      // Duplicate indices: accumulate adds in index order on both; otherwise the last write wins.
      EXPECT_TRUE(lt::allclose(host(xl), xe, 1e-12, 1e-12)) << "trial " << trial << " acc " << acc;
    }
  }
}

TEST_P(Indexing, GradientsFlowThroughIndexAndIndexPut) {
  Tensor x = on(lt::arange(12).reshape({3, 4}).to(lt::kFloat64)).requires_grad_();
  x.index({on(lt::tensor({2, 0, 2})), Slice(1, None)}).sum().backward();
  expect_values(x.grad(), lt::tensor({{0., 1., 1., 1.}, {0., 0., 0., 0.}, {0., 2., 2., 2.}}));
  Tensor v = on(lt::tensor({1.0, 2.0})).requires_grad_();
  Tensor y = on(lt::zeros({2, 3}, lt::TensorOptions().dtype(lt::kFloat64)));
  y.index_put_({Slice(), on(lt::tensor({2}))}, v.reshape({2, 1}) * 3);
  (y * on(lt::tensor({{1.0, 1.0, 5.0}, {1.0, 1.0, 7.0}}))).sum().backward();
  expect_values(v.grad(), lt::tensor({15.0, 21.0}));
}

INSTANTIATE_TEST_SUITE_P(Devices, Indexing, ::testing::Values("cpu", "interp", "mlir"),
                         [](const auto& info) { return info.param; });

// scatter's gradients by finite differences (float64): x where not overwritten, src gathered.
TEST(IndexingGrad, ScatterAndIndexGradcheck) {
  for (const char* dev : {"cpu", "lazy"}) {
    const lt::Device d(dev);
    Tensor idx = lt::tensor({{0, 2}, {1, 0}}).to(d);
    lt_test::gradcheck(
        "scatter", [&](lt_test::Ts in) { return in[0].scatter(0, idx, in[1]); },
        {{{1, 2, 3, 4, 5, 6}, {3, 2}}, {{-1, 0.5, 2, 3}, {2, 2}}}, d);
    Tensor rows = lt::tensor({2, 0, 2}).to(d);
    lt_test::gradcheck(
        "index",
        [&](lt_test::Ts in) {
          return in[0].index({Slice(), rows, None}).exp();
        },
        {{{0.1, 0.2, 0.3, -0.4, 0.5, 0.6}, {2, 3}}}, d);
  }
}

}  // namespace
