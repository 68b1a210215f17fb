// lt::memory: the buffer allocator's figures.
#include "lt/memory.h"

#include "core/storage.h"

namespace lt::memory {

int64_t active_bytes() { return allocator::stats().live_bytes; }
int64_t peak_bytes() { return allocator::stats().peak_live_bytes; }
void reset_peak() { allocator::reset_peak(); }
int64_t cached_bytes() { return allocator::stats().cached_bytes; }
void empty_cache() { allocator::empty_cache(); }

}  // namespace lt::memory
