// The step of the Hillis-Steele scans built from primitives: cumsum/cumprod
// (shape_composites.cpp), scatter_reduce's prod and ctc_loss's recursion (src/nn).
#pragma once
#include <cstdint>

#include "lt/tensor.h"

namespace lt {

// x moved k >= 0 places along dim, its first k entries `fill` (all of them when k >= the size).
Tensor shifted(const Tensor& x, int64_t dim, int64_t k, double fill);

}  // namespace lt
