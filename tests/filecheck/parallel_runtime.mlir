// lt-parallel-outer on shape-generic code: a nest whose trip counts are run-time values keeps one
// threaded copy (an scf.parallel over the outermost dimension), preceded by its run-time work
// test `work >= LT_MLIR_PAR_MIN` (the product of the trip counts known before the nest), which
// lt-omp-if makes the OpenMP region's thread count (all or one) after convert-scf-to-openmp.
// RUN: env LT_MLIR_PAR_MIN=4096 lt-opt --lt-parallel-outer %s | FileCheck %s
// RUN: env LT_MLIR_PAR_MIN=4096 lt-opt --lt-parallel-outer --convert-scf-to-openmp --lt-omp-if %s | FileCheck %s --check-prefix=OMP

// CHECK-LABEL: func.func @rows
// CHECK: %[[W:.*]] = arith.muli
// CHECK: %[[BIG:.*]] = arith.cmpi sge, %[[W]], %c4096 {lt.parallel_if}
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c32
// CHECK-NOT: scf.parallel
// CHECK: return
// OMP: func.func private @omp_get_max_threads() -> i32
// OMP-LABEL: func.func @rows
// OMP: %[[BIG:.*]] = arith.cmpi sge
// OMP-NOT: lt.parallel_if
// OMP: %[[ALL:.*]] = call @omp_get_max_threads()
// OMP: %[[N:.*]] = arith.select %[[BIG]], %[[ALL]], %c1_i32 : i32
// OMP-NEXT: omp.parallel num_threads(%[[N]] : i32)
// OMP: omp.wsloop
// OMP-NOT: omp.parallel
// OMP: return
func.func @rows(%a: memref<?x32xf32>, %o: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %n = memref.dim %a, %c0 : memref<?x32xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c32) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x32xf32>
    %s = arith.mulf %x, %x : f32
    memref.store %s, %o[%i, %j] : memref<?x32xf32>
    scf.reduce
  }
  return
}
