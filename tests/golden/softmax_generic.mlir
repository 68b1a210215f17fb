// softmax(x, 1) of a 6x8 tensor after the same graph of a 4x8 one: shape-generic code, checked
// with FileCheck by Lazy.MlirGoldenModules.
// Before the pipeline: the rows are `?`, the symbols arrive as a last argument, memref<?xi64>,
// and are loaded at entry; the accumulators are allocated with the run-time row count.
// BEFORE-LABEL: func.func @c0(
// BEFORE-SAME: %[[X:[a-z0-9]+]]: tensor<?x8xf32>
// BEFORE-SAME: memref<?x8xf32>
// BEFORE-SAME: %[[SYMS:[a-z0-9]+]]: memref<?xi64>
// BEFORE: %[[S0:.*]] = memref.load %[[SYMS]][%{{.*}}] : memref<?xi64>
// BEFORE: %[[ROWS:.*]] = arith.index_cast %[[S0]] : i64 to index
// BEFORE: bufferization.alloc_tensor(%[[ROWS]]) : tensor<?x1xf32>
// BEFORE: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x8xf32>)
// BEFORE-NEXT: ^bb0
// BEFORE-NEXT: arith.maximumf
// BEFORE: math.exp
// BEFORE: arith.divf
// BEFORE-NOT: func.func
//
// After it: the row loops' thread choice is made at run time (lt-parallel-outer's work test
// picks the OpenMP region's thread count).
// AFTER: llvm.func @omp_get_max_threads()
// AFTER: llvm.func @c0(
// AFTER: llvm.call @omp_get_max_threads()
// AFTER: omp.parallel num_threads(
// AFTER: llvm.func @_mlir_ciface_c0(
// LOWERED-NOT: {{linalg\.|tensor\.}}
