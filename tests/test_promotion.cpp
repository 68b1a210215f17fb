// PyTorch's type promotion (tensor-tensor, scalars, 0-d tensors), result dtypes of divisions,
// comparisons and reductions, broadcasting, and PyTorch-style printing.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using lt::Dtype;
using lt::kBool;
using lt::kFloat32;
using lt::kFloat64;
using lt::kInt32;
using lt::kInt64;
using lt::Tensor;
using S = std::vector<int64_t>;

const Dtype kAll[] = {kBool, kInt32, kInt64, kFloat32, kFloat64};

// A 1-d tensor [1, 2] (bool: [true, true]) of the given dtype.
Tensor vec(Dtype d) { return lt::ones({2}, d) * lt::tensor(std::vector<int64_t>{1, 2}).to(d); }
// A 0-d tensor (not a wrapped scalar) of the given dtype.
Tensor zero_d(Dtype d, double v = 1) { return lt::scalar_tensor(v, d); }
std::string name(Dtype d) { return lt::dtype_name(d); }
std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// PyTorch's table for the supported dtypes (torch.promote_types).
Dtype torch_promote(Dtype a, Dtype b) {
  static const Dtype table[5][5] = {
      // bool     int32    int64    float32   float64
      {kBool, kInt32, kInt64, kFloat32, kFloat64},         // bool
      {kInt32, kInt32, kInt64, kFloat32, kFloat64},        // int32
      {kInt64, kInt64, kInt64, kFloat32, kFloat64},        // int64
      {kFloat32, kFloat32, kFloat32, kFloat32, kFloat64},  // float32
      {kFloat64, kFloat64, kFloat64, kFloat64, kFloat64},  // float64
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

// ---------------------------------------------------------------- tensor-tensor

TEST(Promotion, TensorTensorTable) {
  for (Dtype a : kAll) {
    for (Dtype b : kAll) {
      SCOPED_TRACE(name(a) + " with " + name(b));
      const Dtype want = torch_promote(a, b);
      EXPECT_EQ(lt::promote_types(a, b), want);
      EXPECT_EQ((vec(a) * vec(b)).dtype(), want);
      if (want != kBool) {  // bool - bool throws, as in PyTorch
        EXPECT_EQ((vec(a) - vec(b)).dtype(), want);
      }
      EXPECT_EQ((vec(a) + vec(b)).dtype(), want);
      EXPECT_EQ(lt::maximum(vec(a), vec(b)).dtype(), want);
      EXPECT_EQ(lt::minimum(vec(a), vec(b)).dtype(), want);
      EXPECT_EQ(lt::where(vec(kBool), vec(a), vec(b)).dtype(), want);
      EXPECT_EQ(lt::cat({vec(a), vec(b)}).dtype(), want);
      // Both operands are dim-tensors, so 0-d vs 0-d follows the same table.
      EXPECT_EQ((zero_d(a) * zero_d(b)).dtype(), want);
      // Division is true division: integers and bools give the default float dtype.
      EXPECT_EQ((vec(a) / vec(b)).dtype(), lt::is_floating(want) ? want : kFloat32);
      // Comparisons and logical ops give bool.
      EXPECT_EQ((vec(a) < vec(b)).dtype(), kBool);
      EXPECT_EQ((vec(a) == vec(b)).dtype(), kBool);
      EXPECT_EQ(lt::ge(vec(a), vec(b)).dtype(), kBool);
      EXPECT_EQ(lt::logical_and(vec(a), vec(b)).dtype(), kBool);
      EXPECT_EQ(lt::logical_or(vec(a), vec(b)).dtype(), kBool);
    }
  }
}

TEST(Promotion, ValuesAreComputedInThePromotedType) {
  Tensor i = lt::tensor(std::vector<int32_t>{7, -7, 2});
  Tensor f = lt::tensor({0.5f, 0.25f, 2.f});
  Tensor r = i * f;
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{3.5f, -1.75f, 4.f}));
  Tensor big = lt::tensor(std::vector<int64_t>{int64_t{1} << 40});
  Tensor sum = big + lt::tensor(std::vector<int32_t>{1});
  EXPECT_EQ(sum.dtype(), kInt64);
  EXPECT_EQ(sum.item<int64_t>(), (int64_t{1} << 40) + 1);
  Tensor d = lt::tensor(std::vector<double>{0.1}) + lt::tensor({0.2f});
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_DOUBLE_EQ(d.item<double>(), 0.1 + static_cast<double>(0.2f));
  Tensor b =
      lt::tensor(std::vector<bool>{true, false}) + lt::tensor(std::vector<bool>{true, false});
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false}));
}

