// Process-wide counters and timers (CachedCompile, UncachedCompile, CompileTime, ...).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace lt::metrics_impl {

void add(const std::string& name, int64_t delta = 1);
void set(const std::string& name, int64_t value);
void add_time(const std::string& name, int64_t ns);
int64_t get(const std::string& name);
int64_t total_ns(const std::string& timer);  // 0 if never timed
std::string report();
void reset();

// Adds the elapsed time of a scope to timer `name`.
class ScopedTimer {
 public:
  explicit ScopedTimer(const char* name) : name_(name), t0_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() {
    add_time(name_, std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - t0_)
                        .count());
  }

 private:
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

// LT_DEBUG set (and not "0"): the library explains its choices on stderr. Read once.
bool debug_enabled();

// LT_PROFILE set: compiled graphs time each of their steps (a fused cluster, a library op),
// summed per step label over all runs, and the heaviest print when the process exits. Read once.
bool profile_enabled();
void profile_add(const std::string& step, int64_t ns);
std::string profile_report(size_t top = 40);

}  // namespace lt::metrics_impl
