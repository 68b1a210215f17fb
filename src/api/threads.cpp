// The library's thread count: our kernels', compiled code's and the parts that big OpenBLAS
// products are split into (OpenBLAS itself runs single-threaded: eager/matmul.cpp).
#include "core/parallel.h"
#include "lt/ops.h"

namespace lt {
void set_core_num_threads(int n);

namespace {
// LT_NUM_THREADS is read at load, so that a malformed value stops the program there.
const bool g_threads_read = [] { return num_threads() > 0; }();
}  // namespace

void set_num_threads(int n) { set_core_num_threads(n); }
int get_num_threads() { return num_threads(); }

}  // namespace lt
