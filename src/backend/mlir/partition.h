// Splits a lazy graph into fusion clusters (elementwise, broadcast, reduction and view ops that
// MLIR compiles into one function each) and library steps (matmul, conv, pooling, indexing, ...:
// the eager kernels, OpenBLAS included). Ready fusible nodes are always scheduled before ready
// library nodes, so clusters grow as large as the data dependencies allow.
#pragma once
#include <vector>

#include "ir/graph.h"

namespace lt::backend {

bool is_fusible(const ir::Node* n);

// Ops the MLIR lowering turned down in this process (an op with no Lowering case): from then on
// they are library steps (the eager kernel) inside otherwise compiled graphs, not fusible.
void mark_unlowered(OpKind op);
bool is_unlowered(OpKind op);
// LT_MLIR_DISABLE_LOWERING=op1,op2 (registry names), test-only: the lowering turns these down
// as if their case were missing, which exercises the path above.
bool lowering_disabled(OpKind op);

struct Cluster {
  std::vector<const ir::Node*> nodes;    // topological order
  std::vector<const ir::Node*> inputs;   // values from outside (Const leaves are inlined)
  std::vector<const ir::Node*> outputs;  // values used outside the cluster or roots
  // (input, output) index pairs where the output may be written into the input's buffer when
  // the barrier donates it: the input is a device-data leaf read by one node of the cluster,
  // from which a chain of elementwise ops of the input's shape, each used once and only here,
  // leads to the output (same sizes and dtype). The input is then read element by element just
  // before the same element of the output is written, however the chain's loops are fused;
  // later readers of the output read its new values.
  // One pair per output: where several inputs lead to it, the one its first operands lead to
  // (an in-place op's self), else the first.
  // The compiled function reads the input from the output's buffer, so the run either donates
  // the input (the same buffer) or first copies the input into the output's fresh buffer. In
  // place, LLVM sees one pointer read and written at the same element. With two, its vectorized
  // loops check at run time that the buffers do not overlap, and a donated update (Adam's, in
  // place in the parameter and its moments) failed the check and ran the scalar loop, at a third
  // of the speed.
  std::vector<std::pair<int32_t, int32_t>> donations;
};

struct Schedule {
  // Alias: the node's value is another's buffer, with nothing computed. The node is a copy
  // (through permutes that cancel, skipped) of a library step's result that nothing else
  // reads: a leaf's first gradient, which autograd clones (a Linear's weight gradient comes
  // back from its transposed view as permute(permute(matmul))).
  enum class Kind { Leaf, Library, Cluster, Alias };
  struct Step {
    Kind kind;
    const ir::Node* node = nullptr;    // Leaf, Library, Alias
    int cluster = -1;                  // Cluster
    const ir::Node* source = nullptr;  // Alias: the value whose buffer it is
  };
  std::vector<Step> steps;
  std::vector<Cluster> clusters;
};

Schedule partition(const ir::Graph& g);

}  // namespace lt::backend
