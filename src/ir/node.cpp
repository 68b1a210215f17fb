#include "ir/node.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace lt::ir {
namespace {

// Live-node count for diagnostics, kept per thread with plain loads and stores (an atomic
// read-modify-write per node would cost more than the rest of making one); exiting threads
// fold theirs into g_retired.
struct LiveCount {
  int64_t n;  // written by its thread only; read by live_nodes() with atomic loads
  bool registered, gone;
};
__attribute__((tls_model("initial-exec"))) thread_local LiveCount t_live;
std::mutex g_live_mu;
std::vector<LiveCount*>& live_counts() {
  static auto* v = new std::vector<LiveCount*>();
  return *v;
}
std::atomic<int64_t> g_retired{0};
struct LiveReaper {
  bool armed = false;
  ~LiveReaper() {
    std::lock_guard<std::mutex> g(g_live_mu);
    g_retired.fetch_add(t_live.n, std::memory_order_relaxed);
    auto& v = live_counts();
    v.erase(std::find(v.begin(), v.end(), &t_live));
    t_live.gone = true;
    t_live.registered = false;
  }
};
thread_local LiveReaper t_live_reaper;

void live_add(int64_t d) {
  LiveCount& c = t_live;
  if (!c.registered) {
    if (c.gone) {
      g_retired.fetch_add(d, std::memory_order_relaxed);
      return;
    }
    std::lock_guard<std::mutex> g(g_live_mu);
    live_counts().push_back(&c);
    c.registered = true;
    t_live_reaper.armed = true;  // its destructor folds this thread's count at exit
  }
  __atomic_store_n(&c.n, c.n + d, __ATOMIC_RELAXED);
}

inline __attribute__((always_inline)) Hash128 hash_header(NodeKind k, OpKind op, const OpMeta& m) {
  Hash128 h{0x243F6A8885A308D3ull, 0x13198A2E03707344ull};
  h = mix(h, static_cast<uint64_t>(k) | (static_cast<uint64_t>(op) << 8) |
                 (static_cast<uint64_t>(m.dtype) << 24) | (static_cast<uint64_t>(m.compute) << 32));
  h = mix(h, m.sizes.size());
  for (int64_t s : m.sizes) h = mix(h, static_cast<uint64_t>(s));
  return h;
}

uint64_t bits(double f) {
  uint64_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

inline __attribute__((always_inline)) Node* new_node() {
  live_add(1);
  Node* n = new Node;
  n->refs.store(1, std::memory_order_relaxed);  // the NodePtr the builder returns (adopted)
  return n;  // default-init: the members have initializers; no zeroing pass
}

}  // namespace

std::string hash_hex(Hash128 h) {
  char b[40];
  std::snprintf(b, sizeof b, "%016llx%016llx", static_cast<unsigned long long>(h.hi),
                static_cast<unsigned long long>(h.lo));
  return b;
}

void NodePtr::destroy(Node* n) {
  // Iterative teardown: operands whose count drops to zero join the work list (a small
  // inline stack; a wide fan-in spills to the heap). Releases of a shared operand are batched:
  // a chain x + y + y + ... releases y once per node, and one atomic subtraction per run of
  // them replaces an atomic decrement each (62% of a 1000-node teardown was that one line).
  // Holding the releases back only keeps the operand alive a little longer.
  Node* inline_work[32];
  std::vector<Node*> spill;
  size_t top = 0;
  auto push = [&](Node* c) {
    if (top < 32)
      inline_work[top++] = c;
    else
      spill.push_back(c);
  };
  Node* pend = nullptr;
  int32_t pend_n = 0;
  auto flush = [&] {
    if (pend && pend->refs.fetch_sub(pend_n, std::memory_order_acq_rel) == pend_n) push(pend);
    pend = nullptr;
    pend_n = 0;
  };
  inline_work[top++] = n;
  int64_t freed = 0;
  for (;;) {
    while (top > 0 || !spill.empty()) {
      Node* d;
      if (!spill.empty()) {
        d = spill.back();
        spill.pop_back();
      } else {
        d = inline_work[--top];
      }
      for (uint32_t i = 0; i < d->n_operands; ++i) {
        Node* c = d->operands[i].n_;
        d->operands[i].n_ = nullptr;
        if (!c) continue;
        if (c == pend) {
          ++pend_n;
        } else if (c->refs.load(std::memory_order_acquire) == 1) {
          push(c);  // the sole owner: no atomic read-modify-write
        } else {
          flush();
          pend = c;
          pend_n = 1;
        }
      }
      if (d->operands != d->inline_ops()) {
        delete[] d->operands;
      } else {
        for (uint32_t i = 0; i < d->n_operands; ++i) d->operands[i].~NodePtr();
      }
      delete d;
      ++freed;
    }
    if (!pend) break;
    flush();
  }
  live_add(-freed);
}

NodePtr make_op(OpKind op, const OpMeta& meta, const OpAttrs& attrs, const NodePtr* operands,
                size_t n) {
  Node* raw[Node::kInlineOps];
  std::vector<Node*> many;
  Node** p = raw;
  if (n > Node::kInlineOps) {
    many.resize(n);
    p = many.data();
  }
  for (size_t i = 0; i < n; ++i) p[i] = operands[i].get();
  return make_op(op, meta, attrs, p, n);
}

NodePtr make_op(OpKind op, const OpMeta& meta, const OpAttrs& attrs, Node* const* operands,
                size_t n) {
  Node* node = new_node();
  node->kind = NodeKind::Op;
  node->op = op;
  node->meta = meta;
  node->attrs = attrs;
  node->n_operands = static_cast<uint32_t>(n);
  if (n <= Node::kInlineOps) {
    node->operands = node->inline_ops();
    for (size_t i = 0; i < n; ++i) new (&node->operands[i]) NodePtr(operands[i]);
  } else {
    node->operands = new NodePtr[n];
    for (size_t i = 0; i < n; ++i) node->operands[i] = NodePtr(operands[i]);
  }
  Hash128 h = hash_header(NodeKind::Op, op, meta);
  h = mix(h, attrs.ints.size());
  for (int64_t v : attrs.ints) h = mix(h, static_cast<uint64_t>(v));
  if (attrs.i[0] | attrs.i[1] | attrs.i[2] | attrs.i[3])
    for (int64_t v : attrs.i) h = mix(h, static_cast<uint64_t>(v));
  h = mix(h, bits(attrs.f) ^ (static_cast<uint64_t>(attrs.flag) << 1) ^
                 (static_cast<uint64_t>(attrs.dtype) << 3));
  for (size_t i = 0; i < n; ++i) {
    h = mix(h, operands[i]->hash.lo);
    h = mix(h, operands[i]->hash.hi);
  }
  node->hash = h;
  return NodePtr::adopt(node);
}

NodePtr make_data(const Tensor& buffer) {
  Node* node = new_node();
  node->kind = NodeKind::Data;
  node->meta = OpMeta{Dims(buffer.sizes()), buffer.dtype(), buffer.dtype()};
  node->data = buffer;
  node->hash = hash_header(NodeKind::Data, OpKind::Scalar, node->meta);
  return NodePtr::adopt(node);
}

NodePtr make_data_leaf(const OpMeta& meta, int64_t slot) {
  Node* node = new_node();
  node->kind = NodeKind::Data;
  node->meta = meta;
  node->slot = slot;
  node->hash = hash_header(NodeKind::Data, OpKind::Scalar, node->meta);
  return NodePtr::adopt(node);
}

NodePtr make_param(Dtype dtype, double f, int64_t i) {
  Node* node = new_node();
  node->kind = NodeKind::Param;
  node->meta = OpMeta{Dims(), dtype, dtype};
  node->param_f = f;
  node->param_i = i;
  node->hash = hash_header(NodeKind::Param, OpKind::Scalar, node->meta);  // value not hashed
  return NodePtr::adopt(node);
}

NodePtr make_const(Dtype dtype, double f, int64_t i) {
  Node* node = new_node();
  node->kind = NodeKind::Const;
  node->meta = OpMeta{Dims(), dtype, dtype};
  node->param_f = f;
  node->param_i = i;
  node->hash = mix(hash_header(NodeKind::Const, OpKind::Scalar, node->meta),
                   bits(f) ^ static_cast<uint64_t>(i));
  return NodePtr::adopt(node);
}

NodePtr make_leaf_copy(const Node& n) {
  Node* node = new_node();
  node->kind = n.kind;
  node->meta = n.meta;
  node->param_f = n.param_f;
  node->param_i = n.param_i;
  node->hash = n.hash;
  node->slot = n.slot;
  return NodePtr::adopt(node);
}

int64_t live_nodes() {
  std::lock_guard<std::mutex> g(g_live_mu);
  int64_t total = g_retired.load(std::memory_order_relaxed);
  for (const LiveCount* c : live_counts()) total += __atomic_load_n(&c->n, __ATOMIC_RELAXED);
  return total;
}

}  // namespace lt::ir
