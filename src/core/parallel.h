// parallel_for over [0, n) on the library's thread count (OpenMP; LT_NUM_THREADS).
#pragma once
#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace lt {

int num_threads();
// The threads the program's own computation runs on now: num_threads(), less one while a
// background compile runs (lazy/background_compile.cpp lends it a core; at least 1). On 2 cores,
// a step forking 2 OpenMP threads beside the compile kept one of them waiting for the core that
// the compile held, and its team spun at every barrier.
int run_threads();
// A background compile takes (true) or returns (false) its core.
void lend_core(bool on);

// f(begin, end) on contiguous chunks; runs inline when the work is below `grain` per thread.
template <typename F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
  int nt = run_threads();
  if (n <= 0) return;
  if (nt <= 1 || n <= grain || omp_in_parallel()) {
    f(int64_t{0}, n);
    return;
  }
  int64_t chunks = std::min<int64_t>(nt, (n + grain - 1) / grain);
#pragma omp parallel num_threads(static_cast<int>(chunks))
  {
    int64_t t = omp_get_thread_num();
    int64_t per = (n + chunks - 1) / chunks;
    int64_t b = t * per;
    int64_t e = std::min(n, b + per);
    if (b < e) f(b, e);
  }
}

}  // namespace lt
