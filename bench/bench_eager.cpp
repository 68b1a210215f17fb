// Eager-device benchmarks. Compare ratios within one run (the machine is shared and noisy):
//   elementwise add on 2^24 floats (GB/s) beside a triad on the same buffers;
//   matmul 512^3 / 1024^3 (GFLOP/s) beside a direct cblas_sgemm call on the same threads;
//   dispatch cost of one op on tiny tensors; an 8-op elementwise chain; softmax; conv2d.
// Run: ./build/bench/bench_eager --benchmark_min_time=0.5
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <lt/lt.h>

namespace {

constexpr int64_t kN = int64_t{1} << 24;

void set_bytes(benchmark::State& st, double bytes_per_iter) {
  st.counters["GB/s"] = benchmark::Counter(bytes_per_iter, benchmark::Counter::kIsIterationInvariantRate,
                                           benchmark::Counter::kIs1000);
  st.counters["GB/s"].value /= 1e9;
}

void BM_triad(benchmark::State& st) {
  lt::Tensor a = lt::rand({kN}), b = lt::rand({kN}), c = lt::zeros({kN});
  float* pa = a.data_ptr<float>();
  float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  const int nt = lt::get_num_threads();
  for (auto _ : st) {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t i = 0; i < kN; ++i) pc[i] = pa[i] + 1.5f * pb[i];
    benchmark::ClobberMemory();
  }
  set_bytes(st, 3.0 * 4 * kN);
}
BENCHMARK(BM_triad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_add(benchmark::State& st) {
  lt::Tensor a = lt::rand({kN}), b = lt::rand({kN});
  for (auto _ : st) {
    lt::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr<float>());
  }
  set_bytes(st, 3.0 * 4 * kN);
}
BENCHMARK(BM_add)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_add_inplace(benchmark::State& st) {
  lt::Tensor a = lt::rand({kN}), b = lt::rand({kN});
  for (auto _ : st) {
    a.add_(b);
    benchmark::ClobberMemory();
  }
  set_bytes(st, 3.0 * 4 * kN);
}
BENCHMARK(BM_add_inplace)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_chain8(benchmark::State& st) {
  lt::Tensor x = lt::rand({kN}), y = lt::rand({kN});
  for (auto _ : st) {
    lt::Tensor r = ((lt::tanh(lt::exp(x * y + 1.0f)) - y) * x + 0.5f).sigmoid();
    benchmark::DoNotOptimize(r.data_ptr<float>());
  }
  set_bytes(st, 3.0 * 4 * kN);  // the compulsory traffic: read x, y; write r
}
BENCHMARK(BM_chain8)->Unit(benchmark::kMillisecond)->UseRealTime();

void set_flops(benchmark::State& st, double flops) {
  st.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_matmul(benchmark::State& st) {
  const int64_t n = st.range(0);
  lt::Tensor a = lt::randn({n, n}), b = lt::randn({n, n});
  for (auto _ : st) {
    lt::Tensor c = lt::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr<float>());
  }
  set_flops(st, 2.0 * n * n * n);
}
BENCHMARK(BM_matmul)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_matmul_transposed(benchmark::State& st) {
  const int64_t n = st.range(0);
  lt::Tensor a = lt::randn({n, n}), b = lt::randn({n, n});
  for (auto _ : st) {
    lt::Tensor c = lt::matmul(a, b.t());
    benchmark::DoNotOptimize(c.data_ptr<float>());
  }
  set_flops(st, 2.0 * n * n * n);
}
BENCHMARK(BM_matmul_transposed)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_cblas_sgemm(benchmark::State& st) {
  const int64_t n = st.range(0);
  lt::Tensor a = lt::randn({n, n}), b = lt::randn({n, n}), c = lt::zeros({n, n});
  for (auto _ : st) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data_ptr<float>(), n,
                b.data_ptr<float>(), n, 0.0f, c.data_ptr<float>(), n);
    benchmark::ClobberMemory();
  }
  set_flops(st, 2.0 * n * n * n);
}
BENCHMARK(BM_cblas_sgemm)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_dispatch_tiny_add(benchmark::State& st) {
  lt::Tensor a = lt::rand({4, 4}), b = lt::rand({4, 4});
  for (auto _ : st) {
    lt::Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
  st.counters["ns/op"] = benchmark::Counter(1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                      benchmark::Counter::kInvert);
}
BENCHMARK(BM_dispatch_tiny_add);

void BM_softmax(benchmark::State& st) {
  lt::Tensor x = lt::randn({4096, 1024});
  for (auto _ : st) {
    lt::Tensor r = lt::softmax(x, 1);
    benchmark::DoNotOptimize(r.data_ptr<float>());
  }
  set_bytes(st, 2.0 * 4 * 4096 * 1024);
}
BENCHMARK(BM_softmax)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_layer_norm(benchmark::State& st) {
  lt::Tensor x = lt::randn({4096, 1024}), w = lt::ones({1024}), b = lt::zeros({1024});
  for (auto _ : st) {
    lt::Tensor r = lt::layer_norm(x, {1024}, w, b);
    benchmark::DoNotOptimize(r.data_ptr<float>());
  }
  set_bytes(st, 2.0 * 4 * 4096 * 1024);
}
BENCHMARK(BM_layer_norm)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_conv2d(benchmark::State& st) {
  lt::Tensor x = lt::randn({32, 3, 32, 32}), w = lt::randn({64, 3, 3, 3}), b = lt::randn({64});
  for (auto _ : st) {
    lt::Tensor y = lt::conv2d(x, w, b, {1, 1}, {1, 1});
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  set_flops(st, 2.0 * 32 * 64 * 32 * 32 * 3 * 9);
}
BENCHMARK(BM_conv2d)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
