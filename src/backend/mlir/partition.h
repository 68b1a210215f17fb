// Splits a lazy graph into fusion clusters (elementwise, broadcast, reduction and view ops that
// MLIR compiles into one function each) and library steps (matmul, conv, pooling, indexing, ...:
// the eager kernels, OpenBLAS included). Ready fusible nodes are always scheduled before ready
// library nodes, so clusters grow as large as the data dependencies allow.
#pragma once
#include <vector>

#include "ir/graph.h"

namespace lt::backend {

bool is_fusible(const ir::Node* n);

struct Cluster {
  std::vector<const ir::Node*> nodes;    // topological order
  std::vector<const ir::Node*> inputs;   // values from outside (Const leaves are inlined)
  std::vector<const ir::Node*> outputs;  // values used outside the cluster or roots
};

struct Schedule {
  enum class Kind { Leaf, Library, Cluster };
  struct Step {
    Kind kind;
    const ir::Node* node = nullptr;  // Leaf, Library
    int cluster = -1;                // Cluster
  };
  std::vector<Step> steps;
  std::vector<Cluster> clusters;
};

Schedule partition(const ir::Graph& g);

}  // namespace lt::backend
