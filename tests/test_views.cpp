// Views: view-returning ops share storage with their base, so in-place ops through a view update
// the base; sizes, strides and storage offsets are PyTorch's; contiguous/clone/copy_/fill_ and
// in-place ops whose source overlaps the destination behave as in PyTorch.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <functional>
#include <string>
#include <vector>

#include "core/tensor_impl.h"

namespace {

using lt::Tensor;
using V = std::vector<float>;
using S = std::vector<int64_t>;

Tensor arange_f(int64_t n, lt::IntList sizes) { return lt::arange(n, lt::kFloat32).reshape(sizes); }
bool same_storage(const Tensor& a, const Tensor& b) {
  return a.impl()->storage.get() == b.impl()->storage.get();
}
V vals(const Tensor& t) { return t.to_vector<float>(); }
S sizes(const Tensor& t) { return t.sizes().vec(); }
S strides(const Tensor& t) { return t.strides().vec(); }

// ---------------------------------------------------------------- every view op aliases

struct ViewCase {
  std::string name;
  std::function<Tensor(const Tensor&)> f;
};

TEST(Views, EveryViewOpSharesStorageAndWritesThrough) {
  const std::vector<ViewCase> cases = {
      {"view",
       [](const Tensor& x) {
         return x.view({6, 4});
       }},
      {"view_infer", [](const Tensor& x) { return x.view({-1}); }},
      {"reshape_viewable",
       [](const Tensor& x) {
         return x.reshape({4, 6});
       }},
      {"permute",
       [](const Tensor& x) {
         return x.permute({2, 0, 1});
       }},
      {"transpose", [](const Tensor& x) { return x.transpose(0, 2); }},
      {"t", [](const Tensor& x) { return x.select(0, 1).t(); }},
      {"narrow", [](const Tensor& x) { return x.narrow(2, 1, 2); }},
      {"select", [](const Tensor& x) { return x.select(1, 2); }},
      {"select_neg", [](const Tensor& x) { return x.select(-1, -1); }},
      {"slice_step", [](const Tensor& x) { return x.slice(2, 0, 4, 3); }},
      {"squeeze", [](const Tensor& x) { return x.narrow(1, 1, 1).squeeze(); }},
      {"squeeze_dim", [](const Tensor& x) { return x.narrow(1, 1, 1).squeeze(1); }},
      {"unsqueeze", [](const Tensor& x) { return x.unsqueeze(1); }},
      {"flatten", [](const Tensor& x) { return x.flatten(); }},
      {"flatten_partial", [](const Tensor& x) { return x.flatten(1); }},
      {"split_piece", [](const Tensor& x) { return x.split(2, 1)[1]; }},
      {"chunk_piece", [](const Tensor& x) { return x.chunk(2, 2)[1]; }},
  };
  for (const ViewCase& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = arange_f(24, {2, 3, 4});
    Tensor before = x.clone();
    Tensor v = c.f(x);
    EXPECT_TRUE(same_storage(v, x));
    EXPECT_EQ(v.dtype(), x.dtype());
    EXPECT_EQ(vals(v), vals(c.f(before)));  // a view reads the base's values
    v.add_(1000);
    // The same view of the base shows the write, and exactly v.numel() elements changed.
    EXPECT_EQ(vals(c.f(x)), vals(c.f(before) + 1000));
    EXPECT_EQ((x != before).sum().item<int64_t>(), v.numel());
    // Writing to the base shows through the view too.
    x.mul_(0);
    EXPECT_EQ(vals(v), V(static_cast<size_t>(v.numel()), 0.f));
  }
}

TEST(Views, ExpandSharesStorage) {
  Tensor x = arange_f(3, {3, 1});
  Tensor e = x.expand({3, 4});
  EXPECT_TRUE(same_storage(e, x));
  EXPECT_EQ(sizes(e), (S{3, 4}));
  EXPECT_EQ(strides(e), (S{1, 0}));
  EXPECT_EQ(e.storage_offset(), 0);
  EXPECT_FALSE(e.is_contiguous());
  EXPECT_EQ(vals(e), (V{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  x.add_(10);
  EXPECT_EQ(vals(e), (V{10, 10, 10, 10, 11, 11, 11, 11, 12, 12, 12, 12}));

  Tensor r = arange_f(3, {3}).expand({2, 3});  // new leading dim
  EXPECT_EQ(strides(r), (S{0, 1}));
  EXPECT_EQ(sizes(x.expand({-1, 2})), (S{3, 2}));
  EXPECT_EQ(sizes(x.expand_as(lt::zeros({2, 3, 5}))), (S{2, 3, 5}));
  EXPECT_EQ(strides(x.expand_as(lt::zeros({2, 3, 5}))), (S{0, 1, 0}));
  // An expanded view repeats memory locations: PyTorch refuses to write into it.
  EXPECT_THROW(e.add_(1), lt::Error);
  EXPECT_THROW(e.fill_(1), lt::Error);
  EXPECT_EQ(vals(x), (V{10, 11, 12}));
  // ...but it may be read and copied.
  Tensor c = e.contiguous();
  EXPECT_FALSE(same_storage(c, x));
  EXPECT_EQ(strides(c), (S{4, 1}));
}

// ---------------------------------------------------------------- PyTorch layouts

TEST(Views, StridesOffsetsAndContiguity) {
  Tensor x = arange_f(24, {2, 3, 4});
  EXPECT_EQ(strides(x), (S{12, 4, 1}));
  EXPECT_EQ(x.storage_offset(), 0);
  EXPECT_TRUE(x.is_contiguous());

  Tensor p = x.permute({1, 2, 0});
  EXPECT_EQ(sizes(p), (S{3, 4, 2}));
  EXPECT_EQ(strides(p), (S{4, 1, 12}));
  EXPECT_EQ(p.storage_offset(), 0);
  EXPECT_FALSE(p.is_contiguous());

  EXPECT_EQ(strides(x.transpose(0, 2)), (S{1, 4, 12}));
  EXPECT_EQ(strides(x.transpose(-1, -2)), (S{12, 1, 4}));

  Tensor m = arange_f(12, {3, 4});
  EXPECT_EQ(strides(m.t()), (S{1, 4}));
  EXPECT_FALSE(m.t().is_contiguous());
  EXPECT_TRUE(m.t().t().is_contiguous());

  Tensor n = m.narrow(1, 1, 2);
  EXPECT_EQ(sizes(n), (S{3, 2}));
  EXPECT_EQ(strides(n), (S{4, 1}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_FALSE(n.is_contiguous());
  Tensor rows = m.narrow(0, 1, 2);
  EXPECT_EQ(rows.storage_offset(), 4);
  EXPECT_TRUE(rows.is_contiguous());
  EXPECT_EQ(m.narrow(0, -2, 2).storage_offset(), 4);  // negative start wraps

  Tensor s0 = m.select(0, 1);
  EXPECT_EQ(sizes(s0), (S{4}));
  EXPECT_EQ(strides(s0), (S{1}));
  EXPECT_EQ(s0.storage_offset(), 4);
  EXPECT_TRUE(s0.is_contiguous());
  Tensor s1 = m.select(1, 2);
  EXPECT_EQ(sizes(s1), (S{3}));
  EXPECT_EQ(strides(s1), (S{4}));
  EXPECT_EQ(s1.storage_offset(), 2);
  EXPECT_FALSE(s1.is_contiguous());
  EXPECT_EQ(m.select(1, -1).storage_offset(), 3);
  EXPECT_EQ(vals(m.select(1, -1)), (V{3, 7, 11}));

  Tensor sl = m.slice(1, 0, 4, 2);
  EXPECT_EQ(sizes(sl), (S{3, 2}));
  EXPECT_EQ(strides(sl), (S{4, 2}));
  EXPECT_EQ(vals(sl), (V{0, 2, 4, 6, 8, 10}));
  Tensor v = arange_f(10, {10});
  Tensor st = v.slice(0, 1, 8, 3);
  EXPECT_EQ(sizes(st), (S{3}));
  EXPECT_EQ(strides(st), (S{3}));
  EXPECT_EQ(st.storage_offset(), 1);
  EXPECT_EQ(vals(st), (V{1, 4, 7}));
  EXPECT_EQ(vals(v.slice(0, -3, 100)), (V{7, 8, 9}));  // x[-3:], end clamped
  EXPECT_EQ(vals(v.slice(0, 2, -5, 2)), (V{2, 4}));    // x[2:-5:2]
  EXPECT_EQ(v.slice(0, 8, 2).numel(), 0);              // empty, like x[8:2]
  // A slice of a slice: offsets and steps compose.
  Tensor ss = st.slice(0, 1, 3, 1);
  EXPECT_EQ(ss.storage_offset(), 4);
  EXPECT_EQ(strides(ss), (S{3}));
  EXPECT_EQ(vals(ss), (V{4, 7}));

  // unsqueeze / squeeze strides as PyTorch computes them.
  EXPECT_EQ(strides(m.unsqueeze(0)), (S{12, 4, 1}));
  EXPECT_EQ(strides(m.unsqueeze(1)), (S{4, 4, 1}));
  EXPECT_EQ(strides(m.unsqueeze(2)), (S{4, 1, 1}));
  EXPECT_EQ(strides(m.unsqueeze(-1)), (S{4, 1, 1}));
  EXPECT_EQ(strides(m.t().unsqueeze(0)), (S{4, 1, 4}));
  EXPECT_EQ(strides(m.t().unsqueeze(1)), (S{1, 12, 4}));
  Tensor u = arange_f(12, {3, 1, 4});
  EXPECT_EQ(sizes(u.squeeze()), (S{3, 4}));
  EXPECT_EQ(strides(u.squeeze()), (S{4, 1}));
  EXPECT_EQ(sizes(u.squeeze(1)), (S{3, 4}));
  EXPECT_EQ(sizes(u.squeeze(0)), (S{3, 1, 4}));  // not size 1: a no-op
  EXPECT_EQ(sizes(u.squeeze(-2)), (S{3, 4}));

  // Size-1 and empty dims do not break contiguity.
  EXPECT_TRUE(arange_f(3, {3, 1}).t().is_contiguous());
  EXPECT_TRUE(lt::zeros({0, 3}).t().is_contiguous());
  EXPECT_TRUE(lt::scalar_tensor(1.0).is_contiguous());
  EXPECT_EQ(strides(lt::scalar_tensor(1.0)), (S{}));

  // A view of a view of a view.
  Tensor w = m.narrow(0, 1, 2).narrow(1, 1, 2);
  EXPECT_EQ(sizes(w), (S{2, 2}));
  EXPECT_EQ(strides(w), (S{4, 1}));
  EXPECT_EQ(w.storage_offset(), 5);
  EXPECT_EQ(vals(w), (V{5, 6, 9, 10}));
  Tensor wt = w.t();
  EXPECT_EQ(strides(wt), (S{1, 4}));
  EXPECT_EQ(wt.storage_offset(), 5);
}

// ---------------------------------------------------------------- in place through views

TEST(Views, PermuteAddUpdatesBase) {
  Tensor x = arange_f(24, {2, 3, 4});
  x.permute({1, 2, 0}).add_(42);
  V want(24);
  for (int i = 0; i < 24; ++i) want[i] = static_cast<float>(i + 42);
  EXPECT_EQ(vals(x), want);
  EXPECT_EQ(sizes(x), (S{2, 3, 4}));
  EXPECT_EQ(strides(x), (S{12, 4, 1}));
}

TEST(Views, ViewAddUpdatesBase) {
  Tensor t = arange_f(16, {4, 4});
  t.view({2, 8}).add_(1);
  V want(16);
  for (int i = 0; i < 16; ++i) want[i] = static_cast<float>(i + 1);
  EXPECT_EQ(vals(t), want);
  // A chain: view -> narrow -> view -> fill_.
  Tensor x = lt::zeros({4, 4});
  Tensor v = x.view({16}).narrow(0, 4, 8).view({2, 4});
  EXPECT_TRUE(same_storage(v, x));
  EXPECT_EQ(v.storage_offset(), 4);
  v.fill_(7);
  EXPECT_EQ(vals(x), (V{0, 0, 0, 0, 7, 7, 7, 7, 7, 7, 7, 7, 0, 0, 0, 0}));
  // transpose -> select -> narrow -> add_: column 1, rows 1..2.
  Tensor y = arange_f(16, {4, 4});
  y.t().select(0, 1).narrow(0, 1, 2).add_(100);
  EXPECT_EQ(vals(y.select(1, 1)), (V{1, 105, 109, 13}));
  EXPECT_EQ(y.sum().item<float>(), 120.f + 200.f);
}

TEST(Views, InplaceOpsThroughViews) {
  Tensor x = arange_f(12, {3, 4});
  x.t().mul_(2);  // every element once
  EXPECT_EQ(vals(x), vals(arange_f(12, {3, 4}) * 2));

  Tensor y = arange_f(12, {3, 4});
  y.slice(1, 1, 4, 2).sub_(lt::tensor({1.f, 2.f}));  // columns 1 and 3, broadcast over rows
  EXPECT_EQ(vals(y), (V{0, 0, 2, 1, 4, 4, 6, 5, 8, 8, 10, 9}));

  Tensor z = arange_f(12, {3, 4});
  z.select(0, 2).div_(2);
  z.select(1, 0).clamp_(std::nullopt, 3);
  z.unsqueeze(0).narrow(2, 3, 1).relu_();  // relu of non-negatives: unchanged
  EXPECT_EQ(vals(z), (V{0, 1, 2, 3, 3, 5, 6, 7, 3, 4.5, 5, 5.5}));

  Tensor i = lt::arange(6, lt::kInt64).view({2, 3});
  i.t().narrow(0, 1, 2).add_(lt::tensor(std::vector<int32_t>{10, 20}));  // int32 into int64
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 11, 12, 3, 24, 25}));
  Tensor iv = i.view({6});
  iv += 1;
  Tensor ifl = i.flatten();
  ifl *= 2;
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{2, 24, 26, 8, 50, 52}));
}

TEST(Views, ViewOutlivesBase) {
  Tensor v;
  {
    Tensor x = arange_f(12, {3, 4});
    v = x.narrow(0, 1, 2).t();
  }
  EXPECT_EQ(vals(v), (V{4, 8, 5, 9, 6, 10, 7, 11}));
  v.add_(1);
  EXPECT_EQ(vals(v.t()), (V{5, 6, 7, 8, 9, 10, 11, 12}));
}

// ---------------------------------------------------------------- reshape, flatten, split, chunk

TEST(Views, ReshapeViewsWhenPossibleCopiesOtherwise) {
  Tensor x = arange_f(12, {3, 4});
  Tensor r = x.reshape({2, 6});
  EXPECT_TRUE(same_storage(r, x));
  Tensor rt = x.t().reshape({12});  // not viewable: a copy
  EXPECT_FALSE(same_storage(rt, x));
  EXPECT_EQ(vals(rt), (V{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  rt.add_(100);
  EXPECT_EQ(vals(x), vals(arange_f(12, {3, 4})));
  // Viewable although not contiguous: split a dim whose elements are adjacent.
  Tensor n = x.narrow(1, 0, 2);  // [3, 2] strides [4, 1]
  Tensor nv = n.reshape({3, 2, 1});
  EXPECT_TRUE(same_storage(nv, x));
  EXPECT_EQ(strides(nv), (S{4, 1, 1}));
  Tensor tv = x.t().reshape({2, 2, 3});  // [4, 3] strides [1, 4] -> split dim 0
  EXPECT_TRUE(same_storage(tv, x));
  EXPECT_EQ(strides(tv), (S{2, 1, 4}));
  EXPECT_EQ(vals(tv), vals(x.t().contiguous().view({2, 2, 3})));
  // flatten
  Tensor c = arange_f(24, {2, 3, 4});
  EXPECT_TRUE(same_storage(c.flatten(), c));
  EXPECT_EQ(sizes(c.flatten(1)), (S{2, 12}));
  EXPECT_EQ(sizes(c.flatten(0, 1)), (S{6, 4}));
  EXPECT_EQ(sizes(c.flatten(1, 1)), (S{2, 3, 4}));
  EXPECT_EQ(sizes(lt::scalar_tensor(2.0).flatten()), (S{1}));
  Tensor ct = c.transpose(0, 2).flatten();
  EXPECT_FALSE(same_storage(ct, c));
  EXPECT_EQ(vals(ct)[1], 12.f);
}

TEST(Views, SplitAndChunkPiecesAreViews) {
  Tensor x = arange_f(10, {10});
  std::vector<Tensor> s = x.split(3);
  ASSERT_EQ(s.size(), 4u);
  const S want_sizes = {3, 3, 3, 1}, want_offsets = {0, 3, 6, 9};
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_TRUE(same_storage(s[i], x));
    EXPECT_EQ(s[i].numel(), want_sizes[i]);
    EXPECT_EQ(s[i].storage_offset(), want_offsets[i]);
  }
  s[1].fill_(-1);
  s[3].add_(100);
  EXPECT_EQ(vals(x), (V{0, 1, 2, -1, -1, -1, 6, 7, 8, 109}));

  // chunk as PyTorch: ceil(n / chunks) per piece, so 6 into 4 gives 3 pieces of 2.
  auto chunk_sizes = [](int64_t n, int64_t chunks) {
    S out;
    for (const Tensor& t : arange_f(n, {n}).chunk(chunks)) out.push_back(t.numel());
    return out;
  };
  EXPECT_EQ(chunk_sizes(6, 4), (S{2, 2, 2}));
  EXPECT_EQ(chunk_sizes(5, 2), (S{3, 2}));
  EXPECT_EQ(chunk_sizes(7, 4), (S{2, 2, 2, 1}));
  EXPECT_EQ(chunk_sizes(10, 4), (S{3, 3, 3, 1}));
  EXPECT_EQ(chunk_sizes(6, 5), (S{2, 2, 2}));
  EXPECT_EQ(chunk_sizes(3, 5), (S{1, 1, 1}));
  EXPECT_EQ(chunk_sizes(4, 1), (S{4}));

  Tensor m = arange_f(10, {2, 5});
  std::vector<Tensor> c = m.chunk(2, 1);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(sizes(c[0]), (S{2, 3}));
  EXPECT_EQ(sizes(c[1]), (S{2, 2}));
  EXPECT_EQ(strides(c[1]), (S{5, 1}));
  EXPECT_EQ(c[1].storage_offset(), 3);
  c[1].mul_(0);
  EXPECT_EQ(vals(m), (V{0, 1, 2, 0, 0, 5, 6, 7, 0, 0}));
  std::vector<Tensor> ms = lt::split(m, 1, -1);
  ASSERT_EQ(ms.size(), 5u);
  EXPECT_EQ(sizes(ms[4]), (S{2, 1}));
  EXPECT_EQ(ms[4].storage_offset(), 4);
}

// ---------------------------------------------------------------- contiguous, clone

TEST(Views, ContiguousCopiesOnlyWhenNeeded) {
  Tensor x = arange_f(12, {3, 4});
  Tensor c = x.contiguous();
  EXPECT_TRUE(same_storage(c, x));
  EXPECT_EQ(c.storage_offset(), 0);
  Tensor rows = x.narrow(0, 1, 2);  // contiguous, with an offset
  EXPECT_TRUE(same_storage(rows.contiguous(), x));
  EXPECT_EQ(rows.contiguous().storage_offset(), 4);

  Tensor t = x.t();
  Tensor tc = t.contiguous();
  EXPECT_FALSE(same_storage(tc, x));
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_EQ(strides(tc), (S{3, 1}));
  EXPECT_EQ(tc.storage_offset(), 0);
  EXPECT_EQ(vals(tc), vals(t));
  tc.add_(1);
  EXPECT_EQ(vals(x), vals(arange_f(12, {3, 4})));

  Tensor s = x.slice(1, 1, 4, 2).contiguous();
  EXPECT_EQ(strides(s), (S{2, 1}));
  EXPECT_EQ(vals(s), (V{1, 3, 5, 7, 9, 11}));
}

// Transposed views large enough for the tiled copy (copy_transposed: tiles of 32x32), with
// edges that are not whole tiles, batch dims, a narrowed base and 1-, 2-, 4- and 8-byte elements.
TEST(Views, ContiguousOfLargeTransposesMatchesIndexing) {
  struct Case {
    S base;
    std::function<Tensor(const Tensor&)> view;
    // element (b, i, j) of the view, as an index into the base's values
    std::function<int64_t(int64_t, int64_t, int64_t)> at;
    int64_t batch, rows, cols;
  };
  const std::vector<Case> cases = {
      {{70, 33},
       [](const Tensor& x) { return x.t(); },
       [](int64_t, int64_t i, int64_t j) { return j * 33 + i; },
       1,
       33,
       70},
      {{784, 256},
       [](const Tensor& x) { return x.t(); },
       [](int64_t, int64_t i, int64_t j) { return j * 256 + i; },
       1,
       256,
       784},
      {{3, 40, 65},
       [](const Tensor& x) {
         return x.permute({0, 2, 1});
       },
       [](int64_t b, int64_t i, int64_t j) { return b * 40 * 65 + j * 65 + i; },
       3,
       65,
       40},
      {{50, 90},
       [](const Tensor& x) { return x.narrow(1, 5, 40).t(); },
       [](int64_t, int64_t i, int64_t j) { return j * 90 + 5 + i; },
       1,
       40,
       50},
  };
  for (lt::Dtype dt : {lt::kFloat32, lt::kInt8, lt::kBFloat16, lt::kFloat64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.cols));
      int64_t n = 1;
      for (int64_t s : c.base) n *= s;
      const Tensor x = (lt::arange(n, lt::kFloat64).remainder(100)).to(dt).reshape(c.base);
      const std::vector<double> xv = x.to(lt::kFloat64).to_vector<double>();
      const Tensor d = c.view(x).contiguous();
      ASSERT_TRUE(d.is_contiguous());
      const std::vector<double> dv = d.to(lt::kFloat64).to_vector<double>();
      ASSERT_EQ(static_cast<int64_t>(dv.size()), c.batch * c.rows * c.cols);
      int64_t wrong = 0;
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t i = 0; i < c.rows; ++i)
          for (int64_t j = 0; j < c.cols; ++j)
            wrong += dv[static_cast<size_t>((b * c.rows + i) * c.cols + j)] !=
                     xv[static_cast<size_t>(c.at(b, i, j))];
      EXPECT_EQ(wrong, 0);
    }
  }
}

