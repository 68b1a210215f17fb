// Passes of our own in the MLIR pipeline (plain C++ header: no MLIR types).
#pragma once
#include <string>

namespace lt::backend {

// Registers lt-parallel-outer (parallel_loops.cpp) and lt-recompute-cheap (recompute.cpp) with
// MLIR's pass registry; call once.
void register_lt_mlir_passes();
void register_recompute_pass();  // called by register_lt_mlir_passes

// What the passes' output depends on besides their input (their settings and this build of
// them), for the disk cache's key.
std::string lt_mlir_passes_fingerprint();

}  // namespace lt::backend
