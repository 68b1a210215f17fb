// softmax(x, 1) of a 4x8 tensor, checked with FileCheck by Lazy.MlirGoldenModules.
// Before the pipeline: one function; both reductions (max, then sum) fused with the elementwise
// ops around them, each on its own filled accumulator.
// BEFORE-LABEL: func.func @c0(
// BEFORE-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>
// BEFORE: %[[MAXINIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x1xf32>)
// BEFORE: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x8xf32>) outs(%[[MAXINIT]] :
// BEFORE-NEXT: ^bb0
// BEFORE-NEXT: arith.maximumf
// BEFORE: linalg.generic {{.*}} ins(%[[X]], %[[MAX]] :
// BEFORE-NEXT: ^bb0
// BEFORE-NEXT: arith.subf
// BEFORE: math.exp
// BEFORE: %[[SUMINIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x1xf32>)
// BEFORE: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x8xf32>) outs(%[[SUMINIT]] :
// BEFORE-NEXT: ^bb0
// BEFORE-NEXT: arith.addf {{.*}} fastmath<reassoc>
// BEFORE: arith.divf
// BEFORE-NOT: func.func
//
// After it: exp is a polynomial, not a call to libm's expf.
// AFTER: llvm.func @c0(
// AFTER-NOT: @expf
// AFTER: llvm.func @_mlir_ciface_c0(
// LOWERED-NOT: {{linalg\.|tensor\.}}
