// Which backend the lazy device compiles with: LT_BACKEND=mlir (default) or interp, or
// set_active_backend at run time. Every backend made stays alive (cached executables and
// metrics refer to it), so switching back and forth is cheap and safe.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "backend/backend.h"
#include "core/check.h"
#include "core/config.h"

namespace lt::backend {
namespace {

std::mutex g_mu;
std::unique_ptr<Backend> g_interp, g_mlir;
std::atomic<Backend*> g_active{nullptr};

Backend* backend_named(const std::string& name) {
  std::lock_guard<std::mutex> g(g_mu);
  if (name == "interp") {
    if (!g_interp) g_interp = make_interp_backend();
    return g_interp.get();
  }
  if (!g_mlir) g_mlir = make_mlir_backend();
  return g_mlir.get();
}

Backend* initial_backend() { return backend_named(config::choice("LT_BACKEND")); }

}  // namespace

Backend& interp_backend() { return *backend_named("interp"); }

Backend& active_backend() {
  Backend* b = g_active.load(std::memory_order_acquire);
  if (b) return *b;
  static Backend* first = [] {
    Backend* i = initial_backend();
    Backend* none = nullptr;
    g_active.compare_exchange_strong(none, i);
    return i;
  }();
  static_cast<void>(first);
  return *g_active.load(std::memory_order_acquire);
}

void set_active_backend(const std::string& name) {
  LT_CHECK(name == "mlir" || name == "interp", "set_lazy_backend: unknown backend '", name,
           "' (expected mlir or interp)");
  active_backend();  // the environment's choice is made first, so it cannot override this
  g_active.store(backend_named(name), std::memory_order_release);
}

}  // namespace lt::backend
