// Passes of our own in the MLIR pipeline (plain C++ header: no MLIR types).
#pragma once

namespace lt::backend {

// Registers lt-parallel-outer (parallel_loops.cpp) with MLIR's pass registry; call once.
void register_lt_mlir_passes();

}  // namespace lt::backend
