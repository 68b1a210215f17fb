#include "backend/mlir/disk_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "core/config.h"
#include "core/metrics.h"

extern char** environ;

namespace lt::backend::disk_cache {
namespace {

namespace M = lt::metrics_impl;
namespace fs = std::filesystem;

constexpr const char* kMagic = "lt-cache-1";

uint64_t checksum(const std::string& bytes) {
  uint64_t h = 0x243F6A8885A308D3ull ^ bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001B3ull;
  return h;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

std::string sum_line(const std::string& bytes) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %zu %016" PRIx64 "\n", kMagic, bytes.size(), checksum(bytes));
  return buf;
}

void remove_entry(const std::string& base) {
  std::error_code ec;
  fs::remove(base + ".so", ec);
  fs::remove(base + ".sum", ec);
}

// Writes `text` to `path` through a temporary file and a rename.
bool write_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + "." + std::to_string(getpid()) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!(out << text)) return false;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  return !ec;
}

int run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string dir() {
  return config::text("LT_CACHE_DIR").value_or("");
}

CompileLock::CompileLock(const std::string& dir, const std::string& key) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  fd_ = ::open((dir + "/" + key + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd_ < 0) return;  // an unwritable directory: compile without the lock
  if (flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  waited_ = true;
  M::add("DiskCacheLockWaits");
  static const double limit_s = config::real("LT_CACHE_LOCK_WAIT");
  const auto t0 = std::chrono::steady_clock::now();
  while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit_s) {
      std::fprintf(stderr, "lazytensor: %s/%s.lock held for over %.0f s; compiling anyway\n",
                   dir.c_str(), key.c_str(), limit_s);
      ::close(fd_);
      fd_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

CompileLock::~CompileLock() {
  if (fd_ >= 0) {
    flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

bool load_note(const std::string& dir, const std::string& key, std::string* text) {
  std::ifstream in(dir + "/" + key + ".note", std::ios::binary);
  if (!in) return false;
  std::string t((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (t.empty() || t.size() > 4096) return false;
  *text = std::move(t);
  return true;
}

bool store_note(const std::string& dir, const std::string& key, const std::string& text) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return write_atomic(dir + "/" + key + ".note", text);
}

Library load(const std::string& dir, const std::string& key) {
  const std::string base = dir + "/" + key;
  std::string so, sum;
  if (!read_file(base + ".so", &so)) return nullptr;
  M::ScopedTimer t("DiskCacheLoadTime");
  if (!read_file(base + ".sum", &sum) || sum != sum_line(so)) {
    M::add("DiskCacheCorrupt");
    std::fprintf(stderr,
                 "lazytensor: cache entry %s.so is damaged (size or checksum); recompiling\n",
                 base.c_str());
    remove_entry(base);
    return nullptr;
  }
  void* h = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    M::add("DiskCacheCorrupt");
    const char* why = dlerror();
    std::fprintf(stderr, "lazytensor: cache entry %s.so does not load (%s); recompiling\n",
                 base.c_str(), why ? why : "?");
    remove_entry(base);
    return nullptr;
  }
  return Library(h, [](void* p) { dlclose(p); });
}

void* symbol(const Library& lib, const std::string& name) {
  return lib ? dlsym(lib.get(), name.c_str()) : nullptr;
}

void discard(const std::string& dir, const std::string& key) {
  M::add("DiskCacheCorrupt");
  std::fprintf(stderr, "lazytensor: cache entry %s/%s.so lacks a function; recompiling\n",
               dir.c_str(), key.c_str());
  remove_entry(dir + "/" + key);
}

bool store(const std::string& dir, const std::string& key, const std::vector<std::string>& objects,
           const std::vector<std::string>& libs) {
  M::ScopedTimer t("DiskCacheWriteTime");
  const std::string base = dir + "/" + key;
  const std::string tmp_so = base + "." + std::to_string(getpid()) + ".tmp.so";
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::vector<std::string> argv = {"cc", "-shared", "-o", tmp_so};
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.push_back("-lm");
  for (const std::string& l : libs) {
    argv.push_back(l);
    argv.push_back("-Wl,-rpath," + fs::path(l).parent_path().string());
  }
  const int rc = run(argv);
  for (const std::string& o : objects) fs::remove(o, ec);
  std::string so;
  bool ok = rc == 0 && read_file(tmp_so, &so);
  if (ok) {
    // The library first, then its checksum: a reader that sees the library without a matching
    // checksum treats it as damaged and rewrites it, never loads half a file.
    fs::rename(tmp_so, base + ".so", ec);
    ok = !ec && write_atomic(base + ".sum", sum_line(so));
  }
  if (!ok) {
    fs::remove(tmp_so, ec);
    M::add("DiskCacheWriteFailed");
    static bool said = false;
    if (!said) {
      said = true;
      std::fprintf(stderr,
                   "lazytensor: cannot write the compile cache in %s (linker `cc` exit %d); "
                   "compiled graphs stay in memory only\n",
                   dir.c_str(), rc);
    }
    return false;
  }
  M::add("DiskCacheWrite");
  return true;
}

}  // namespace lt::backend::disk_cache
