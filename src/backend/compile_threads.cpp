// Which thread compiles: the program's own, or the background compile worker
// (lazy/background_compile.cpp), which leaves the program a core (backend.h).
#include <algorithm>

#include "backend/backend.h"
#include "core/parallel.h"

namespace lt::backend {
namespace {
thread_local bool t_background = false;
}  // namespace

void set_compiling_in_background(bool on) { t_background = on; }
bool compiling_in_background() { return t_background; }

int compile_threads() {
  const int n = lt::num_threads();
  return t_background ? std::max(1, n - 1) : n;
}

}  // namespace lt::backend
