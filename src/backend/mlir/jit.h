// JIT-compiling a graph's lowered functions on several threads. LLVM's instruction selection
// and emission are most of a graph's compile time and run on one thread per module, so the
// clusters are split into modules (LT_JIT_MODULES_PER_THREAD per thread of LT_NUM_THREADS,
// balanced by size), each compiled by its own ExecutionEngine; the threads take the modules
// from a queue, largest first. An MLIR header: include it only under
// src/backend/mlir/.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace lt::backend {

// The functions of `m` (in order) moved into at most `parts` new modules, each function whole:
// largest `weights[i]` first onto the lightest module; the heaviest module comes first. `m` is
// left empty. One module (all the functions) when parts <= 1.
struct SplitModules {
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  std::vector<std::vector<size_t>> functions;  // per module: the positions in `m`, in order
};
SplitModules split_functions(mlir::ModuleOp m, int parts, const std::vector<double>& weights);

struct JitCode {
  std::shared_ptr<void> owner;  // keeps every engine (and its code) alive
  std::unordered_map<std::string, void (*)(void**)> symbols;  // address of each looked-up name
  std::vector<std::string> objects;  // with `object_prefix`: each engine's object file
  std::vector<double> ms;            // each module's compile time (wall, its thread)
  std::string error;                 // empty on success
};

struct JitOptions {
  unsigned opt_level = 2;                  // LT_LLVM_OPT
  std::vector<std::string> shared_libs;    // resolved symbols (memrefCopy, ...)
  std::string object_prefix;               // non-empty: dump objects to <prefix>.<i>.o
  int threads = 1;                         // threads that take the modules (the first: the caller)
  bool quick = false;  // Tier::Quick: LLVM's code generation at its lowest level (FastISel, fast
                       // register allocation: ~4x sooner); the IR passes are the same
};

// Compiles each module (already through MLIR's pipeline, in the LLVM dialect) with its own
// ExecutionEngine for `tmb`'s target, on `threads` threads (the calling one among them) that
// take the modules in order (split_functions puts the largest first), and
// looks up `names[i]` in module i (LLJIT compiles a module at its first lookup, so the lookups
// are part of each thread's work). The MLIR context is touched only while translating to LLVM
// IR, one module at a time; the caller must hold the context's lock throughout.
JitCode jit_compile(std::vector<mlir::OwningOpRef<mlir::ModuleOp>>& modules,
                    const std::vector<std::vector<std::string>>& names,
                    const llvm::orc::JITTargetMachineBuilder& tmb, const JitOptions& o);

}  // namespace lt::backend
