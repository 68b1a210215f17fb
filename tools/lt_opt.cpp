// lt-opt: mlir-opt with lazytensor's own MLIR passes (lt-parallel-outer, lt-recompute-cheap)
// registered; the .mlir pass tests in tests/filecheck/ run it and check its output with FileCheck.
#include "backend/mlir/opt_main.h"

int main(int argc, char** argv) { return lt::backend::opt_main(argc, argv); }
