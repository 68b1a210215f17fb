#include "lazy/bucket_rewrite.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/reshape_groups.h"
#include "core/shape.h"
#include "eager/tensor_util.h"
#include "ops/attrs.h"

namespace lt::lazy {
namespace {

using Refuse = BucketRefused;

// A reduction's identity, the value a masked entry reads: (double, int64) as a Param/Const has.
std::pair<double, int64_t> lowest(Dtype t) {
  if (is_floating(t)) return {-INFINITY, 0};
  if (t == kBool) return {0, 0};
  const int64_t v = t == kInt8    ? std::numeric_limits<int8_t>::min()
                    : t == kInt32 ? std::numeric_limits<int32_t>::min()
                                  : std::numeric_limits<int64_t>::min();
  return {static_cast<double>(v), v};
}
std::pair<double, int64_t> highest(Dtype t) {
  if (is_floating(t)) return {INFINITY, 0};
  if (t == kBool) return {1, 1};
  const int64_t v = t == kInt8    ? std::numeric_limits<int8_t>::max()
                    : t == kInt32 ? std::numeric_limits<int32_t>::max()
                                  : std::numeric_limits<int64_t>::max();
  return {static_cast<double>(v), v};
}

std::string pads_str(const Pads& p) {
  std::string s = "[";
  for (size_t i = 0; i < p.size(); ++i) {
    s += i ? ", " : "";
    s += !p[i].on() ? "-"
         : p[i].any ? "*"
                    : std::to_string(p[i].a) + "xBx" + std::to_string(p[i].c);
  }
  return s + "]";
}

class Rewriter {
 public:
  Rewriter(const ir::Graph& g, int64_t s, int64_t b, std::unordered_map<uint64_t, int64_t> fac)
      : g_(g), s_(s), b_(b), fac_(std::move(fac)) {}

  int masks = 0;

  std::unique_ptr<BucketPlan> run() {
    auto plan = std::make_unique<BucketPlan>();
    p_ = plan.get();
    p_->graph.data.assign(g_.data.size(), nullptr);
    p_->graph.params.assign(g_.params.size(), nullptr);
    p_->data_padded.assign(g_.data.size(), Dims());
    for (size_t idx = 0; idx < g_.order.size(); ++idx) rewrite(idx);
    ir::Graph& out = p_->graph;
    for (const ir::NodePtr& r : g_.roots) {
      ir::Node* n = nw_.at(r.get());
      out.roots.push_back(ir::NodePtr(n));
      p_->out_pads.push_back(any_on(P(n)) ? P(n) : Pads());
    }
    for (ir::Node* d : out.data) LT_CHECK(d, "internal: bucketing lost an input");
    for (ir::Node* m : mask_nodes_) out.data.push_back(m);
    for (ir::Node* n : extra_nodes_) out.params.push_back(n);
    out.key = key();
    return plan;
  }

 private:
  int64_t fac(size_t node, ir::IntPos::Field f, size_t k) const {
    auto it = fac_.find(bucket_pos_key(static_cast<int64_t>(node), f, static_cast<int64_t>(k)));
    return it == fac_.end() ? 0 : it->second;
  }
  const Pads& P(const ir::Node* n) const { return pad_.at(n); }
  static bool any_on(const Pads& p) {
    return std::any_of(p.begin(), p.end(), [](const Pad& d) { return d.on(); });
  }
  // The padded dims of a value the sizes say is k * B (k from the positions), real entries first.
  static Pads prefix(const Dims& k) {
    Pads p(k.size());
    for (size_t d = 0; d < k.size(); ++d)
      if (k[d]) p[d] = Pad{1, k[d], false};
    return p;
  }

  ir::Node* push(ir::NodePtr p, Pads f) {
    ir::Node* n = p.get();
    if (n->kind == ir::NodeKind::Op || n->kind == ir::NodeKind::Const)
      n->slot = static_cast<int64_t>(p_->graph.order.size());
    if (n->kind == ir::NodeKind::Op) p_->graph.op_count++;
    p_->graph.order.push_back(n);
    pad_[n] = std::move(f);
    p_->owned.push_back(std::move(p));
    return n;
  }

