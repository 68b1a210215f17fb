#include "ir/node.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

namespace lt::ir {
namespace {

std::atomic<int64_t> g_live{0};

Hash128 hash_header(NodeKind k, OpKind op, const OpMeta& m) {
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

Node* new_node() {
  g_live.fetch_add(1, std::memory_order_relaxed);
  return new Node();
}

}  // namespace

std::string hash_hex(Hash128 h) {
  char b[40];
  std::snprintf(b, sizeof b, "%016llx%016llx", static_cast<unsigned long long>(h.hi),
                static_cast<unsigned long long>(h.lo));
  return b;
}

void NodePtr::reset() {
  Node* n = n_;
  n_ = nullptr;
  if (!n || n->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Iterative teardown: operands whose count drops to zero join the work list.
  std::vector<Node*> work{n};
  while (!work.empty()) {
    Node* d = work.back();
    work.pop_back();
    for (uint32_t i = 0; i < d->n_operands; ++i) {
      Node* c = d->operands[i].n_;
      d->operands[i].n_ = nullptr;
      if (c && c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) work.push_back(c);
    }
    if (d->operands != d->inline_ops()) {
      delete[] d->operands;
    } else {
      for (uint32_t i = 0; i < d->n_operands; ++i) d->operands[i].~NodePtr();
    }
    delete d;
    g_live.fetch_sub(1, std::memory_order_relaxed);
  }
}

NodePtr make_op(OpKind op, const OpMeta& meta, const OpAttrs& attrs, const NodePtr* operands,
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
    for (size_t i = 0; i < n; ++i) node->operands[i] = operands[i];
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
  return NodePtr(node);
}

NodePtr make_data(const Tensor& buffer) {
  Node* node = new_node();
  node->kind = NodeKind::Data;
  node->meta = OpMeta{Dims(buffer.sizes()), buffer.dtype(), buffer.dtype()};
  node->data = buffer;
  node->hash = hash_header(NodeKind::Data, OpKind::Scalar, node->meta);
  return NodePtr(node);
}

NodePtr make_param(Dtype dtype, double f, int64_t i) {
  Node* node = new_node();
  node->kind = NodeKind::Param;
  node->meta = OpMeta{Dims(), dtype, dtype};
  node->param_f = f;
  node->param_i = i;
  node->hash = hash_header(NodeKind::Param, OpKind::Scalar, node->meta);  // value not hashed
  return NodePtr(node);
}

NodePtr make_const(Dtype dtype, double f, int64_t i) {
  Node* node = new_node();
  node->kind = NodeKind::Const;
  node->meta = OpMeta{Dims(), dtype, dtype};
  node->param_f = f;
  node->param_i = i;
  node->hash = mix(hash_header(NodeKind::Const, OpKind::Scalar, node->meta),
                   bits(f) ^ static_cast<uint64_t>(i));
  return NodePtr(node);
}

int64_t live_nodes() { return g_live.load(std::memory_order_relaxed); }

}  // namespace lt::ir
