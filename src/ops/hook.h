// Calling a hook slot: the slot is checked first, so a process whose upper layer never filled
// its table (a library built without it, a call made before load-time initialization) gets an
// error naming the slot instead of a call through a null pointer.
#pragma once
#include "core/check.h"

namespace lt {

template <typename F>
F hook(F slot, const char* name) {
  if (slot == nullptr) [[unlikely]]
    throw_error("internal: hook ", name, " is empty (the layer that fills it is not loaded)");
  return slot;
}

}  // namespace lt
