// sort, argsort, topk, kthvalue and median beyond the op sweep's random table: PyTorch's values
// on small inputs (NaN placement, the lower median, ties), gradients through the gathered
// values, the libtorch spellings, and errors at the call; each on cpu and on the lazy device.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "lt/lt.h"
#include "values.h"

namespace {

using lt::Tensor;
using V = std::vector<double>;
using lt_test::vals;
using I = std::vector<int64_t>;
const double kNaN = std::nan("");

I ids(const Tensor& t) { return t.to(lt::kCPU).to_vector<int64_t>(); }
void expect_same(const V& got, const V& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
    else
      EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
  }
}

class Sorting : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
  Tensor f(V v, std::vector<int64_t> shape = {}) const {
    if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
    return lt::tensor(v).to(lt::kFloat32).reshape(shape).to(dev());
  }
};

TEST_P(Sorting, SortPlacesNanAboveEveryNumberAndKeepsTiesInOrder) {
  Tensor x = f({3, kNaN, -1, 3, 0.5, -INFINITY});
  auto [v, i] = x.sort();
  expect_same(vals(v), {-INFINITY, -1, 0.5, 3, 3, kNaN}, "ascending");
  EXPECT_EQ(ids(i), (I{5, 2, 4, 0, 3, 1}));
  auto [vd, id] = lt::sort(x, 0, /*descending=*/true);
  expect_same(vals(vd), {kNaN, 3, 3, 0.5, -1, -INFINITY}, "descending");
  EXPECT_EQ(ids(id), (I{1, 0, 3, 4, 2, 5}));  // equal 3s keep their order (stable)
  EXPECT_EQ(ids(x.argsort(-1, true)), ids(id));
  auto [vs, is] = x.sort(/*stable=*/std::optional<bool>(true), 0, false);
  EXPECT_EQ(ids(is), ids(i));
  // Along a middle dim of a non-contiguous view.
  Tensor m = f({4, 1, 3, 2, 6, 5}, {2, 3}).t();  // [[4, 2], [1, 6], [3, 5]]
  EXPECT_EQ(ids(m.argsort(0)), (I{1, 0, 2, 2, 0, 1}));
  expect_same(vals(lt::msort(m)), {1, 2, 3, 5, 4, 6}, "msort");
  Tensor b = lt::tensor(std::vector<bool>{true, false, true}).to(dev());
  EXPECT_EQ(ids(b.argsort()), (I{1, 0, 2}));
  EXPECT_EQ(ids(lt::argsort(f({2.5}, {1}).reshape({}))), (I{0}));  // 0-d
  EXPECT_EQ(std::get<0>(lt::sort(f({}, {0, 3}), 1)).numel(), 0);   // empty, no crash
}

TEST_P(Sorting, TopkKthvalueAndMedian) {
  Tensor x = f({1, 9, 3, 7, 5, 2}, {2, 3});  // [[1, 9, 3], [7, 5, 2]]
  auto [tv, ti] = x.topk(2);
  expect_same(vals(tv), {9, 3, 7, 5}, "topk largest");
  EXPECT_EQ(ids(ti), (I{1, 2, 0, 1}));
  auto [sv, si] = lt::topk(x, 1, 0, /*largest=*/false);
  expect_same(vals(sv), {1, 5, 2}, "topk smallest over dim 0");
  EXPECT_EQ(ids(si), (I{0, 1, 1}));
  auto [kv, ki] = x.kthvalue(2, 1);
  expect_same(vals(kv), {3, 5}, "kthvalue");
  EXPECT_EQ(ids(ki), (I{2, 1}));
  auto [kk, kki] = x.kthvalue(3, 1, /*keepdim=*/true);
  EXPECT_EQ(kk.sizes()[1], 1);
  expect_same(vals(kk), {9, 7}, "kthvalue keepdim");
  // The lower median of an even count, and NaN when a slice has one.
  expect_same(vals(f({4, 1, 3, 2}).median()), {2}, "median of 4");
  expect_same(vals(x.median()), {3}, "median of all");
  auto [mv, mi] = f({4, 1, 3, 2, kNaN, 0, 8, 6}, {2, 4}).median(1);
  expect_same(vals(mv), {2, kNaN}, "median per row");
  EXPECT_EQ(ids(mi), (I{3, 0}));
  EXPECT_TRUE(std::isnan(vals(f({}, {0}).median())[0]));
  Tensor ints = lt::tensor(std::vector<int64_t>{5, -2, 9}).to(dev());
  EXPECT_EQ(ids(std::get<0>(ints.topk(2))), (I{9, 5}));
  EXPECT_EQ(ids(ints.median()), (I{5}));
  lt::mark_step();
}

TEST_P(Sorting, GradientsFlowThroughTheValues) {
  using lt_test::gradcheck;
  using lt_test::In;
  using lt_test::Ts;
  In x{{0.3, -1.2, 2.5, 0.9, -0.4, 1.7, 0.1, -2.2}, {2, 4}};
  gradcheck(
      "sort", [](Ts t) { return std::get<0>(t[0].sort(1, true)); }, {x}, dev());
  gradcheck(
      "topk", [](Ts t) { return std::get<0>(t[0].topk(2, 0)); }, {x}, dev());
  gradcheck(
      "kthvalue", [](Ts t) { return std::get<0>(t[0].kthvalue(3)); }, {x}, dev());
  gradcheck(
      "median", [](Ts t) { return t[0].median(); }, {x}, dev());
  Tensor w = f({3, 1, 2}).set_requires_grad(true);
  std::get<1>(w.sort()).sum();  // indices carry no history
  EXPECT_FALSE(std::get<1>(w.sort()).requires_grad());
}

TEST_P(Sorting, BadArgumentsThrowAtTheCall) {
  Tensor x = f({1, 2, 3}, {1, 3});
  EXPECT_THROW(x.topk(4), lt::Error);
  EXPECT_THROW(x.kthvalue(0), lt::Error);
  EXPECT_THROW(x.sort(2), lt::Error);
  EXPECT_THROW(f({}, {2, 0}).median(1), lt::Error);
  try {
    x.topk(5);
  } catch (const lt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("topk"), std::string::npos) << e.what();
  }
  EXPECT_EQ(vals(x), (V{1, 2, 3}));
}

INSTANTIATE_TEST_SUITE_P(Devices, Sorting, ::testing::Values("cpu", "lazy"));

}  // namespace
