// Element types and scalar conversions between dtypes for the MLIR lowering (PyTorch's
// semantics; bool is i1). The 16-bit floats convert through float32, as eager's Half and
// BFloat16 do; bfloat16 with integer ops, so no runtime function is needed.
#include "backend/mlir/dtype_lowering.h"

#include <cmath>
#include <cstdint>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace lt::backend {

using namespace mlir;

Type element_type(Builder& b, Dtype t) {
  switch (t) {
    case kFloat32:
      return b.getF32Type();
    case kFloat64:
      return b.getF64Type();
    case kInt32:
      return b.getI32Type();
    case kInt64:
      return b.getI64Type();
    case kBool:
      return b.getI1Type();
    case kInt8:
      return b.getI8Type();
    case kFloat16:
      return b.getF16Type();
    case kBFloat16:
      return b.getBF16Type();
  }
  return b.getF32Type();
}

namespace {

Value i32const(OpBuilder& b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
}
Value bf16_to_f32(OpBuilder& b, Location loc, Value v) {
  Value i = arith::BitcastOp::create(b, loc, b.getI16Type(), v);
  Value w = arith::ExtUIOp::create(b, loc, b.getI32Type(), i);
  return arith::BitcastOp::create(b, loc, b.getF32Type(),
                                  arith::ShLIOp::create(b, loc, w, i32const(b, loc, 16)));
}
// Round to nearest even, as c10::BFloat16: x + 0x7fff + (bit 16 of x), the top half; NaN
// gives 0x7fc0.
Value f32_to_bf16(OpBuilder& b, Location loc, Value v) {
  Value x = arith::BitcastOp::create(b, loc, b.getI32Type(), v);
  Value hi = arith::ShRUIOp::create(b, loc, x, i32const(b, loc, 16));
  Value odd = arith::AndIOp::create(b, loc, hi, i32const(b, loc, 1));
  Value r = arith::AddIOp::create(b, loc,
                                  arith::AddIOp::create(b, loc, x, i32const(b, loc, 0x7fff)), odd);
  Value top = arith::ShRUIOp::create(b, loc, r, i32const(b, loc, 16));
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  Value bits = arith::SelectOp::create(b, loc, nan, i32const(b, loc, 0x7fc0), top);
  return arith::BitcastOp::create(b, loc, b.getBF16Type(),
                                  arith::TruncIOp::create(b, loc, b.getI16Type(), bits));
}

}  // namespace

Value convert_dtype(OpBuilder& b, Location loc, Value v, Dtype from, Dtype to) {
  if (from == to) return v;
  // The 16-bit floats convert through float32, as eager's Half and BFloat16 do (a double or
  // an integer rounds to float first). bfloat16 is converted with integer ops: LLVM would
  // call a runtime function for it on hosts without AVX512_BF16.
  if (from == kFloat16 || from == kBFloat16)
    return convert_dtype(b, loc,
                         from == kFloat16 ? arith::ExtFOp::create(b, loc, b.getF32Type(), v)
                                          : bf16_to_f32(b, loc, v),
                         kFloat32, to);
  if (to == kFloat16 || to == kBFloat16) {
    v = convert_dtype(b, loc, v, from, kFloat32);
    return to == kFloat16 ? Value(arith::TruncFOp::create(b, loc, b.getF16Type(), v))
                          : f32_to_bf16(b, loc, v);
  }
  Type t = element_type(b, to);
  if (to == kBool) {
    if (is_floating(from)) {
      Value z = arith::ConstantOp::create(b, loc, b.getFloatAttr(element_type(b, from), 0.0));
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, z);
    }
    Value z = arith::ConstantOp::create(b, loc, b.getIntegerAttr(element_type(b, from), 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, z);
  }
  if (is_floating(to)) {
    if (is_floating(from))
      return from == kFloat32 ? Value(arith::ExtFOp::create(b, loc, t, v))
                              : Value(arith::TruncFOp::create(b, loc, t, v));
    if (from == kBool) return arith::UIToFPOp::create(b, loc, t, v);
    return arith::SIToFPOp::create(b, loc, t, v);
  }
  if (is_floating(from)) {
    // What the eager kernels' static_cast compiles to on x86 (cvtt*2si): NaN and values out
    // of range give the most negative integer. LLVM's fptosi would give poison.
    const int bits = static_cast<int>(dtype_size(to) * 8);
    Value r = arith::FPToSIOp::create(b, loc, t, v);
    Value lim = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(element_type(b, from), std::ldexp(1.0, bits - 1)));
    Value in_range = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                           math::AbsFOp::create(b, loc, v), lim);
    Value min = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(t, bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1))));
    return arith::SelectOp::create(b, loc, in_range, r, min);
  }
  if (from == kBool) return arith::ExtUIOp::create(b, loc, t, v);
  if (dtype_size(from) < dtype_size(to)) return arith::ExtSIOp::create(b, loc, t, v);
  return arith::TruncIOp::create(b, loc, t, v);
}

}  // namespace lt::backend
