#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @c0(%arg0: tensor<4x8xf32> {bufferization.writable = false}, %arg1: tensor<4x8xf32> {bufferization.writable = false}, %arg2: tensor<8xf32> {bufferization.writable = false, llvm.noalias}, %arg3: memref<4x8xf32>) attributes {llvm.emit_c_interface} {
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %4 = arith.mulf %in, %in_0 : f32
      linalg.yield %4 : f32
    } -> tensor<4x8xf32>
    %2 = tensor.empty() : tensor<4x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %arg2 : tensor<4x8xf32>, tensor<8xf32>) outs(%2 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %4 = arith.addf %in, %in_0 : f32
      linalg.yield %4 : f32
    } -> tensor<4x8xf32>
    bufferization.materialize_in_destination %3 in restrict writable %arg3 : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
    return
  }
}

