// lt-recompute-cheap: a cheap elementwise producer (a few arith ops, no division) read by several
// elementwise ops of as many iterations is copied once per reader, so that elementwise fusion can
// take each copy into its reader instead of writing the producer's tensor to memory.
// RUN: lt-opt --lt-recompute-cheap %s | FileCheck %s
// RUN: lt-opt --lt-recompute-cheap --linalg-fuse-elementwise-ops %s | FileCheck %s --check-prefix=FUSED

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// x - m (layer_norm's centered input) feeds both the square and the scaled output.
// Each reader reads a copy of its own: the copy sits just before the reader it serves.
// CHECK-LABEL: func.func @two_readers
// CHECK: %[[D1:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
// CHECK: %[[D2:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
// CHECK: linalg.generic {{.*}} ins(%[[D2]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[D1]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// Then fusion leaves two loops, each computing x - m itself: nothing is written in between.
// FUSED-LABEL: func.func @two_readers
// FUSED: linalg.generic {{.*}} ins(%arg0, %arg1 :
// FUSED-NEXT: ^bb0
// FUSED-NEXT: arith.subf
// FUSED-NEXT: arith.mulf
// FUSED: linalg.generic {{.*}} ins(%arg0, %arg1 :
// FUSED-NEXT: ^bb0
// FUSED-NEXT: arith.subf
// FUSED-NEXT: arith.addf
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @two_readers(%x: tensor<8x16xf32>, %m: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %sq, %r : tensor<8x16xf32>, tensor<8x16xf32>
}

// A division is not cheap: the producer keeps its one copy.
// CHECK-LABEL: func.func @divide
// CHECK-COUNT-1: arith.divf
// CHECK-NOT: arith.divf
// CHECK: return
func.func @divide(%x: tensor<8x16xf32>, %m: tensor<8x16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.divf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %sq, %r : tensor<8x16xf32>, tensor<8x16xf32>
}

// A reader that runs over more iterations (a broadcast of a row) does not get a copy.
// CHECK-LABEL: func.func @larger_reader
// CHECK-COUNT-1: arith.subf
// CHECK-NOT: arith.subf
// CHECK: return
func.func @larger_reader(%x: tensor<8xf32>, %m: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8x16xf32>) {
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %m : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                        iterator_types = ["parallel"]}
      ins(%d : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<8xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %sq, %b : tensor<8xf32>, tensor<8x16xf32>
}
