// The work a compiled loop nest needs before it runs on OpenMP threads (lt-parallel-outer's
// threshold), measured on this host rather than fixed: a streaming loop (a[i] = b[i] * s + c[i],
// the lightest body a fused cluster has) is timed on one thread and on the library's thread
// count for sizes 2^13 .. 2^20; from the times, the fork/join cost F and the per-element cost c,
// and the threshold is where T threads would reach 75% parallel efficiency (rounded up to a power
// of two). On a Zen 5 (AVX-512) that was above the MLP's 200k-element
// updates, on an AVX2 Zen 3 below them (Adam MLP step: lt-train epoch 358 -> 469 steps/s at 64k).
// ~20 ms once per process; under LT_CACHE_DIR kept as a note (the compiled code depends on it,
// so every process on the host must see the same value). LT_MLIR_PAR_MIN overrides it.
// Plain C++ with OpenMP.
#include "backend/mlir/par_threshold.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/mlir/disk_cache.h"
#include "backend/mlir/target.h"
#include "core/config.h"
#include "core/metrics.h"
#include "core/parallel.h"

namespace lt::backend {
namespace {

constexpr int kMinLog = 13, kMaxLog = 20;
// The threads must reach this parallel efficiency (speedup / threads) by the model: in a step
// the workers also compete with OpenBLAS's threads and wake from other loops, so a bare win is
// not enough (Zen 3, 2 threads, Adam MLP epoch 2 of lt-train: threads from 16k iterations,
// 308-326 steps/s; from 64k, 372-418; from 262k, 270-288).
constexpr double kEfficiency = 0.75;

double best_ms(int reps, const std::function<void()>& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int64_t measure_par_threshold(int threads, std::string* why) {
  if (threads <= 1) {
    *why = "1 thread";
    return -1;
  }
  const int64_t nmax = int64_t{1} << kMaxLog;
  std::vector<float> a(nmax), b(nmax, 1.0f), c(nmax, 2.0f);
  float* pa = a.data();
  const float *pb = b.data(), *pc = c.data();
  const float s = 0.5f;
  std::string figures;
  std::vector<double> per_elem, fork;  // serial ns per element; parallel time over ideal, us
  for (int lg = kMinLog; lg <= kMaxLog; ++lg) {
    const int64_t n = int64_t{1} << lg;
    auto serial = [&] {
      for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] * s + pc[i];
    };
    auto parallel = [&] {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] * s + pc[i];
    };
    serial();
    parallel();
    double ts = 1e300, tp = 1e300;
    for (int r = 0; r < 3; ++r) {  // alternate, best of each
      ts = std::min(ts, best_ms(3, serial));
      tp = std::min(tp, best_ms(3, parallel));
    }
    per_elem.push_back(ts * 1e6 / static_cast<double>(n));
    if (lg <= kMinLog + 4) fork.push_back(std::max(0.0, (tp - ts / threads) * 1e3));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s2^%d %.1f/%.1f us", figures.empty() ? "" : ", ", lg, ts * 1e3,
                  tp * 1e3);
    figures += buf;
  }
  // tp(n) = F + c n / T: the speedup c n / tp reaches kEfficiency * T from
  // n = kEfficiency T F / (c (1 - kEfficiency)). Medians: one noisy size moves nothing.
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double ns = median(per_elem), f = median(fork);
  const double n_min = kEfficiency * threads * f * 1e3 / (ns * (1 - kEfficiency));
  int64_t threshold = int64_t{1} << kMinLog;
  while (threshold < n_min && threshold < (int64_t{1} << 30)) threshold *= 2;
  char model[96];
  std::snprintf(model, sizeof model, "; fork/join %.2f us, %.3f ns per element", f, ns);
  figures += model;
  *why = "serial/" + std::to_string(threads) + " threads: " + figures;
  return threshold;
}

int64_t par_threshold() {
  static const int64_t v = []() -> int64_t {
    if (auto e = config::text("LT_MLIR_PAR_MIN"); e && !e->empty())
      return config::integer("LT_MLIR_PAR_MIN");
    const int threads = num_threads();
    const CpuTarget& t = host_target();
    std::string id = t.cpu + " threads " + std::to_string(threads);
    for (const std::string& f : t.llvm_features()) id += f;
    char key[48];
    std::snprintf(key, sizeof key, "parmin-%016zx", std::hash<std::string>{}(id));
    const std::string dir = disk_cache::dir();
    std::string note, why;
    int64_t threshold;
    // Under the note's lock: processes starting together (data-parallel ranks) must agree, or
    // their compiled code (and cache keys) would differ.
    std::optional<disk_cache::CompileLock> lock;
    if (!dir.empty()) lock.emplace(dir, key);
    if (!dir.empty() && disk_cache::load_note(dir, key, &note)) {
      threshold = std::atoll(note.c_str());
      why = "measured by an earlier process (LT_CACHE_DIR)";
    } else {
      threshold = measure_par_threshold(threads, &why);
      if (!dir.empty()) disk_cache::store_note(dir, key, std::to_string(threshold) + " " + why);
    }
    if (metrics_impl::debug_enabled())
      std::fprintf(stderr, "lazytensor: compiled loops use threads from %lld iterations (%s)\n",
                   static_cast<long long>(threshold), why.c_str());
    return threshold;
  }();
  return v;
}

}  // namespace lt::backend
