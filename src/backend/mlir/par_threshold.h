// The inner iterations a compiled loop nest needs before lt-parallel-outer runs it on OpenMP
// threads: LT_MLIR_PAR_MIN, else measured once on this host (par_threshold.cpp). -1: never.
// Plain C++ header.
#pragma once
#include <cstdint>
#include <string>

namespace lt::backend {

int64_t par_threshold();
// The measurement itself: one thread against `threads` on a streaming loop; `why` gets the
// figures. -1 when the threads never win (or threads <= 1).
int64_t measure_par_threshold(int threads, std::string* why);

}  // namespace lt::backend
