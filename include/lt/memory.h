// Host memory held by tensor buffers (MLX's get_active_memory / get_peak_memory style).
// Counts buffers of 64 KiB and more: the ones a training step's memory is made of.
#pragma once
#include <cstdint>

namespace lt::memory {

int64_t active_bytes();  // in live tensor buffers now
int64_t peak_bytes();    // the most active_bytes reached since start or reset_peak()
void reset_peak();       // peak := active
int64_t cached_bytes();  // freed buffers kept for reuse (not active)
void empty_cache();      // returns the cached buffers to the system

}  // namespace lt::memory
