// The library's thread count: one number for our kernels and OpenBLAS.
#include "core/parallel.h"
#include "eager/kernels.h"
#include "lt/ops.h"

namespace lt {
void set_core_num_threads(int n);

namespace {
// Applies LT_NUM_THREADS (or the core count) to BLAS once, at load.
const bool g_blas_threads_set = [] {
  set_blas_threads(num_threads());
  return true;
}();
}  // namespace

void set_num_threads(int n) {
  set_core_num_threads(n);
  set_blas_threads(num_threads());
}
int get_num_threads() { return num_threads(); }

}  // namespace lt
