// Error reporting: every class of bad input throws lt::Error whose message names the op, the
// shapes (or dtypes) involved and what was expected; the inputs stay unchanged and usable.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor_impl.h"

namespace {

using lt::Tensor;

// Runs `f`, expects an lt::Error whose message contains every string in `parts`.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const lt::Error& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos)
          << "message does not contain \"" << p << "\": " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-lt::Error exception: " << e.what();
    return;
  } catch (...) {
    ADD_FAILURE() << "threw something that is not a std::exception";
    return;
  }
  ADD_FAILURE() << "did not throw; expected an lt::Error containing \"" << parts.front() << "\"";
}

#define EXPECT_LT_ERROR(stmt, ...)                      \
  do {                                                  \
    SCOPED_TRACE(#stmt);                                \
    expect_error([&] { (void)(stmt); }, {__VA_ARGS__}); \
  } while (0)

// A snapshot of a tensor's observable state, to check that a failed op left it alone.
struct Snapshot {
  explicit Snapshot(const Tensor& t)
      : tensor(t),
        sizes(t.sizes().vec()),
        strides(t.strides().vec()),
        offset(t.storage_offset()),
        dtype(t.dtype()),
        values(t.to_vector<double>()) {}

  void expect_unchanged() const {
    EXPECT_EQ(tensor.sizes().vec(), sizes);
    EXPECT_EQ(tensor.strides().vec(), strides);
    EXPECT_EQ(tensor.storage_offset(), offset);
    EXPECT_EQ(tensor.dtype(), dtype);
    EXPECT_EQ(tensor.to_vector<double>(), values);
    // Still usable: out-of-place math and an in-place round trip both work.
    Tensor c = tensor.clone();
    EXPECT_EQ(c.to_vector<double>(), values);
    if (tensor.dtype() != lt::kBool) {
      EXPECT_EQ((c + c).to_vector<double>().size(), values.size());
      c.mul_(1);
      EXPECT_EQ(c.to_vector<double>(), values);
    }
    EXPECT_EQ(tensor.sum().numel(), 1);
  }

  Tensor tensor;
  std::vector<int64_t> sizes, strides;
  int64_t offset;
  lt::Dtype dtype;
  std::vector<double> values;
};

Tensor f32(std::vector<float> v, lt::IntList sizes) { return lt::tensor(v, sizes); }
Tensor i64(std::vector<int64_t> v, lt::IntList sizes) { return lt::tensor(v, sizes); }
Tensor arange_f(int64_t n, lt::IntList sizes) { return lt::arange(n, lt::kFloat32).reshape(sizes); }

// ---------------------------------------------------------------- shapes

TEST(ErrorShapes, BinaryBroadcastFailure) {
  Tensor a = arange_f(6, {2, 3}), b = arange_f(4, {4});
  Snapshot sa(a), sb(b);
  EXPECT_LT_ERROR(a + b, "add", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(a - b, "sub", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(a * b, "mul", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(a / b, "div", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(a == b, "eq", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(lt::maximum(a, b), "maximum", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(lt::pow(a, b), "pow", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(lt::where(a > 1.0, a, b), "where", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(lt::broadcast_shapes({2, 3}, {3, 2}), "broadcast_shapes", "[2, 3]", "[3, 2]");
  EXPECT_LT_ERROR(a.expand({4, 3}), "expand", "[2, 3]", "[4, 3]");
  EXPECT_LT_ERROR(lt::mse_loss(a, b), "[2, 3]", "[4]", "broadcast");
  sa.expect_unchanged();
  sb.expect_unchanged();
}

TEST(ErrorShapes, MatmulInnerDimMismatch) {
  Tensor a = arange_f(6, {2, 3}), b = arange_f(20, {4, 5});
  Snapshot sa(a), sb(b);
  EXPECT_LT_ERROR(lt::matmul(a, b),
                  "matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)");
  EXPECT_LT_ERROR(a.matmul(b), "matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)");
  EXPECT_LT_ERROR(a.mm(b), "[2, 3]", "[4, 5]", "cannot be multiplied", "3 != 4");
  // 1-d operands: the message names the shapes the caller passed.
  Tensor v3 = arange_f(3, {3}), v4 = arange_f(4, {4});
  EXPECT_LT_ERROR(lt::matmul(v3, v4), "matmul", "[3]", "[4]", "3 != 4");
  EXPECT_LT_ERROR(lt::matmul(v3, b), "matmul", "[3]", "[4, 5]", "3 != 4");
  EXPECT_LT_ERROR(lt::matmul(a, v4), "matmul", "[2, 3]", "[4]", "3 != 4");
  // Batched: inner dims and batch dims.
  Tensor x = arange_f(24, {2, 3, 4}), y = arange_f(30, {2, 5, 3});
  EXPECT_LT_ERROR(lt::bmm(x, y), "[2, 3, 4]", "[2, 5, 3]", "4 != 5");
  EXPECT_LT_ERROR(lt::matmul(arange_f(12, {2, 2, 3}), arange_f(18, {3, 3, 2})), "matmul", "[2]",
                  "[3]", "broadcast");
  EXPECT_LT_ERROR(lt::bmm(x, arange_f(12, {3, 4, 1})), "bmm", "[2, 3, 4]", "[3, 4, 1]");
  EXPECT_LT_ERROR(lt::mm(x, b), "mm", "[2, 3, 4]", "2-d");
  EXPECT_LT_ERROR(lt::linear(a, arange_f(8, {2, 4})), "linear", "[2, 3]", "[2, 4]");
  sa.expect_unchanged();
  sb.expect_unchanged();
}

TEST(ErrorShapes, CatAndStackMismatch) {
  Tensor a = arange_f(6, {2, 3}), b = arange_f(8, {2, 4}), c = arange_f(6, {6});
  Snapshot sa(a), sb(b), sc(c);
  EXPECT_LT_ERROR(lt::cat({a, b}, 0), "cat", "tensor 1", "[2, 4]", "[2, 3]", "dim 0");
  EXPECT_LT_ERROR(lt::cat({a, c}, 0), "cat", "[6]", "[2, 3]", "rank");
  EXPECT_LT_ERROR(lt::cat({a, b}, 2), "cat", "dim 2", "out of range");
  EXPECT_LT_ERROR(lt::cat({}, 0), "cat", "non-empty");
  EXPECT_LT_ERROR(lt::cat({a, lt::scalar_tensor(1.0)}, 0), "cat", "tensor 1", "0-d");
  EXPECT_LT_ERROR(lt::stack({a, b}, 0), "stack", "tensor 1", "[2, 4]", "[2, 3]");
  EXPECT_LT_ERROR(lt::stack({a, a}, 3), "stack", "dim 3", "out of range");
  EXPECT_LT_ERROR(lt::stack({}, 0), "stack", "non-empty");
  // cat along dim 1 is fine for [2, 3] and [2, 4].
  EXPECT_EQ(lt::cat({a, b}, 1).sizes().vec(), (std::vector<int64_t>{2, 7}));
  sa.expect_unchanged();
  sb.expect_unchanged();
  sc.expect_unchanged();
}

TEST(ErrorShapes, Conv2dChannelMismatch) {
  Tensor x = lt::ones({1, 3, 5, 5}), w = lt::ones({4, 2, 3, 3});
  Snapshot sx(x), sw(w);
  EXPECT_LT_ERROR(lt::conv2d(x, w), "conv2d", "[1, 3, 5, 5]", "3 channels", "[4, 2, 3, 3]",
                  "expects 2");
  EXPECT_LT_ERROR(lt::conv2d(x, lt::ones({4, 3, 3, 3}), lt::ones({5})), "conv2d", "bias", "[5]",
                  "4 output channels");
  EXPECT_LT_ERROR(lt::conv2d(x, lt::ones({4, 3, 7, 7})), "conv2d", "[4, 3, 7, 7]", "[1, 3, 5, 5]",
                  "larger");
  EXPECT_LT_ERROR(lt::conv2d(x, lt::ones({4, 3, 3})), "conv2d", "[4, 3, 3]", "4-d weight");
  EXPECT_LT_ERROR(lt::conv2d(lt::ones({3, 5}), w), "conv2d", "[3, 5]", "3-d or 4-d");
  EXPECT_LT_ERROR(lt::conv2d(x, lt::ones({4, 1, 3, 3}), {}, {1, 1}, {0, 0}, {1, 1}, 2), "conv2d",
                  "groups 2", "3");
  EXPECT_LT_ERROR(lt::conv2d(x, lt::ones({4, 3, 3, 3}), {}, {0, 1}), "conv2d", "stride [0, 1]");
  EXPECT_LT_ERROR(lt::conv2d(x, lt::ones({4, 3, 3, 3}, lt::kFloat64)), "conv2d", "float32",
                  "float64");
  EXPECT_LT_ERROR(lt::max_pool2d(x, {7, 7}), "max_pool2d", "7x7", "[1, 3, 5, 5]");
  EXPECT_LT_ERROR(lt::avg_pool2d(x, {6, 6}, {2, 2}), "avg_pool2d", "6x6", "[1, 3, 5, 5]");
  // (5 - 6) / 2 + 1 must floor to 0 output rows, as in PyTorch, not truncate to 1.
  EXPECT_LT_ERROR(lt::conv2d(x, lt::ones({4, 3, 6, 6}), {}, {2, 2}), "conv2d", "[4, 3, 6, 6]",
                  "larger");
  EXPECT_LT_ERROR(lt::avg_pool2d(x, {2, 2}, {2, 2}, {2, 2}), "avg_pool2d", "padding");
  sx.expect_unchanged();
  sw.expect_unchanged();
}

TEST(ErrorShapes, LayerNormShape) {
  Tensor x = arange_f(6, {2, 3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(lt::layer_norm(x, {4}), "layer_norm", "normalized_shape [4]", "[2, 3]");
  EXPECT_LT_ERROR(lt::layer_norm(x, {2, 3, 1}), "layer_norm", "[2, 3, 1]", "[2, 3]");
  EXPECT_LT_ERROR(lt::layer_norm(x, {3}, lt::ones({4})), "layer_norm", "weight [4]", "[3]");
  EXPECT_LT_ERROR(lt::layer_norm(x, {3}, lt::ones({3}), lt::ones({2})), "layer_norm", "bias [2]",
                  "[3]");
  EXPECT_EQ(lt::layer_norm(x, {3}).sizes().vec(), (std::vector<int64_t>{2, 3}));
  sx.expect_unchanged();
}

TEST(ErrorShapes, OtherShapeRules) {
  Tensor x = arange_f(6, {2, 3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(x.permute({0}), "permute", "[0]", "[2, 3]");
  EXPECT_LT_ERROR(x.permute({0, 0}), "permute", "[0, 0]", "permutation");
  EXPECT_LT_ERROR(x.repeat({2}), "repeat", "[2]", "[2, 3]");
  EXPECT_LT_ERROR(lt::pad(x, {1, 1, 1}), "pad", "[1, 1, 1]", "[2, 3]");
  EXPECT_LT_ERROR(lt::pad(x, {-2, -2}), "pad", "[-2, -2]", "negative");
  EXPECT_LT_ERROR(x.t().t().expand({3}), "expand", "[2, 3]", "[3]");
  EXPECT_LT_ERROR(arange_f(24, {2, 3, 4}).t(), "t", "[2, 3, 4]");
  EXPECT_LT_ERROR(x.split(0), "split", "positive");
  EXPECT_LT_ERROR(x.chunk(0), "chunk", "positive");
  EXPECT_LT_ERROR(x.copy_(arange_f(4, {4})), "copy_", "[4]", "[2, 3]");
  EXPECT_LT_ERROR(lt::cross_entropy(x, i64({0, 1, 2}, {3})), "cross_entropy", "[2, 3]", "[3]");
  EXPECT_LT_ERROR(lt::embedding(i64({0}, {1}), arange_f(6, {6})), "embedding", "[6]", "2-d");
  EXPECT_LT_ERROR(lt::scaled_dot_product_attention(x, arange_f(8, {2, 4}), x),
                  "scaled_dot_product_attention", "[2, 3]", "[2, 4]");
  sx.expect_unchanged();
}

// ---------------------------------------------------------------- dtypes

TEST(ErrorDtypes, WhereWithNonBoolCondition) {
  Tensor cond = i64({1, 0, 1}, {3}), a = arange_f(3, {3}), b = lt::zeros({3});
  Snapshot sc(cond), sa(a), sb(b);
  EXPECT_LT_ERROR(lt::where(cond, a, b), "where", "bool condition", "int64", "[3]");
  EXPECT_LT_ERROR(lt::where(a, a, b), "where", "bool condition", "float32", "[3]");
  EXPECT_LT_ERROR(a.where(cond, b), "where", "bool condition", "int64");
  EXPECT_LT_ERROR(lt::where(cond, a, 0.0), "where", "bool condition", "int64");
  sc.expect_unchanged();
  sa.expect_unchanged();
  sb.expect_unchanged();
}

TEST(ErrorDtypes, InplaceResultCannotBeCast) {
  Tensor x = i64({1, 2, 3}, {3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(x.add_(1.5), "add_", "float32", "int64", "can't be cast");
  EXPECT_LT_ERROR(x.sub_(0.5), "sub_", "float32", "int64");
  EXPECT_LT_ERROR(x.mul_(lt::tensor({2.f, 2.f, 2.f})), "mul_", "float32", "int64");
  EXPECT_LT_ERROR(x.div_(2), "div_", "float32", "int64");  // true division
  EXPECT_LT_ERROR(x += 0.25, "add_", "float32", "int64");
  EXPECT_LT_ERROR(x.clamp_(0.5), "float32", "int64");
  sx.expect_unchanged();

  Tensor b = lt::tensor(std::vector<bool>{true, false});
  Snapshot sbool(b);
  EXPECT_LT_ERROR(b.add_(1), "add_", "int64", "bool");
  EXPECT_LT_ERROR(b.mul_(lt::tensor(std::vector<int32_t>{1, 2})), "mul_", "int32", "bool");
  sbool.expect_unchanged();

  // Allowed: same category or a wider destination.
  Tensor i32 = lt::tensor(std::vector<int32_t>{1, 2});
  i32.add_(i64({10, 20}, {2}));
  EXPECT_EQ(i32.dtype(), lt::kInt32);
  EXPECT_EQ(i32.to_vector<int32_t>(), (std::vector<int32_t>{11, 22}));
}

TEST(ErrorDtypes, MatmulDtypeMismatch) {
  Tensor a = arange_f(6, {2, 3}), b = lt::ones({3, 2}, lt::kFloat64);
  Snapshot sa(a), sb(b);
  EXPECT_LT_ERROR(lt::matmul(a, b), "matmul", "same dtype", "float32", "float64");
  EXPECT_LT_ERROR(lt::matmul(lt::ones({2, 2}, lt::kBool), lt::ones({2, 2}, lt::kBool)), "matmul",
                  "bool");
  sa.expect_unchanged();
  sb.expect_unchanged();
}

TEST(ErrorDtypes, FloatOnlyReductionsOfInts) {
  Tensor x = i64({1, 2, 3, 4}, {2, 2});
  Snapshot sx(x);
  EXPECT_LT_ERROR(x.mean(), "mean", "floating", "int64", "[2, 2]");
  EXPECT_LT_ERROR(x.mean(0), "mean", "floating", "int64");
  EXPECT_LT_ERROR(x.var(), "var", "floating", "int64");
  EXPECT_LT_ERROR(x.std(), "floating", "int64");
  EXPECT_LT_ERROR(x.norm(), "norm", "floating", "int64");
  EXPECT_LT_ERROR(lt::tensor(std::vector<bool>{true}).argmax(), "argmax", "bool");
  EXPECT_LT_ERROR(-lt::tensor(std::vector<bool>{true}), "neg", "bool");
  EXPECT_LT_ERROR(lt::tensor(std::vector<bool>{true}) - lt::tensor(std::vector<bool>{true}), "sub",
                  "bool");
  EXPECT_LT_ERROR(lt::rand({2}, lt::kInt64), "floating", "int64");
  EXPECT_LT_ERROR(x.gather(0, arange_f(2, {1, 2})), "gather", "index", "float32");
  sx.expect_unchanged();
}

// ---------------------------------------------------------------- dims

TEST(ErrorDims, OutOfRange) {
  Tensor x = arange_f(6, {2, 3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(x.sum(2), "sum", "dim 2", "out of range", "dimension 2");
  EXPECT_LT_ERROR(x.sum(-3), "sum", "dim -3", "out of range");
  EXPECT_LT_ERROR(x.sum({0, 0}), "sum", "more than once");
  EXPECT_LT_ERROR(x.amax(5), "amax", "dim 5", "out of range");
  EXPECT_LT_ERROR(x.argmax(2), "argmax", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.max(2), "dim 2", "out of range");
  EXPECT_LT_ERROR(x.softmax(3), "softmax", "dim 3", "out of range");
  EXPECT_LT_ERROR(x.log_softmax(-3), "log_softmax", "dim -3", "out of range");
  EXPECT_LT_ERROR(x.transpose(0, 2), "transpose", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.select(2, 0), "select", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.select(0, 2), "select", "index 2", "dim 0", "size 2", "[2, 3]");
  EXPECT_LT_ERROR(x.select(1, -4), "select", "index -4", "dim 1", "size 3");
  EXPECT_LT_ERROR(x.narrow(2, 0, 1), "narrow", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.narrow(1, 1, 3), "narrow", "start 1", "length 3", "size 3", "[2, 3]");
  EXPECT_LT_ERROR(x.narrow(0, 0, -1), "narrow", "length -1");
  EXPECT_LT_ERROR(x.slice(2, 0, 1), "slice", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.slice(1, 0, 3, 0), "slice", "step", "0");
  EXPECT_LT_ERROR(x.unsqueeze(3), "unsqueeze", "dim 3", "out of range");
  EXPECT_LT_ERROR(x.squeeze(2), "squeeze", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.flatten(0, 2), "flatten", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.flatten(1, 0), "flatten", "start_dim");
  EXPECT_LT_ERROR(x.permute({0, 2}), "permute", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.index_select(2, i64({0}, {1})), "index_select", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.chunk(2, 2), "chunk", "dim 2", "out of range");
  EXPECT_LT_ERROR(x.split(1, -3), "split", "dim -3", "out of range");
  EXPECT_LT_ERROR(x.size(2), "size", "dim 2", "out of range");
  EXPECT_LT_ERROR(lt::scalar_tensor(1.0).select(0, 0), "select", "0-d");
  sx.expect_unchanged();
}

// ---------------------------------------------------------------- views and sizes

TEST(ErrorViews, ViewOfNonViewableLayout) {
  Tensor x = arange_f(6, {2, 3});
  Tensor xt = x.t();
  Snapshot sx(x), sxt(xt);
  EXPECT_LT_ERROR(xt.view({6}), "view", "[6]", "[3, 2]", "strides [1, 3]", "reshape");
  EXPECT_LT_ERROR(xt.view({2, 3}), "view", "[2, 3]", "[3, 2]");
  EXPECT_LT_ERROR(x.slice(1, 0, 3, 2).view({4}), "view", "[4]", "[2, 2]");
  // reshape copies instead.
  EXPECT_EQ(xt.reshape({6}).to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  sx.expect_unchanged();
  sxt.expect_unchanged();
}

TEST(ErrorViews, InferSizeErrors) {
  Tensor x = arange_f(6, {2, 3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(x.reshape({-1, -1}), "reshape", "only one dimension", "[-1, -1]");
  EXPECT_LT_ERROR(x.view({-1, -1}), "view", "only one dimension", "[-1, -1]");
  EXPECT_LT_ERROR(x.reshape({4, 2}), "reshape", "[4, 2]", "invalid for input of size 6");
  EXPECT_LT_ERROR(x.view({7}), "view", "[7]", "invalid for input of size 6");
  EXPECT_LT_ERROR(x.reshape({-1, 4}), "reshape", "[-1, 4]", "invalid for input of size 6");
  EXPECT_LT_ERROR(x.reshape({-1, 0}), "reshape", "[-1, 0]", "size 6");
  EXPECT_LT_ERROR(x.reshape({-2, 3}), "reshape", "-2", "[-2, 3]");
  EXPECT_LT_ERROR(lt::zeros({0, 3}).reshape({-1, 0}), "reshape", "[-1, 0]");
  sx.expect_unchanged();
}

TEST(ErrorViews, NegativeSizesInFactories) {
  EXPECT_LT_ERROR(lt::zeros({2, -1}), "zeros", "negative", "[2, -1]");
  EXPECT_LT_ERROR(lt::ones({-3}), "ones", "negative", "[-3]");
  EXPECT_LT_ERROR(lt::empty({-1, 2}), "empty", "negative", "[-1, 2]");
  EXPECT_LT_ERROR(lt::full({-2}, 1.0), "full", "negative", "[-2]");
  EXPECT_LT_ERROR(lt::rand({2, -2}), "rand", "negative", "[2, -2]");
  EXPECT_LT_ERROR(lt::randn({-5}), "randn", "negative", "[-5]");
  EXPECT_LT_ERROR(lt::randint(0, 5, {-1}), "randint", "negative", "[-1]");
  EXPECT_LT_ERROR(lt::tensor(std::vector<float>{}, {-1}), "tensor", "negative", "[-1]");
  EXPECT_LT_ERROR(lt::tensor(std::vector<float>{1, 2, 3}, {2, 2}), "tensor", "3 values", "[2, 2]");
  EXPECT_LT_ERROR(lt::eye(-1), "eye", "non-negative");
  EXPECT_LT_ERROR(lt::linspace(0, 1, -1), "linspace", "-1");
  EXPECT_LT_ERROR(lt::arange(0, 5, 0), "arange", "step");
  EXPECT_LT_ERROR(lt::arange(0, -5, 1), "arange", "sign of step");
  EXPECT_LT_ERROR(lt::randint(5, 5, {2}), "randint", "low 5", "high 5");
  EXPECT_LT_ERROR(lt::zeros_like(lt::ones({2})).expand({-2, 2}), "expand", "-2");
}

// ---------------------------------------------------------------- indices and values

TEST(ErrorIndex, GatherIndexSelectOutOfBounds) {
  Tensor x = arange_f(6, {2, 3});
  Tensor idx = i64({0, 3}, {1, 2});
  Tensor sel = i64({0, 5}, {2});
  Snapshot sx(x), si(idx), ss(sel);
  EXPECT_LT_ERROR(x.gather(1, idx), "gather", "index 3", "out of bounds", "dim 1", "size 3");
  EXPECT_LT_ERROR(x.gather(0, i64({-3}, {1, 1})), "gather", "index -3", "out of bounds");
  EXPECT_LT_ERROR(x.index_select(0, sel), "index_select", "index 5", "out of bounds", "dim 0",
                  "size 2");
  EXPECT_LT_ERROR(x.index_select(1, i64({-4}, {1})), "index_select", "index -4");
  EXPECT_LT_ERROR(x.index_select(0, i64({0, 1}, {1, 2})), "index_select", "[1, 2]");
  EXPECT_LT_ERROR(x.scatter_add(1, idx, lt::ones({1, 2})), "scatter_add", "index 3",
                  "out of bounds");
  EXPECT_LT_ERROR(x.gather(1, i64({0, 0, 0}, {3})), "gather", "[3]", "[2, 3]", "rank");
  EXPECT_LT_ERROR(lt::embedding(i64({7}, {1}), x), "index 7", "out of bounds");
  EXPECT_LT_ERROR(lt::cross_entropy(x, i64({0, 3}, {2})), "index 3", "out of bounds");
  EXPECT_LT_ERROR(lt::one_hot(lt::tensor({1.f}), 3), "one_hot", "float32");
  sx.expect_unchanged();
  si.expect_unchanged();
  ss.expect_unchanged();
}

TEST(ErrorValues, ItemOfMultiElementTensor) {
  Tensor x = arange_f(6, {2, 3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(x.item(), "item", "6 elements", "[2, 3]");
  EXPECT_LT_ERROR(x.item<float>(), "item", "6 elements", "[2, 3]");
  EXPECT_LT_ERROR(lt::zeros({0}).item<float>(), "item", "0 elements", "[0]");
  EXPECT_LT_ERROR(static_cast<bool>(x), "bool", "6 elements", "ambiguous");
  sx.expect_unchanged();
}

TEST(ErrorValues, DataPtrWithWrongType) {
  Tensor x = arange_f(6, {2, 3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(x.data_ptr<int32_t>(), "data_ptr", "float32", "int32");
  EXPECT_LT_ERROR(x.data_ptr<double>(), "data_ptr", "float32", "float64");
  EXPECT_LT_ERROR(i64({1}, {1}).data_ptr<int32_t>(), "data_ptr", "int64", "int32");
  EXPECT_LT_ERROR(lt::tensor(std::vector<bool>{true}).data_ptr<float>(), "data_ptr", "bool",
                  "float32");
  EXPECT_EQ(x.data_ptr<float>()[5], 5.f);
  EXPECT_LT_ERROR(lt::max(lt::zeros({0})), "max", "empty");
  EXPECT_LT_ERROR(lt::argmax(lt::zeros({0})), "argmax", "empty");
  EXPECT_LT_ERROR(lt::zeros({2, 0}).amax(1), "amax", "zero-size", "[2, 0]");
  sx.expect_unchanged();
}

TEST(ErrorValues, UndefinedTensor) {
  Tensor u;
  Tensor x = arange_f(3, {3});
  Snapshot sx(x);
  EXPECT_FALSE(u.defined());
  EXPECT_LT_ERROR(u.sizes(), "sizes", "undefined");
  EXPECT_LT_ERROR(u.dim(), "dim", "undefined");
  EXPECT_LT_ERROR(u.numel(), "numel", "undefined");
  EXPECT_LT_ERROR(x + u, "add", "undefined");
  EXPECT_LT_ERROR(u * x, "mul", "undefined");
  EXPECT_LT_ERROR(x.add_(u), "undefined");
  EXPECT_LT_ERROR(x.copy_(u), "copy_", "undefined");
  EXPECT_LT_ERROR(u.sum(), "undefined");
  sx.expect_unchanged();
}

TEST(ErrorValues, DegenerateArguments) {
  Tensor x = arange_f(6, {2, 3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(lt::zeros({0, 3}).select(0, 0), "select", "index 0", "size 0");
  EXPECT_LT_ERROR(lt::matmul(lt::scalar_tensor(1.0), x), "matmul", "[]", "[2, 3]");
  EXPECT_LT_ERROR(x.slice(1, 0, 3, -1), "slice", "step", "-1");
  EXPECT_LT_ERROR(lt::max_pool2d(lt::ones({1, 1, 4, 4}), {0, 2}), "max_pool2d", "kernel 0x2",
                  "positive");
  EXPECT_LT_ERROR(lt::avg_pool2d(lt::ones({1, 1, 4, 4}), {2, 2}, {2, 0}), "avg_pool2d",
                  "stride 2x0", "positive");
  EXPECT_LT_ERROR(
      lt::conv2d(lt::ones({1, 2, 4, 4}), lt::ones({2, 2, 3, 3}), {}, {1, 1}, {0, 0}, {1, 1}, 0),
      "conv2d", "groups 0");
  float buf[4] = {0, 1, 2, 3};
  EXPECT_LT_ERROR(lt::from_blob(buf, {2, 2}, {1}), "from_blob", "[2, 2]", "[1]");
  EXPECT_LT_ERROR(lt::dropout(x, 1.5, true), "dropout", "1.5");
  EXPECT_LT_ERROR(x.gelu("fast"), "gelu", "fast");
  EXPECT_LT_ERROR(lt::clamp(x, std::optional<lt::Scalar>(), std::nullopt), "clamp", "min", "max");
  // A negative p is a norm now (PyTorch's), an integer input is not.
  EXPECT_LT_ERROR(lt::norm(lt::tensor(std::vector<int64_t>{1, 2}), -1, {0}), "norm", "int64");
  EXPECT_LT_ERROR(lt::one_hot(lt::tensor(std::vector<int64_t>{0}), 0), "one_hot", "0");
  sx.expect_unchanged();
}

// ---------------------------------------------------------------- devices

TEST(ErrorDevices, DeviceSpecs) {
  lt::Device lazy("lazy");
  EXPECT_TRUE(lazy.is_lazy());
  EXPECT_EQ(lazy.str(), "lazy");
  EXPECT_EQ(lt::Device("lazy:0"), lazy);
  EXPECT_LT_ERROR(lt::Device("tpu"), "Device", "tpu");
  EXPECT_LT_ERROR(lt::Device("lazy:x"), "Device", "lazy:x");
  float buf[2] = {1, 2};
  EXPECT_LT_ERROR(lt::from_blob(buf, {2}, lazy), "from_blob", "cpu", "lazy");
}

// Argument errors on lazy tensors are thrown while recording, at the
// call, with the eager messages, and a failed in-place op leaves the lazy destination unchanged.
TEST(ErrorDevices, LazyArgumentErrorsAtTheCall) {
  lt::Device lazy("lazy");
  Tensor a = arange_f(6, {2, 3}).to(lazy);
  Tensor i = lt::tensor(std::vector<int64_t>{1, 2, 3}).to(lazy);
  EXPECT_LT_ERROR(a + arange_f(4, {4}).to(lazy), "add", "[2, 3]", "[4]", "broadcast");
  EXPECT_LT_ERROR(lt::matmul(a, lt::ones({4, 5}, lazy)),
                  "matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)");
  EXPECT_LT_ERROR(lt::cat({a, lt::ones({2, 4}, lazy)}, 0), "cat", "[2, 4]", "[2, 3]");
  EXPECT_LT_ERROR(a.sum(2), "sum", "dim 2", "out of range");
  EXPECT_LT_ERROR(a.reshape({4, 2}), "reshape", "[4, 2]", "size 6");
  EXPECT_LT_ERROR(lt::where(i, i, i), "where", "bool condition", "int64");
  EXPECT_LT_ERROR(i.mean(), "mean", "floating", "int64");
  EXPECT_LT_ERROR(i.add_(1.5), "add_", "float32", "int64");
  EXPECT_LT_ERROR(i.clamp_(0, 2.5), "float32", "int64");
  EXPECT_LT_ERROR(a.add_(lt::ones({3, 2, 3}, lazy)), "add_", "[3, 2, 3]", "[2, 3]");
  EXPECT_LT_ERROR(lt::zeros({2, -1}, lazy), "zeros", "negative", "[2, -1]");
  EXPECT_LT_ERROR(i.item(), "item", "3 elements");
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(a.sizes().vec(), (std::vector<int64_t>{2, 3}));
}

Tensor lazy_tensor(lt::IntList sizes) { return lt::zeros(sizes, lt::Device("lazy")); }

TEST(ErrorDevices, MixedDevices) {
  Tensor x = arange_f(6, {2, 3});
  Tensor z = lazy_tensor({2, 3});
  Snapshot sx(x);
  EXPECT_LT_ERROR(x + z, "add", "cpu", "lazy", ".to()");
  EXPECT_LT_ERROR(z * x, "mul", "lazy", "cpu", ".to()");
  EXPECT_LT_ERROR(lt::matmul(x, lazy_tensor({3, 2})), "matmul", "cpu", "lazy");
  EXPECT_LT_ERROR(lt::cat({x, z}, 0), "cat", "cpu", "lazy");
  EXPECT_LT_ERROR(lt::where(x > 0.0, x, z), "where", "cpu", "lazy");
  EXPECT_LT_ERROR(x.add_(z), "add_", "cpu", "lazy");
  EXPECT_LT_ERROR(x.mul_(z), "mul_", "cpu", "lazy");
  EXPECT_LT_ERROR(z.data_ptr<float>(), "data_ptr", "lazy");
  sx.expect_unchanged();
}

// ---------------------------------------------------------------- failed in-place ops

TEST(ErrorInplace, FailedInplaceLeavesDestinationUntouched) {
  Tensor base = arange_f(12, {3, 4});
  Tensor view = base.narrow(0, 1, 2);  // [2, 4] view of rows 1..2
  Tensor col = base.narrow(1, 0, 1);   // [3, 1] view of column 0
  Snapshot sb(base), sv(view), sc(col);

  EXPECT_LT_ERROR(view.add_(arange_f(6, {2, 3})), "add", "[2, 4]", "[2, 3]");
  EXPECT_LT_ERROR(col.add_(lt::ones({4})), "add_", "[3, 4]", "[3, 1]");  // broadcast grows it
  EXPECT_LT_ERROR(col.mul_(view), "mul", "[3, 1]", "[2, 4]");
  EXPECT_LT_ERROR(view.mul_(arange_f(8, {2, 2, 2})), "mul", "[2, 4]", "[2, 2, 2]");
  EXPECT_LT_ERROR(view.sub_(lt::ones({1, 2, 4})), "sub_", "[1, 2, 4]", "[2, 4]");
  EXPECT_LT_ERROR(view.div_(arange_f(3, {3})), "div", "[2, 4]", "[3]");
  EXPECT_LT_ERROR(view.copy_(arange_f(3, {3})), "copy_", "[3]", "[2, 4]");
  EXPECT_LT_ERROR(view.add_(base), "add", "[2, 4]", "[3, 4]");  // overlapping source
  EXPECT_LT_ERROR(view.where(view > 100.0, base), "where", "[2, 4]", "[3, 4]");
  sb.expect_unchanged();
  sv.expect_unchanged();
  sc.expect_unchanged();

  Tensor scalar = lt::scalar_tensor(2.0);
  Snapshot ss(scalar);
  EXPECT_LT_ERROR(scalar.add_(lt::ones({2})), "add_", "[2]", "[]");
  ss.expect_unchanged();
}

TEST(ErrorInplace, FailedDtypeCheckLeavesDestinationUntouched) {
  Tensor x = i64({-5, 1, 3, 7}, {2, 2});
  Tensor xv = x.t();
  Snapshot sx(x), sxv(xv);
  EXPECT_LT_ERROR(xv.add_(1.5), "add_", "float32", "int64");
  EXPECT_LT_ERROR(xv.mul_(lt::ones({2, 2})), "mul_", "float32", "int64");
  EXPECT_LT_ERROR(x.div_(i64({2, 2, 2, 2}, {2, 2})), "div_", "float32", "int64");
  // clamp_ with an int min and a float max: the whole op fails, so the min step must not have
  // been applied either (PyTorch checks the result type up front).
  EXPECT_LT_ERROR(x.clamp_(0, 2.5), "float32", "int64");
  EXPECT_LT_ERROR(xv.clamp_(0, 2.5), "float32", "int64");
  sx.expect_unchanged();
  sxv.expect_unchanged();

  Tensor b = lt::tensor(std::vector<bool>{true, false, true});
  Snapshot sb(b);
  EXPECT_LT_ERROR(b.add_(lt::tensor(std::vector<int32_t>{1, 1, 1})), "add_", "int32", "bool");
  EXPECT_LT_ERROR(b.clamp_(0), "int64", "bool");
  sb.expect_unchanged();

  // A successful clamp_ of the same kind still works.
  x.clamp_(0, 3);
  EXPECT_EQ(x.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 3, 3}));
}

}  // namespace
