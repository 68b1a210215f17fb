// Element types and dtype conversions for the MLIR lowering (dtype_lowering.cpp). An MLIR
// header: include it only under src/backend/mlir/.
#pragma once
#include "lt/dtype.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace lt::backend {

// The MLIR element type of a dtype (bool is i1; float16 f16, bfloat16 bf16, int8 i8).
mlir::Type element_type(mlir::Builder& b, Dtype t);
// v (of dtype `from`) as dtype `to`, as eager's conversion gives it: floats to integers as x86's
// cvtt (NaN and out of range give the most negative integer), 16-bit floats through float32.
mlir::Value convert_dtype(mlir::OpBuilder& b, mlir::Location loc, mlir::Value v, Dtype from,
                          Dtype to);

}  // namespace lt::backend
