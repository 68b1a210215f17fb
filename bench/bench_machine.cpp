// The host's limits and description, for bench/compare.py (`make bench`): the FMA peak (a
// register-only loop of independent fused multiply-adds, per thread count) and the triad
// bandwidth (a[i] = b[i] + s * c[i] over arrays far larger than the caches, per thread count),
// so the report can state matmul and training steps as a fraction of peak FLOP/s (MFU) and the
// elementwise workloads as a fraction of bandwidth. The JSON context names the machine: CPU
// model, ISA features, the JIT's target, OpenBLAS's core and thread settings.
// Run: ./build/bench/bench_machine --benchmark_format=json
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/mlir/target.h"

namespace {

// Each variant keeps `kAcc` independent accumulators in registers (more than FMA latency times
// FMA ports on any x86-64 core we know: 4-5 cycles x 2 ports) and runs `iters` rounds; the
// widest the CPU (and LT_CPU_FEATURES) allows is used. Returns flops done.
constexpr int kAcc = 12;

__attribute__((target("avx512f"))) double fma_loop_512(int64_t iters) {
  __m512 acc[kAcc];
  const __m512 m = _mm512_set1_ps(0.9999f), a = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t r = 0; r < iters; ++r)
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, a);
  float sink = 0;
  for (int i = 0; i < kAcc; ++i) sink += _mm512_reduce_add_ps(acc[i]);
  benchmark::DoNotOptimize(sink);
  return 2.0 * 16 * kAcc * static_cast<double>(iters);
}

__attribute__((target("avx2,fma"))) double fma_loop_256(int64_t iters) {
  __m256 acc[kAcc];
  const __m256 m = _mm256_set1_ps(0.9999f), a = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  for (int64_t r = 0; r < iters; ++r)
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, a);
  alignas(32) float out[8];
  float sink = 0;
  for (int i = 0; i < kAcc; ++i) {
    _mm256_store_ps(out, acc[i]);
    for (float v : out) sink += v;
  }
  benchmark::DoNotOptimize(sink);
  return 2.0 * 8 * kAcc * static_cast<double>(iters);
}

double fma_loop_128(int64_t iters) {  // SSE: multiply and add (no FMA before AVX2-class cores)
  __m128 acc[kAcc];
  const __m128 m = _mm_set1_ps(0.9999f), a = _mm_set1_ps(1e-7f);
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm_set1_ps(static_cast<float>(i));
  for (int64_t r = 0; r < iters; ++r)
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm_add_ps(_mm_mul_ps(acc[i], m), a);
  alignas(16) float out[4];
  float sink = 0;
  for (int i = 0; i < kAcc; ++i) {
    _mm_store_ps(out, acc[i]);
    for (float v : out) sink += v;
  }
  benchmark::DoNotOptimize(sink);
  return 2.0 * 4 * kAcc * static_cast<double>(iters);
}

int vector_bits() { return lt::backend::host_target().vector_bits; }

double fma_loop(int64_t iters) {
  const int bits = vector_bits();
  if (bits >= 512) return fma_loop_512(iters);
  if (bits >= 256 && lt::backend::host_target().has("fma")) return fma_loop_256(iters);
  return fma_loop_128(iters);
}

// Runs f(thread index) on `threads` threads at once (std::thread: no runtime's spin policy).
template <typename F>
void on_threads(int threads, F f) {
  std::vector<std::thread> ts;
  for (int t = 1; t < threads; ++t) ts.emplace_back(f, t);
  f(0);
  for (auto& t : ts) t.join();
}

void fma_peak(benchmark::State& st) {
  const int threads = static_cast<int>(st.range(0));
  constexpr int64_t kIters = 2'000'000;
  double flops = 0;
  for (auto _ : st)
    on_threads(threads, [&](int t) {
      const double f = fma_loop(kIters);
      if (t == 0) flops = f * threads;
    });
  st.counters["value"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  st.SetLabel("GFLOP/s");
  st.counters["vector_bits"] = vector_bits();
}

void triad(benchmark::State& st) {
  const int threads = static_cast<int>(st.range(0));
  constexpr int64_t kN = int64_t{1} << 24;  // 64 MiB per array, 192 MiB in all
  std::unique_ptr<float[]> a(new float[kN]), b(new float[kN]), c(new float[kN]);
  const int64_t chunk = (kN + threads - 1) / threads;
  auto range = [&](int t, auto body) {
    const int64_t lo = t * chunk, hi = std::min(kN, lo + chunk);
    body(lo, hi);
  };
  on_threads(threads, [&](int t) {  // first touch by the thread that streams the range
    range(t, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
    });
  });
  const float s = 0.5f;
  for (auto _ : st) {
    on_threads(threads, [&](int t) {
      range(t, [&](int64_t lo, int64_t hi) {
        float* __restrict pa = a.get();
        const float* __restrict pb = b.get();
        const float* __restrict pc = c.get();
        for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
      });
    });
    benchmark::ClobberMemory();
  }
  st.counters["value"] =
      benchmark::Counter(3.0 * 4 * kN / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  st.SetLabel("GB/s");
}

std::string cpuinfo(const std::string& key) {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key, 0) == 0) {
      const size_t p = line.find(':');
      return p == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", p + 1));
    }
  return "";
}

std::string isa_features() {
  std::istringstream flags(" " + cpuinfo("flags") + " ");
  std::vector<std::string> have;
  for (std::string f; flags >> f;)
    for (const char* want : {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16",
                             "avx512_vnni", "amx_tile", "amx_bf16"})
      if (f == want) have.push_back(f);
  std::string out;
  for (const std::string& f : have) out += (out.empty() ? "" : " ") + f;
  return out;
}

const char* env_or(const char* name, const char* dflt) {
  const char* e = std::getenv(name);
  return e ? e : dflt;
}

const bool registered = [] {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> counts = {1};
  for (int t = 2; t <= cores; t *= 2) counts.push_back(t);
  if (counts.back() != cores) counts.push_back(cores);
  for (int t : counts) {
    benchmark::RegisterBenchmark("fma_peak", fma_peak)
        ->Arg(t)
        ->ArgName("threads")
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("triad", triad)
        ->Arg(t)
        ->ArgName("threads")
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::AddCustomContext("cpu_model", cpuinfo("model name"));
  benchmark::AddCustomContext("isa", isa_features());
  benchmark::AddCustomContext("jit_target", lt::backend::host_target().summary());
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  // OpenBLAS picks its kernels from the CPU unless this names them: on the Zen 5 development
  // host the environment sets Haswell (AVX2), though OpenBLAS 0.3.21 alone picks AVX-512 ones.
  benchmark::AddCustomContext("OPENBLAS_CORETYPE", env_or("OPENBLAS_CORETYPE", "(unset)"));
  // 1: lazytensor runs OpenBLAS single-threaded and splits products over its own threads.
  benchmark::AddCustomContext("openblas_threads", std::to_string(openblas_get_num_threads()));
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("LT_NUM_THREADS", env_or("LT_NUM_THREADS", "(unset)"));
  benchmark::AddCustomContext("LT_CPU_FEATURES", env_or("LT_CPU_FEATURES", "(unset)"));
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
