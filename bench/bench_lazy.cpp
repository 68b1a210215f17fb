// The lazy device against eager, each workload on every system it applies to (lt_eager,
// lt_interp, lt_mlir; see bench_util.h for the naming contract). Ratios in one run are what
// to read: the machine is shared and noisy.
//   record_op: ns per recorded op for chains of 10^5 adds on 4 elements (tracing cost only);
//   mark_step_100/1000: a cache-hit barrier for an N-node graph (hash, lookup, launch, swap,
//     and running the tiny graph); counters split it into kernel_us and overhead_us;
//   chain8 (8 elementwise ops on 2^24 floats), softmax, layer_norm (4096x1024), matmul,
//     conv2d (32x3x32x32, 64 3x3 filters): what compilation buys per kernel;
//   compile_mlp_step: compile time of a fresh MLP training-step graph from an empty compile
//   cache (median of 8).
// Run: ./build/bench/bench_lazy   (or `make bench` for the comparison with PyTorch)
#include <algorithm>
#include <chrono>

#include "backend/mlir/matmul_codegen.h"  // internal: the codegen alternative to BLAS
#include "bench_util.h"

namespace {

using ltb::Sys;

void record_op(benchmark::State& st, Sys s) {
  const lt::Device d = ltb::enter(s);
  const int64_t n = 100000;
  lt::Tensor x = lt::rand({4}).to(d);
  lt::mark_step();
  for (auto _ : st) {
    lt::Tensor c = x;
    for (int64_t i = 0; i < n; ++i) c = c + x;
    st.PauseTiming();
    c = lt::Tensor();  // freeing the chain is not recording
    lt::mark_step();   // nothing pending: resets the automatic-cut counter
    st.ResumeTiming();
  }
  ltb::time_value(st, "ns/op", static_cast<double>(n));
}

// A chain of n adds on 4 elements, recorded (not timed) before each barrier.
lt::Tensor tiny_chain(const lt::Tensor& x, int64_t n) {
  lt::Tensor c = x;
  for (int64_t i = 0; i < n; ++i) c = c + x;
  return c;
}

void mark_step_cached(benchmark::State& st, Sys s, int64_t n) {
  const lt::Device d = ltb::enter(s);
  lt::Tensor x = lt::rand({4}).to(d);
  lt::mark_step();
  for (int i = 0; i < 2; ++i) {  // the compile is not what this measures
    lt::Tensor c = tiny_chain(x, n);
    lt::mark_step();
  }
  lt::metrics::reset();
  double barrier_us = 0;
  for (auto _ : st) {
    st.PauseTiming();
    lt::Tensor c = tiny_chain(x, n);
    st.ResumeTiming();
    auto t0 = std::chrono::steady_clock::now();
    lt::mark_step();
    barrier_us +=
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  ltb::time_value(st, "us");
  // The figure: the barrier minus running the graph's kernels.
  const double iters = static_cast<double>(st.iterations());
  st.counters["kernel_us"] = lt::metrics::timer_ms("ExecuteTime") * 1e3 / iters;
  st.counters["overhead_us"] = (barrier_us - lt::metrics::timer_ms("ExecuteTime") * 1e3) / iters;
}

// ---- kernels: eager vs compiled. The first call (compile) is outside the timed loop.
constexpr int64_t kN = int64_t{1} << 24;

template <typename F>
void kernel_loop(benchmark::State& st, F f) {
  lt::mark_step();
  ltb::finish(f());
  for (auto _ : st) ltb::finish(f());
  ltb::time_value(st, "ms");
}

void chain8(benchmark::State& st, Sys s) {
  const lt::Device d = ltb::enter(s);
  lt::Tensor x = lt::rand({kN}).to(d), y = lt::rand({kN}).to(d);
  kernel_loop(st, [&] { return ((lt::tanh(lt::exp(x * y + 1.0f)) - y) * x + 0.5f).sigmoid(); });
  ltb::set_gbps(st, 3.0 * 4 * kN);  // compulsory traffic: read x, y; write the result
}

void softmax(benchmark::State& st, Sys s) {
  const lt::Device d = ltb::enter(s);
  lt::Tensor x = lt::randn({4096, 1024}).to(d);
  kernel_loop(st, [&] { return lt::softmax(x, 1); });
  ltb::set_gbps(st, 2.0 * 4 * 4096 * 1024);
}

void layer_norm(benchmark::State& st, Sys s) {
  const lt::Device d = ltb::enter(s);
  lt::Tensor x = lt::randn({4096, 1024}).to(d), w = lt::ones({1024}).to(d),
             b = lt::zeros({1024}).to(d);
  kernel_loop(st, [&] { return lt::layer_norm(x, {1024}, w, b); });
  ltb::set_gbps(st, 2.0 * 4 * 4096 * 1024);
}

void matmul(benchmark::State& st, Sys s, int64_t n) {
  const lt::Device d = ltb::enter(s);
  lt::Tensor a = lt::randn({n, n}).to(d), b = lt::randn({n, n}).to(d);
  kernel_loop(st, [&] { return lt::matmul(a, b); });
  ltb::set_gflops(st, 2.0 * n * n * n);
}

// matmul_<n>/mlir_codegen: the same product compiled by MLIR (transform-dialect tiling +
// vectorization, OpenMP over 64x128 blocks) instead of the OpenBLAS call lt_mlir makes; the
// comparison behind the backend's choice of BLAS (docs/ARCHITECTURE.md). compile_ms: once.
void matmul_codegen(benchmark::State& st, int64_t n) {
  lt::backend::CodegenMatmul k = lt::backend::compile_codegen_matmul(n, n, n);
  if (!k.run) {
    st.SkipWithError(k.error.c_str());
    return;
  }
  lt::Tensor a = lt::randn({n, n}), b = lt::randn({n, n}), c = lt::zeros({n, n});
  for (auto _ : st) {
    k.run(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>());
    benchmark::ClobberMemory();
  }
  ltb::set_gflops(st, 2.0 * n * n * n);
  ltb::time_value(st, "ms");
  st.counters["compile_ms"] = k.compile_ms;
}

void conv2d(benchmark::State& st, Sys s) {
  const lt::Device d = ltb::enter(s);
  lt::Tensor x = lt::randn({32, 3, 32, 32}).to(d), w = lt::randn({64, 3, 3, 3}).to(d),
             b = lt::randn({64}).to(d);
  kernel_loop(st, [&] { return lt::conv2d(x, w, b, {1, 1}, {1, 1}); });
  ltb::set_gflops(st, 2.0 * 32 * 64 * 32 * 32 * 3 * 9);
}

// Compile time of fresh graphs: an MLP training step with a new batch size each iteration, from
// an empty compile cache (without clearing it, shape-generic code would serve the new batches).
// Reports the median; p90 as a counter.
void compile_mlp_step(benchmark::State& st, Sys s) {
  const lt::Device d = ltb::enter(s);
  lt::manual_seed(0);
  lt::nn::Sequential m(lt::nn::Linear(784, 256), lt::nn::ReLU(), lt::nn::Linear(256, 10));
  m->to(d);
  lt::optim::SGD opt(m->parameters(), lt::optim::SGDOptions(0.01));
  static int64_t batch = 17;  // never repeats within the process, so never a cache hit
  std::vector<double> ms;
  for (auto _ : st) {
    st.PauseTiming();
    lt::Tensor x = lt::randn({batch, 784}).to(d), y = lt::randint(0, 10, {batch}).to(d);
    ++batch;
    lt::mark_step();
    lt::clear_compile_cache();
    opt.zero_grad();
    lt::cross_entropy(m->forward(x), y).backward();
    st.ResumeTiming();
    auto t0 = std::chrono::steady_clock::now();
    opt.step();  // ends with mark_step: compile + run
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  ltb::median_ms_value(st, std::move(ms));
}

const bool registered = [] {
  ltb::add("record_op", {Sys::Mlir}, record_op, [](auto* b) { b->Unit(benchmark::kMillisecond); });
  for (int64_t n : {100, 1000})
    ltb::add(
        "mark_step_" + std::to_string(n), ltb::kLazy,
        [n](benchmark::State& st, Sys s) { mark_step_cached(st, s, n); },
        [](auto* b) { b->Unit(benchmark::kMicrosecond); });
  auto ms = [](auto* b) { b->Unit(benchmark::kMillisecond); };
  ltb::add("chain8", ltb::kAll, chain8, ms);
  ltb::add("softmax", ltb::kAll, softmax, ms);
  ltb::add("layer_norm", ltb::kAll, layer_norm, ms);
  for (int64_t n : {128, 512, 1024}) {
    ltb::add(
        "matmul_" + std::to_string(n), ltb::kAll,
        [n](benchmark::State& st, Sys s) { matmul(st, s, n); }, ms);
    benchmark::RegisterBenchmark(("matmul_" + std::to_string(n) + "/mlir_codegen").c_str(),
                                 matmul_codegen, n)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  ltb::add("conv2d", ltb::kAll, conv2d, ms);
  ltb::add("compile_mlp_step", ltb::kLazy, compile_mlp_step,
           [](auto* b) { b->Iterations(8)->Unit(benchmark::kMillisecond); });
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
