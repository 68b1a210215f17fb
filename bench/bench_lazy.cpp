// Lazy-device benchmarks: what tracing and the barrier cost, kernels excluded.
//   BM_record_chain: ns per recorded op for a chain of 10^5 adds on a 4-element tensor
//     (PyTorch 1.13's lazy tensor core measured 6-21 us per op on this machine).
//   BM_mark_step_cached/N: cache-hit barrier for an N-node graph on tiny tensors
//     (hash, lookup, launch, swap; the interp kernels on 4 elements are most of the rest).
// Run: ./build/bench/bench_lazy
#include <benchmark/benchmark.h>

#include <lt/lt.h>

namespace {

const lt::Device kLazy("lazy");

void BM_record_chain(benchmark::State& st) {
  const int64_t n = st.range(0);
  lt::Tensor x = lt::rand({4}).to(kLazy);
  lt::mark_step();
  for (auto _ : st) {
    lt::Tensor s = x;
    for (int64_t i = 0; i < n; ++i) s = s + x;
    st.PauseTiming();
    s = lt::Tensor();  // freeing the chain is not recording
    st.ResumeTiming();
  }
  st.counters["ns/op"] = benchmark::Counter(static_cast<double>(n) * 1e-9,
                                            benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
}
BENCHMARK(BM_record_chain)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_record_mixed(benchmark::State& st) {  // binary op with a scalar, unary, reduction
  lt::Tensor x = lt::rand({8, 8}).to(kLazy);
  lt::mark_step();
  const int64_t n = 30000;
  for (auto _ : st) {
    lt::Tensor s = x;
    for (int64_t i = 0; i < n; ++i) s = (s * 0.5f).tanh() + x.sum(1, true);
    st.PauseTiming();
    s = lt::Tensor();
    st.ResumeTiming();
  }
  st.counters["ns/op"] = benchmark::Counter(3.0 * static_cast<double>(n) * 1e-9,
                                            benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
}
BENCHMARK(BM_record_mixed)->Unit(benchmark::kMillisecond);

void BM_mark_step_cached(benchmark::State& st) {
  const int64_t n = st.range(0);
  lt::Tensor x = lt::rand({4}).to(kLazy);
  lt::mark_step();
  for (auto _ : st) {
    st.PauseTiming();
    lt::Tensor s = x;
    for (int64_t i = 0; i < n; ++i) s = s + x;
    st.ResumeTiming();
    lt::mark_step();
  }
  st.counters["CachedCompile"] = static_cast<double>(lt::metrics::counter("CachedCompile"));
}
BENCHMARK(BM_mark_step_cached)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
