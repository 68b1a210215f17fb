#include "ops/registry.h"

#include "ops/autograd_hooks.h"
#include "ops/dist_hooks.h"
#include "ops/lazy_hooks.h"

namespace lt {
LazyHooks& lazy_hooks() {
  static LazyHooks h;
  return h;
}

AutogradHooks& autograd_hooks() {
  static AutogradHooks h;
  return h;
}

DistHooks& dist_hooks() {
  static DistHooks h;
  return h;
}

const OpAttrs kNoAttrs{};

}  // namespace lt
