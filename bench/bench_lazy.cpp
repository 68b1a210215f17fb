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
    lt::mark_step();   // nothing pending: resets the automatic-cut counter
    st.ResumeTiming();
  }
  st.counters["ns/op"] = benchmark::Counter(static_cast<double>(n) * 1e-9,
                                            benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
}
BENCHMARK(BM_record_chain)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_record_mixed(benchmark::State& st) {  // binary op with a scalar, unary, reduction
  lt::Tensor x = lt::rand({8, 8}).to(kLazy);
  lt::mark_step();
  const int64_t n = 30000;
  for (auto _ : st) {
    lt::Tensor s = x;
    for (int64_t i = 0; i < n; ++i) s = (s * 0.5f).tanh() + x.sum(1, true);
    st.PauseTiming();
    s = lt::Tensor();
    lt::mark_step();
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

// ---- compiled kernels vs eager (same process, same threads): ratios are what to read.
constexpr int64_t kN = int64_t{1} << 24;

lt::Tensor chain8(const lt::Tensor& x, const lt::Tensor& y) {
  return ((lt::tanh(lt::exp(x * y + 1.0f)) - y) * x + 0.5f).sigmoid();
}

void BM_chain8(benchmark::State& st) {  // arg 0: eager, 1: lazy
  lt::Device d = st.range(0) ? kLazy : lt::Device("cpu");
  lt::Tensor x = lt::rand({kN}).to(d), y = lt::rand({kN}).to(d);
  lt::mark_step();
  lt::sync({chain8(x, y)});  // compile outside the timed loop
  for (auto _ : st) {
    lt::Tensor r = chain8(x, y);
    lt::sync({r});
  }
  st.counters["GB/s"] = benchmark::Counter(3.0 * 4 * kN / 1e9,
                                           benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_chain8)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_softmax(benchmark::State& st) {
  lt::Device d = st.range(0) ? kLazy : lt::Device("cpu");
  lt::Tensor x = lt::randn({4096, 1024}).to(d);
  lt::mark_step();
  lt::sync({lt::softmax(x, 1)});
  for (auto _ : st) {
    lt::Tensor r = lt::softmax(x, 1);
    lt::sync({r});
  }
}
BENCHMARK(BM_softmax)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_layer_norm(benchmark::State& st) {
  lt::Device d = st.range(0) ? kLazy : lt::Device("cpu");
  lt::Tensor x = lt::randn({4096, 1024}).to(d), w = lt::ones({1024}).to(d),
             b = lt::zeros({1024}).to(d);
  lt::mark_step();
  lt::sync({lt::layer_norm(x, {1024}, w, b)});
  for (auto _ : st) {
    lt::Tensor r = lt::layer_norm(x, {1024}, w, b);
    lt::sync({r});
  }
}
BENCHMARK(BM_layer_norm)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// MLP 784-256-10, batch 64, forward + backward + SGD: steps/s.
void BM_mlp_step(benchmark::State& st) {
  lt::Device d = st.range(0) ? kLazy : lt::Device("cpu");
  lt::manual_seed(0);
  lt::nn::Sequential m(lt::nn::Linear(784, 256), lt::nn::ReLU(), lt::nn::Linear(256, 10));
  m->to(d);
  lt::optim::SGD opt(m->parameters(), lt::optim::SGDOptions(0.01));
  lt::Tensor x = lt::randn({64, 784}).to(d), y = lt::randint(0, 10, {64}).to(d);
  lt::mark_step();
  auto step = [&] {
    opt.zero_grad();
    lt::Tensor loss = lt::cross_entropy(m->forward(x), y);
    loss.backward();
    opt.step();
  };
  for (int i = 0; i < 3; ++i) step();  // compiles happen here, not in the timed loop
  for (auto _ : st) step();
  lt::wait_device_ops();
  st.counters["steps/s"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_mlp_step)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// Compile time of a fresh graph (an MLP training step with a new batch size each iteration).
void BM_compile_mlp_step(benchmark::State& st) {
  lt::nn::Sequential m(lt::nn::Linear(784, 256), lt::nn::ReLU(), lt::nn::Linear(256, 10));
  m->to(kLazy);
  lt::optim::SGD opt(m->parameters(), lt::optim::SGDOptions(0.01));
  int64_t batch = 17;
  for (auto _ : st) {
    lt::Tensor x = lt::randn({batch, 784}).to(kLazy), y = lt::randint(0, 10, {batch}).to(kLazy);
    ++batch;  // a new shape: a cache miss
    opt.zero_grad();
    lt::cross_entropy(m->forward(x), y).backward();
    opt.step();
  }
}
BENCHMARK(BM_compile_mlp_step)->Iterations(8)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
