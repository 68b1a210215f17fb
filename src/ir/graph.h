// A lazy graph ready to compile: the nodes reachable from the roots in topological order,
// its distinct inputs (device data buffers and scalar parameters, in first-visit order) and
// the cache key: root hashes + which input or node every operand edge reads.
#pragma once
#include <string>
#include <vector>

#include "ir/node.h"

namespace lt::ir {

struct Graph {
  std::vector<NodePtr> roots;
  std::vector<Node*> order;   // operands before users; leaves included
  std::vector<Node*> data;    // distinct device-data leaves; node->slot = index
  std::vector<Node*> params;  // one per parameter node, whatever its value; node->slot = index
  Hash128 key;
  size_t op_count = 0;
};

// Iterative (no recursion on depth). Holds a global lock while it uses the nodes' marks.
Graph build_graph(std::vector<NodePtr> roots);

// A copy of g made of new nodes (same ops, metas, attributes, hashes, slots, key) whose Data
// leaves hold no buffer: what a compile reads, safe to hand to another thread (the original's
// nodes are shared with the program's tensors and rewritten by the next graph build).
Graph detached_copy(const Graph& g);

// The paper's Figure 1 text form and a graphviz DOT form.
std::string to_text(const Graph& g);
std::string to_dot(const Graph& g);
// One line per distinct input, e.g. "input 3: f32[64,784]" (for explaining recompiles).
std::vector<std::string> input_signature(const Graph& g);

}  // namespace lt::ir
