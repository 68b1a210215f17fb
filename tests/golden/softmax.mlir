#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
module {
  func.func @c0(%arg0: tensor<4x8xf32> {bufferization.writable = false}, %arg1: tensor<4x1xf32> {bufferization.writable = false}, %arg2: memref<4x8xf32>) attributes {llvm.emit_c_interface} {
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x1xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %4 = arith.subf %in, %in_0 : f32
      linalg.yield %4 : f32
    } -> tensor<4x8xf32>
    %2 = tensor.empty() : tensor<4x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = math.exp %in : f32
      linalg.yield %4 : f32
    } -> tensor<4x8xf32>
    bufferization.materialize_in_destination %3 in restrict writable %arg2 : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
    return
  }
  func.func @c1(%arg0: tensor<4x8xf32> {bufferization.writable = false}, %arg1: tensor<4x1xf32> {bufferization.writable = false}, %arg2: memref<4x8xf32>) attributes {llvm.emit_c_interface} {
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x1xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.divf %in, %in_0 : f32
      linalg.yield %2 : f32
    } -> tensor<4x8xf32>
    bufferization.materialize_in_destination %1 in restrict writable %arg2 : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
    return
  }
}