  static Tensor placeholder(const ir::Node* n) {
    Tensor z = make_eager({}, n->meta.dtype);
    return n->meta.sizes.empty() ? z : expand_view(z, n->meta.sizes);
  }
  static OpMeta infer(OpKind k, const std::vector<ir::Node*>& in, const OpAttrs& a) {
    std::vector<Tensor> ph;
    for (const ir::Node* x : in) ph.push_back(placeholder(x));
    try {
      return infer_meta(k, ph, a);
    } catch (const Error& e) {
      throw Refuse{std::string("padded sizes do not fit ") + op_name(k) + ": " + e.what()};
    }
  }
  ir::Node* op(OpKind k, const OpAttrs& a, const std::vector<ir::Node*>& in, Pads f) {
    return push(ir::make_op(k, infer(k, in, a), a, in.data(), in.size()), std::move(f));
  }
  ir::Node* reshape(ir::Node* x, Dims sizes) {
    OpAttrs a;
    a.ints = std::move(sizes);
    return op(OpKind::Reshape, a, {x}, Pads(a.ints.size()));
  }

  // A scalar leaf: 0 and 1 baked in, anything else a run-time parameter.
  ir::Node* scalar(Dtype t, double f, int64_t i) {
    if ((f == 0 && i == 0) || (f == 1 && i == 1)) return push(ir::make_const(t, f, i), Pads());
    ir::NodePtr p = ir::make_param(t, f, i);
    p->slot = static_cast<int64_t>(g_.params.size() + p_->extra.size());
    p_->extra.push_back({t, f, i});
    ir::Node* n = push(std::move(p), Pads());
    extra_nodes_.push_back(n);
    return n;
  }

  // bool, sizes 1 except a*B*c in dim d of a rank-r value: true where the entry is real. The
  // mask of each layout is an input the run makes on the host (BucketPlan::masks): computed in the
  // graph, it was fused into every loop that reads it, with a division and a remainder per
  // element (a [2048, 2048] where: 15.7 ms).
  ir::Node* mask(Pad p, size_t r, size_t d) {
    auto key = std::make_tuple(p.a, p.c, r, d);
    auto it = masks_.find(key);
    if (it != masks_.end()) return it->second;
    ir::Node*& flat = mask_inputs_[{p.a, p.c}];
    if (!flat) {
      const int64_t slot = static_cast<int64_t>(g_.data.size() + p_->masks.size());
      p_->masks.push_back(p);
      OpMeta m{Dims{p.a * b_ * p.c}, kBool, kBool};
      flat = push(ir::make_data_leaf(m, slot), Pads(1));
      mask_nodes_.push_back(flat);
    }
    Dims sizes(r, 1);
    sizes[d] = p.a * b_ * p.c;
    ir::Node* m = r == 1 ? flat : reshape(flat, sizes);
    return masks_[key] = m;
  }

  // x with the padding of dim d replaced by `fill`; `as`: the layout the reader sees there (two
  // operands of a contraction: the one they agree on), else x's own.
  ir::Node* masked(ir::Node* x, size_t d, std::pair<double, int64_t> fill, Pad as = Pad{}) {
    if (d >= P(x).size() || !P(x)[d].on()) return x;  // (a 0-d value's dim 0: nothing padded)
    const Pad p = as.on() ? as : P(x)[d];
    ++masks;
    ir::Node* m = mask(p.any ? Pad{1, p.k(), false} : p, x->meta.sizes.size(), d);
    ir::Node* v = scalar(x->meta.dtype, fill.first, fill.second);
    ir::Node* w = op(OpKind::Where, kNoAttrs, {m, x, v}, P(x));
    if (w->meta.dtype != x->meta.dtype)
      throw Refuse{std::string("a mask would change the dtype of ") + dtype_name(x->meta.dtype)};
    return w;
  }
  ir::Node* masked_all(ir::Node* x, std::pair<double, int64_t> fill) {
    for (size_t d = 0; d < P(x).size(); ++d) x = masked(x, d, fill);
    return x;
  }

