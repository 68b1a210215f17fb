// Which backend the lazy device compiles with: LT_BACKEND=mlir (default) or interp.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend/backend.h"

namespace lt::backend {

Backend& active_backend() {
  static std::unique_ptr<Backend> b = [] {
    const char* e = std::getenv("LT_BACKEND");
    std::string want = e && *e ? e : "mlir";
    if (want == "interp") return make_interp_backend();
    if (want != "mlir")
      std::fprintf(stderr, "lazytensor: unknown LT_BACKEND=%s (mlir|interp); using mlir\n",
                   want.c_str());
    return make_mlir_backend();
  }();
  return *b;
}

}  // namespace lt::backend
