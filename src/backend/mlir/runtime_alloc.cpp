// The allocation functions compiled MLIR code calls (finalize-memref-to-llvm with
// use-generic-functions): a cluster's temporaries (the exp of a softmax between its two
// reductions, say) come from the tensor buffer cache instead of malloc. Large blocks from malloc
// are fresh mmaps that page-fault on every step; cached blocks are reused, and they count in
// lt::memory like every tensor buffer. Exported with C names for the JIT and for libraries of
// the disk cache (both resolve them in the process).
#include <cstddef>
#include <cstdint>

#include "core/storage.h"

extern "C" {

__attribute__((visibility("default"))) void* _mlir_memref_to_llvm_alloc(size_t size) {
  return lt::cache_malloc(size);
}

__attribute__((visibility("default"))) void* _mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                                                size_t size) {
  return lt::cache_malloc(size, alignment);
}

__attribute__((visibility("default"))) void _mlir_memref_to_llvm_free(void* p) {
  lt::cache_free(p);
}
}