  // Two layouts of one dim that must agree (an elementwise op's operands, a matmul's K).
  static Pad unify(const Pad& x, const Pad& y, const std::string& what) {
    if (!x.on()) return y;
    if (!y.on()) return x;
    if (x.any) return y.k() == x.k() ? y : throw Refuse{what + ": padded differently"};
    if (y.any) return y.k() == x.k() ? x : throw Refuse{what + ": padded differently"};
    if (x != y) throw Refuse{what + ": padded differently"};
    return x;
  }

  void rewrite(size_t idx) {
    const ir::Node* n = g_.order[idx];
    Dims sizes(n->meta.sizes), k(sizes.size(), 0);
    for (size_t d = 0; d < sizes.size(); ++d)
      if (int64_t f = fac(idx, ir::IntPos::Size, d)) sizes[d] = f * b_, k[d] = f;
    OpMeta meta{sizes, n->meta.dtype, n->meta.compute};
    if (n->kind == ir::NodeKind::Data) {
      ir::Node* c = push(ir::make_data_leaf(meta, n->slot), prefix(k));
      const size_t slot = static_cast<size_t>(n->slot);
      if (!p_->graph.data[slot]) {
        p_->graph.data[slot] = c;
        if (any_on(P(c))) p_->data_padded[slot] = sizes;
      } else if (p_->graph.data[slot]->meta.sizes != sizes) {
        throw Refuse{"one input buffer read at two sizes"};
      }
      nw_[n] = c;
      return;
    }
    if (n->kind != ir::NodeKind::Op) {
      ir::Node* cn = push(ir::make_leaf_copy(*n), Pads());
      if (n->kind == ir::NodeKind::Param) p_->graph.params[static_cast<size_t>(n->slot)] = cn;
      nw_[n] = cn;
      return;
    }
    OpAttrs a = n->attrs;
    for (size_t j = 0; j < a.ints.size(); ++j)
      if (int64_t f = fac(idx, ir::IntPos::AttrInts, j)) a.ints[j] = f * b_;
    for (size_t j = 0; j < 4; ++j)
      if (int64_t f = fac(idx, ir::IntPos::AttrI, j)) a.i[j] = f * b_;
    std::vector<ir::Node*> in;
    for (uint32_t j = 0; j < n->n_operands; ++j) in.push_back(nw_.at(n->operands[j].get()));
    const OpCategory cat = op_category(n->op);
    if ((cat == OpCategory::Creation || cat == OpCategory::Random) && !linear_prefix(sizes, k)) {
      nw_[n] = stream_by_index(n->op, a, in, sizes, k);
      return;
    }
    const Pads e = rule(n, a, in, sizes, k);
    bool agree = e.size() == k.size();
    for (size_t d = 0; agree && d < k.size(); ++d) agree = e[d].k() == k[d];
    const std::string at = std::string(op_name(n->op)) + "#" + std::to_string(idx);
    if (!agree)
      throw Refuse{at + " pads dims " + pads_str(e) + " where its sizes pad " + shape_str(k)};
    const OpMeta check = infer(n->op, in, a);
    if (check.sizes != sizes)
      throw Refuse{at + ": padded sizes " + shape_str(check.sizes) + " against " +
                   shape_str(sizes)};
    nw_[n] = push(ir::make_op(n->op, meta, a, in.data(), in.size()), e);
  }

  // Whether the real entries of a value of these sizes, padded where k says, come first in
  // memory: at most one padded dim, and only dims of size 1 before it.
  static bool linear_prefix(const Dims& sizes, const Dims& k) {
    size_t padded = 0;
    for (size_t d = 0; d < k.size(); ++d) {
      if (!k[d]) continue;
      if (++padded > 1) return false;
      for (size_t j = 0; j < d; ++j)
        if (sizes[j] != 1) return false;
    }
    return true;
  }

