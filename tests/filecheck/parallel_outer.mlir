// lt-parallel-outer: one scf.parallel over the outermost dimension, and only when the nest does
// at least LT_MLIR_PAR_MIN inner iterations; everything else becomes a plain scf.for nest.
// RUN: env LT_MLIR_PAR_MIN=2048 lt-opt --lt-parallel-outer %s | FileCheck %s --check-prefix=PAR
// RUN: env LT_MLIR_PAR_MIN=2049 lt-opt --lt-parallel-outer %s | FileCheck %s --check-prefix=SERIAL
// RUN: env LT_MLIR_PAR_MIN=0 lt-opt --lt-parallel-outer %s | FileCheck %s --check-prefix=ONEROW

// 64x32 = 2048 inner iterations: parallel over the 64 rows at a threshold of 2048, not at 2049.
// PAR-LABEL: func.func @add
// PAR: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c64) step (%{{.*}}) {
// PAR-NEXT: scf.for %[[J:.*]] = %{{.*}} to %c32
// PAR: memref.load %{{.*}}[%[[I]], %[[J]]]
// PAR-NOT: scf.parallel
// PAR: return
// SERIAL-LABEL: func.func @add
// SERIAL-NOT: scf.parallel
// SERIAL: scf.for %{{.*}} = %{{.*}} to %c64
// SERIAL-NEXT: scf.for %{{.*}} = %{{.*}} to %c32
// SERIAL-NOT: scf.parallel
// SERIAL: return
func.func @add(%a: memref<64x32xf32>, %b: memref<32xf32>, %o: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c32) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<64x32xf32>
    %y = memref.load %b[%j] : memref<32xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %o[%i, %j] : memref<64x32xf32>
    scf.reduce
  }
  return
}

// An outermost dimension of one trip is never split over threads, whatever the threshold (and
// its loop then merges with the row's: collapse_loops.mlir).
// ONEROW-LABEL: func.func @one_row
// ONEROW-NOT: scf.parallel
// ONEROW: scf.for %{{.*}} = %{{.*}} to %c4096
// ONEROW-NOT: scf.for
// ONEROW: return
func.func @one_row(%a: memref<1x4096xf32>, %o: memref<1x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c4096) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<1x4096xf32>
    %s = arith.mulf %x, %x : f32
    memref.store %s, %o[%i, %j] : memref<1x4096xf32>
    scf.reduce
  }
  return
}
