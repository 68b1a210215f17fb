#include "backend/plan_node.h"

#include <unordered_map>

#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt::backend {

std::vector<PlanNode> flatten(const ir::Graph& g, std::vector<int32_t>* roots) {
  std::unordered_map<const ir::Node*, int32_t> idx;
  std::vector<PlanNode> nodes;
  nodes.reserve(g.order.size());
  for (const ir::Node* n : g.order) {
    PlanNode p{n->kind, n->op, n->meta, n->attrs, {}, n->slot, n->param_f, n->param_i};
    for (uint32_t k = 0; k < n->n_operands; ++k) p.args.push_back(idx.at(n->operands[k].get()));
    idx[n] = static_cast<int32_t>(nodes.size());
    nodes.push_back(std::move(p));
  }
  for (const ir::NodePtr& r : g.roots) roots->push_back(idx.at(r.get()));
  return nodes;
}

std::vector<int32_t> buffer_owners(const std::vector<PlanNode>& nodes,
                                   const std::vector<std::pair<int32_t, int32_t>>& aliases) {
  std::vector<int32_t> alias_of(nodes.size(), -1);
  for (auto [v, source] : aliases) alias_of[static_cast<size_t>(v)] = source;
  std::vector<int32_t> owner(nodes.size());
  for (size_t v = 0; v < nodes.size(); ++v) {
    const PlanNode& n = nodes[v];
    owner[v] = alias_of[v] >= 0 ? owner[static_cast<size_t>(alias_of[v])]
               : n.kind == ir::NodeKind::Op && is_view_op(n.op) && !n.args.empty()
                   ? owner[n.args[0]]
                   : static_cast<int32_t>(v);
  }
  return owner;
}

Tensor leaf_value(const PlanNode& n, const RunArgs& args) {
  switch (n.kind) {
    case ir::NodeKind::Data: return args.data.at(n.slot);
    case ir::NodeKind::Param: return args.params.at(n.slot);
    default: {
      Tensor c = make_eager({}, n.meta.dtype);
      fill_kernel(c, n.cf, n.ci);
      return c;
    }
  }
}

std::vector<Tensor> op_inputs(const PlanNode& n, const std::vector<Tensor>& values,
                              OpAttrs* attrs) {
  std::vector<Tensor> in;
  in.reserve(n.args.size());
  for (int32_t a : n.args) in.push_back(values[a]);
  *attrs = n.attrs;
  if (op_category(n.op) == OpCategory::Random) {
    RandomAttrs r = RandomAttrs::of(*attrs);
    r.seed = int64_values(in.at(0)).at(0);
    r.offset = int64_values(in.at(1)).at(0);
    r.write(attrs);
    in.clear();
  }
  return in;
}

}  // namespace lt::backend
