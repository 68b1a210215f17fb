// The slot through which the API layer reaches the lazy runtime without including it: the lazy
// layer fills these function pointers at load time (src/lazy/record.cpp). It lives in the ops
// layer because it speaks in OpKind/OpAttrs, below both the API and the lazy runtime.
#pragma once
#include "lt/tensor.h"
#include "ops/hook.h"
#include "ops/shape_rules.h"

namespace lt {

struct LazyHooks {
  Tensor (*execute)(OpKind, ArrayRef<Tensor>, const OpAttrs&, const OpMeta&) = nullptr;
  void (*assign)(Tensor& dst, const Tensor& value) = nullptr;  // in-place substitution
  Tensor (*to_cpu)(const Tensor&) = nullptr;
  Tensor (*from_cpu)(const Tensor&, Device) = nullptr;
  // from_cpu for a tensor about to die: its buffer becomes the device's when nothing else can
  // see it (sole handle, owned dense storage), else a copy as from_cpu.
  Tensor (*adopt_cpu)(Tensor&&, Device) = nullptr;
  // The value of a lazy tensor that is device data or a view of it, as an eager tensor,
  // without running the graph; undefined when only the barrier can compute it.
  Tensor (*known_value)(const Tensor&) = nullptr;
};
LazyHooks& lazy_hooks();

}  // namespace lt
