// Shared helpers of the benchmark programs.
//
// The suite's contract with bench/compare.py: a benchmark named "<workload>/<system>" reports
// its headline figure in the user counter "value", with the unit as its label. Systems:
// lt_eager (the cpu device), lt_interp and lt_mlir (the lazy device on each backend), cblas
// (a direct BLAS call, as the reference for matmul). Names starting with BM_ are extra
// detail for people reading the raw output; compare.py ignores them.
#pragma once
#include <benchmark/benchmark.h>
#include <lt/lt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ltb {

enum class Sys { Eager, Interp, Mlir };
inline const std::vector<Sys> kAll = {Sys::Eager, Sys::Interp, Sys::Mlir};
inline const std::vector<Sys> kLazy = {Sys::Interp, Sys::Mlir};

inline const char* sys_name(Sys s) {
  return s == Sys::Eager ? "lt_eager" : s == Sys::Interp ? "lt_interp" : "lt_mlir";
}

// Selects the system (the lazy backend too) and returns its device. The steady-state
// benchmarks time compiled code, so their compiles are synchronous (LT_COMPILE=sync, unless
// the environment says otherwise); bench_dynamic's cold-start loops run the library's default,
// background compiles (it sets LT_COMPILE=async before this).
inline lt::Device enter(Sys s) {
  setenv("LT_COMPILE", "sync", /*overwrite=*/0);
  if (s == Sys::Eager) return lt::Device("cpu");
  lt::set_lazy_backend(s == Sys::Interp ? "interp" : "mlir");
  return lt::Device("lazy");
}

// Waits for a result: a barrier-free sync on lazy, nothing on eager.
inline void finish(const lt::Tensor& t) {
  if (t.device().is_lazy())
    lt::sync({t});
  else
    benchmark::DoNotOptimize(t.impl());
}

// Headline = time per iteration, in `unit` ("ms", "us", "ns/op"); `per_iter` divides it
// (e.g. ops per iteration for ns/op).
inline void time_value(benchmark::State& st, const char* unit, double per_iter = 1) {
  const double scale = std::string(unit) == "ms" ? 1e-3 : std::string(unit) == "us" ? 1e-6 : 1e-9;
  st.counters["value"] =
      benchmark::Counter(scale * per_iter, benchmark::Counter::kIsIterationInvariantRate |
                                               benchmark::Counter::kInvert);
  st.SetLabel(unit);
}

// Headline = iterations per second times `per_iter` (steps/s, GB/s with bytes, ...).
inline void rate_value(benchmark::State& st, const char* unit, double per_iter = 1) {
  st.counters["value"] =
      benchmark::Counter(per_iter, benchmark::Counter::kIsIterationInvariantRate);
  st.SetLabel(unit);
}

inline void set_gbps(benchmark::State& st, double bytes_per_iter) {
  st.counters["GB/s"] =
      benchmark::Counter(bytes_per_iter / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

inline void set_gflops(benchmark::State& st, double flops_per_iter) {
  st.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iter / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// Headline = the median of per-iteration times `ms` (a compile's, timed by the body), plus
// their p90 (for workloads of few, uneven iterations).
inline void median_ms_value(benchmark::State& st, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  st.counters["value"] = ms[ms.size() / 2];
  st.counters["p90_ms"] = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
  st.SetLabel("ms");
}

// Registers "<workload>/<system>" for each system; `body(state, system)`.
inline void add(const std::string& workload, const std::vector<Sys>& systems,
                std::function<void(benchmark::State&, Sys)> body,
                std::function<void(benchmark::internal::Benchmark*)> tune = nullptr) {
  for (Sys s : systems) {
    const std::string name = workload + "/" + sys_name(s);
    // Each workload starts from an empty compile cache, as a fresh process would: otherwise a
    // graph of the structure an earlier workload compiled at other sizes (matmul_128 before
    // matmul_512) is taken for a changing size and gets shape-generic code, and the workload
    // measures that. Google Benchmark calls a body several times; only the first clears.
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [body, s, name](benchmark::State& st) {
      static std::string last;
      if (last != name) lt::clear_compile_cache();
      last = name;
      body(st, s);
    });
    b->UseRealTime();
    if (tune) tune(b);
  }
}

// Resident-set figures of this process from /proc/self/status, in MB.
inline double proc_status_mb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string k = std::string(key) + ":";
  while (std::getline(f, line))
    if (line.rfind(k, 0) == 0) return std::stod(line.substr(k.size())) / 1024.0;  // kB
  return 0;
}

// Forgets the peak RSS so far (Linux: clear_refs 5 resets VmHWM to the current RSS).
inline void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}

}  // namespace ltb
