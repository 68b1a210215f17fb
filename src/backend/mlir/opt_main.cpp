#include "backend/mlir/opt_main.h"

#include "backend/mlir/parallel_loops.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace lt::backend {

int opt_main(int argc, char** argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  register_lt_mlir_passes();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "lt-opt: mlir-opt with lazytensor's passes\n", registry));
}

}  // namespace lt::backend
