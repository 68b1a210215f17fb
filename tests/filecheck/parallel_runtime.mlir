// lt-parallel-outer on shape-generic code: a nest whose trip counts are run-time values gets
// `scf.if (work >= LT_MLIR_PAR_MIN)` over a threaded copy (one scf.parallel over the outermost
// dimension) and a plain copy; the work is the product of the trip counts known before the nest.
// RUN: env LT_MLIR_PAR_MIN=4096 lt-opt --lt-parallel-outer %s | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK: %[[W:.*]] = arith.muli
// CHECK: %[[BIG:.*]] = arith.cmpi sge, %[[W]], %c4096
// CHECK: scf.if %[[BIG]] {
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N:.*]]) step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c32
// CHECK: } else {
// CHECK-NOT: scf.parallel
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c32
// CHECK: return
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