  // An iota or a random stream whose real entries do not come first (attention's dropout mask
  // [N, H, S, S]): the stream made flat over the padded size, and each entry gathered from the
  // unpadded value's linear index, sum over dims of index * real stride (strides in S are
  // run-time parameters); padding reads entry 0.
  ir::Node* stream_by_index(OpKind kind, const OpAttrs& a, const std::vector<ir::Node*>& in,
                            const Dims& sizes, const Dims& k) {
    const Pads layout = prefix(k);
    OpAttrs fa = a;
    fa.ints = Dims{numel_of(sizes)};
    ir::Node* flat = op(kind, fa, in, Pads{Pad{}});
    const size_t r = sizes.size();
    ir::Node* idx = nullptr;
    int64_t stride = 1;  // the unpadded value's, for dim d
    for (size_t d = r; d-- > 0;) {
      OpAttrs ia;
      ia.ints = Dims{sizes[d]};
      ia.dtype = kInt64;
      Pads one(1);
      one[0] = layout[d];
      ir::Node* i = op(OpKind::Iota, ia, {}, one);
      if (r > 1) {
        Dims shape(r, 1);
        shape[d] = sizes[d];
        Pads f(r);
        f[d] = layout[d];
        OpAttrs ra;
        ra.ints = shape;
        i = op(OpKind::Reshape, ra, {i}, f);
      }
      if (stride != 1) i = ew(OpKind::Mul, i, scalar(kInt64, static_cast<double>(stride), stride));
      idx = idx ? ew(OpKind::Add, idx, i) : i;
      stride *= k[d] ? k[d] * s_ : sizes[d];
    }
    idx = masked_all(idx, {0, 0});
    OpAttrs fl;
    fl.ints = Dims{numel_of(sizes)};
    idx = op(OpKind::Reshape, fl, {idx}, Pads{Pad{}});
    OpAttrs ga;
    DimAttrs{0}.write(&ga);
    ir::Node* g = op(OpKind::Gather, ga, {flat, idx}, Pads{Pad{}});
    OpAttrs ra;
    ra.ints = sizes;
    return op(OpKind::Reshape, ra, {g}, layout);
  }
  // An elementwise op of two operands whose layouts agree.
  ir::Node* ew(OpKind kind, ir::Node* x, ir::Node* y) {
    Pads e(std::max(P(x).size(), P(y).size()));
    for (ir::Node* v : {x, y})
      for (size_t j = 0; j < P(v).size(); ++j) {
        const size_t d = e.size() - P(v).size() + j;
        e[d] = unify(e[d], P(v)[j], op_name(kind));
      }
    return op(kind, kNoAttrs, {x, y}, e);
  }

