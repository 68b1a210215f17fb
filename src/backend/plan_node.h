// What both executables keep of a graph node (no IR references, so a cached executable does
// not pin the graph), and how a leaf or a library op runs on the eager kernels.
#pragma once
#include <utility>
#include <vector>

#include "backend/backend.h"

namespace lt::backend {

struct PlanNode {
  ir::NodeKind kind;
  OpKind op;
  OpMeta meta;
  OpAttrs attrs;
  std::vector<int32_t> args;  // indices of operand nodes
  int64_t slot = -1;          // Data/Param: input slot
  double cf = 0;              // Const value
  int64_t ci = 0;
};

// g.order as PlanNodes (operands as indices into the result); roots as indices too.
std::vector<PlanNode> flatten(const ir::Graph& g, std::vector<int32_t>* roots);

// A leaf's value: an input buffer, a parameter, or a freshly made constant.
Tensor leaf_value(const PlanNode& n, const RunArgs& args);

// The op's inputs from `values` and its attributes; a random op's seed and offset arrive as
// parameter operands and move back into the attributes.
std::vector<Tensor> op_inputs(const PlanNode& n, const std::vector<Tensor>& values,
                              OpAttrs* attrs);

// Per value, the value whose buffer it lives in: a view op's result shares its source's, and
// so does each (value, source) of `aliases` (the MLIR schedule's forwarded copies).
std::vector<int32_t> buffer_owners(const std::vector<PlanNode>& nodes,
                                   const std::vector<std::pair<int32_t, int32_t>>& aliases = {});

}  // namespace lt::backend
