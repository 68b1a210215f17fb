// Custom autograd functions (lt/autograd_function.h): one backward node per apply(), whose
// gradient is the user's static backward.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

#include "autograd/autograd.h"
#include "core/check.h"
#include "core/shape.h"
#include "lt/autograd_function.h"
#include "lt/ops.h"

namespace lt::autograd {

struct CustomNode {
  std::shared_ptr<AutogradContext> ctx;
  detail::BackwardFn backward = nullptr;
  std::string name;
  std::vector<bool> is_tensor;  // per forward argument
  std::vector<Dims> out_sizes;  // per output, to materialize missing gradients
  std::vector<TensorOptions> out_options;
  std::vector<bool> out_defined;
};

namespace detail {

std::string demangle(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string r = status == 0 && d ? d : mangled;
  std::free(d);
  return r;
}

struct CustomAccess {
  static AutogradContext& ctx(GradFn& fn) { return *fn.custom->ctx; }

  // Saved outputs are kept without history (the node owns the context, and an output's history
  // is the node: a cycle); get_saved_variables gives them the node back.
  static void settle_saved(AutogradContext& c, const variable_list& outputs) {
    for (const Tensor& s : c.to_save_) {
      int out = -1;
      for (size_t k = 0; k < outputs.size() && s.defined(); ++k)
        if (outputs[k].defined() && outputs[k].impl() == s.impl()) out = static_cast<int>(k);
      c.saved_.push_back(out >= 0 ? detached(s) : s);
      c.saved_output_.push_back(out);
      c.saved_version_.push_back(s.defined() ? s._version() : 0);
    }
    c.to_save_.clear();
  }
  static void prepare(AutogradContext& ctx, const CustomArgs& args);
  static void record(const std::shared_ptr<AutogradContext>& ctx, CustomArgs args,
                     variable_list& outputs, BackwardFn backward, const char* mangled_name);
  static bool released(const AutogradContext& c) { return c.released_; }
  static bool materialize(const AutogradContext& c) { return c.materialize_grads_; }
  static void release(AutogradContext& c) {
    c.saved_.clear();
    c.saved_output_.clear();
    c.saved_version_.clear();
    c.released_ = true;
  }
  static bool listed(const std::vector<const void*>& v, const Tensor& t) {
    return std::find(v.begin(), v.end(), static_cast<const void*>(t.impl())) != v.end();
  }
};

void CustomAccess::prepare(AutogradContext& ctx, const CustomArgs& args) {
  for (const Tensor& t : args.tensors) {
    Meta* m = t.defined() ? meta_of(t) : nullptr;
    ctx.needs_input_grad_.push_back(is_grad_enabled() && m && m->requires_grad);
  }
}

void CustomAccess::record(const std::shared_ptr<AutogradContext>& ctx, CustomArgs args,
                          variable_list& outputs, BackwardFn backward, const char* mangled_name) {
  AutogradContext& c = *ctx;
  const bool any = std::find(c.needs_input_grad_.begin(), c.needs_input_grad_.end(), true) !=
                   c.needs_input_grad_.end();
  CustomAccess::settle_saved(c, outputs);
  auto is_input = [&](const Tensor& t) {
    for (const Tensor& i : args.tensors)
      if (i.defined() && i.impl() == t.impl()) return true;
    return false;
  };
  if (!any) {
    // No graph: an input returned as is still comes back as a new handle, as with a graph.
    for (Tensor& o : outputs)
      if (o.defined() && is_input(o) && !CustomAccess::listed(c.dirty_, o)) o = detached(o);
    return;
  }
  auto fn = std::make_shared<GradFn>();
  auto node = std::make_shared<CustomNode>();
  node->ctx = ctx;
  node->backward = backward;
  node->name = demangle(mangled_name);
  node->is_tensor = std::move(args.is_tensor);
  for (const Tensor& t : args.tensors) {
    fn->next.push_back(t.defined() && is_floating(t.dtype()) ? edge_of(t) : Edge{});
    fn->in_sizes.push_back(t.defined() ? Dims(t.sizes()) : Dims());
    fn->in_dtypes.push_back(t.defined() ? t.dtype() : kFloat32);
  }
  fn->num_outputs = static_cast<uint32_t>(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor& o = outputs[k];
    node->out_defined.push_back(o.defined());
    node->out_sizes.push_back(o.defined() ? Dims(o.sizes()) : Dims());
    node->out_options.push_back(o.defined() ? o.options() : TensorOptions());
    if (!o.defined()) continue;
    const bool dirty = CustomAccess::listed(c.dirty_, o);
    if (dirty) {
      Meta* m = meta_of(o);
      LT_CHECK(!m || !m->requires_grad || m->grad_fn, node->name,
               ": forward modified in place (mark_dirty) a leaf tensor that requires grad, of "
               "shape ",
               shape_str(o.sizes()));
    } else if (is_input(o)) {
      o = detached(o);  // an input returned unchanged: the output is a new tensor
    }
    if (!is_floating(o.dtype()) || CustomAccess::listed(c.non_differentiable_, o)) continue;
    Meta& m = ensure_meta(o);
    m.requires_grad = true;
    m.grad_fn = fn;
    m.output_nr = static_cast<uint32_t>(k);
    m.retains_grad = false;
  }
  fn->custom = std::move(node);
  c.node_ = fn;
}

void prepare_custom(AutogradContext& ctx, const CustomArgs& args) {
  CustomAccess::prepare(ctx, args);
}

void record_custom(const std::shared_ptr<AutogradContext>& ctx, CustomArgs args,
                   variable_list& outputs, BackwardFn backward, const char* mangled_name) {
  CustomAccess::record(ctx, std::move(args), outputs, backward, mangled_name);
}

}  // namespace detail

variable_list AutogradContext::get_saved_variables() const {
  LT_CHECK(!released_,
           "get_saved_variables: the saved tensors were freed by an earlier "
           "backward; pass retain_graph=true to it to backward through this function again");
  variable_list r;
  auto node = std::static_pointer_cast<GradFn>(node_.lock());
  for (size_t i = 0; i < saved_.size(); ++i) {
    const Tensor& t = saved_[i];
    LT_CHECK(!t.defined() || t._version() == saved_version_[i],
             "get_saved_variables: saved "
             "tensor ",
             i, " (shape ", shape_str(t.sizes()),
             ") was modified in place after "
             "it was saved (version ",
             t._version(), ", expected ", saved_version_[i], ")");
    r.push_back(saved_output_[i] >= 0 && node
                    ? with_history(t, node, static_cast<uint32_t>(saved_output_[i]))
                    : t);
  }
  return r;
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const Tensor& t : inputs) dirty_.push_back(t.impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& t : outputs) non_differentiable_.push_back(t.impl());
}