// ---------------------------------------------------------------- scalars and 0-d tensors

TEST(Promotion, ScalarRules) {
  Tensor i32 = lt::tensor(std::vector<int32_t>{1, 2, 3});
  Tensor i64 = lt::tensor(std::vector<int64_t>{1, 2, 3});
  Tensor f32 = lt::tensor({1.f, 2.f, 3.f});
  Tensor f64 = lt::tensor(std::vector<double>{1, 2, 3});
  Tensor b = lt::tensor(std::vector<bool>{true, false, true});

  // An int scalar (int64 "wrapped number") keeps an int32 tensor int32.
  EXPECT_EQ((i32 + 1).dtype(), kInt32);
  EXPECT_EQ((i32 * (int64_t{1} << 40)).dtype(), kInt32);
  EXPECT_EQ((5 - i32).dtype(), kInt32);
  EXPECT_EQ((i64 + 1).dtype(), kInt64);
  // A float scalar makes an int tensor float32 (the default dtype), not float64.
  EXPECT_EQ((i32 + 1.5).dtype(), kFloat32);
  EXPECT_EQ((i64 * 2.0).dtype(), kFloat32);
  EXPECT_EQ((2.0 * i64).dtype(), kFloat32);
  EXPECT_EQ((i64 + 0.5).to_vector<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
  // A float scalar does not widen a float tensor.
  EXPECT_EQ((f32 + 1.5).dtype(), kFloat32);
  EXPECT_EQ((f64 + 1.5f).dtype(), kFloat64);
  EXPECT_EQ((f32 + 1).dtype(), kFloat32);
  // bool tensor: an int scalar gives int64, a float scalar float32, a bool scalar bool.
  EXPECT_EQ((b + 1).dtype(), kInt64);
  EXPECT_EQ((b + 1).to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ((b * 2.5).dtype(), kFloat32);
  EXPECT_EQ((b + true).dtype(), kBool);
  EXPECT_EQ((i32 + true).dtype(), kInt32);
  // Division by a scalar.
  EXPECT_EQ((i32 / 2).dtype(), kFloat32);
  EXPECT_EQ((i32 / 2).to_vector<float>(), (std::vector<float>{0.5f, 1.f, 1.5f}));
  EXPECT_EQ((1 / i64).dtype(), kFloat32);
  EXPECT_EQ((f64 / 2).dtype(), kFloat64);
  // Comparisons with scalars give bool.
  EXPECT_EQ((i32 > 1.5).dtype(), kBool);
  EXPECT_EQ((i32 > 1.5).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ((f32 == 2).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  // pow
  EXPECT_EQ(lt::pow(i32, 2).dtype(), kInt32);
  EXPECT_EQ(lt::pow(i32, 2).to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 9}));
  EXPECT_EQ(lt::pow(i32, 0.5).dtype(), kFloat32);
  EXPECT_EQ(lt::pow(2, i32).dtype(), kInt32);
  EXPECT_EQ(lt::pow(2, i32).to_vector<int32_t>(), (std::vector<int32_t>{2, 4, 8}));
  EXPECT_EQ(lt::pow(2.5, i64).dtype(), kFloat32);
  EXPECT_EQ(lt::pow(f64, 2).dtype(), kFloat64);
  // where with a scalar branch
  Tensor c = i32 > 1;
  EXPECT_EQ(lt::where(c, i32, 0).dtype(), kInt32);
  EXPECT_EQ(lt::where(c, i32, 0.5).dtype(), kFloat32);
  EXPECT_EQ(lt::where(c, 0.5, f64).dtype(), kFloat64);
  EXPECT_EQ(lt::where(c, i32, 0.5).to_vector<float>(), (std::vector<float>{0.5f, 2.f, 3.f}));
  // clamp with scalars
  EXPECT_EQ(i32.clamp(0, 2).dtype(), kInt32);
  EXPECT_EQ(i32.clamp(0.5, 2).dtype(), kFloat32);
  EXPECT_EQ(i32.clamp(0.5, 2).to_vector<float>(), (std::vector<float>{1.f, 2.f, 2.f}));
}

TEST(Promotion, ZeroDimTensorRules) {
  Tensor i32 = lt::tensor(std::vector<int32_t>{1, 2});
  Tensor f32 = lt::tensor({1.f, 2.f});
  Tensor b = lt::tensor(std::vector<bool>{true, false});
  // A 0-d tensor of a higher type in the same category does not widen a dim-tensor.
  EXPECT_EQ((f32 + zero_d(kFloat64)).dtype(), kFloat32);
  EXPECT_EQ((zero_d(kFloat64) * f32).dtype(), kFloat32);
  EXPECT_EQ((i32 + zero_d(kInt64)).dtype(), kInt32);
  EXPECT_EQ((b + zero_d(kBool)).dtype(), kBool);
  // ...but a 0-d tensor of a higher category decides, with its own dtype.
  EXPECT_EQ((i32 + zero_d(kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((i32 + zero_d(kFloat32)).dtype(), kFloat32);
  EXPECT_EQ((b + zero_d(kInt32)).dtype(), kInt32);
  EXPECT_EQ((b + zero_d(kFloat64)).dtype(), kFloat64);
  // 0-d with 0-d: the ordinary table.
  EXPECT_EQ((zero_d(kFloat64) + zero_d(kInt32)).dtype(), kFloat64);
  EXPECT_EQ((zero_d(kInt32) + zero_d(kInt64)).dtype(), kInt64);
  EXPECT_EQ((zero_d(kFloat32) + zero_d(kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((zero_d(kBool) + zero_d(kInt32)).dtype(), kInt32);
  // 0-d with a scalar: the scalar only matters across categories.
  EXPECT_EQ((zero_d(kInt32) + 5).dtype(), kInt32);
  EXPECT_EQ((zero_d(kInt32) + 1.5).dtype(), kFloat32);
  EXPECT_EQ((zero_d(kFloat64) + 1.5).dtype(), kFloat64);
  EXPECT_EQ((zero_d(kBool) + 1).dtype(), kInt64);
  EXPECT_EQ((zero_d(kFloat64, 2.5) + zero_d(kInt32, 2)).item<double>(), 4.5);
  // Results of ops keep being dim-tensors or 0-d tensors by their shape, not by origin.
  EXPECT_EQ((f32 + f32.sum().to(kFloat64)).dtype(), kFloat32);
  EXPECT_EQ((i32 * i32.sum()).dtype(), kInt32);  // sum is int64 0-d
}

TEST(Promotion, InplaceKeepsDestinationDtype) {
  Tensor i32 = lt::tensor(std::vector<int32_t>{1, 2});
  i32.add_(lt::tensor(std::vector<int64_t>{1, 1}));
  i32.mul_(3);
  EXPECT_EQ(i32.dtype(), kInt32);
  EXPECT_EQ(i32.to_vector<int32_t>(), (std::vector<int32_t>{6, 9}));
  Tensor f32 = lt::tensor({1.f, 2.f});
  f32.add_(lt::tensor(std::vector<double>{0.5, 0.5}));
  f32.div_(lt::tensor(std::vector<int32_t>{2, 4}));
  f32.mul_(lt::tensor(std::vector<bool>{true, false}));
  EXPECT_EQ(f32.dtype(), kFloat32);
  EXPECT_EQ(f32.to_vector<float>(), (std::vector<float>{0.75f, 0.f}));
  Tensor f64 = lt::tensor(std::vector<double>{1, 2});
  f64.add_(1.5f);
  EXPECT_EQ(f64.dtype(), kFloat64);
  Tensor b = lt::tensor(std::vector<bool>{true, false});
  b.mul_(lt::tensor(std::vector<bool>{false, false}));
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_THROW(i32.add_(0.5), lt::Error);
  EXPECT_THROW(i32.div_(2), lt::Error);
  EXPECT_THROW(b.add_(1), lt::Error);
}

// ---------------------------------------------------------------- unary ops and reductions

TEST(Promotion, UnaryOpDtypes) {
  for (Dtype d : {kBool, kInt32, kInt64}) {
    SCOPED_TRACE(name(d));
    Tensor x = vec(d);
    EXPECT_EQ(x.exp().dtype(), kFloat32);
    EXPECT_EQ(x.sqrt().dtype(), kFloat32);
    EXPECT_EQ(x.sigmoid().dtype(), kFloat32);
    EXPECT_EQ(x.logical_not().dtype(), kBool);
    EXPECT_EQ(x.softmax(0).dtype(), kFloat32);
  }
  EXPECT_EQ(vec(kFloat64).exp().dtype(), kFloat64);
  EXPECT_EQ(vec(kInt32).abs().dtype(), kInt32);
  EXPECT_EQ(vec(kInt32).neg().dtype(), kInt32);
  EXPECT_EQ(vec(kInt64).relu().dtype(), kInt64);
  EXPECT_EQ(vec(kInt32).sign().dtype(), kInt32);
  EXPECT_EQ(vec(kInt32).to(kFloat64).dtype(), kFloat64);
  EXPECT_EQ(vec(kInt32).square().dtype(), kInt32);
}

TEST(Promotion, ReductionDtypes) {
  Tensor b = lt::tensor(std::vector<bool>{true, true, false, true}, {2, 2});
  Tensor i32 = lt::tensor(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  Tensor i64 = i32.to(kInt64);
  Tensor f32 = i32.to(kFloat32);
  Tensor f64 = i32.to(kFloat64);
  EXPECT_EQ(b.sum().dtype(), kInt64);
  EXPECT_EQ(b.sum().item<int64_t>(), 3);
  EXPECT_EQ(b.sum(0).dtype(), kInt64);
  EXPECT_EQ(b.sum(0).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(i32.sum().dtype(), kInt64);
  EXPECT_EQ(i32.sum(1, true).dtype(), kInt64);
  EXPECT_EQ(i32.prod().dtype(), kInt64);
  EXPECT_EQ(i32.prod().item<int64_t>(), 24);
  EXPECT_EQ(i64.sum().dtype(), kInt64);
  EXPECT_EQ(f32.sum().dtype(), kFloat32);
  EXPECT_EQ(f64.sum().dtype(), kFloat64);
  EXPECT_EQ(f32.mean().dtype(), kFloat32);
  EXPECT_EQ(f64.mean(0).dtype(), kFloat64);
  EXPECT_EQ(f64.var().dtype(), kFloat64);
  EXPECT_EQ(f32.norm().dtype(), kFloat32);
  EXPECT_EQ(i32.amax().dtype(), kInt32);
  EXPECT_EQ(i32.max().dtype(), kInt32);
  EXPECT_EQ(b.amax().dtype(), kBool);
  for (const Tensor& t : {i32, i64, f32, f64}) {
    EXPECT_EQ(t.argmax().dtype(), kInt64);
    EXPECT_EQ(t.argmax().item<int64_t>(), 3);
    EXPECT_EQ(t.argmin(1).dtype(), kInt64);
    EXPECT_EQ(std::get<1>(t.max(0)).dtype(), kInt64);
    EXPECT_EQ(std::get<0>(t.max(0)).dtype(), t.dtype());
    EXPECT_EQ(std::get<1>(t.min(1, true)).dtype(), kInt64);
  }
  EXPECT_EQ(i32.logsumexp({0}).dtype(), kFloat32);
  EXPECT_EQ(lt::one_hot(lt::tensor(std::vector<int64_t>{0, 2}), 3).dtype(), kInt64);
}

// ---------------------------------------------------------------- broadcasting

TEST(Broadcasting, ResultShapes) {
  auto shape_of = [](S a, S b) { return (lt::zeros(a) + lt::zeros(b)).sizes().vec(); };
  EXPECT_EQ(shape_of({3, 1}, {4}), (S{3, 4}));
  EXPECT_EQ(shape_of({2, 1, 4}, {3, 1}), (S{2, 3, 4}));
  EXPECT_EQ(shape_of({}, {2, 3}), (S{2, 3}));
  EXPECT_EQ(shape_of({2, 3}, {}), (S{2, 3}));
  EXPECT_EQ(shape_of({1}, {}), (S{1}));
  EXPECT_EQ(shape_of({0}, {1}), (S{0}));
  EXPECT_EQ(shape_of({5, 0}, {1}), (S{5, 0}));
  EXPECT_EQ(shape_of({1, 0}, {3, 1}), (S{3, 0}));
  EXPECT_EQ(shape_of({1, 1, 1}, {2}), (S{1, 1, 2}));
  EXPECT_EQ(shape_of({5, 1, 4, 1}, {3, 1, 1}), (S{5, 3, 4, 1}));
  EXPECT_EQ(lt::broadcast_shapes({3, 1}, {1, 4}), (S{3, 4}));
  EXPECT_EQ(lt::broadcast_shapes({}, {}), (S{}));
  EXPECT_EQ(lt::broadcast_to(lt::zeros({3}), {2, 3}).sizes().vec(), (S{2, 3}));
  EXPECT_EQ(
      lt::where(lt::zeros({3, 1}, kBool), lt::zeros({1, 4}), lt::zeros({2, 1, 1})).sizes().vec(),
      (S{2, 3, 4}));
  // Values follow the broadcast.
  Tensor col = lt::tensor(std::vector<float>{1, 2}, {2, 1}), row = lt::tensor({10.f, 20.f, 30.f});
  EXPECT_EQ((col + row).to_vector<float>(), (std::vector<float>{11, 21, 31, 12, 22, 32}));
  EXPECT_EQ((col < row / 15).to_vector<bool>(),
            (std::vector<bool>{false, true, true, false, false, false}));
}

TEST(Broadcasting, Errors) {
  auto fails = [](S a, S b) {
    try {
      (void)(lt::zeros(a) + lt::zeros(b));
    } catch (const lt::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(fails({3}, {4}).find("add: shapes [3] and [4] cannot be broadcast"), std::string::npos);
  EXPECT_NE(fails({2, 3}, {3, 2}).find("[2, 3] and [3, 2]"), std::string::npos);
  EXPECT_NE(fails({0}, {2}).find("[0] and [2]"), std::string::npos);
  EXPECT_NE(fails({2, 2, 3}, {4, 3}).find("cannot be broadcast"), std::string::npos);
  EXPECT_THROW(lt::broadcast_shapes({2}, {3}), lt::Error);
  EXPECT_THROW(lt::zeros({2, 3}).expand({3, 3}), lt::Error);
  EXPECT_THROW(lt::zeros({2, 3}).expand({3}), lt::Error);
}

// ---------------------------------------------------------------- printing

TEST(Printing, FloatTensors) {
  EXPECT_EQ(str(lt::tensor(std::vector<float>{1, 2, 3, 4}, {2, 2})),
            "tensor([[1., 2.],\n        [3., 4.]])");
  EXPECT_EQ(str(lt::tensor({1.5f, 2.25f})), "tensor([1.5000, 2.2500])");
  EXPECT_EQ(str(lt::tensor({-1.f, 2.f})), "tensor([-1.,  2.])");
  EXPECT_EQ(str(lt::tensor({0.f, 10.f})), "tensor([ 0., 10.])");
  EXPECT_EQ(str(lt::tensor({-0.5f, 12.125f})), "tensor([-0.5000, 12.1250])");
  EXPECT_EQ(str(lt::tensor({0.f, 0.f})), "tensor([0., 0.])");
  EXPECT_EQ(str(lt::tensor(std::vector<double>{1.5, 2})),
            "tensor([1.5000, 2.0000], dtype=torch.float64)");
  EXPECT_EQ(str(lt::arange(8, kFloat32).view({2, 2, 2})),
            "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])");
  // Scientific notation as PyTorch chooses it.
  EXPECT_EQ(str(lt::tensor({1e-5f, 1.f})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(str(lt::tensor({1e9f, 1.f})), "tensor([1.0000e+09, 1.0000e+00])");
  EXPECT_EQ(str(lt::tensor({1.f, 10000.f})), "tensor([1.0000e+00, 1.0000e+04])");
  EXPECT_EQ(str(lt::tensor({0.5f, 1000.5f})), "tensor([5.0000e-01, 1.0005e+03])");
  EXPECT_EQ(str(lt::tensor({1.f, 1000.f})), "tensor([   1., 1000.])");
  // Non-finite values.
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(str(lt::tensor({1.f, inf, -inf})), "tensor([1., inf, -inf])");
  EXPECT_EQ(str(lt::tensor({1.5f, std::nanf("")})), "tensor([1.5000,    nan])");
}

TEST(Printing, IntBoolTensors) {
  EXPECT_EQ(str(lt::tensor(std::vector<int64_t>{1, 2, 3})), "tensor([1, 2, 3])");
  EXPECT_EQ(str(lt::tensor(std::vector<int64_t>{-1, 20, 3})), "tensor([-1, 20,  3])");
  EXPECT_EQ(str(lt::tensor(std::vector<int64_t>{1, 2, 3, 4}, {2, 2})),
            "tensor([[1, 2],\n        [3, 4]])");
  EXPECT_EQ(str(lt::tensor(std::vector<int32_t>{1, 2})), "tensor([1, 2], dtype=torch.int32)");
  EXPECT_EQ(str(lt::tensor(std::vector<bool>{true, false})), "tensor([ True, False])");
  EXPECT_EQ(str(lt::tensor(std::vector<bool>{true, true})), "tensor([True, True])");
}

TEST(Printing, ZeroDimAndEmpty) {
  EXPECT_EQ(str(lt::scalar_tensor(3.5)), "tensor(3.5000)");
  EXPECT_EQ(str(lt::scalar_tensor(2.0)), "tensor(2.)");
  EXPECT_EQ(str(lt::scalar_tensor(7)), "tensor(7)");
  EXPECT_EQ(str(lt::scalar_tensor(true)), "tensor(True)");
  EXPECT_EQ(str(lt::scalar_tensor(7, kInt32)), "tensor(7, dtype=torch.int32)");
  EXPECT_EQ(str(lt::scalar_tensor(0.5, kFloat64)), "tensor(0.5000, dtype=torch.float64)");
  EXPECT_EQ(str(lt::tensor(std::vector<int64_t>{5}).sum()), "tensor(5)");
  EXPECT_EQ(str(lt::zeros({0})), "tensor([])");
  EXPECT_EQ(str(lt::zeros({0, 3})), "tensor([], size=(0, 3))");
  EXPECT_EQ(str(lt::zeros({2, 0, 1})), "tensor([], size=(2, 0, 1))");
  // Empty tensors name every non-default dtype: there are no elements to infer it from.
  EXPECT_EQ(str(lt::zeros({0}, kInt64)), "tensor([], dtype=torch.int64)");
  EXPECT_EQ(str(lt::zeros({0}, kInt32)), "tensor([], dtype=torch.int32)");
  EXPECT_EQ(str(lt::zeros({0}, kBool)), "tensor([], dtype=torch.bool)");
  EXPECT_EQ(str(lt::zeros({0, 2}, kFloat64)), "tensor([], size=(0, 2), dtype=torch.float64)");
  EXPECT_EQ(str(Tensor()), "[ undefined tensor ]");
  EXPECT_EQ(lt::tensor({1.f}).toString(), "tensor([1.])");
}

TEST(Printing, StridedViewsPrintLogicalOrder) {
  Tensor x = lt::arange(6, kInt64).view({2, 3});
  EXPECT_EQ(str(x.t()), "tensor([[0, 3],\n        [1, 4],\n        [2, 5]])");
  EXPECT_EQ(str(x.select(1, 2)), "tensor([2, 5])");
}

TEST(Printing, LongRowsWrapAt80Columns) {
  // PyTorch fits floor((80 - indent) / (width + 2)) elements on a line.
  EXPECT_EQ(str(lt::arange(30, kInt64)),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
            "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])");
  EXPECT_EQ(str(lt::arange(12, kFloat32) / 4),
            "tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000, 1.2500, 1.5000, 1.7500, 2.0000,\n"
            "        2.2500, 2.5000, 2.7500])");
  // A row inside a matrix has one more space of indent, for its first line and the rest.
  EXPECT_EQ(str(lt::arange(26, kInt64).view({1, 26})),
            "tensor([[ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
            "         18, 19, 20, 21, 22, 23, 24, 25]])");
}

TEST(Printing, NonCpuDeviceIsNamed) {
  lt::Tensor z;
  try {
    z = lt::ones({2}, lt::Device("lazy"));
  } catch (const lt::Error&) {
    GTEST_SKIP() << "this build has no lazy runtime";
  }
  EXPECT_EQ(str(z), "tensor([1., 1.], device='lazy')");
  EXPECT_EQ(str(z.to(kInt32)), "tensor([1, 1], device='lazy', dtype=torch.int32)");
  EXPECT_EQ(str(lt::zeros({0, 2}, lt::Device("lazy"))), "tensor([], device='lazy', size=(0, 2))");
}

TEST(Printing, Summarized) {
  // More than 1000 elements: three at each edge, formatted from the shown values only.
  EXPECT_EQ(str(lt::arange(2000, kInt64)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  Tensor m = lt::arange(2000, kInt64).view({1000, 2});
  EXPECT_EQ(str(m),
            "tensor([[   0,    1],\n"
            "        [   2,    3],\n"
            "        [   4,    5],\n"
            "        ...,\n"
            "        [1994, 1995],\n"
            "        [1996, 1997],\n"
            "        [1998, 1999]])");
  Tensor c = lt::zeros({1001});
  c.narrow(0, 500, 1).fill_(123456);  // hidden by the summary: does not widen the others
  EXPECT_EQ(str(c), "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
  // 3-d: the "..." row is separated like the rows around it (a blank line here).
  EXPECT_EQ(str(lt::zeros({7, 1, 150}, kInt64)),
            "tensor([[[0, 0, 0,  ..., 0, 0, 0]],\n\n"
            "        [[0, 0, 0,  ..., 0, 0, 0]],\n\n"
            "        [[0, 0, 0,  ..., 0, 0, 0]],\n\n"
            "        ...,\n\n"
            "        [[0, 0, 0,  ..., 0, 0, 0]],\n\n"
            "        [[0, 0, 0,  ..., 0, 0, 0]],\n\n"
            "        [[0, 0, 0,  ..., 0, 0, 0]]])");
}

}  // namespace
