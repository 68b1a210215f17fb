// IR nodes of the lazy device. A node is one primitive applied to operand nodes, or a leaf:
// device data (a buffer), a scalar parameter (a value passed at run time) or a constant.
// Its 128-bit structural hash is folded in once, in the constructor, from the op, attributes,
// shape and the operands' hashes: O(1) per node, no walk of the DAG.
#pragma once
#include <atomic>
#include <cstdint>

#include "core/pool.h"
#include "lt/tensor.h"
#include "ops/shape_rules.h"

namespace lt::ir {

struct Hash128 {
  uint64_t lo = 0, hi = 0;
  bool operator==(const Hash128& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const Hash128& o) const { return !(*this == o); }
};
struct Hash128Hasher {
  size_t operator()(const Hash128& h) const { return h.lo ^ (h.hi * 0x9E3779B97F4A7C15ull); }
};
// Folds one 64-bit word into both halves (two independent multiply-xorshift lanes).
inline Hash128 mix(Hash128 h, uint64_t v) {
  h.lo = (h.lo ^ v) * 0x9E3779B97F4A7C15ull;
  h.lo ^= h.lo >> 29;
  h.hi = (h.hi + v) * 0xD6E8FEB86659FD93ull;
  h.hi ^= h.hi >> 32;
  return h;
}
std::string hash_hex(Hash128 h);

enum class NodeKind : uint8_t {
  Op,     // a registry primitive over operand nodes
  Data,   // device data: a materialized buffer (an eager tensor owned by the node)
  Param,  // a host scalar passed at run time (so changing it never recompiles)
  Const,  // a baked-in scalar (0 and 1: the paper's rule)
};

class NodePtr;

struct Node : pool::Pooled {
  NodeKind kind = NodeKind::Op;
  OpKind op = OpKind::Scalar;
  OpMeta meta;  // sizes, dtype, compute dtype
  OpAttrs attrs;
  NodePtr* operands = nullptr;  // n_operands entries: inline_ops, or a heap array when > 4
  uint32_t n_operands = 0;
  Hash128 hash;
  Tensor data;         // Data leaves: the buffer (a contiguous eager tensor)
  double param_f = 0;  // Param leaves: the value
  int64_t param_i = 0;
  uint64_t mark = 0;  // traversal epoch (graph building)
  int64_t slot = -1;  // scratch index used while building a graph
  std::atomic<int32_t> refs{0};
  NodePtr* inline_ops();  // storage for up to kInlineOps operands, inside the node
  static constexpr uint32_t kInlineOps = 4;
  alignas(8) unsigned char inline_storage[kInlineOps * sizeof(void*)];
};

// Intrusive, atomically counted reference to a Node. Releasing the last reference frees the
// node and then its operands iteratively, so a 10^6-node chain does not recurse.
class NodePtr {
 public:
  NodePtr() = default;
  explicit NodePtr(Node* n) : n_(n) {
    if (n_) n_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  // Takes over a reference already counted (a new node starts with one).
  static NodePtr adopt(Node* n) {
    NodePtr p;
    p.n_ = n;
    return p;
  }
  NodePtr(const NodePtr& o) : NodePtr(o.n_) {}
  NodePtr(NodePtr&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  NodePtr& operator=(const NodePtr& o) {
    NodePtr t(o);
    std::swap(n_, t.n_);
    return *this;
  }
  NodePtr& operator=(NodePtr&& o) noexcept {
    std::swap(n_, o.n_);
    return *this;
  }
  ~NodePtr() { reset(); }
  void reset() {
    Node* n = n_;
    n_ = nullptr;
    if (n && release_ref(n)) destroy(n);
  }
  Node* get() const { return n_; }
  Node* operator->() const { return n_; }
  Node& operator*() const { return *n_; }
  explicit operator bool() const { return n_ != nullptr; }

 private:
  // Drops one reference; true when it was the last. The sole owner skips the atomic
  // read-modify-write (nobody else can be copying a pointer only we hold).
  static bool release_ref(Node* n) {
    return n->refs.load(std::memory_order_acquire) == 1 ||
           n->refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  static void destroy(Node* n);  // frees n and every operand whose count reaches zero
  Node* n_ = nullptr;
};

// Builders. Operand hashes, shapes and attributes are folded into the new node's hash.
NodePtr make_op(OpKind op, const OpMeta& meta, const OpAttrs& attrs, Node* const* operands,
                size_t n);
NodePtr make_op(OpKind op, const OpMeta& meta, const OpAttrs& attrs, const NodePtr* operands,
                size_t n);
NodePtr make_data(const Tensor& buffer);
// A Data leaf of this meta and input slot without a buffer: for a graph rewritten before its
// compile (lazy/bucket_rewrite.cpp), whose buffers come at run time.
NodePtr make_data_leaf(const OpMeta& meta, int64_t slot);
NodePtr make_param(Dtype dtype, double f, int64_t i);
NodePtr make_const(Dtype dtype, double f, int64_t i);

// A copy of leaf `n` (Data, Param or Const) with its kind, meta, values, hash and slot, but
// without a Data leaf's buffer: for a detached copy of a graph (graph.h).
NodePtr make_leaf_copy(const Node& n);

int64_t live_nodes();

inline NodePtr* Node::inline_ops() { return reinterpret_cast<NodePtr*>(inline_storage); }

}  // namespace lt::ir
