#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
module {
  func.func @c0(%arg0: tensor<4x8xf32> {bufferization.writable = false, llvm.noalias}, %arg1: memref<4x8xf32> {llvm.noalias}) attributes {llvm.emit_c_interface} {
    %cst = arith.constant 0xFF800000 : f32
    %0 = bufferization.alloc_tensor() : tensor<4x1xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs(%1 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.maximumf %out, %in : f32
      linalg.yield %12 : f32
    } -> tensor<4x1xf32>
    %3 = tensor.empty() : tensor<4x8xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2 : tensor<4x8xf32>, tensor<4x1xf32>) outs(%3 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.subf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<4x8xf32>
    %5 = tensor.empty() : tensor<4x8xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<4x8xf32>) outs(%5 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = math.exp %in : f32
      %13 = arith.cmpf uno, %in, %in : f32
      %14 = arith.select %13, %in, %12 : f32
      linalg.yield %14 : f32
    } -> tensor<4x8xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %7 = bufferization.alloc_tensor() : tensor<4x1xf32>
    %8 = linalg.fill ins(%cst_0 : f32) outs(%7 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%6 : tensor<4x8xf32>) outs(%8 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %12 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %12 : f32
    } -> tensor<4x1xf32>
    %10 = tensor.empty() : tensor<4x8xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %9 : tensor<4x8xf32>, tensor<4x1xf32>) outs(%10 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %12 = arith.divf %in, %in_1 : f32
      linalg.yield %12 : f32
    } -> tensor<4x8xf32>
    bufferization.materialize_in_destination %11 in restrict writable %arg1 : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
    return
  }
}

