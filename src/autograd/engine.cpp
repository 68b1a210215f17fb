// The backward pass: walks the backward graph from the roots in reverse topological order
// (iterative, no recursion on depth), sums the gradients reaching each node, and accumulates
// into leaves (backward) or hands back the gradients of chosen tensors (autograd::grad).
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "autograd/autograd.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/ops.h"
#include "ops/attrs.h"

namespace lt {
namespace autograd {
namespace {

void accumulate(Tensor& slot, const Tensor& g) {
  slot = slot.defined() ? slot + g : g;
}

// A leaf's .grad is a contiguous tensor of its own: a formula may pass on the incoming gradient
// itself, an expanded view of it (sum) or one tensor to several inputs (add), and an in-place
// update of one .grad (zeroing, clipping) must neither fail nor show through another.
void accumulate_leaf(Tensor& slot, const Tensor& g) {
  slot = slot.defined() ? slot + g : g.clone();
}

void check_saved(const GradFn& fn) {
  LT_CHECK(!fn.released, "backward: trying to backward through ", fn.name(),
           " a second time, after the values it saved were freed; pass retain_graph=true to "
           "the first backward (or autograd::grad) to keep them");
  auto stale = [&](const Tensor& t, uint32_t v) {
    return t.defined() && t.impl()->version && t.impl()->version->value != v;
  };
  for (size_t i = 0; i < fn.saved.size(); ++i)
    LT_CHECK(!stale(fn.saved[i], fn.saved_version[i]), "backward: input ", i, " of ",
             op_name(fn.op), " (shape ", shape_str(fn.in_sizes[i]),
             ") was saved for the gradient and then modified in place (version ",
             fn.saved[i].impl()->version->value, ", expected ", fn.saved_version[i], ")");
  LT_CHECK(!stale(fn.out, fn.out_version), "backward: the output of ", op_name(fn.op),
           " (shape ", shape_str(fn.out_sizes),
           ") was saved for the gradient and then modified in place");
}

// The input gradients of a built-in op's node. Under create_graph the saved values are handed
// to the formula with their own history, so the gradient is differentiable in them too.
std::vector<Tensor> apply_node(GradFn& fn, const Tensor& g, bool create_graph) {
  if (!create_graph) return apply_formula(fn, fn.saved, fn.out, g);
  std::vector<Tensor> saved = fn.saved;
  for (size_t i = 0; i < saved.size(); ++i) {
    const Edge& e = fn.next[i];
    if (!saved[i].defined() || !e.active()) continue;
    saved[i] = e.leaf ? Tensor(e.leaf) : with_history(saved[i], e.fn, e.output_nr);
  }
  Tensor out = fn.out.defined() ? with_history(fn.out, fn.shared_from_this(), 0) : Tensor();
  return apply_formula(fn, saved, out, g);
}

void release(GradFn& fn) {
  if (fn.custom) {
    release_custom(fn);
    return;
  }
  // Host scalars made tensors (x * 2's 2) are kept, as libtorch keeps a Scalar operand: a
  // node that saved nothing else can be walked again.
  bool any = fn.out.defined();
  for (Tensor& t : fn.saved) {
    if (!t.defined() || t.impl()->wrapped_number) continue;
    t = Tensor();
    any = true;
  }
  fn.out = Tensor();
  fn.released = fn.released || any;
}

// A tensor whose gradient autograd::grad returns (or backward(inputs) accumulates).
struct Target {
  Meta* meta;
  std::shared_ptr<TensorImpl> leaf;  // for a leaf
  GradFn* fn = nullptr;              // else: output `output_nr` of fn
  uint32_t output_nr = 0;
  Tensor grad;
};

struct Pass {
  const char* what;
  bool keep_graph;
  bool create_graph;
  bool capture;  // grad(): gradients go to targets only, returned; nothing is accumulated
  std::vector<Target> targets;
};

std::vector<Tensor> root_gradients(const Pass& p, const variable_list& roots,
                                   const variable_list& grads) {
  LT_CHECK(grads.empty() || grads.size() == roots.size(), p.what, ": got ", grads.size(),
           " gradients for ", roots.size(), " outputs");
  std::vector<Tensor> r(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& t = roots[i];
    LT_CHECK(t.defined(), p.what, ": output ", i, " is an undefined tensor");
    Meta* m = meta_of(t);
    LT_CHECK(m && m->requires_grad, p.what, ": output ", i, " (shape ", shape_str(t.sizes()),
             ") does not require grad and has no grad_fn");
    Tensor g = grads.empty() ? Tensor() : grads[i];
    if (!g.defined()) {
      LT_CHECK(t.numel() == 1, p.what,
               ": the gradient can be created implicitly only for a "
               "one-element output; output ",
               i, " has shape ", shape_str(t.sizes()));
      g = ones_like(t);
    } else {
      LT_CHECK(g.sizes().equals(t.sizes()), p.what, ": the gradient of shape ",
               shape_str(g.sizes()), " does not match output ", i, "'s shape ",
               shape_str(t.sizes()));
    }
    r[i] = g;
  }
  return r;
}

void run(Pass& p, const variable_list& roots, const variable_list& root_grads) {
  std::vector<Tensor> grads = root_gradients(p, roots, root_grads);
  AutoGradMode mode(p.create_graph);
  const bool targeted = !p.targets.empty();
  std::unordered_map<const TensorImpl*, Target*> leaf_target;
  std::map<std::pair<const GradFn*, uint32_t>, Target*> fn_target;
  for (Target& t : p.targets) {
    if (t.leaf)
      leaf_target[t.leaf.get()] = &t;
    else
      fn_target[{t.fn, t.output_nr}] = &t;
  }
  auto to_leaf = [&](const std::shared_ptr<TensorImpl>& leaf, const Tensor& g) {
    if (!targeted) {
      accumulate_leaf(static_cast<Meta*>(leaf->autograd.get())->grad, g);
      return;
    }
    auto it = leaf_target.find(leaf.get());
    if (it == leaf_target.end()) return;
    if (p.capture)
      accumulate(it->second->grad, g);
    else
      accumulate_leaf(it->second->meta->grad, g);
  };
  // Topological order: post-order DFS over the backward graph from every root, iterative.
  std::vector<GradFn*> order;
  std::unordered_set<GradFn*> seen;
  std::unordered_map<GradFn*, std::vector<Tensor>> pending;
  // Per pending gradient: whether the engine made it (a sum of its own) and so may add into it
  // in place; a gradient a formula handed on may be shared (add's {g, g}) or the user's.
  std::unordered_map<GradFn*, std::vector<bool>> owned;
  // The pending gradient of `to`'s output nr, and whether the engine owns it.
  auto pending_of = [&](GradFn* to,
                        uint32_t nr) -> std::pair<Tensor&, std::vector<bool>::reference> {
    std::vector<Tensor>& slot = pending[to];
    slot.resize(to->num_outputs);
    std::vector<bool>& own = owned[to];
    own.resize(to->num_outputs);
    return {slot[nr], own[nr]};
  };
  auto add_to = [&](GradFn* to, uint32_t nr, const Tensor& g) {
    auto [slot, own] = pending_of(to, nr);
    own = slot.defined();
    accumulate(slot, g);
  };
  for (size_t r = 0; r < roots.size(); ++r) {
    Meta* m = meta_of(roots[r]);
    if (!m->grad_fn) {  // the root is a leaf
      to_leaf(roots[r].impl_ptr(), grads[r]);
      continue;
    }
    GradFn* root = m->grad_fn.get();
    add_to(root, m->output_nr, grads[r]);
    if (!seen.insert(root).second) continue;
    std::vector<std::pair<GradFn*, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [fn, next] = stack.back();
      if (next < fn->next.size()) {
        GradFn* c = fn->next[next++].fn.get();
        if (c && seen.insert(c).second) stack.push_back({c, 0});
        continue;
      }
      order.push_back(fn);
      stack.pop_back();
    }
  }
  // With targets, only nodes from which a target is reachable run their formulas.
  std::unordered_set<GradFn*> useful;
  if (targeted) {
    for (GradFn* fn : order) {  // children before parents
      bool u = false;
      for (const Edge& e : fn->next)
        u = u ||
            (e.fn && (useful.count(e.fn.get()) || fn_target.count({e.fn.get(), e.output_nr}))) ||
            (e.leaf && leaf_target.count(e.leaf.get()));
      if (u) useful.insert(fn);
    }
  }
  for (size_t k = order.size(); k-- > 0;) {
    GradFn* fn = order[k];
    auto it = pending.find(fn);
    if (it == pending.end()) continue;
    std::vector<Tensor> g = std::move(it->second);
    pending.erase(it);
    owned.erase(fn);
    g.resize(fn->num_outputs);
    for (uint32_t o = 0; o < fn->num_outputs; ++o) {
      if (!g[o].defined()) continue;
      if (targeted) {
        auto t = fn_target.find({fn, o});
        if (t != fn_target.end()) {
          if (p.capture)
            accumulate(t->second->grad, g[o]);
          else
            accumulate_leaf(t->second->meta->grad, g[o]);
        }
      } else if (o < fn->retained.size()) {
        if (auto keep = fn->retained[o].lock())
          accumulate_leaf(static_cast<Meta*>(keep.get())->grad, g[o]);
      }
    }
    if (targeted && !useful.count(fn)) continue;
    // A slice's gradient is its input's gradient zero but in the slice. Summed into the input's
    // pending gradient as slice_scatter(zeros, g) it cost a pass over the whole input per slice:
    // an RNN reads its precomputed input projections [L, N, 4H] one time step at a time, and its
    // backward made L full-size zero tensors and L full-size sums per layer (LSTM step: 18% of
    // its time, lazy and eager alike). Instead g is added into the slice of a gradient the engine
    // owns (made zero for the first slice), in place.
    if (!fn->custom && fn->op == OpKind::Slice && !p.create_graph && g[0].defined() &&
        fn->next.size() == 1 && fn->next[0].active() && fn->next[0].fn) {
      auto [slot, own] = pending_of(fn->next[0].fn.get(), fn->next[0].output_nr);
      if (!slot.defined())
        slot = zeros(fn->in_sizes[0], g[0].options());
      else if (!own)
        slot = slot.clone();
      own = true;
      const SliceAttrs sl = SliceAttrs::of(fn->attrs);
      slot.slice(sl.dim, sl.start, sl.end, sl.step).add_(g[0]);
      if (!p.keep_graph) release(*fn);
      continue;
    }
    std::vector<Tensor> gi;
    if (fn->custom) {
      gi = apply_custom(*fn, std::move(g));
    } else {
      if (!g[0].defined()) continue;
      check_saved(*fn);
      gi = apply_node(*fn, g[0], p.create_graph);
    }
    if (!p.keep_graph) release(*fn);
    for (size_t i = 0; i < fn->next.size() && i < gi.size(); ++i) {
      const Edge& e = fn->next[i];
      if (!e.active() || !gi[i].defined()) continue;
      if (e.fn) {
        add_to(e.fn.get(), e.output_nr, gi[i]);
      } else {
        to_leaf(e.leaf, gi[i]);
      }
    }
  }
}

std::vector<Target> targets_of(const char* what, const variable_list& inputs) {
  std::vector<Target> r;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    LT_CHECK(t.defined(), what, ": input ", i, " is an undefined tensor");
    Meta* m = meta_of(t);
    LT_CHECK(m && m->requires_grad, what, ": input ", i, " (shape ", shape_str(t.sizes()),
             ") does not require grad");
    Target g{m, nullptr, m->grad_fn.get(), m->output_nr, Tensor()};
    if (!m->grad_fn) g.leaf = t.impl_ptr();
    r.push_back(std::move(g));
  }
  return r;
}

}  // namespace

variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs, std::optional<bool> retain_graph,
                   bool create_graph, bool allow_unused) {
  LT_CHECK(!inputs.empty(), "grad: no inputs to differentiate with respect to");
  Pass p{"grad", retain_graph.value_or(create_graph), create_graph, true,
         targets_of("grad", inputs)};
  run(p, outputs, grad_outputs);
  variable_list r;
  for (size_t i = 0; i < p.targets.size(); ++i) {
    LT_CHECK(p.targets[i].grad.defined() || allow_unused, "grad: input ", i, " (shape ",
             shape_str(inputs[i].sizes()),
             ") was not used to compute the outputs; pass "
             "allow_unused=true if that is intended");
    r.push_back(std::move(p.targets[i].grad));
  }
  return r;
}

void backward(const variable_list& tensors, const variable_list& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph, const variable_list& inputs) {
  Pass p{"backward", retain_graph.value_or(create_graph), create_graph, false,
         targets_of("backward", inputs)};
  run(p, tensors, grad_tensors);
}

}  // namespace autograd

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph,
                      bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

}  // namespace lt
