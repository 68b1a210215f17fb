// Eager-device benchmarks. Compare ratios within one run (the machine is shared and noisy):
//   elementwise add on 2^24 floats (GB/s) beside a triad on the same buffers;
//   matmul 512^3 / 1024^3 (GFLOP/s) beside a direct cblas_sgemm call on as many threads;
//   uniform random floats (GB/s written); dispatch cost of one op on tiny tensors. Workloads that
//   run on every device (chain8, softmax, layer_norm, conv2d) are in bench_lazy.
// Run: ./build/bench/bench_eager --benchmark_min_time=0.5
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <lt/lt.h>
#include <omp.h>

#include "bench_util.h"

extern "C" void openblas_set_num_threads(int);

namespace {

constexpr int64_t kN = int64_t{1} << 24;

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
  ltb::set_gbps(st, 3.0 * 4 * kN);
}
BENCHMARK(BM_triad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_add(benchmark::State& st) {
  lt::Tensor a = lt::rand({kN}), b = lt::rand({kN});
  for (auto _ : st) {
    lt::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr<float>());
  }
  ltb::set_gbps(st, 3.0 * 4 * kN);
}
BENCHMARK(BM_add)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_add_inplace(benchmark::State& st) {
  lt::Tensor a = lt::rand({kN}), b = lt::rand({kN});
  for (auto _ : st) {
    a.add_(b);
    benchmark::ClobberMemory();
  }
  ltb::set_gbps(st, 3.0 * 4 * kN);
}
BENCHMARK(BM_add_inplace)->Unit(benchmark::kMillisecond)->UseRealTime();

// Uniform floats, the generator behind dropout's masks (Philox-4x32-10), GB/s of output.
void BM_rand(benchmark::State& st) {
  for (auto _ : st) {
    lt::Tensor r = lt::rand({kN});
    benchmark::DoNotOptimize(r.data_ptr<float>());
  }
  ltb::set_gbps(st, 4.0 * kN);
}
BENCHMARK(BM_rand)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_matmul_transposed(benchmark::State& st) {
  const int64_t n = st.range(0);
  lt::Tensor a = lt::randn({n, n}), b = lt::randn({n, n});
  for (auto _ : st) {
    lt::Tensor c = lt::matmul(a, b.t());
    benchmark::DoNotOptimize(c.data_ptr<float>());
  }
  ltb::set_gflops(st, 2.0 * n * n * n);
}
BENCHMARK(BM_matmul_transposed)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// matmul_<n>/cblas: one direct cblas_sgemm on OpenBLAS's own threads, as many as ours, the
// reference for matmul_<n>/lt_* in bench_lazy (lazytensor keeps OpenBLAS at one thread and splits
// products over its own threads: blas_gemm).
void cblas_matmul(benchmark::State& st, int64_t n) {
  lt::Tensor a = lt::randn({n, n}), b = lt::randn({n, n}), c = lt::zeros({n, n});
  openblas_set_num_threads(lt::get_num_threads());
  for (auto _ : st) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data_ptr<float>(), n,
                b.data_ptr<float>(), n, 0.0f, c.data_ptr<float>(), n);
    benchmark::ClobberMemory();
  }
  openblas_set_num_threads(1);
  ltb::set_gflops(st, 2.0 * n * n * n);
  ltb::time_value(st, "ms");
}

void dispatch_tiny(benchmark::State& st) {  // one op on 4x4 tensors: the cost of dispatch
  lt::Tensor a = lt::rand({4, 4}), b = lt::rand({4, 4});
  for (auto _ : st) {
    lt::Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
  ltb::time_value(st, "ns/op");
}

const bool registered = [] {
  for (int64_t n : {128, 512, 1024})
    benchmark::RegisterBenchmark(("matmul_" + std::to_string(n) + "/cblas").c_str(), cblas_matmul,
                                 n)
        ->UseRealTime();
  benchmark::RegisterBenchmark("dispatch_tiny/lt_eager", dispatch_tiny);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
