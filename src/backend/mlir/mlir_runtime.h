// The process's one MLIR context (all dialects, extensions, translations and passes registered;
// mlir_backend.cpp) and the LLVM pipeline compiled code goes through (llvm_pipeline.cpp); shared
// by mlir_backend.cpp and matmul_codegen.cpp. An MLIR header: include it only under
// src/backend/mlir/.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
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

// While alive, collects the context's diagnostics as text (for the one line a failure logs).
class DiagnosticText {
 public:
  explicit DiagnosticText(mlir::MLIRContext* ctx)
      : handler_(ctx, [this](mlir::Diagnostic& d) {
          llvm::raw_string_ostream os(text);
          os << d << "\n";
          return mlir::success();
        }) {}
  std::string text;

 private:
  mlir::ScopedDiagnosticHandler handler_;
};

// Our short LLVM pipeline (clean-up, LICM, interleaved loop vectorization), for
// ExecutionEngineOptions::transformer.
llvm::Error run_llvm_pipeline(llvm::Module* m, llvm::TargetMachine* tm);
const std::string& llvm_pipeline_text();  // its text, for disk cache keys

// A target machine builder for host_target() (target.h: the host CPU and its features, restricted
// by LT_CPU_FEATURES), position-independent code. Throws lt::Error for a bad LT_CPU_FEATURES.
llvm::orc::JITTargetMachineBuilder jit_target_builder();

// `prefix` + a 128-bit hash of `text` in hex: a disk cache key (disk_cache.h).
std::string cache_key(const std::string& prefix, const std::string& text);

}  // namespace lt::backend
