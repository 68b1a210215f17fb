// Bitwise ops: the BitwiseAnd/Or/Xor, LeftShift/RightShift and BitwiseNot primitives under
// libtorch's names, operators and in-place forms. Host scalars are wrapped numbers (an int8
// tensor & 3 stays int8).
#include "api/dispatch.h"

namespace lt {
namespace {
using K = OpKind;
Tensor bin(K k, const Tensor& a, const Tensor& b) { return call(k, {a, b}); }
Tensor bin(K k, const Tensor& a, const Scalar& b) {
  return call(k, {a, wrap_scalar(b, a.device())});
}
}  // namespace

#define LT_BITWISE(name, K_)                                                                \
  Tensor name(const Tensor& a, const Tensor& b) { return bin(K_, a, b); }                   \
  Tensor name(const Tensor& a, const Scalar& b) { return bin(K_, a, b); }                   \
  Tensor Tensor::name(const Tensor& o) const { return bin(K_, *this, o); }                  \
  Tensor Tensor::name(const Scalar& o) const { return bin(K_, *this, o); }                  \
  Tensor& Tensor::name##_(const Tensor& o) const { return inplace(K_, *this, {*this, o}); } \
  Tensor& Tensor::name##_(const Scalar& o) const {                                          \
    return inplace(K_, *this, {*this, wrap_scalar(o, device())});                           \
  }
LT_BITWISE(bitwise_and, K::BitwiseAnd)
LT_BITWISE(bitwise_or, K::BitwiseOr)
LT_BITWISE(bitwise_xor, K::BitwiseXor)
LT_BITWISE(bitwise_left_shift, K::LeftShift)
LT_BITWISE(bitwise_right_shift, K::RightShift)
#undef LT_BITWISE

#define LT_BITWISE_OP(op, name)                                               \
  Tensor operator op(const Tensor& a, const Tensor& b) { return name(a, b); } \
  Tensor operator op(const Tensor& a, const Scalar& b) { return name(a, b); } \
  Tensor& operator op##=(Tensor& a, const Tensor& b) { return a.name##_(b); } \
  Tensor& operator op##=(Tensor& a, const Scalar& b) { return a.name##_(b); }
LT_BITWISE_OP(&, bitwise_and)
LT_BITWISE_OP(|, bitwise_or)
LT_BITWISE_OP(^, bitwise_xor)
LT_BITWISE_OP(<<, bitwise_left_shift)
LT_BITWISE_OP(>>, bitwise_right_shift)
#undef LT_BITWISE_OP

Tensor operator~(const Tensor& a) { return bitwise_not(a); }

}  // namespace lt
