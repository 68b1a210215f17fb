// Dynamic shapes (issue 18): training loops whose input shape changes from step to step, on
// lt_eager, lt_interp and lt_mlir (naming contract in bench_util.h). Each benchmark runs its
// whole loop exactly once (Iterations(1)). The inputs are generated on the cpu before the loop
// (fixed seeds: the same sizes and values for every system) and moved to the device in each
// step, as a real program would:
//   seqlen_loop: TransformerEncoderLayer(64, 4 heads; feed-forward 2048, libtorch's default),
//     input [S, 8, 64] (sequence
//     first) with S uniform in [8, 256] per step, loss mean(out^2), backward, Adam(1e-3),
//     120 steps;
//   seqlen_fixed: the same with S = 128 in every step, the static-shape baseline;
//   seqlen_generic_vs_static (lt_mlir): the seqlen_* step at S = 128 with specialized code and
//     with shape-generic code, in one process: each round clears the compile cache, compiles
//     one or the other (generic: after steps at S = 100 and 112), and times 20 steps at 128;
//     3 rounds of each, alternating; counters static_ms and generic_ms (medians of the rounds'
//     means) and value = generic_ms / static_ms (the goal: at most 1.15);
//   seqlen_loop_buckets, batch_loop_buckets (lt_mlir): seqlen_loop and batch_loop with
//     LT_SHAPE_BUCKETS=pow2, counters bucketed and bucket_refused (graphs padded to their
//     bucket; graphs that could not be, which ran shape-generic code);
//   batch_loop: MLP 784-256-10, batch uniform in [1, 128] per step, cross_entropy against random
//     labels, backward, Adam(1e-3), 200 steps.
// Counters (the lazy metrics are deltas over the loop, 0 on lt_eager):
//   value: steps/s of the whole loop, compiles included (the headline);
//   seconds: the loop's wall time;
//   compiles: "UncachedCompile", graphs compiled (compile-cache misses);
//   compile_s: "CompileTime", seconds the barriers waited for compiles (0 with the default,
//     background compiles: LT_COMPILE=async, which this program keeps unless the environment
//     sets LT_COMPILE);
//   bg_compile_s: "BackgroundCompileTime", seconds the compile worker spent meanwhile;
//   dynamic_compiles, static_compiles, shape_generalizations: "DynamicCompile",
//     "StaticCompile", "ShapeGeneralization" (0 where the library does not count them);
//   steady_ms: the median time of a step in the loop's second half (a compile there, e.g. of a
//     batch of 1, is not steady state); a step ends with the barrier on lazy, which runs its
//     graph synchronously, so the time includes the work;
//   s128_ms (seqlen_*): the mean step time at S = 128: seqlen_loop runs 20 more steps at 128
//     after its loop (not counted elsewhere), with the code the loop left once its compiles
//     are done (shape-generic on lt_mlir), against seqlen_fixed's steady_ms (specialized
//     code);
//   s128_settled_ms, settle_steps, settle_s (seqlen_loop, lt_mlir with Quick code): the same
//     probe once the loop's shape-generic code has tiered up to Full code, which a loop that
//     runs long enough gets (settled_ms below), and the probe steps and seconds that took;
//   quick_compiles: "QuickCompile", shape-generic graphs compiled as Quick code first;
//   loss: the last step's loss, read once after the loop.
// Run: ./build/bench/bench_dynamic
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <utility>

#include "bench_util.h"