TEST(Views, CloneNeverAliases) {
  for (const Tensor& src : {arange_f(12, {3, 4}), arange_f(12, {3, 4}).t(),
                            arange_f(12, {3, 4}).narrow(0, 1, 2), lt::scalar_tensor(3.0)}) {
    Tensor c = src.clone();
    EXPECT_FALSE(same_storage(c, src));
    EXPECT_EQ(sizes(c), sizes(src));
    EXPECT_EQ(c.dtype(), src.dtype());
    EXPECT_EQ(vals(c), vals(src));
    V before = vals(src);
    c.add_(1);
    EXPECT_EQ(vals(src), before);
  }
  Tensor b = lt::tensor(std::vector<bool>{true, false});
  Tensor bc = b.clone();
  bc.fill_(false);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false}));
}

// ---------------------------------------------------------------- copy_, fill_, zero_

TEST(Views, CopyBroadcastsAndConverts) {
  Tensor d = lt::zeros({2, 3});
  Tensor& r = d.copy_(lt::tensor(std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(&r, &d);
  EXPECT_EQ(d.dtype(), lt::kFloat32);
  EXPECT_EQ(vals(d), (V{1, 2, 3, 1, 2, 3}));
  d.copy_(lt::tensor(std::vector<double>{-1, 1}, {2, 1}));
  EXPECT_EQ(vals(d), (V{-1, -1, -1, 1, 1, 1}));
  d.copy_(lt::scalar_tensor(5));
  EXPECT_EQ(vals(d), V(6, 5.f));

  Tensor i = lt::zeros({4}, lt::kInt32);
  i.copy_(lt::tensor({1.7f, -1.7f, 2.5f, -0.5f}));  // float -> int truncates toward zero
  EXPECT_EQ(i.dtype(), lt::kInt32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, -1, 2, 0}));
  Tensor b = lt::zeros({3}, lt::kBool);
  b.copy_(lt::tensor({0.f, 0.5f, -2.f}));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true, true}));
  Tensor f = lt::zeros({2}, lt::kFloat64);
  f.copy_(lt::tensor(std::vector<bool>{true, false}));
  EXPECT_EQ(f.to_vector<double>(), (std::vector<double>{1, 0}));

  // Into a strided view: writes go to the base.
  Tensor x = lt::zeros({2, 3});
  x.t().copy_(arange_f(6, {3, 2}));
  EXPECT_EQ(vals(x), (V{0, 2, 4, 1, 3, 5}));
  Tensor y = lt::zeros({3, 4});
  y.narrow(1, 1, 2).copy_(lt::tensor({7.f, 8.f}));
  EXPECT_EQ(vals(y), (V{0, 7, 8, 0, 0, 7, 8, 0, 0, 7, 8, 0}));
  // From a strided source.
  Tensor z = lt::zeros({4, 3});
  z.copy_(arange_f(12, {3, 4}).t());
  EXPECT_EQ(vals(z), (V{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST(Views, FillAndZeroThroughStridedViews) {
  Tensor x = lt::ones({4, 4});
  x.slice(1, 0, 4, 2).fill_(5);
  x.select(1, 1).zero_();
  x.t().narrow(0, 3, 1).fill_(9);
  x.select(0, 3).slice(0, 0, 4, 3).fill_(-2);  // row 3, columns 0 and 3
  EXPECT_EQ(vals(x), (V{5, 0, 5, 9, 5, 0, 5, 9, 5, 0, 5, 9, -2, 0, 5, -2}));

  Tensor i = lt::zeros({2, 3}, lt::kInt64);
  i.t().select(0, 2).fill_(2.7);  // float value into an int tensor: truncated, as in PyTorch
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 2, 0, 0, 2}));
  Tensor b = lt::zeros({2, 2}, lt::kBool);
  b.select(1, 0).fill_(2);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true, false}));
  Tensor e = lt::zeros({0, 3});
  e.fill_(1);
  e.t().zero_();
  EXPECT_EQ(e.numel(), 0);
}