  // The layout of the op's output from its operands' (masking operands where it must); `k`: the
  // padding its sizes say, for dims the op creates.
  Pads rule(const ir::Node* n, const OpAttrs& a, std::vector<ir::Node*>& in, const Dims& sizes,
            const Dims& k) {
    const OpKind kind = n->op;
    const std::string name = op_name(kind);
    switch (op_category(kind)) {
      case OpCategory::EwUnary:
      case OpCategory::EwBinary:
      case OpCategory::EwTernary: {
        if (!is_floating(n->meta.compute) && in.size() == 2) {
          // An integer divisor, exponent or shift read from padding could trap or throw.
          if (kind == OpKind::Div || kind == OpKind::Fmod || kind == OpKind::Pow)
            in[1] = masked_all(in[1], {1, 1});
          else if (kind == OpKind::LeftShift || kind == OpKind::RightShift)
            in[1] = masked_all(in[1], {0, 0});
        }
        Pads e(sizes.size());
        for (ir::Node* x : in) {
          const Pads& px = P(x);
          for (size_t j = 0; j < px.size(); ++j) {
            const size_t d = sizes.size() - px.size() + j;
            e[d] = unify(e[d], px[j], name);
          }
        }
        return e;
      }
      case OpCategory::Reduction: {
        const ReduceAttrs r = ReduceAttrs::of(a);
        const size_t rank = in[0]->meta.sizes.size();
        Dims dims(r.dims);
        if (dims.empty() && (kind == OpKind::Argmax || kind == OpKind::Argmin) && rank)
          dims = Dims{0};
        std::pair<double, int64_t> id{0, 0};
        const Dtype t = in[0]->meta.dtype;
        if (kind == OpKind::Prod || kind == OpKind::All) id = {1, 1};
        if (kind == OpKind::Amax || kind == OpKind::Argmax) id = lowest(t);
        if (kind == OpKind::Amin || kind == OpKind::Argmin) id = highest(t);
        for (int64_t d : dims) in[0] = masked(in[0], static_cast<size_t>(d), id);
        Pads e;
        const Pads& px = P(in[0]);
        for (size_t d = 0; d < rank; ++d) {
          const bool red =
              std::find(r.dims.begin(), r.dims.end(), static_cast<int64_t>(d)) != r.dims.end();
          if (!red)
            e.push_back(px[d]);
          else if (r.keepdim)
            e.push_back(Pad{});
        }
        return e;
      }
      case OpCategory::Movement:
        return movement(n, a, in, sizes, k);
      case OpCategory::Contraction:
        return contraction(n, in);
      case OpCategory::Indexing:
        return indexing(n, a, in);
      case OpCategory::Creation:
      case OpCategory::Random:
        // Element i of an iota or a random stream depends on i alone: the padded value's real
        // entries are the unpadded value's when they come first in memory (linear_prefix).
        return prefix(k);
      case OpCategory::Collective:
        if (any_on(P(in[0]))) throw Refuse{name + " of a padded value"};
        return P(in[0]);
    }
    throw Refuse{name + ": unknown category"};
  }

  Pads movement(const ir::Node* n, const OpAttrs& a, std::vector<ir::Node*>& in, const Dims& sizes,
                const Dims& k) {
    const std::string name = op_name(n->op);
    const Pads px = P(in[0]);
    switch (n->op) {
      case OpKind::Copy:
        return px;
      case OpKind::Permute: {
        Pads e;
        for (int64_t d : a.ints) e.push_back(px[static_cast<size_t>(d)]);
        return e;
      }
      case OpKind::Expand: {
        const size_t lead = sizes.size() - px.size();
        Pads e(sizes.size());
        for (size_t d = 0; d < sizes.size(); ++d) {
          if (d < lead || in[0]->meta.sizes[d - lead] == 1) {
            if (k[d]) e[d] = Pad{1, k[d], true};  // a broadcast dim: every entry is real
          } else {
            e[d] = px[d - lead];
          }
        }
        return e;
      }
      case OpKind::Reshape:
        return regroup(in[0], sizes, px);
      case OpKind::Slice:
      case OpKind::SliceScatter: {
        const SliceAttrs s = SliceAttrs::of(a);
        const size_t d = static_cast<size_t>(s.dim);
        if (n->op == OpKind::SliceScatter && P(in[1]) != px)
          throw Refuse{name + ": operands padded differently"};
        if (px[d].on() && !(s.start == 0 && s.step == 1 && s.end == in[0]->meta.sizes[d]))
          throw Refuse{name + " of part of the padded dim " + std::to_string(d)};
        return px;
      }
      case OpKind::Cat: {
        const size_t d = static_cast<size_t>(DimAttrs::of(a).dim);
        for (ir::Node* x : in) {
          if (P(x)[d].on()) throw Refuse{"cat along the padded dim " + std::to_string(d)};
          if (P(x) != px) throw Refuse{"cat: operands padded differently"};
        }
        return px;
      }
      case OpKind::Pad: {
        const Dims pads = PadAttrs::of(a).pads;
        const size_t nd = px.size();
        for (size_t j = 0; j < pads.size() / 2; ++j)
          if (px[nd - 1 - j].on() && (pads[2 * j] || pads[2 * j + 1]))
            throw Refuse{"pad of the padded dim " + std::to_string(nd - 1 - j)};
        return px;
      }
      default:
        throw Refuse{name + ": not bucketed"};
    }
  }

