// Scalar math for the MLIR lowering (mlir_backend.cpp's Lowering::scalar): each builds, at b's
// insertion point, the value for one element. An MLIR header: include it only under
// src/backend/mlir/.
#pragma once
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace lt::backend {

// x is NaN ? x : r (MLIR's exp approximation is poison for NaN arguments).
mlir::Value nan_passes(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x, mlir::Value r);
// x == 0 ? x : r (keeps -0 where an approximation returned +0).
mlir::Value zero_passes(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x, mlir::Value r);
// float32 exp / log that keep subnormal results and arguments (MLIR's approximations flush
// them); other types: math.exp / math.log.
mlir::Value exp_f32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x);
mlir::Value log_f32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x);
// float32 erf that reaches +-1 where libm does (MLIR's approximation saturates early).
mlir::Value erf_f32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x);
// float32 tanh that leaves +-1 where libm does (MLIR's approximation saturates at 7.905).
mlir::Value tanh_f32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x);
// expm1 / log1p accurate to a few ulp for every argument, -0 and tiny ones included (float64:
// MLIR's own lowering is exp(x) - 1 / log(1 + x)).
mlir::Value accurate_expm1(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x);
mlir::Value accurate_log1p(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x);

}  // namespace lt::backend
