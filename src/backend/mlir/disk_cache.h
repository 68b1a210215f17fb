// The MLIR backend's compile cache on disk (LT_CACHE_DIR): a compiled graph's object file,
// linked into a shared library `<dir>/<key>.so` beside a checksum `<key>.sum`, so a second
// process loads it with dlopen instead of running MLIR and LLVM again. The key (computed by the
// backend) covers the lowered module, the pass pipelines, the LLVM version and the host CPU.
// Plain C++: no MLIR types.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace lt::backend::disk_cache {

// LT_CACHE_DIR (read at each compile), or "" when the disk cache is off.
std::string dir();

// A loaded library: the handle closes when the last executable using it is gone.
using Library = std::shared_ptr<void>;

// Opens `<dir>/<key>.so` when present and intact. Absent: nullptr. Damaged (size or checksum
// differ, or dlopen refuses it): both files are removed, DiskCacheCorrupt is counted, nullptr.
Library load(const std::string& dir, const std::string& key);

// The address of `name` in `lib`, or nullptr.
void* symbol(const Library& lib, const std::string& name);

// Removes an entry that loaded but proved unusable (a symbol missing); counts DiskCacheCorrupt.
void discard(const std::string& dir, const std::string& key);

// Links the object files `objects` into `<dir>/<key>.so` (with `libs` as its dependencies) and
// writes its checksum; the object files are removed. Each file appears by an atomic rename, so
// concurrent processes never see half an entry. Returns false (one line on stderr, counted as
// DiskCacheWriteFailed) when the directory or the linker (`cc`) is unusable.
bool store(const std::string& dir, const std::string& key, const std::vector<std::string>& objects,
           const std::vector<std::string>& libs);

// Held while this process compiles `key` after a miss: another process (a data-parallel rank on
// the same host) that misses the same key waits for it (flock on `<dir>/<key>.lock`, released
// by the kernel if the holder dies; at most LT_CACHE_LOCK_WAIT seconds, default 600) and then
// loads the entry instead of compiling it again (callers look again after taking it: the other
// may also have finished between the miss and the lock). `waited()`: another process held it.
class CompileLock {
 public:
  CompileLock(const std::string& dir, const std::string& key);
  ~CompileLock();
  CompileLock(const CompileLock&) = delete;
  CompileLock& operator=(const CompileLock&) = delete;
  bool waited() const { return waited_; }

 private:
  int fd_ = -1;
  bool waited_ = false;
};

// A small text decision kept beside the compiled code (`<dir>/<key>.note`, written by an atomic
// rename): e.g. whether a generated matmul beat OpenBLAS on this host. False when absent.
bool load_note(const std::string& dir, const std::string& key, std::string* text);
bool store_note(const std::string& dir, const std::string& key, const std::string& text);

}  // namespace lt::backend::disk_cache
