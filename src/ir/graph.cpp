#include "ir/graph.h"

#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "core/shape.h"
#include "core/tensor_impl.h"
#include "ops/attrs.h"
#include "ops/dist_hooks.h"

namespace lt::ir {
namespace {

std::mutex g_build_mu;
uint64_t g_epoch = 0;

std::string type_str(const Node* n) {
  std::string s = dtype_short(n->meta.dtype);
  s += "[";
  for (size_t i = 0; i < n->meta.sizes.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(n->meta.sizes[i]);
  }
  return s + "]";
}

std::string list(IntList v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

std::string value_str(const Node* n) {
  std::ostringstream os;
  if (is_floating(n->meta.dtype))
    os << n->param_f;
  else
    os << n->param_i;
  return os.str();
}

std::string attr_str(const Node* n) {
  const OpAttrs& a = n->attrs;
  switch (op_category(n->op)) {
    case OpCategory::Reduction: {
      const ReduceAttrs r = ReduceAttrs::of(a);
      return ", dims=" + list(r.dims) + (r.keepdim ? ", keepdim=1" : "");
    }
    case OpCategory::Movement:
      switch (n->op) {
        case OpKind::Reshape: case OpKind::Expand: return ", size=" + list(a.ints);
        case OpKind::Permute: return ", dims=" + list(a.ints);
        case OpKind::Slice: case OpKind::SliceScatter: {
          const SliceAttrs s = SliceAttrs::of(a);
          return ", dim=" + std::to_string(s.dim) + ", start=" + std::to_string(s.start) +
                 ", end=" + std::to_string(s.end) + ", step=" + std::to_string(s.step);
        }
        case OpKind::Cat: return ", dim=" + std::to_string(DimAttrs::of(a).dim);
        case OpKind::Pad: {
          const PadAttrs p = PadAttrs::of(a);
          return ", pad=" + list(p.pads) + ", value=" + std::to_string(p.value);
        }
        default: return "";
      }
    case OpCategory::Contraction:
      switch (n->op) {
        case OpKind::Matmul: return "";
        case OpKind::Argsort:
          return ", dim=" + std::to_string(SortAttrs::of(a).dim) +
                 (SortAttrs::of(a).descending ? ", descending" : "");
        case OpKind::Conv2d: case OpKind::Conv2dGradInput: case OpKind::Conv2dGradWeight: {
          const ConvAttrs c = ConvAttrs::of(a);
          return ", params=" + list(c.params()) + ", groups=" + std::to_string(c.groups);
        }
        default: return ", params=" + list(PoolAttrs::of(a).params());
      }
    case OpCategory::Indexing: return ", dim=" + std::to_string(DimAttrs::of(a).dim);
    case OpCategory::EwUnary:
      return n->op == OpKind::Cast ? std::string(", dtype=") + dtype_name(a.dtype) : "";
    case OpCategory::Creation:
    case OpCategory::Random: return ", size=" + list(a.ints);
    case OpCategory::Collective:
      return std::string(", op=") + reduce_code_name(AllReduceAttrs::of(a).op) +
             ", group=" + std::to_string(AllReduceAttrs::of(a).group);
    default: return "";
  }
}

}  // namespace

Graph build_graph(std::vector<NodePtr> roots) {
  std::lock_guard<std::mutex> lock(g_build_mu);
  Graph g;
  g.roots = std::move(roots);
  const uint64_t epoch = ++g_epoch;
  std::map<const void*, int64_t> data_slot;
  Hash128 key{0x452821E638D01377ull, 0xBE5466CF34E90C6Cull};
  key = mix(key, g.roots.size());
  std::vector<std::pair<Node*, uint32_t>> stack;
  for (const NodePtr& r : g.roots) {
    key = mix(key, r->hash.lo);
    key = mix(key, r->hash.hi);
    if (r->mark == epoch) {
      key = mix(key, 0xA11A5ull + static_cast<uint64_t>(r->slot));  // a root seen before
      continue;
    }
    stack.push_back({r.get(), 0});
    r->mark = epoch;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->n_operands) {
        Node* c = n->operands[next++].get();
        if (c->mark != epoch) {
          c->mark = epoch;
          stack.push_back({c, 0});
        } else {
          // A second use: say which input or node it is, or stack({a, a, b}) and
          // stack({a, b, b}) would share a key. (A DAG: a marked operand is finished.)
          key = mix(key, (static_cast<uint64_t>(c->kind) << 48) ^ static_cast<uint64_t>(c->slot));
        }
        continue;
      }
      Node* done = n;
      stack.pop_back();
      if (done->kind == NodeKind::Data) {
        const void* id = done->data.impl()->storage.get();
        auto [it, fresh] = data_slot.try_emplace(id, static_cast<int64_t>(g.data.size()));
        if (fresh) g.data.push_back(done);
        done->slot = it->second;
        key = mix(key, 0xDA7A0000ull + static_cast<uint64_t>(done->slot));
      } else if (done->kind == NodeKind::Param) {
        // Each parameter node has an input of its own. Sharing one between equal values made
        // the graph's structure depend on them: Adam's step size lr / (1 - 0.9^t) came out equal
        // to its 1 - 0.999 at t = 329 and 330 (lr 1e-3), and those steps were a new graph that
        // ran on interp and compiled (and a collision of the values' hashes would have merged
        // two different scalars).
        done->slot = static_cast<int64_t>(g.params.size());
        g.params.push_back(done);
        key = mix(key, 0x9A2A0000ull + static_cast<uint64_t>(done->slot));
      } else {
        done->slot = static_cast<int64_t>(g.order.size());
        if (done->kind == NodeKind::Op) g.op_count++;
      }
      g.order.push_back(done);
    }
  }
  g.key = key;
  return g;
}

