// x * y + z (z of 8 broadcast over 4 rows), checked with FileCheck by Lazy.MlirGoldenModules.
// Before the pipeline: one function, an elementwise generic per op, the output written into the
// caller's buffer.
// BEFORE-LABEL: func.func @c0(
// BEFORE-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32> {bufferization.writable = false}
// BEFORE-SAME: %[[Y:[a-z0-9]+]]: tensor<4x8xf32> {bufferization.writable = false, llvm.noalias}
// BEFORE-SAME: %[[Z:[a-z0-9]+]]: tensor<8xf32> {bufferization.writable = false, llvm.noalias}
// BEFORE-SAME: %[[OUT:[a-z0-9]+]]: memref<4x8xf32>
// x may take the result in place (Cluster::donations: of x and y, the first operands lead to x),
// so it is read from the output's buffer, where the run puts it; y keeps noalias.
// BEFORE: %[[XO:.*]] = bufferization.to_tensor %[[OUT]] restrict : memref<4x8xf32> to tensor<4x8xf32>
// BEFORE: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[XO]], %[[Y]] :
// BEFORE-NEXT: ^bb0
// BEFORE-NEXT: arith.mulf
// BEFORE: %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[Z]] : tensor<4x8xf32>, tensor<8xf32>)
// BEFORE-NEXT: ^bb0
// BEFORE-NEXT: arith.addf
// BEFORE: bufferization.materialize_in_destination %[[S]] in restrict writable %[[OUT]]
// BEFORE-NOT: func.func
//
// After it: LLVM dialect only, and the two generics fused into one 2-d loop nest (two loop
// back-edge branches; unfused there would be four).
// AFTER: llvm.func @c0(
// AFTER-COUNT-2: llvm.cond_br
// AFTER-NOT: llvm.cond_br
// AFTER: llvm.func @_mlir_ciface_c0(
// LOWERED-NOT: {{linalg\.|tensor\.}}
