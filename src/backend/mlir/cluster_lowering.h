// One fusion cluster as func.func @<name>(inputs as tensors, outputs as memrefs), built into
// `module` (cluster_lowering.cpp). MLIR types: include from src/backend/mlir/ only.
#pragma once
#include <string>

#include "backend/mlir/partition.h"
#include "ir/shape_profile.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

namespace lt::backend {

// False if a node has no lowering (`*failed`: that node, when known). A shape-generic graph
// (`dyn`, bound to the cluster's graph) gives the function a last argument, memref<?xi64>: the
// symbols' values.
bool build_cluster(mlir::MLIRContext* ctx, mlir::ModuleOp module, const Cluster& c,
                   const std::string& name, const ir::Node** failed, const ir::DynamicShapes* dyn);

}  // namespace lt::backend
