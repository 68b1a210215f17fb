// The groups of a reshape: runs of input dims and of output dims whose sizes multiply to the same
// number, in order (dims of size 1 after a group join it). A group's entries keep their order,
// so a reshape is understood group by group: the MLIR backend's affine maps of static reshapes,
// and where shape bucketing's padded entries land (lazy/bucket_rewrite.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

#include "lt/array_ref.h"

namespace lt {

// Calls f(in_begin, in_end, out_begin, out_end) for each group. False when a size is 0 or the
// sizes do not regroup (f may have run for the groups before).
template <typename F>
bool for_each_reshape_group(IntList in, IntList out, F&& f) {
  for (int64_t v : in)
    if (v == 0) return false;
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    const size_t bi = i, bj = j;
    int64_t pi = 1, po = 1;
    if (i < in.size()) pi *= in[i++];
    if (j < out.size()) po *= out[j++];
    while (pi != po) {
      if (pi < po ? i == in.size() : j == out.size()) return false;
      if (pi < po)
        pi *= in[i++];
      else
        po *= out[j++];
    }
    while (i < in.size() && in[i] == 1 && (j == out.size() || out[j] != 1)) ++i;
    while (j < out.size() && out[j] == 1 && (i == in.size() || in[i] != 1)) ++j;
    f(bi, i, bj, j);
  }
  return true;
}

}  // namespace lt
