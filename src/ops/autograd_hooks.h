// The slot through which every op reaches autograd without including it (like lazy_hooks.h):
// the autograd layer fills it at load time (src/autograd/record.cpp).
#pragma once
#include "core/tensor_impl.h"
#include "lt/tensor.h"
#include "ops/hook.h"
#include "ops/shape_rules.h"

namespace lt {

struct AutogradHooks {
  // Grad mode is on and some input requires grad.
  bool (*needed)(ArrayRef<Tensor> in) = nullptr;
  // Attaches the op's backward node to `out`.
  void (*record)(OpKind op, ArrayRef<Tensor> in, const OpAttrs& a, const Tensor& out) = nullptr;
  // Throws if `self` may not be written in place (a leaf that requires grad, in grad mode).
  void (*check_inplace)(const Tensor& self) = nullptr;
  // Tensor::requires_grad_, for factories given TensorOptions::requires_grad.
  void (*set_requires_grad)(Tensor& t, bool r) = nullptr;
};
AutogradHooks& autograd_hooks();

// Cheap pre-check on the hot path: no input carries autograd state at all.
inline bool any_autograd(ArrayRef<Tensor> in) {
  for (const Tensor& t : in)
    if (t.defined() && t.impl()->autograd) return true;
  return false;
}

}  // namespace lt
