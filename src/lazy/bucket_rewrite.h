// Shape bucketing's rewrite (lazy/buckets.h): a graph at its bucket's sizes, tracking per value
// and dim where the real entries lie, with the masks and refusals that keep padding from ever
// changing a result (docs/ARCHITECTURE.md, "Shape buckets").
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_profile.h"

namespace lt::lazy {

// Why a graph cannot be padded exactly (thrown by rewrite_to_bucket).
struct BucketRefused {
  std::string why;
};

// The key of an integer position (ir::IntPos) in rewrite_to_bucket's factor map.
inline uint64_t bucket_pos_key(int64_t node, ir::IntPos::Field f, int64_t k) {
  return (static_cast<uint64_t>(node) << 20) | (static_cast<uint64_t>(f) << 16) |
         static_cast<uint64_t>(k);
}

struct ExtraParam {
  Dtype dtype;
  double f;
  int64_t i;
};

// How a padded dim holds its real entries. The dim is a * B * c entries, read as [a, B, c]: the
// entries with a middle index below S are real. An input's dim of k * S entries padded to k * B
// is (1, k): its real entries come first. `any`: a broadcast dim, every entry equal, so it agrees
// with whatever layout it meets.
struct Pad {
  int64_t a = 0, c = 0;
  bool any = false;
  bool on() const { return a > 0; }
  int64_t k() const { return a * c; }
  bool operator==(const Pad& o) const { return a == o.a && c == o.c && any == o.any; }
  bool operator!=(const Pad& o) const { return !(*this == o); }
};
using Pads = std::vector<Pad>;

// The rewritten graph, and what a run needs to pad its inputs and cut its outputs.
struct BucketPlan {
  ir::Graph graph;
  std::vector<ir::NodePtr> owned;
  std::vector<Dims> data_padded;  // per input slot: the padded sizes, empty when not padded
  std::vector<ExtraParam> extra;  // parameters after the graph's own: strides and fill values
  std::vector<Pad> masks;         // inputs after the graph's own: the real entries of a layout
  std::vector<Pads> out_pads;     // per root: its padded dims (empty when none)
};

// g with every integer at a position of `fac` (bucket_pos_key -> k) set to k * b, for a size s:
// the graph, what a run pads and cuts, and (*masked) how many reads it masked. Throws
// BucketRefused.
std::unique_ptr<BucketPlan> rewrite_to_bucket(const ir::Graph& g, int64_t s, int64_t b,
                                              std::unordered_map<uint64_t, int64_t> fac,
                                              int* masked);

}  // namespace lt::lazy