  // A reshape regroups dims: within a group of dims whose sizes multiply to the same number, a
  // padded dim's real entries are those whose group index L has (L / C) % B < S, C being the
  // dim's inner size c times the sizes after it. An output dim of the group that holds that
  // pattern whole gets it as its own layout; none: the reshape moves real entries, refused.
  Pads regroup(const ir::Node* x, const Dims& outs, const Pads& px) {
    IntList ins = x->meta.sizes;
    auto fail = [&](const char* why) {
      return Refuse{"reshape " + shape_str(Dims(ins)) + " -> " + shape_str(outs) + " (padded " +
                    pads_str(px) + "): " + why};
    };
    Pads e(outs.size());
    const bool ok =
        for_each_reshape_group(ins, outs, [&](size_t bi, size_t ei, size_t bj, size_t ej) {
          int64_t c_total = 0, stride = 1, group = 1;
          for (size_t d = bi; d < ei; ++d) group *= ins[d];
          bool any = false;
          for (size_t d = ei; d-- > bi;) {
            if (px[d].on()) {
              if (c_total) throw fail("two padded dims merge");
              c_total = stride * px[d].c;
              any = px[d].any && group == ins[d];  // uniform still, unless merged with other dims
            }
            stride *= ins[d];
          }
          if (!c_total) return;
          bool placed = false;
          stride = 1;
          for (size_t d = ej; d-- > bj;) {
            const int64_t span = outs[d] * stride;
            if (!placed && c_total % stride == 0 && span % (b_ * c_total) == 0) {
              e[d] = Pad{span / (b_ * c_total), c_total / stride, any};
              placed = true;
            }
            stride *= outs[d];
          }
          if (!placed) throw fail("the padded entries do not fall in one output dim");
        });
    if (!ok) throw fail("an empty value, or sizes that do not regroup");
    return e;
  }

  Pads contraction(const ir::Node* n, std::vector<ir::Node*>& in) {
    const std::string name = op_name(n->op);
    if (n->op == OpKind::Matmul) {
      ir::Node*& x = in[0];
      ir::Node*& y = in[1];
      const size_t rx = P(x).size(), ry = P(y).size();
      const Pad kk = unify(P(x)[rx - 1], P(y)[ry - 2], "matmul's contracted dim");
      x = masked(x, rx - 1, {0, 0}, kk);  // the contracted dim: both read as 0 in the padding
      y = masked(y, ry - 2, {0, 0}, kk);
      const Pads &fx = P(x), &fy = P(y);
      const size_t r = std::max(rx, ry);
      Pads e(r);
      for (size_t d = 0; d + 2 < r; ++d) {
        const Pad kx = d >= r - rx ? fx[d - (r - rx)] : Pad{};
        const Pad ky = d >= r - ry ? fy[d - (r - ry)] : Pad{};
        e[d] = unify(kx, ky, "matmul's batch dims");
      }
      e[r - 2] = fx[rx - 2];
      e[r - 1] = fy[ry - 1];
      return e;
    }
    if (n->op == OpKind::Argsort) {
      const size_t d = static_cast<size_t>(SortAttrs::of(n->attrs).dim);
      if (P(in[0])[d].on()) throw Refuse{"argsort along the padded dim"};
      return P(in[0]);
    }
    // Convolutions and pooling: only the batch dim may be padded.
    for (ir::Node* x : in) {
      const Pads& px = P(x);
      for (size_t d = 1; d < px.size(); ++d)
        if (px[d].on()) throw Refuse{name + ": a padded dim other than the batch"};
    }
    if (n->op == OpKind::Conv2dGradWeight) {  // sums over the batch
      const Pad nn = unify(P(in[0])[0], P(in[1])[0], name);
      in[0] = masked(in[0], 0, {0, 0}, nn);
      in[1] = masked(in[1], 0, {0, 0}, nn);
      return Pads(4);
    }
    Pads e(4);
    if (n->op == OpKind::Conv2d || n->op == OpKind::Conv2dGradInput) {
      if (any_on(P(in[1]))) throw Refuse{name + ": a padded weight"};
      if (in.size() > 2 && any_on(P(in[2]))) throw Refuse{name + ": a padded bias"};
      e[0] = P(in[0])[0];
      return e;
    }
    for (ir::Node* x : in) e[0] = unify(e[0], P(x)[0], name);  // pooling and its gradients
    return e;
  }