namespace {

using ltb::Sys;
using Clock = std::chrono::steady_clock;

constexpr int kSeqSteps = 120, kBatchSteps = 200;
constexpr int64_t kBatch = 8, kModel = 64;  // seqlen_*: inputs [S, kBatch, kModel]
constexpr int64_t kProbeLen = 128, kProbes = 21;

// Per-step sizes uniform in [lo, hi] from a fixed seed: the same sequence for every system.
std::vector<int64_t> draw_sizes(int steps, int64_t lo, int64_t hi) {
  std::mt19937 gen(0);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<int64_t> sizes(steps);
  for (int64_t& s : sizes) s = dist(gen);
  return sizes;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct SeqLen {
  lt::Device d;
  lt::nn::TransformerEncoderLayer layer{lt::nn::TransformerEncoderLayerOptions(kModel, 4)};
  std::unique_ptr<lt::optim::Adam> opt;
  std::vector<lt::Tensor> xs;  // on the cpu
  SeqLen(lt::Device dev, const std::vector<int64_t>& lens) : d(dev) {
    layer->to(d);
    layer->train();
    opt = std::make_unique<lt::optim::Adam>(layer->parameters(), lt::optim::AdamOptions(1e-3));
    for (int64_t s : lens) xs.push_back(lt::randn({s, kBatch, kModel}));
    lt::mark_step();
  }
  lt::Tensor step(size_t i) {
    opt->zero_grad();
    lt::Tensor out = layer->forward(xs[i].to(d));
    lt::Tensor loss = (out * out).mean();
    loss.backward();
    opt->step();
    return loss;
  }
};

struct Mlp {
  lt::Device d;
  lt::nn::Sequential m{lt::nn::Linear(784, 256), lt::nn::ReLU(), lt::nn::Linear(256, 10)};
  std::unique_ptr<lt::optim::Adam> opt;
  std::vector<lt::Tensor> xs, ys;  // on the cpu
  Mlp(lt::Device dev, const std::vector<int64_t>& batches) : d(dev) {
    m->to(d);
    opt = std::make_unique<lt::optim::Adam>(m->parameters(), lt::optim::AdamOptions(1e-3));
    for (int64_t b : batches) {
      xs.push_back(lt::randn({b, 784}));
      ys.push_back(lt::randint(0, 10, {b}));
    }
    lt::mark_step();
  }
  lt::Tensor step(size_t i) {
    opt->zero_grad();
    lt::Tensor loss = lt::cross_entropy(m->forward(xs[i].to(d)), ys[i].to(d));
    loss.backward();
    opt->step();
    return loss;
  }
};

// The lazy counters reported, as (counter in the output, metrics name); absent ones read 0.
const std::vector<std::pair<const char*, const char*>> kCounters = {
    {"compiles", "UncachedCompile"},
    {"dynamic_compiles", "DynamicCompile"},
    {"static_compiles", "StaticCompile"},
    {"shape_generalizations", "ShapeGeneralization"},
    {"quick_compiles", "QuickCompile"}};

std::vector<double> read_metrics() {
  std::vector<double> v;
  for (const auto& [key, name] : kCounters)
    v.push_back(static_cast<double>(lt::metrics::counter(name)));
  v.push_back(lt::metrics::timer_ms("CompileTime"));
  v.push_back(lt::metrics::timer_ms("BackgroundCompileTime"));
  return v;
}

// s128_settled_ms: the probe's steps (sizes[counted + 1 ..]) go on until the loop's shape-generic
// code has tiered up (TierUpCompile: its Full compile starts once the Quick code has run
// LT_TIER_UP times as long as its own compile, background_compile.cpp) and that compile is done,
// at most kSettleSteps of them; then the mean of kProbes - 1 more. That is the loop's steady
// state when it runs long enough; 0 when no tier-up came (static code has none).
constexpr int kSettleSteps = 1000;
template <typename StepFn>
void settled_ms(benchmark::State& st, const std::vector<int64_t>& sizes, size_t counted,
                const StepFn& step) {
  const size_t probes = sizes.size() - counted - 1;
  auto probe = [&](size_t k) { step(counted + 1 + k % probes); };
  const int64_t tiered = lt::metrics::counter("TierUpCompile");
  const Clock::time_point t0 = Clock::now();
  int k = 0;
  for (; k < kSettleSteps && lt::metrics::counter("TierUpCompile") == tiered; ++k) probe(k);
  st.counters["settle_steps"] = k;
  st.counters["settle_s"] = ms_since(t0) / 1e3;
  st.counters["s128_settled_ms"] = 0;
  if (lt::metrics::counter("TierUpCompile") == tiered) return;
  lt::wait_for_compiles();
  probe(k++);  // the first run of the Full code
  const Clock::time_point t1 = Clock::now();
  for (size_t j = 0; j + 1 < static_cast<size_t>(kProbes); ++j) probe(k++);
  st.counters["s128_settled_ms"] = ms_since(t1) / (kProbes - 1);
}

// Runs the model's loop once over `sizes` (one per step) and reports the counters above for
// its first `counted` steps (the rest are probes, timed only); returns each step's time in ms.
// The lazy device starts from an empty compile cache, as a new process would.
template <typename Model>
std::vector<double> train_loop(benchmark::State& st, Sys s, const std::vector<int64_t>& sizes,
                               size_t counted, bool settle = false) {
  setenv("LT_COMPILE", "async", /*overwrite=*/0);  // the library's default (bench_util.h)
  const lt::Device d = ltb::enter(s);
  if (d.is_lazy()) lt::clear_compile_cache();
  lt::manual_seed(0);
  Model model(d, sizes);
  const std::vector<double> before = read_metrics();
  std::vector<double> after;
  std::vector<double> step_ms(sizes.size());
  double total_ms = 0, loss = 0;
  for (auto _ : st) {
    const Clock::time_point t0 = Clock::now();
    lt::Tensor last;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const Clock::time_point s0 = Clock::now();
      last = model.step(i);
      if (d.is_lazy()) lt::mark_step();  // Adam's step already ended with it: a no-op barrier
      step_ms[i] = ms_since(s0);
      if (i + 1 == counted) {
        lt::wait_device_ops();
        loss = last.item<double>();
        total_ms = ms_since(t0);
        after = read_metrics();
        lt::wait_for_compiles();  // the probes after the loop run the code it left
      }
    }
    const bool quick_code =
        !after.empty() && after[kCounters.size() - 1] > before[kCounters.size() - 1];
    if (settle && quick_code) settled_ms(st, sizes, counted, [&](size_t i) { model.step(i); });
  }
  for (size_t k = 0; k < kCounters.size(); ++k)
    st.counters[kCounters[k].first] = after[k] - before[k];
  const size_t n = after.size();
  st.counters["compile_s"] = (after[n - 2] - before[n - 2]) / 1e3;
  st.counters["bg_compile_s"] = (after[n - 1] - before[n - 1]) / 1e3;
  st.counters["value"] = static_cast<double>(counted) / (total_ms / 1e3);
  st.SetLabel("steps/s");
  st.counters["seconds"] = total_ms / 1e3;
  std::vector<double> late(step_ms.begin() + static_cast<std::ptrdiff_t>(counted / 2),
                           step_ms.begin() + static_cast<std::ptrdiff_t>(counted));
  std::sort(late.begin(), late.end());
  st.counters["steady_ms"] = late[late.size() / 2];
  st.counters["loss"] = loss;
  return step_ms;
}

void seqlen(benchmark::State& st, Sys s, std::vector<int64_t> lens, bool settle = false) {
  const size_t counted = lens.size();
  lens.resize(counted + kProbes, kProbeLen);
  const std::vector<double> step_ms = train_loop<SeqLen>(st, s, lens, counted, settle);
  double sum = 0;
  for (size_t i = counted + 1; i < lens.size(); ++i) sum += step_ms[i];  // the first: warm-up
  st.counters["s128_ms"] = sum / (kProbes - 1);
}

// One round of seqlen_generic_vs_static: the mean step time at S = kProbeLen.
double probe_round(bool generic) {
  const lt::Device d("lazy");
  lt::clear_compile_cache();
  lt::manual_seed(0);
  std::vector<int64_t> lens = generic ? std::vector<int64_t>{100, 112} : std::vector<int64_t>{};
  const size_t warm = lens.size() + 3;  // compiles, then steps of the code under test
  lens.resize(warm + kProbes, kProbeLen);
  SeqLen model(d, lens);
  double sum = 0;
  for (size_t i = 0; i < lens.size(); ++i) {
    const Clock::time_point t0 = Clock::now();
    model.step(i);
    if (i >= warm) sum += ms_since(t0);
  }
  return sum / kProbes;
}

void generic_vs_static(benchmark::State& st) {
  // Code against code: each round compiles before its first step.
  const char* mode = std::getenv("LT_COMPILE");
  const std::string saved = mode ? mode : "";
  setenv("LT_COMPILE", "sync", 1);
  ltb::enter(Sys::Mlir);
  std::vector<double> stat, gen;
  for (auto _ : st)
    for (int r = 0; r < 3; ++r) {
      stat.push_back(probe_round(false));
      gen.push_back(probe_round(true));
    }
  std::sort(stat.begin(), stat.end());
  std::sort(gen.begin(), gen.end());
  st.counters["static_ms"] = stat[stat.size() / 2];
  st.counters["generic_ms"] = gen[gen.size() / 2];
  st.counters["value"] = gen[gen.size() / 2] / stat[stat.size() / 2];
  st.SetLabel("x");
  if (mode)
    setenv("LT_COMPILE", saved.c_str(), 1);
  else
    unsetenv("LT_COMPILE");
}

// *_buckets: the loop with LT_SHAPE_BUCKETS=pow2 (unless the environment sets it), its graphs
// padded to power-of-two sizes; counters bucketed (graphs run as their bucket's code) and
// bucket_refused (graphs that could not be padded exactly: shape-generic code).
struct Buckets {
  bool set = !std::getenv("LT_SHAPE_BUCKETS");
  double bucketed = static_cast<double>(lt::metrics::counter("BucketedGraphs"));
  double refused = static_cast<double>(lt::metrics::counter("BucketRefused"));
  Buckets() {
    if (set) setenv("LT_SHAPE_BUCKETS", "pow2", 1);
  }
  ~Buckets() {
    if (set) unsetenv("LT_SHAPE_BUCKETS");
  }
  void report(benchmark::State& st) const {
    st.counters["bucketed"] =
        static_cast<double>(lt::metrics::counter("BucketedGraphs")) - bucketed;
    st.counters["bucket_refused"] =
        static_cast<double>(lt::metrics::counter("BucketRefused")) - refused;
  }
};

const bool registered = [] {
  const auto once = [](auto* b) { b->Iterations(1)->Unit(benchmark::kMillisecond); };
  ltb::add(
      "seqlen_loop", ltb::kAll,
      [](benchmark::State& st, Sys s) { seqlen(st, s, draw_sizes(kSeqSteps, 8, 256), true); },
      once);
  ltb::add(
      "seqlen_fixed", ltb::kAll,
      [](benchmark::State& st, Sys s) {
        seqlen(st, s, std::vector<int64_t>(kSeqSteps, kProbeLen));
      },
      once);
  ltb::add(
      "seqlen_generic_vs_static", {Sys::Mlir},
      [](benchmark::State& st, Sys) { generic_vs_static(st); }, once);
  ltb::add(
      "seqlen_loop_buckets", {Sys::Mlir},
      [](benchmark::State& st, Sys s) {
        Buckets on;
        seqlen(st, s, draw_sizes(kSeqSteps, 8, 256));
        on.report(st);
      },
      once);
  ltb::add(
      "batch_loop_buckets", {Sys::Mlir},
      [](benchmark::State& st, Sys s) {
        Buckets on;
        const std::vector<int64_t> b = draw_sizes(kBatchSteps, 1, 128);
        train_loop<Mlp>(st, s, b, b.size());
        on.report(st);
      },
      once);
  ltb::add(
      "batch_loop", ltb::kAll,
      [](benchmark::State& st, Sys s) {
        const std::vector<int64_t> b = draw_sizes(kBatchSteps, 1, 128);
        train_loop<Mlp>(st, s, b, b.size());
      },
      once);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
