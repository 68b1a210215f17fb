// relu(matmul(x, w) + b), checked with FileCheck by Lazy.MlirGoldenModules.
// The matmul runs as a library step (OpenBLAS at this size): only bias + relu are compiled, the
// matmul's result arriving as the function's first argument.
// BEFORE-LABEL: func.func @c0(
// BEFORE-SAME: %[[MM:[a-z0-9]+]]: tensor<4x3xf32>
// BEFORE-SAME: %[[B:[a-z0-9]+]]: tensor<3xf32>
// BEFORE-NOT: linalg.matmul
// BEFORE: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[B]] : tensor<4x3xf32>, tensor<3xf32>)
// BEFORE-NEXT: ^bb0
// BEFORE-NEXT: arith.addf
// BEFORE: linalg.generic {{.*}} ins(%[[SUM]] :
// BEFORE-NEXT: ^bb0
// BEFORE: arith.cmpf olt
// BEFORE: arith.select
// BEFORE-NOT: linalg.matmul
//
// AFTER: llvm.func @c0(
// AFTER: llvm.func @_mlir_ciface_c0(
// LOWERED-NOT: {{linalg\.|tensor\.}}
