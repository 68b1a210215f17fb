// lt-parallel-outer merges nested loops whose induction variables only index adjacent dims of
// contiguous memrefs, the inner dim's extent equal to the inner loop's trip count
// (collapse_loops.cpp): the merged loop reads collapsed views.
// RUN: env LT_MLIR_PAR_MIN=1000000000 lt-opt --lt-parallel-outer %s | FileCheck %s

// [2, 3, 14, 14] plus a per-channel [1, 3, 1, 1]: the 14x14 planes become loops of 196; the
// channel loop stays, because the per-channel operand reads the channel without the plane.
// CHECK-LABEL: func.func @plane
// CHECK-DAG: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : memref<2x3x14x14xf32> into memref<2x3x196xf32>
// CHECK-DAG: %[[O:.*]] = memref.collapse_shape %arg2 {{\[\[}}0], [1], [2, 3]] : memref<2x3x14x14xf32> into memref<2x3x196xf32>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c196
// CHECK-DAG: memref.load %[[X]][%{{.*}}, %{{.*}}, %[[K]]] : memref<2x3x196xf32>
// CHECK-DAG: memref.load %arg1[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x3x1x1xf32>
// CHECK: memref.store %{{.*}}, %[[O]][%{{.*}}, %{{.*}}, %[[K]]] : memref<2x3x196xf32>
// CHECK: return
func.func @plane(%x: memref<2x3x14x14xf32>, %b: memref<1x3x1x1xf32>, %o: memref<2x3x14x14xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c14 = arith.constant 14 : index
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c2, %c3, %c14, %c14) step (%c1, %c1, %c1, %c1) {
    %v = memref.load %x[%n, %c, %h, %w] : memref<2x3x14x14xf32>
    %s = memref.load %b[%c0, %c, %c0, %c0] : memref<1x3x1x1xf32>
    %r = arith.mulf %v, %s : f32
    memref.store %r, %o[%n, %c, %h, %w] : memref<2x3x14x14xf32>
    scf.reduce
  }
  return
}

// A transposed read (j before i) keeps both loops.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: memref.collapse_shape
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c8
// CHECK: return
func.func @transposed(%a: memref<8x8xf32>, %o: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %v = memref.load %a[%j, %i] : memref<8x8xf32>
    memref.store %v, %o[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  return
}

// A loop over part of a row (8 of 16) keeps both loops: i * 8 + j is not the element's offset.
// CHECK-LABEL: func.func @part_of_row
// CHECK-NOT: memref.collapse_shape
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c8
// CHECK: return
func.func @part_of_row(%a: memref<4x16xf32>, %o: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x16xf32>
    memref.store %v, %o[%i, %j] : memref<4x16xf32>
    scf.reduce
  }
  return
}

// An induction variable used as a value (an index computation) keeps both loops.
// CHECK-LABEL: func.func @iota
// CHECK-NOT: memref.collapse_shape
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %c8
// CHECK: return
func.func @iota(%o: memref<4x8xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = arith.index_cast %j : index to i64
    memref.store %v, %o[%i, %j] : memref<4x8xi64>
    scf.reduce
  }
  return
}

// The reduction over the last two dims of [4, 6, 5] into acc[4]: the accumulator's index uses
// neither reduced loop, so they merge into one loop of 30 that carries the sum in a register.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4
// CHECK: %[[V:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : memref<4x6x5xf32> into memref<4x30xf32>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c30 {{.*}} iter_args
// CHECK: memref.load %[[V]][%{{.*}}, %[[K]]]
// CHECK: return
func.func @row_sum(%x: memref<4x6x5xf32>, %acc: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %j = %c0 to %c6 step %c1 {
      scf.for %k = %c0 to %c5 step %c1 {
        %v = memref.load %x[%i, %j, %k] : memref<4x6x5xf32>
        %a = memref.load %acc[%i] : memref<4xf32>
        %s = arith.addf %a, %v fastmath<reassoc> : f32
        memref.store %s, %acc[%i] : memref<4xf32>
      }
    }
    scf.reduce
  }
  return
}

// Shape-generic code: in each of 2 images, a run-time number of rows of 16 (a head's features)
// is one loop of rows * 16 over collapsed views.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: memref.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : memref<2x?x16xf32> into memref<2x?xf32>
// CHECK: %[[N:.*]] = arith.muli %arg2, %{{.*}} : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK: return
func.func @dynamic_rows(%a: memref<2x?x16xf32>, %o: memref<2x?x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%b, %i, %j) = (%c0, %c0, %c0) to (%c2, %n, %c16) step (%c1, %c1, %c1) {
    %v = memref.load %a[%b, %i, %j] : memref<2x?x16xf32>
    %s = arith.mulf %v, %v : f32
    memref.store %s, %o[%b, %i, %j] : memref<2x?x16xf32>
    scf.reduce
  }
  return
}

// A run-time inner trip count keeps both loops (its extent cannot be checked).
// CHECK-LABEL: func.func @dynamic_inner
// CHECK-NOT: memref.collapse_shape
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %arg2
// CHECK: return
func.func @dynamic_inner(%a: memref<2x4x?xf32>, %o: memref<2x4x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%b, %i, %j) = (%c0, %c0, %c0) to (%c2, %c4, %n) step (%c1, %c1, %c1) {
    %v = memref.load %a[%b, %i, %j] : memref<2x4x?xf32>
    memref.store %v, %o[%b, %i, %j] : memref<2x4x?xf32>
    scf.reduce
  }
  return
}
