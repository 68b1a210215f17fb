// Accumulator promotion (part of lt-parallel-outer): an innermost scf.for that loads and stores
// one memref at loop-invariant indices, and touches it nowhere else, carries the value in an
// iter_arg instead: one load before the loop, one store after.
// RUN: env LT_MLIR_PAR_MIN=0 lt-opt --lt-parallel-outer %s | FileCheck %s

// CHECK-LABEL: func.func @row_sum
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[ACC:.*]][%[[I]]] : memref<64xf32>
// CHECK-NEXT: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %c32 step %{{.*}} iter_args(%[[S:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[S]], %[[X]] : f32
// CHECK-NEXT: scf.yield %[[NEW]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[ACC]][%[[I]]] : memref<64xf32>
func.func @row_sum(%a: memref<64x32xf32>, %acc: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c32 step %c1 {
      %x = memref.load %a[%i, %k] : memref<64x32xf32>
      %s0 = memref.load %acc[%i] : memref<64xf32>
      %s = arith.addf %s0, %x : f32
      memref.store %s, %acc[%i] : memref<64xf32>
    }
    scf.reduce
  }
  return
}

// The accumulator is also read at another index inside the loop: it stays in memory.
// CHECK-LABEL: func.func @other_access
// CHECK: scf.for %{{.*}} = %{{.*}} to %c32 step %{{.*}} {
// CHECK-NOT: iter_args
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<64xf32>
// CHECK: return
func.func @other_access(%a: memref<64x32xf32>, %acc: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c32 step %c1 {
      %x = memref.load %a[%i, %k] : memref<64x32xf32>
      %s0 = memref.load %acc[%i] : memref<64xf32>
      %z = memref.load %acc[%c0] : memref<64xf32>
      %t = arith.addf %s0, %x : f32
      %s = arith.addf %t, %z : f32
      memref.store %s, %acc[%i] : memref<64xf32>
    }
    scf.reduce
  }
  return
}
