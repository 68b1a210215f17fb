// Collapsing loop pairs over contiguous memory (collapse_loops.cpp), a step of lt-parallel-outer.
#pragma once

namespace mlir {
class Operation;
}

namespace lt::backend {

// Rewrites each pair of nested scf.for loops `for i < A: for j < B: body` inside `root` as one loop
// `for k < A * B` when every use of i and j is a memref access that indexes with i and then j in
// adjacent dims of extent B (the accesses then read a collapsed view of the memref): a tensor
// [N, C, 14, 14] loops over [N, C, 196], whose innermost loop LLVM vectorizes (a loop of 14 or 7
// floats stayed mostly scalar, and a reduction over it a chain of dependent adds). Runs on plain
// nests whose inner trip count is a constant (the outer one may be a run-time value), before
// accumulators are promoted. Returns the pairs collapsed.
int collapse_contiguous_loops(mlir::Operation* root);

}  // namespace lt::backend
