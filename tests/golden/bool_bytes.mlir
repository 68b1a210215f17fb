// m & (x > y) with m a bool input: a bool argument and a bool output, checked with FileCheck by
// Lazy.MlirGoldenModules. Bool arguments are bytes (i8), as a bool tensor lies in memory; the
// loops compute on i1. No loop may load or store an i1: LLVM's vectorizer does not widen them
// (its vectors of i1 are bit-packed in memory), and such a loop ran scalar.
// BEFORE-LABEL: func.func @c0(
// BEFORE-SAME: %[[M:[a-z0-9]+]]: tensor<4x8xi8>
// BEFORE-SAME: %[[OUT:[a-z0-9]+]]: memref<4x8xi8>
// BEFORE: linalg.generic {{.*}} ins(%[[M]] : tensor<4x8xi8>) outs({{.*}} : tensor<4x8xi1>)
// BEFORE-NEXT: ^bb0
// BEFORE-NEXT: arith.trunci {{.*}} : i8 to i1
// BEFORE: arith.cmpf ogt
// BEFORE: arith.andi
// BEFORE: arith.extui {{.*}} : i1 to i8
// BEFORE: bufferization.materialize_in_destination {{.*}} in restrict writable %[[OUT]] : (tensor<4x8xi8>, memref<4x8xi8>)
//
// After it: one fused loop nest that loads the mask as a byte and stores the result as one.
// AFTER: llvm.func @c0(
// AFTER: llvm.load {{.*}} -> i8
// AFTER: llvm.fcmp "ogt"
// AFTER: llvm.and
// AFTER: llvm.store {{.*}} : i8, !llvm.ptr
// LOWERED-NOT: llvm.load {{.*}} -> i1
// LOWERED-NOT: llvm.store {{.*}} : i1, !llvm.ptr