  Pads indexing(const ir::Node* n, const OpAttrs& a, std::vector<ir::Node*>& in) {
    const size_t d = static_cast<size_t>(DimAttrs::of(a).dim);
    const std::string name = op_name(n->op);
    const Pads pi = P(in[1]);
    in[1] = masked_all(in[1], {0, 0});  // an index read from padding: entry 0
    const Pads& px = P(in[0]);
    if (n->op == OpKind::IndexSelect) {
      Pads e = px;
      if (!e.empty()) e[d] = pi.empty() ? Pad{} : pi[0];
      return e;
    }
    // Off dim d, the index's entry j reads (gather) or writes (scatter) the input's entry j.
    Pads e = n->op == OpKind::Gather ? pi : px;
    for (size_t j = 0; j < pi.size(); ++j) {
      if (j == d || !pi[j].on()) continue;
      if (!px[j].on()) throw Refuse{name + ": index padded, input not"};
      e[j] = unify(pi[j], px[j], name);
    }
    if (n->op == OpKind::Gather) return e;
    // Scatter, ScatterAdd: padded entries along dim d would land in real rows.
    if (d < pi.size() && pi[d].on()) {
      if (n->op != OpKind::ScatterAdd) throw Refuse{name + " from the padded dim"};
      if (!P(in[2])[d].on()) throw Refuse{name + ": index padded, src not"};
      in[2] = masked(in[2], d, {0, 0}, unify(pi[d], P(in[2])[d], name));
    }
    return e;
  }

  ir::Hash128 key() const {
    const ir::Graph& out = p_->graph;
    ir::Hash128 h{0xB0C4E7ED5EED0001ull, 0x5CA1AB1EB0C4E700ull};
    h = ir::mix(h, out.order.size());
    for (const ir::Node* n : out.order) {
      h = ir::mix(h, static_cast<uint64_t>(n->kind) | (static_cast<uint64_t>(n->op) << 8));
      h = ir::mix(h, n->hash.lo);
      h = ir::mix(h, n->hash.hi);
      if (n->kind != ir::NodeKind::Op) {
        h = ir::mix(h, static_cast<uint64_t>(n->slot));
        continue;
      }
      for (uint32_t j = 0; j < n->n_operands; ++j) {
        const ir::Node* c = n->operands[j].get();
        h = ir::mix(h, (static_cast<uint64_t>(c->kind) << 48) ^ static_cast<uint64_t>(c->slot));
      }
    }
    for (const ir::NodePtr& r : out.roots)
      h = ir::mix(h, (static_cast<uint64_t>(r->kind) << 48) ^ static_cast<uint64_t>(r->slot));
    return h;
  }

  const ir::Graph& g_;
  const int64_t s_, b_;
  const std::unordered_map<uint64_t, int64_t> fac_;
  BucketPlan* p_ = nullptr;
  std::unordered_map<const ir::Node*, ir::Node*> nw_;
  std::unordered_map<const ir::Node*, Pads> pad_;
  std::map<std::tuple<int64_t, int64_t, size_t, size_t>, ir::Node*> masks_;
  std::map<std::pair<int64_t, int64_t>, ir::Node*> mask_inputs_;  // by (a, c)
  std::vector<ir::Node*> mask_nodes_;                             // in slot order
  std::vector<ir::Node*> extra_nodes_;
};

}  // namespace

std::unique_ptr<BucketPlan> rewrite_to_bucket(const ir::Graph& g, int64_t s, int64_t b,
                                              std::unordered_map<uint64_t, int64_t> fac,
                                              int* masked) {
  Rewriter rw(g, s, b, std::move(fac));
  std::unique_ptr<BucketPlan> plan = rw.run();
  *masked = rw.masks;
  return plan;
}

}  // namespace lt::lazy
