// Custom autograd functions, as libtorch's torch::autograd::Function<T>: a class with static
//   Tensor (or variable_list) forward(AutogradContext* ctx, args...)
//   variable_list backward(AutogradContext* ctx, variable_list grad_outputs)
// called as T::apply(args...). forward runs without recording; its outputs get one backward
// node whose gradient is the user's backward, which returns one gradient per forward argument
// (undefined for arguments that are not tensors, or that need none).
#pragma once
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lt/autograd.h"
#include "lt/ivalue.h"
#include "lt/tensor.h"

namespace lt::autograd {

namespace detail {
struct CustomAccess;
}

class AutogradContext {
 public:
  // Non-tensor values for backward (tensors go through save_for_backward).
  std::unordered_map<std::string, IValue> saved_data;

  // Tensors (inputs, outputs or others) that backward reads; at most once per forward.
  void save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }
  // What save_for_backward kept; an error after a backward without retain_graph freed it, or if
  // one of them was modified in place since.
  variable_list get_saved_variables() const;
  // Inputs that forward modified in place (and returns): their history moves to this node.
  void mark_dirty(const variable_list& inputs);
  // Outputs with no gradient (indices, masks).
  void mark_non_differentiable(const variable_list& outputs);
  // Whether undefined output gradients reach backward as zeros (the default) or undefined.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether tensor input `i` (counting tensor arguments only) needs a gradient.
  bool needs_input_grad(size_t i) const {
    return i < needs_input_grad_.size() && needs_input_grad_[i];
  }

 private:
  friend struct detail::CustomAccess;
  variable_list to_save_;
  variable_list saved_;            // after forward: outputs among them detached
  std::vector<int> saved_output_;  // per saved tensor: the output it is, or -1
  std::vector<int64_t> saved_version_;
  std::vector<const void*> dirty_, non_differentiable_;
  std::vector<bool> needs_input_grad_;
  bool materialize_grads_ = true;
  bool released_ = false;
  std::weak_ptr<Node> node_;
};

namespace detail {
using BackwardFn = variable_list (*)(AutogradContext*, variable_list);

// The forward arguments: the tensors among them, and which argument positions are tensors (a
// list of tensors counts as one position per element, as libtorch's).
struct CustomArgs {
  variable_list tensors;
  std::vector<bool> is_tensor;
};
inline void collect(CustomArgs& a, const Tensor& t) {
  a.tensors.push_back(t);
  a.is_tensor.push_back(true);
}
inline void collect(CustomArgs& a, const variable_list& ts) {
  for (const Tensor& t : ts) collect(a, t);
}
template <typename X>
void collect(CustomArgs& a, const X&) {
  a.is_tensor.push_back(false);
}

void prepare_custom(AutogradContext& ctx, const CustomArgs& args);
// Gives the outputs one backward node running `backward` (when some input requires grad).
void record_custom(const std::shared_ptr<AutogradContext>& ctx, CustomArgs args,
                   variable_list& outputs, BackwardFn backward, const char* mangled_name);
}  // namespace detail

template <class T>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    auto ctx = std::make_shared<AutogradContext>();
    detail::CustomArgs in;
    (detail::collect(in, args), ...);
    detail::prepare_custom(*ctx, in);
    using R = decltype(T::forward(ctx.get(), std::forward<Args>(args)...));
    static_assert(std::is_same_v<R, Tensor> || std::is_same_v<R, variable_list>,
                  "forward must return a Tensor or a variable_list");
    variable_list outs;
    {
      AutoGradMode off(false);
      if constexpr (std::is_same_v<R, Tensor>)
        outs.push_back(T::forward(ctx.get(), std::forward<Args>(args)...));
      else
        outs = T::forward(ctx.get(), std::forward<Args>(args)...);
    }
    detail::record_custom(ctx, std::move(in), outs, &run_backward, typeid(T).name());
    if constexpr (std::is_same_v<R, Tensor>)
      return outs[0];
    else
      return outs;
  }

 private:
  static variable_list run_backward(AutogradContext* ctx, variable_list grads) {
    return T::backward(ctx, std::move(grads));
  }
};

}  // namespace lt::autograd