Graph detached_copy(const Graph& g) {
  Graph c;
  std::unordered_map<const Node*, Node*> copy;
  copy.reserve(g.order.size());
  std::vector<NodePtr> owned;  // every copy, until the roots hold them
  owned.reserve(g.order.size());
  std::vector<Node*> ops;
  for (const Node* n : g.order) {
    NodePtr p;
    if (n->kind == NodeKind::Op) {
      ops.resize(n->n_operands);
      for (uint32_t i = 0; i < n->n_operands; ++i) ops[i] = copy.at(n->operands[i].get());
      p = make_op(n->op, n->meta, n->attrs, ops.data(), ops.size());
      p->hash = n->hash;
      p->slot = n->slot;
    } else {
      p = make_leaf_copy(*n);
    }
    copy[n] = p.get();
    c.order.push_back(p.get());
    owned.push_back(std::move(p));
  }
  for (const NodePtr& r : g.roots) c.roots.push_back(NodePtr(copy.at(r.get())));
  for (const Node* d : g.data) c.data.push_back(copy.at(d));
  for (const Node* p : g.params) c.params.push_back(copy.at(p));
  c.key = g.key;
  c.op_count = g.op_count;
  return c;
}

namespace {
// Printed ids: data leaves that share an input slot (one buffer) print once (each parameter
// has a slot of its own).
struct Ids {
  std::map<const Node*, size_t> id;
  std::vector<const Node*> shown;
  explicit Ids(const Graph& g) {
    std::map<int64_t, size_t> leaf;
    for (const Node* n : g.order) {
      if (n->kind == NodeKind::Data) {
        auto [it, fresh] = leaf.try_emplace(n->slot, shown.size());
        id[n] = it->second;
        if (!fresh) continue;
      } else {
        id[n] = shown.size();
      }
      shown.push_back(n);
    }
  }
};
}  // namespace

std::string to_text(const Graph& g) {
  Ids ids(g);
  auto& id = ids.id;
  std::map<const Node*, std::vector<size_t>> root_of;
  for (size_t i = 0; i < g.roots.size(); ++i) root_of[g.roots[i].get()].push_back(i);
  std::ostringstream os;
  os << "IR {\n";
  for (size_t i = 0; i < ids.shown.size(); ++i) {
    const Node* n = ids.shown[i];
    os << "  %" << i << " = " << type_str(n) << " ";
    switch (n->kind) {
      case NodeKind::Data: os << "device_data(), device=lazy, input=" << n->slot; break;
      case NodeKind::Param: os << "parameter(), value=" << value_str(n) << ", input=" << n->slot; break;
      case NodeKind::Const: os << "constant(), value=" << value_str(n); break;
      case NodeKind::Op:
        os << op_name(n->op) << "(";
        for (uint32_t k = 0; k < n->n_operands; ++k)
          os << (k ? ", " : "") << "%" << id[n->operands[k].get()];
        os << ")" << attr_str(n);
        break;
    }
    auto r = root_of.find(n);
    if (r != root_of.end())
      for (size_t ri : r->second) os << ", ROOT=" << ri;
    os << "\n";
  }
  os << "}\n";
  return os.str();
}

std::string to_dot(const Graph& g) {
  Ids ids(g);
  auto& id = ids.id;
  std::map<const Node*, std::vector<size_t>> root_of;
  for (size_t i = 0; i < g.roots.size(); ++i) root_of[g.roots[i].get()].push_back(i);
  std::ostringstream os;
  os << "digraph G {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < ids.shown.size(); ++i) {
    const Node* n = ids.shown[i];
    std::string name = n->kind == NodeKind::Data    ? "device_data"
                       : n->kind == NodeKind::Param ? "parameter"
                       : n->kind == NodeKind::Const ? "constant " + value_str(n)
                                                    : op_name(n->op);
    os << "  n" << i << " [label=\"" << name << "\\n" << type_str(n);
    auto r = root_of.find(n);
    if (r != root_of.end())
      for (size_t ri : r->second) os << "\\nROOT=" << ri;
    os << "\"" << (r != root_of.end() ? ", style=bold" : "") << "];\n";
  }
  for (size_t i = 0; i < ids.shown.size(); ++i) {
    const Node* n = ids.shown[i];
    for (uint32_t k = 0; k < n->n_operands; ++k)
      os << "  n" << id[n->operands[k].get()] << " -> n" << i << " [label=\"i=" << k << "\"];\n";
  }
  os << "}\n";
  return os.str();
}

std::vector<std::string> input_signature(const Graph& g) {
  std::vector<std::string> s;
  for (size_t i = 0; i < g.data.size(); ++i)
    s.push_back("input " + std::to_string(i) + ": " + type_str(g.data[i]));
  for (size_t i = 0; i < g.params.size(); ++i)
    s.push_back("parameter " + std::to_string(i) + ": " + type_str(g.params[i]));
  s.push_back("ops: " + std::to_string(g.op_count));
  return s;
}

}  // namespace lt::ir
