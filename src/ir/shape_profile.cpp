#include "ir/shape_profile.h"

#include <cstring>
#include <map>

namespace lt::ir {
namespace {

// attrs.ints that list sizes (the output's, for these ops).
bool sizes_in_ints(OpKind op) {
  switch (op) {
    case OpKind::Reshape:
    case OpKind::Expand:
    case OpKind::Iota:
    case OpKind::Uniform:
    case OpKind::Normal:
    case OpKind::RandomInt:
      return true;
    default:
      return false;
  }
}

// attrs.i[k] that is a size or an offset: a slice's start and end, a convolution's or pooling's
// input extent (its gradients' h, w).
bool size_in_i(OpKind op, int k) {
  if (k != 1 && k != 2) return false;
  switch (op) {
    case OpKind::Slice:
    case OpKind::SliceScatter:
    case OpKind::Conv2d:
    case OpKind::Conv2dGradInput:
    case OpKind::Conv2dGradWeight:
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
    case OpKind::MaxPool2dGrad:
    case OpKind::AvgPool2dGrad:
      return true;
    default:
      return false;
  }
}

uint64_t bits(double f) {
  uint64_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

}  // namespace

int64_t read_int(const Graph& g, IntPos p) {
  const Node* n = g.order[static_cast<size_t>(p.node)];
  switch (p.field) {
    case IntPos::Size:
      return n->meta.sizes[static_cast<size_t>(p.k)];
    case IntPos::AttrInts:
      return n->attrs.ints[static_cast<size_t>(p.k)];
    default:
      return n->attrs.i[p.k];
  }
}

ShapeProfile shape_profile(const Graph& g) {
  ShapeProfile s;
  Hash128 h{0x3F84D5B5B5470917ull, 0x9216D5D98979FB1Bull};
  h = mix(h, (g.order.size() << 20) ^ (g.data.size() << 10) ^ g.params.size());
  for (size_t i = 0; i < g.order.size(); ++i) {
    const Node* n = g.order[i];
    const int32_t idx = static_cast<int32_t>(i);
    h = mix(h, static_cast<uint64_t>(n->kind) | (static_cast<uint64_t>(n->op) << 8) |
                   (static_cast<uint64_t>(n->meta.dtype) << 24) |
                   (static_cast<uint64_t>(n->meta.compute) << 32) |
                   (static_cast<uint64_t>(n->meta.sizes.size()) << 40));
    for (size_t d = 0; d < n->meta.sizes.size(); ++d) {
      s.pos.push_back({idx, IntPos::Size, static_cast<int16_t>(d)});
      s.values.push_back(n->meta.sizes[d]);
    }
    if (n->kind == NodeKind::Data || n->kind == NodeKind::Param) {
      h = mix(h, static_cast<uint64_t>(n->slot));
      continue;
    }
    if (n->kind == NodeKind::Const) {
      h = mix(h, bits(n->param_f) ^ static_cast<uint64_t>(n->param_i));
      continue;
    }
    // Operands: an op or constant by its index in the order, a leaf by its input slot.
    for (uint32_t k = 0; k < n->n_operands; ++k) {
      const Node* c = n->operands[k].get();
      const bool leaf = c->kind == NodeKind::Data || c->kind == NodeKind::Param;
      h = mix(h, (static_cast<uint64_t>(c->kind) << 48) ^ static_cast<uint64_t>(c->slot) ^
                     (leaf ? 0 : 0x5EEDull << 32));
    }
    const OpAttrs& a = n->attrs;
    h = mix(h, a.ints.size());
    const bool ints_sizes = sizes_in_ints(n->op);
    for (size_t k = 0; k < a.ints.size(); ++k) {
      if (ints_sizes) {
        s.pos.push_back({idx, IntPos::AttrInts, static_cast<int16_t>(k)});
        s.values.push_back(a.ints[k]);
      } else {
        h = mix(h, static_cast<uint64_t>(a.ints[k]));
      }
    }
    for (int k = 0; k < 4; ++k) {
      if (size_in_i(n->op, k)) {
        s.pos.push_back({idx, IntPos::AttrI, static_cast<int16_t>(k)});
        s.values.push_back(a.i[k]);
      } else {
        h = mix(h, static_cast<uint64_t>(a.i[k]));
      }
    }
    h = mix(h, bits(a.f) ^ (static_cast<uint64_t>(a.flag) << 1) ^
                   (static_cast<uint64_t>(a.dtype) << 3));
  }
  for (const NodePtr& r : g.roots) {
    const bool leaf = r->kind == NodeKind::Data || r->kind == NodeKind::Param;
    h = mix(h, (static_cast<uint64_t>(r->kind) << 48) ^ static_cast<uint64_t>(r->slot) ^
                   (leaf ? 0 : 0x5EEDull << 32));
  }
  s.structure = h;
  return s;
}

std::optional<DynamicShapes> DynamicShapes::generalize(
    const std::vector<IntPos>& pos, const std::vector<std::vector<int64_t>>& seen) {
  if (seen.size() < 2) return std::nullopt;
  for (const std::vector<int64_t>& v : seen)
    if (v.size() != pos.size()) return std::nullopt;  // (a hash collision of two structures)
  DynamicShapes d;
  d.pos_ = pos;
  d.values_ = seen.back();
  d.sym_.assign(pos.size(), -1);
  std::map<std::vector<int64_t>, int32_t> by_column;
  std::vector<int64_t> column(seen.size());
  for (size_t i = 0; i < pos.size(); ++i) {
    bool varies = false, small = false;
    for (size_t s = 0; s < seen.size(); ++s) {
      column[s] = seen[s][i];
      varies = varies || column[s] != column[0];
      small = small || column[s] < 2;
    }
    if (!varies) continue;
    if (small) return std::nullopt;
    auto [it, fresh] = by_column.try_emplace(column, static_cast<int32_t>(d.rep_.size()));
    if (fresh) d.rep_.push_back(static_cast<int32_t>(i));
    d.sym_[i] = it->second;
  }
  if (d.rep_.empty()) return std::nullopt;
  return d;
}

bool DynamicShapes::admits(const std::vector<int64_t>& values) const {
  if (values.size() != values_.size()) return false;
  for (size_t i = 0; i < values.size(); ++i) {
    const int32_t s = sym_[i];
    if (s < 0 ? values[i] != values_[i]
              : values[i] < 2 || values[i] != values[static_cast<size_t>(rep_[s])])
      return false;
  }
  return true;
}

void DynamicShapes::symbol_values(const Graph& g, std::vector<int64_t>* out) const {
  out->resize(rep_.size());
  for (size_t s = 0; s < rep_.size(); ++s) (*out)[s] = read_int(g, pos_[rep_[s]]);
}

std::string describe_pos(const Graph& g, IntPos p) {
  const Node* n = g.order[static_cast<size_t>(p.node)];
  std::string s = n->kind == NodeKind::Data
                      ? "input " + std::to_string(n->slot)
                      : std::string(op_name(n->op)) + "#" + std::to_string(p.node);
  switch (p.field) {
    case IntPos::Size:
      return s + " dim " + std::to_string(p.k);
    case IntPos::AttrInts:
      return s + " size[" + std::to_string(p.k) + "]";
    default:
      return s + (p.k == 1 ? " start/h" : " end/w");
  }
}

std::string DynamicShapes::describe(const Graph& g) const {
  std::string out;
  for (size_t s = 0; s < rep_.size(); ++s) {
    size_t uses = 0;
    for (int32_t v : sym_) uses += v == static_cast<int32_t>(s);
    out += (s ? "; " : "") + ("s" + std::to_string(s)) + " = " + describe_pos(g, pos_[rep_[s]]);
    if (uses > 1) out += " (+" + std::to_string(uses - 1) + " equal)";
  }
  return out;
}

void DynamicShapes::bind(const Graph& g) {
  size_sym_.clear();
  attr_sym_.clear();
  for (size_t i = 0; i < pos_.size(); ++i) {
    if (sym_[i] < 0) continue;
    const Node* n = g.order[static_cast<size_t>(pos_[i].node)];
    if (pos_[i].field == IntPos::Size) {
      std::vector<int32_t>& v = size_sym_[n];
      v.resize(n->meta.sizes.size(), -1);
      v[static_cast<size_t>(pos_[i].k)] = sym_[i];
    } else if (pos_[i].field == IntPos::AttrI) {
      std::vector<int32_t>& v = attr_sym_[n];
      v.resize(4, -1);
      v[static_cast<size_t>(pos_[i].k)] = sym_[i];
    }
  }
}

int32_t DynamicShapes::size_symbol(const Node* n, size_t d) const {
  auto it = size_sym_.find(n);
  return it == size_sym_.end() || d >= it->second.size() ? -1 : it->second[d];
}

int32_t DynamicShapes::attr_symbol(const Node* n, size_t k) const {
  auto it = attr_sym_.find(n);
  return it == attr_sym_.end() || k >= it->second.size() ? -1 : it->second[k];
}

}  // namespace lt::ir
