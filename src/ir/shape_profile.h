// Shape generalization (dynamic shapes): a graph's size integers (node sizes and size-like
// attributes), its structure without them, and which of them a shape-generic executable takes
// at run time. Two graphs of one structure that differ only in sizes generalize position by
// position: every integer that differed becomes a run-time value. Positions equal to each other
// in every graph seen share one symbol (one run-time value), so the code may rely on their
// equality, which the guard checks.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace lt::ir {

// Where an integer lives: node index in Graph::order, the field, the element.
struct IntPos {
  enum Field : int8_t { Size, AttrInts, AttrI };
  int32_t node;
  Field field;
  int16_t k;
};
int64_t read_int(const Graph& g, IntPos p);

struct ShapeProfile {
  Hash128 structure;  // ops, edges, dtypes, ranks and every attribute that is not a size
  std::vector<IntPos> pos;
  std::vector<int64_t> values;
};
ShapeProfile shape_profile(const Graph& g);

class DynamicShapes {
 public:
  // From the value vectors of graphs of one structure (each as ShapeProfile::values): a position
  // is dynamic where they differ. nullopt when nothing differs, or when a differing position is
  // 0 or 1 in some graph (those sizes broadcast or empty a loop: never merged with others).
  static std::optional<DynamicShapes> generalize(const std::vector<IntPos>& pos,
                                                 const std::vector<std::vector<int64_t>>& seen);

  // The guard: static integers equal, dynamic ones >= 2 and equal within each symbol.
  bool admits(const std::vector<int64_t>& values) const;
  // The run-time value of each symbol in a graph this executable admits.
  void symbol_values(const Graph& g, std::vector<int64_t>* out) const;
  size_t symbols() const { return rep_.size(); }
  // "input 0 dim 0, matmul#12 dim 1, ..." (for LT_DEBUG), of the positions of each symbol.
  std::string describe(const Graph& g) const;

  // For the lowering of graph `g` (of this structure): the symbol of a node's dim or of its
  // attrs.i[k], -1 where static.
  void bind(const Graph& g);
  int32_t size_symbol(const Node* n, size_t d) const;
  int32_t attr_symbol(const Node* n, size_t k) const;

 private:
  std::vector<IntPos> pos_;
  std::vector<int64_t> values_;  // static positions: the value every graph must have
  std::vector<int32_t> sym_;     // per position: -1 static, else its symbol
  std::vector<int32_t> rep_;     // per symbol: its first position
  std::unordered_map<const Node*, std::vector<int32_t>> size_sym_, attr_sym_;  // bind()
};

// "input 0 dim 1" / "matmul#12 dim 0" / "reshape#3 size[1]": a position for people.
std::string describe_pos(const Graph& g, IntPos p);

}  // namespace lt::ir
