// The process's one MLIR context (all dialects, extensions, translations and passes registered)
// and the LLVM pipeline compiled code goes through; shared by mlir_backend.cpp and
// matmul_codegen.cpp. An MLIR header: include it only under src/backend/mlir/.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "llvm/Support/Error.h"
#include "mlir/IR/MLIRContext.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace lt::backend {

struct MlirRuntime {
  MlirRuntime();
  std::mutex mu;  // the context is single-threaded: hold it while building or compiling
  std::unique_ptr<mlir::MLIRContext> ctx;
};
MlirRuntime& mlir_runtime();  // created on first use (registration costs tens of ms)

// Our short LLVM pipeline (clean-up, LICM, interleaved loop vectorization), for
// ExecutionEngineOptions::transformer.
llvm::Error run_llvm_pipeline(llvm::Module* m, llvm::TargetMachine* tm);
const std::string& llvm_pipeline_text();  // its text, for disk cache keys

}  // namespace lt::backend