// Runs in the grad mode the engine set (on under create_graph).
std::vector<Tensor> apply_custom(GradFn& fn, std::vector<Tensor> grads) {
  CustomNode& node = *fn.custom;
  AutogradContext& ctx = detail::CustomAccess::ctx(fn);
  LT_CHECK(!detail::CustomAccess::released(ctx), "backward: trying to backward through ", node.name,
           " a second time, after the values it saved were freed; pass retain_graph=true to "
           "the first backward (or autograd::grad) to keep them");
  if (detail::CustomAccess::materialize(ctx))
    for (size_t k = 0; k < grads.size(); ++k)
      if (!grads[k].defined() && node.out_defined[k])
        grads[k] = zeros(node.out_sizes[k], node.out_options[k]);
  variable_list r = node.backward(&ctx, std::move(grads));
  const size_t nargs = node.is_tensor.size();
  LT_CHECK(r.size() >= nargs, node.name, ": backward returned ", r.size(), " gradients; expected ",
           nargs, ", one per forward argument");
  for (size_t j = nargs; j < r.size(); ++j)
    LT_CHECK(!r[j].defined(), node.name, ": backward returned ", r.size(), " gradients for ", nargs,
             " forward arguments, and gradient ", j, " is defined");
  std::vector<Tensor> gi;
  size_t e = 0;
  for (size_t j = 0; j < nargs; ++j) {
    if (!node.is_tensor[j]) {
      LT_CHECK(!r[j].defined(), node.name, ": backward returned a gradient for argument ", j,
               ", which is not a tensor; return an undefined Tensor() there");
      continue;
    }
    Tensor g = r[j];
    if (g.defined() && fn.next[e].active()) {
      LT_CHECK(g.sizes().equals(fn.in_sizes[e]), node.name,
               ": backward returned a gradient of "
               "shape ",
               shape_str(g.sizes()), " for argument ", j, ", a tensor of shape ",
               shape_str(fn.in_sizes[e]));
      if (g.dtype() != fn.in_dtypes[e]) g = g.to(fn.in_dtypes[e]);
    }
    gi.push_back(g.defined() && fn.next[e].active() ? g : Tensor());
    ++e;
  }
  return gi;
}

void release_custom(GradFn& fn) {
  AutogradContext& ctx = detail::CustomAccess::ctx(fn);
  detail::CustomAccess::release(ctx);
}

std::string custom_name(const GradFn& fn) { return fn.custom->name; }

}  // namespace lt::autograd
