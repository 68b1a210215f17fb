// lt-opt: mlir-opt with our passes registered, for the .mlir pass tests (plain C++ header).
#pragma once

namespace lt::backend {

// mlir-opt's command line (tests/filecheck/*.mlir run `lt-opt --lt-parallel-outer file.mlir`):
// every upstream dialect and pass, plus lt-parallel-outer and lt-recompute-cheap.
int opt_main(int argc, char** argv);

}  // namespace lt::backend
