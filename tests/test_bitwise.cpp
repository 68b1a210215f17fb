// Bitwise ops beyond the op sweep's table: bool operands (logical), shift amounts outside the
// width (PyTorch's 0 and sign fill), narrow widths (int8), the operator, method and in-place
// spellings, fused chains on the lazy device, and the errors for floating operands.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lt/lt.h"

namespace {

using lt::Tensor;
using V = std::vector<int64_t>;

V ints(const Tensor& t) { return t.to(lt::kCPU).to(lt::kInt64).to_vector<int64_t>(); }

class Bitwise : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
  Tensor i64(V v) const { return lt::tensor(v).to(dev()); }
};

TEST_P(Bitwise, IntegerValuesAndOperators) {
  Tensor a = i64({12, -7, 0, 255}), b = i64({10, 3, -1, 15});
  EXPECT_EQ(ints(a & b), (V{8, 1, 0, 15}));
  EXPECT_EQ(ints(a | b), (V{14, -5, -1, 255}));
  EXPECT_EQ(ints(a ^ b), (V{6, -6, -1, 240}));
  EXPECT_EQ(ints(~a), (V{-13, 6, -1, -256}));
  EXPECT_EQ(ints(a.bitwise_and(6)), (V{4, 0, 0, 6}));
  EXPECT_EQ(ints(lt::bitwise_xor(a, b)), ints(a ^ b));
  EXPECT_EQ(ints(a << 2), (V{48, -28, 0, 1020}));
  EXPECT_EQ(ints(a >> 2), (V{3, -2, 0, 63}));  // arithmetic: -7 >> 2 is -2
  // Amounts past the width or negative: 0 to the left, the sign fill to the right.
  Tensor s = i64({64, 70, -1, 63});
  EXPECT_EQ(ints(i64({5, 5, 5, 1}) << s), (V{0, 0, 0, INT64_MIN}));
  EXPECT_EQ(ints(i64({5, -5, -5, -5}) >> s), (V{0, -1, -1, -1}));
  // int32 and int8 have their own widths.
  Tensor a32 = lt::tensor(std::vector<int32_t>{1, -1, 7}).to(dev());
  EXPECT_EQ(ints(a32 << 31), (V{INT32_MIN, INT32_MIN, INT32_MIN}));
  EXPECT_EQ(ints(a32 << 32), (V{0, 0, 0}));
  EXPECT_EQ(ints(a32 >> 40), (V{0, -1, 0}));
  EXPECT_EQ((a32 & 3).dtype(), lt::kInt32);  // a host int does not widen the tensor
  Tensor a8 = lt::tensor(std::vector<int8_t>{1, -128, 100}).to(dev());
  EXPECT_EQ(ints(a8 << 1), (V{2, 0, -56}));  // wraps in 8 bits
  EXPECT_EQ(ints(a8 << 8), (V{0, 0, 0}));
  EXPECT_EQ(ints(a8 >> 9), (V{0, -1, 0}));
  EXPECT_EQ(ints(~a8), (V{-2, 127, -101}));
  EXPECT_EQ((a8 | a32).dtype(), lt::kInt32);
}

TEST_P(Bitwise, BoolOperandsAreLogical) {
  Tensor t = lt::tensor(std::vector<bool>{true, true, false, false}).to(dev());
  Tensor u = lt::tensor(std::vector<bool>{true, false, true, false}).to(dev());
  EXPECT_EQ((t & u).dtype(), lt::kBool);
  EXPECT_EQ(ints(t & u), (V{1, 0, 0, 0}));
  EXPECT_EQ(ints(t | u), (V{1, 1, 1, 0}));
  EXPECT_EQ(ints(t ^ u), (V{0, 1, 1, 0}));
  EXPECT_EQ(ints(~t), (V{0, 0, 1, 1}));
  EXPECT_EQ(ints(t.bitwise_not()), (V{0, 0, 1, 1}));
  EXPECT_EQ((t & i64({3, 3, 3, 3})).dtype(), lt::kInt64);
}

TEST_P(Bitwise, InPlaceFormsAndFusedChains) {
  Tensor a = i64({12, -7, 0, 255});
  a &= i64({10, 3, -1, 15});
  EXPECT_EQ(ints(a), (V{8, 1, 0, 15}));
  a |= 16;
  a ^= 1;
  a <<= 1;
  a >>= i64({0, 1, 2, 3});
  a.bitwise_not_();
  EXPECT_EQ(ints(a), (V{-51, -17, -9, -8}));
  // A chain recorded as one graph: masks, shifts and a comparison.
  Tensor x = lt::arange(0, 64, 1, lt::kInt64).to(dev());
  Tensor packed = ((x & 7) << 3) | (x >> 3);
  Tensor back = ((packed & 7) << 3) | (packed >> 3);
  EXPECT_EQ(ints((back == x).to(lt::kInt64).sum()), (V{64}));
  lt::mark_step();
}

TEST_P(Bitwise, FloatingOperandsAreErrorsAtTheCall) {
  Tensor f = lt::ones({2}, lt::TensorOptions(lt::kFloat32).device(dev()));
  Tensor i = i64({1, 2});
  for (auto fn : {+[](const Tensor&a, const Tensor&b) { return a & b; },
                  +[](const Tensor&a, const Tensor&b) { return a << b; }}) {
    try {
      fn(f, i);
      ADD_FAILURE() << "a float operand was accepted";
    } catch (const lt::Error& e) {
      EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(~f, lt::Error);
  Tensor b = lt::ones({2}, lt::TensorOptions(lt::kBool).device(dev()));
  EXPECT_THROW(b << b, lt::Error);  // shifts of bools, as PyTorch
  EXPECT_EQ(ints(i), (V{1, 2}));    // operands still usable
}

INSTANTIATE_TEST_SUITE_P(Devices, Bitwise, ::testing::Values("cpu", "lazy"));

}  // namespace