// ---------------------------------------------------------------- overlapping source and dest

TEST(Views, InplaceWithOverlappingSourceMatchesOutOfPlace) {
  for (int64_t n : {3, 64}) {
    SCOPED_TRACE(n);
    Tensor a = arange_f(n * n, {n, n});
    Tensor want = a + a.t();
    a.add_(a.t());
    EXPECT_EQ(vals(a), vals(want));

    Tensor b = arange_f(n * n, {n, n});
    Tensor want_b = b * b.t() - b.t();
    b.mul_(b.t()).sub_(lt::arange(n * n, lt::kFloat32).view({n, n}).t());
    EXPECT_EQ(vals(b), vals(want_b));

    Tensor c = arange_f(n * n, {n, n});
    Tensor want_c = c.t() * 1.0;
    c.copy_(c.t());
    EXPECT_EQ(vals(c), vals(want_c));
  }
  // Shifted windows of one buffer.
  Tensor x = arange_f(10, {10});
  x.slice(0, 1, 10).add_(x.slice(0, 0, 9));
  EXPECT_EQ(vals(x), (V{0, 1, 3, 5, 7, 9, 11, 13, 15, 17}));
  Tensor y = arange_f(10, {10});
  y.slice(0, 1, 10).copy_(y.slice(0, 0, 9));
  EXPECT_EQ(vals(y), (V{0, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
  Tensor z = arange_f(10, {10});
  z.slice(0, 0, 9).copy_(z.slice(0, 1, 10));
  EXPECT_EQ(vals(z), (V{1, 2, 3, 4, 5, 6, 7, 8, 9, 9}));
  // The same view on both sides (full overlap).
  Tensor w = arange_f(4, {4});
  w.mul_(w);
  w.add_(w, 2);
  EXPECT_EQ(vals(w), (V{0, 3, 12, 27}));
  // The source is a broadcast view of the destination.
  Tensor r = arange_f(6, {2, 3});
  r.sub_(r.select(0, 0));
  EXPECT_EQ(vals(r), (V{0, 0, 0, 3, 3, 3}));
  Tensor q = arange_f(6, {2, 3});
  q.div_(q.narrow(1, 2, 1));
  EXPECT_EQ(vals(q), (V{0, 0.5f, 1, 0.6f, 0.8f, 1}));
}

// ---------------------------------------------------------------- lazy device

bool lazy_available() {
  try {
    lt::zeros({1}, lt::Device("lazy"));
    return true;
  } catch (const lt::Error&) {
    return false;
  }
}

TEST(Views, LazyInplaceThroughViewsUpdatesBase) {
  if (!lazy_available()) GTEST_SKIP() << "this build has no lazy runtime";
  const lt::Device lazy("lazy");
  Tensor x = arange_f(24, {2, 3, 4}).to(lazy);
  x.permute({1, 2, 0}).add_(42);
  EXPECT_EQ(vals(x), vals(arange_f(24, {2, 3, 4}) + 42));
  Tensor t = arange_f(16, {4, 4}).to(lazy);
  t.view({2, 8}).add_(1);
  t.t().select(0, 1).narrow(0, 1, 2).mul_(0);
  t.slice(1, 0, 4, 2).fill_(-1);
  Tensor want = arange_f(16, {4, 4}) + 1;
  want.t().select(0, 1).narrow(0, 1, 2).mul_(0);
  want.slice(1, 0, 4, 2).fill_(-1);
  EXPECT_EQ(vals(t), vals(want));
  Tensor a = arange_f(9, {3, 3}).to(lazy);
  a.add_(a.t());
  EXPECT_EQ(vals(a), vals(arange_f(9, {3, 3}) + arange_f(9, {3, 3}).t()));
  Tensor s = arange_f(10, {10}).to(lazy);
  std::vector<Tensor> pieces = s.chunk(4);
  ASSERT_EQ(pieces.size(), 4u);
  pieces[3].fill_(0);
  EXPECT_EQ(vals(s), (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 0}));
}

// ---------------------------------------------------------------- from_blob

TEST(Views, FromBlobAliasesCallerMemory) {
  float buf[6] = {1, 2, 3, 4, 5, 6};
  {
    Tensor t = lt::from_blob(buf, {2, 3});
    EXPECT_EQ(t.data_ptr<float>(), buf);
    EXPECT_EQ(t.dtype(), lt::kFloat32);
    EXPECT_EQ(vals(t), (V{1, 2, 3, 4, 5, 6}));
    t.add_(10);
    EXPECT_EQ(buf[0], 11.f);
    EXPECT_EQ(buf[5], 16.f);
    buf[4] = -1;
    EXPECT_EQ(t.select(0, 1).select(0, 1).item<float>(), -1.f);
    t.t().select(0, 2).fill_(0);  // column 2
    EXPECT_EQ(buf[2], 0.f);
    EXPECT_EQ(buf[5], 0.f);
    Tensor c = t.clone();
    c.zero_();
    EXPECT_EQ(buf[0], 11.f);
  }
  // The caller still owns the buffer after the tensor is gone.
  EXPECT_EQ(buf[1], 12.f);

  // Strided wrap: a transposed view of caller memory.
  float m[6] = {0, 1, 2, 3, 4, 5};  // row-major [2, 3]
  Tensor tt = lt::from_blob(m, {3, 2}, {1, 3});
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(strides(tt), (S{1, 3}));
  EXPECT_EQ(vals(tt), (V{0, 3, 1, 4, 2, 5}));
  tt.select(1, 0).mul_(10);  // writes m[0], m[1], m[2]
  EXPECT_EQ((V{m[0], m[1], m[2], m[3]}), (V{0, 10, 20, 3}));

  int64_t ints[4] = {1, 2, 3, 4};
  Tensor ti = lt::from_blob(ints, {4}, lt::kInt64);
  ti.view({2, 2}).t().add_(lt::tensor(std::vector<int64_t>{100, 200}));
  EXPECT_EQ((std::vector<int64_t>{ints[0], ints[1], ints[2], ints[3]}),
            (std::vector<int64_t>{101, 102, 203, 204}));
}

}  // namespace
