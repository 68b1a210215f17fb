// backward(): walks the backward graph from the root in reverse topological order (iterative,
// no recursion on depth), sums the gradients reaching each node, and accumulates into leaves.
#include <unordered_map>
#include <unordered_set>

#include "autograd/autograd.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd.h"
#include "lt/ops.h"

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

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad_in) {
  Meta* rm = meta_of(root);
  LT_CHECK(rm && rm->requires_grad, "backward: the tensor (shape ", shape_str(root.sizes()),
           ") does not require grad and has no grad_fn");
  Tensor grad = grad_in;
  if (!grad.defined()) {
    LT_CHECK(root.numel() == 1, "backward: gradient can be implicitly created only for a "
             "one-element output, got shape ", shape_str(root.sizes()));
    grad = ones_like(root);
  } else {
    LT_CHECK(grad.sizes().equals(root.sizes()), "backward: gradient of shape ",
             shape_str(grad.sizes()), " does not match the output shape ",
             shape_str(root.sizes()));
  }
  NoGradGuard no_grad;
  if (!rm->grad_fn) {  // the root is a leaf
    accumulate_leaf(rm->grad, grad);
    return;
  }
  // Topological order (post-order DFS on the backward graph), iterative.
  std::vector<GradFn*> order;
  std::unordered_set<GradFn*> seen;
  std::vector<std::pair<GradFn*, size_t>> stack{{rm->grad_fn.get(), 0}};
  seen.insert(rm->grad_fn.get());
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
  std::unordered_map<GradFn*, Tensor> pending;
  pending[rm->grad_fn.get()] = grad;
  for (size_t k = order.size(); k-- > 0;) {
    GradFn* fn = order[k];
    auto it = pending.find(fn);
    if (it == pending.end()) continue;
    Tensor g = std::move(it->second);
    pending.erase(it);
    check_saved(*fn);
    std::vector<Tensor> gi = apply_formula(*fn, g);
    for (size_t i = 0; i < fn->next.size() && i < gi.size(); ++i) {
      const Edge& e = fn->next[i];
      if (!e.active() || !gi[i].defined()) continue;
      if (e.fn) {
        accumulate(pending[e.fn.get()], gi[i]);
      } else {
        Meta& lm = *static_cast<Meta*>(e.leaf->autograd.get());
        accumulate_leaf(lm.grad, gi[i]);
      }
    }
  }
}

}  // namespace autograd

void Tensor::backward(const Tensor& gradient) const { autograd::run_backward(*this, gradient); }

}  // namespace lt
