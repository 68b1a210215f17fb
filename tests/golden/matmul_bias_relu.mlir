#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @c0(%arg0: tensor<4x3xf32> {bufferization.writable = false, llvm.noalias}, %arg1: tensor<3xf32> {bufferization.writable = false, llvm.noalias}, %arg2: memref<4x3xf32> {llvm.noalias}) attributes {llvm.emit_c_interface} {
    %0 = tensor.empty() : tensor<4x3xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x3xf32>, tensor<3xf32>) outs(%0 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %4 = arith.addf %in, %in_0 : f32
      linalg.yield %4 : f32
    } -> tensor<4x3xf32>
    %2 = tensor.empty() : tensor<4x3xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x3xf32>) outs(%2 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst = arith.constant 0.000000e+00 : f32
      %4 = arith.cmpf olt, %in, %cst : f32
      %cst_0 = arith.constant 0.000000e+00 : f32
      %5 = arith.select %4, %cst_0, %in : f32
      linalg.yield %5 : f32
    } -> tensor<4x3xf32>
    bufferization.materialize_in_destination %3 in restrict writable %arg2 : (tensor<4x3xf32>, memref<4x3xf32>) -> ()
    return
  }
}

