// Training steps on every system (lt_eager, lt_interp, lt_mlir; naming contract in
// bench_util.h), with the same models and shapes as bench/torch_bench.py:
//   mlp_step: MLP 784-256-10, batch 64, cross_entropy, backward, SGD (steps/s);
//   mlp_adam_step: the same with Adam(1e-3), the main job's (lt-train's) optimizer;
//   transformer_step: TransformerEncoderLayer(256, 4 heads, ff 1024), 128 tokens x batch 16,
//     loss mean(out^2), backward, Adam (steps/s);
//   lstm_step: the main job's --model lstm: a 2-layer LSTM(28, 128) over 28 steps of 28 pixels,
//     batch 64, Linear(128, 10) on the last output, cross_entropy, backward, Adam (steps/s);
//   resnet_step: the main job's --model resnet (tools/models.h: a 3x3 stem of 24 channels, residual
//     blocks of 24, 48 and 96 channels at 28x28, 14x14 and 7x7 with BatchNorm2d, global average
//     pooling, Linear(96, 10)), batch 64, cross_entropy, backward, Adam (steps/s);
//   charlm_step: the main job's --model charlm: a character language model (Embedding(114, 64)
//     plus learned positions, a 2-layer norm_first TransformerDecoder of width 64, 4 heads,
//     ff 256, causal self- and memory attention, Linear(64, 114)), batch 32 of 64 characters,
//     cross_entropy, backward, Adam (steps/s);
//   compile_transformer_step: the time of a training step of transformer_step's model whose graph
//     is new (a batch size the process has not seen, the compile cache cleared): compile and one
//     run (ms, median of 3; the goal: at most 1 s). lt_interp: the same step uncompiled.
//   GFLOP/s: model FLOPs (3x the forward matmuls) per second, for the report's MFU;
//   peak_rss_*: how much the resident set grows over setup while training (MB; run each in its
//     own process, as compare.py does), plus tensor_peak_MB: the peak of live tensor buffers
//     in steady-state steps (lt::memory), the figure donation lowers.
//   main_job_vs_mlp_step (lt_mlir): the main job's loop (lt-train's default: Fashion-MNIST,
//     Flatten + MLP 784-256-10, Adam(1e-3), shuffled batches of 64 gathered into device
//     buffers each step, the loss read after each step, the test set's accuracy after each epoch)
//     against mlp_step and mlp_adam_step in one process, interleaved in blocks of 94 steps so that
//     the machine's phase is the same for all three; one warm-up epoch, then 3 timed epochs. value
//     = the main job's steps/s over mlp_step's (the goal: at least 0.85); vs_adam = the
//     same over mlp_adam_step's (same optimizer: what the program adds, data, loss reads and
//     evaluation); main_steps_s, mlp_steps_s, mlp_adam_steps_s: the rates; data_share, eval_share:
//     the main job's time in the loader (the batch's gather) and in the evaluation, as fractions of
//     its epoch; adam_ceiling = mlp_adam_step's steps/s over mlp_step's (what value would be if the
//     main job did nothing but its Adam step: no gather, no loss read, no evaluation);
//     without_data = value with the gather's time taken out (were it hidden). Skipped when the
//     data set is not installed.
// Compiles happen in warm-up steps, outside the timed loop.
// Run: ./build/bench/bench_train
#include <algorithm>
#include <chrono>
#include <vector>

#include "bench_util.h"
#include "charlm.h"
#include "models.h"

namespace {

using ltb::Sys;

// Model FLOPs per training step, for MFU: three times the forward pass's matmul FLOPs (forward,
// input gradient, weight gradient: the usual convention; elementwise work not counted).
constexpr double kMlpFlops = 3.0 * 2 * 64 * (784.0 * 256 + 256.0 * 10);
// Tokens 128 x 16 = 2048, d 256, ff 1024, 4 heads of 64: the q/k/v and output projections, the
// two feed-forward matmuls, and per head q k^T and attention times v over 128 positions.
constexpr double kTransformerFlops =
    3.0 * 2 * 2048 * (256.0 * 768 + 256.0 * 256 + 2 * 256.0 * 1024 + 2 * 128.0 * 256);

// Per sequence position (64 x 28 of them): layer 0's input projection 28 -> 512 gates, its
// recurrent 128 -> 512, layer 1's input and recurrent 128 -> 512; plus the head on 64 rows.
constexpr double kLstmFlops =
    3.0 * 2 * (64 * 28 * (28.0 * 512 + 3 * 128.0 * 512) + 64 * 128.0 * 10);

// 2048 tokens; per layer the self- and memory-attention projections (4 each of 64 x 64), the
// feed-forward pair (64 x 256), and q k^T and attention times v over 64 positions in both
// attentions; then the head 64 -> 114.
constexpr double kCharLmFlops =
    3.0 * 2 * 2048 * (2 * (8 * 64.0 * 64 + 2 * 64.0 * 256 + 2 * 2 * 64.0 * 64) + 64.0 * 114);

// Per image (w = models::kResnetWidth): the stem (1 -> w at 28x28), the 28x28 block (two w -> w),
// the 14x14 block (w -> 2w, 2w -> 2w, the 1x1 shortcut w -> 2w) and the 7x7 block (2w -> 4w,
// 4w -> 4w, 1x1 2w -> 4w), all 3x3 but the shortcuts; then the head 4w -> 10; batch 64.
constexpr double kW = models::kResnetWidth;
constexpr double kResnetFlops =
    3.0 * 2 * 64 *
    (784.0 * 9 * kW + 2 * 784.0 * 9 * kW * kW +
     196.0 * (9 * kW * 2 * kW + 9 * 4 * kW * kW + 2 * kW * kW) +
     49.0 * (9 * 2 * kW * 4 * kW + 9 * 16 * kW * kW + 8 * kW * kW) + 4 * kW * 10);

// kAdam: Adam(1e-3), lt-train's default, in place of SGD(0.01).
template <bool kAdam>
struct MlpWith {
  static constexpr double kFlops = kMlpFlops;
  lt::nn::Sequential m{lt::nn::Linear(784, 256), lt::nn::ReLU(), lt::nn::Linear(256, 10)};
  std::unique_ptr<lt::optim::Optimizer> opt;
  lt::Tensor x, y;
  explicit MlpWith(lt::Device d) {
    m->to(d);
    if constexpr (kAdam)
      opt = std::make_unique<lt::optim::Adam>(m->parameters(), lt::optim::AdamOptions(1e-3));
    else
      opt = std::make_unique<lt::optim::SGD>(m->parameters(), lt::optim::SGDOptions(0.01));
    x = lt::randn({64, 784}).to(d);
    y = lt::randint(0, 10, {64}).to(d);
    lt::mark_step();
  }
  void step() {
    opt->zero_grad();
    lt::cross_entropy(m->forward(x), y).backward();
    opt->step();  // on lazy: ends with mark_step
  }
};

using Mlp = MlpWith<false>;
using MlpAdam = MlpWith<true>;

struct Transformer {
  static constexpr double kFlops = kTransformerFlops;
  lt::nn::TransformerEncoderLayer layer{
      lt::nn::TransformerEncoderLayerOptions(256, 4).dim_feedforward(1024)};
  std::unique_ptr<lt::optim::Adam> opt;
  lt::Tensor x;
  explicit Transformer(lt::Device d) {
    layer->to(d);
    layer->train();
    opt = std::make_unique<lt::optim::Adam>(layer->parameters(), lt::optim::AdamOptions(1e-3));
    x = lt::randn({128, 16, 256}).to(d);
    lt::mark_step();
  }
  void step() {
    opt->zero_grad();
    lt::Tensor out = layer->forward(x);
    (out * out).mean().backward();
    opt->step();
  }
};

// A fresh transformer step graph per iteration: the batch grows by one each time, so every
// product's rows and every cluster's shapes are new to the process (no cache hit, no reused
// cluster, new matmul kernels and their timings), as for a program's first step.
void compile_transformer_step(benchmark::State& st, Sys s) {
  const lt::Device d = ltb::enter(s);
  lt::manual_seed(0);
  Transformer model(d);
  model.step();  // the model's first graphs (Adam's state is created): not this figure
  static int64_t batch = 3;
  std::vector<double> ms;
  for (auto _ : st) {
    st.PauseTiming();
    model.x = lt::randn({128, batch++, 256}).to(d);
    lt::mark_step();
    lt::clear_compile_cache();
    st.ResumeTiming();
    auto t0 = std::chrono::steady_clock::now();
    model.step();  // its optimizer step ends with mark_step: compile + run
    lt::wait_device_ops();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  ltb::median_ms_value(st, std::move(ms));
}

struct Lstm {
  static constexpr double kFlops = kLstmFlops;
  lt::nn::LSTM lstm{lt::nn::LSTMOptions(28, 128).num_layers(2).batch_first(true)};
  lt::nn::Linear head{128, 10};
  std::unique_ptr<lt::optim::Adam> opt;
  lt::Tensor x, y;
  explicit Lstm(lt::Device d) {
    lstm->to(d);
    head->to(d);
    std::vector<lt::Tensor> params = lstm->parameters();
    for (const lt::Tensor& p : head->parameters()) params.push_back(p);
    opt = std::make_unique<lt::optim::Adam>(params, lt::optim::AdamOptions(1e-3));
    x = lt::randn({64, 28, 28}).to(d);
    y = lt::randint(0, 10, {64}).to(d);
    lt::mark_step();
  }
  void step() {
    opt->zero_grad();
    auto [out, state] = lstm->forward(x);
    lt::cross_entropy(head->forward(out.select(1, 27)), y).backward();
    opt->step();
  }
};

struct CharLm {
  static constexpr double kFlops = kCharLmFlops;
  static constexpr int64_t kVocab = 114, kT = 64, kB = 32;
  charlm::CharLm model{kVocab, kT, 64, 4, 2};  // lt-train's model
  std::unique_ptr<lt::optim::Adam> opt;
  lt::Tensor x, y;
  explicit CharLm(lt::Device d) {
    model->to(d);
    opt = std::make_unique<lt::optim::Adam>(model->parameters(), lt::optim::AdamOptions(3e-3));
    x = lt::randint(0, kVocab, {kB, kT}).to(d);
    y = lt::randint(0, kVocab, {kB * kT}).to(d);
    lt::mark_step();
  }
  void step() {
    opt->zero_grad();
    lt::cross_entropy(model->forward(x).reshape({kB * kT, kVocab}), y).backward();
    opt->step();
  }
};

struct Resnet {
  static constexpr double kFlops = kResnetFlops;
  lt::nn::Sequential model = models::resnet();  // lt-train's model
  std::unique_ptr<lt::optim::Adam> opt;
  lt::Tensor x, y;
  explicit Resnet(lt::Device d) {
    model->to(d);
    opt = std::make_unique<lt::optim::Adam>(model->parameters(), lt::optim::AdamOptions(1e-3));
    x = lt::randn({64, 1, 28, 28}).to(d);
    y = lt::randint(0, 10, {64}).to(d);
    lt::mark_step();
  }
  void step() {
    opt->zero_grad();
    lt::cross_entropy(model->forward(x), y).backward();
    opt->step();
  }
};

// main_job_vs_mlp_step (above). The epoch's time is its steps' (data included) plus its
// evaluation; each of the other two runs as many steps, each block right after the main job's.
void main_job_vs_mlp_step(benchmark::State& st, Sys s) {
  const lt::Device d = ltb::enter(s);
  lt::data::Dataset train, test;
  try {
    train = lt::data::fashion_mnist("train");
    test = lt::data::fashion_mnist("test");
  } catch (const lt::Error& e) {
    st.SkipWithError(e.what());
    return;
  }
  lt::manual_seed(0);
  lt::nn::Sequential net = models::mlp();
  net->to(d);
  lt::optim::Adam adam(net->parameters(), lt::optim::AdamOptions(1e-3));
  lt::data::DataLoader loader(train, 64, true, 0);
  loader.set_device(d);  // as lt-train
  Mlp sgd_step(d);
  MlpAdam adam_step(d);
  using Clock = std::chrono::steady_clock;
  auto secs = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  constexpr int kBlock = 94, kEpochs = 3;
  std::vector<double> ratio, vs_adam, main_rate, sgd_rate, adam_rate, data_share, eval_share,
      adam_ceiling, without_data;
  for (auto _ : st) {
    for (int epoch = 0; epoch <= kEpochs; ++epoch) {  // epoch 0: warm-up (compiles)
      double t_main = 0, t_sgd = 0, t_adam = 0, t_data = 0;
      int64_t steps = 0;
      auto it = loader.begin();
      while (it != loader.end()) {
        Clock::time_point t0 = Clock::now();
        int n = 0;
        for (; n < kBlock && it != loader.end(); ++n) {
          const Clock::time_point td = Clock::now();
          const lt::data::Batch b = *it;
          ++it;
          t_data += secs(td);
          adam.zero_grad();
          lt::Tensor loss = lt::cross_entropy(net->forward(b.data.to(d)), b.target.to(d));
          loss.backward();
          adam.step();
          benchmark::DoNotOptimize(loss.item<double>());
        }
        t_main += secs(t0);
        steps += n;
        t0 = Clock::now();
        for (int i = 0; i < n; ++i) sgd_step.step();
        lt::wait_device_ops();
        t_sgd += secs(t0);
        t0 = Clock::now();
        for (int i = 0; i < n; ++i) adam_step.step();
        lt::wait_device_ops();
        t_adam += secs(t0);
      }
      Clock::time_point t0 = Clock::now();
      benchmark::DoNotOptimize(models::accuracy(
          *net, [&](const lt::Tensor& x) { return net->forward(x); }, test, d));
      const double t_eval = secs(t0);
      t_main += t_eval;
      if (epoch == 0) {
        lt::wait_for_compiles();
        continue;
      }
      const double n = static_cast<double>(steps);
      main_rate.push_back(n / t_main);
      sgd_rate.push_back(n / t_sgd);
      adam_rate.push_back(n / t_adam);
      ratio.push_back(t_sgd / t_main);
      vs_adam.push_back(t_adam / t_main);
      data_share.push_back(t_data / t_main);
      eval_share.push_back(t_eval / t_main);
      adam_ceiling.push_back(t_sgd / t_adam);
      without_data.push_back(t_sgd / (t_main - t_data));
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  st.counters["value"] = median(ratio);
  st.counters["vs_adam"] = median(vs_adam);
  st.counters["main_steps_s"] = median(main_rate);
  st.counters["mlp_steps_s"] = median(sgd_rate);
  st.counters["mlp_adam_steps_s"] = median(adam_rate);
  st.counters["data_share"] = median(data_share);
  st.counters["eval_share"] = median(eval_share);
  st.counters["adam_ceiling"] = median(adam_ceiling);
  st.counters["without_data"] = median(without_data);
  st.SetLabel("x mlp_step");
}

template <typename Model>
void train_step(benchmark::State& st, Sys s, int warmup) {
  const lt::Device d = ltb::enter(s);
  lt::manual_seed(0);
  Model model(d);
  for (int i = 0; i < warmup; ++i) model.step();
  for (auto _ : st) model.step();
  lt::wait_device_ops();
  ltb::rate_value(st, "steps/s");
  ltb::set_gflops(st, Model::kFlops);
}

template <typename Model>
void peak_rss(benchmark::State& st, Sys s, int warmup, int steps) {
  const lt::Device d = ltb::enter(s);
  lt::manual_seed(0);
  for (auto _ : st) {
    Model model(d);
    const double base = ltb::proc_status_mb("VmRSS");
    ltb::reset_peak_rss();
    for (int i = 0; i < warmup; ++i) model.step();
    lt::memory::reset_peak();
    for (int i = 0; i < steps; ++i) model.step();
    lt::wait_device_ops();
    st.counters["value"] = ltb::proc_status_mb("VmHWM") - base;
    st.counters["peak_rss_MB"] = ltb::proc_status_mb("VmHWM");
    st.counters["tensor_peak_MB"] = static_cast<double>(lt::memory::peak_bytes()) / (1 << 20);
  }
  st.SetLabel("MB");
}

const bool registered = [] {
  ltb::add(
      "mlp_step", ltb::kAll, [](benchmark::State& st, Sys s) { train_step<Mlp>(st, s, 3); },
      [](auto* b) { b->Unit(benchmark::kMillisecond); });
  ltb::add(
      "mlp_adam_step", ltb::kAll,
      [](benchmark::State& st, Sys s) { train_step<MlpAdam>(st, s, 3); },
      [](auto* b) { b->Unit(benchmark::kMillisecond); });
  ltb::add(
      "transformer_step", ltb::kAll,
      [](benchmark::State& st, Sys s) { train_step<Transformer>(st, s, 2); },
      [](auto* b) { b->Unit(benchmark::kMillisecond)->MinTime(2.0); });
  ltb::add("compile_transformer_step", ltb::kLazy, compile_transformer_step,
           [](auto* b) { b->Iterations(3)->Unit(benchmark::kMillisecond); });
  ltb::add(
      "lstm_step", ltb::kAll, [](benchmark::State& st, Sys s) { train_step<Lstm>(st, s, 2); },
      [](auto* b) { b->Unit(benchmark::kMillisecond)->MinTime(2.0); });
  ltb::add(
      "resnet_step", ltb::kAll, [](benchmark::State& st, Sys s) { train_step<Resnet>(st, s, 2); },
      [](auto* b) { b->Unit(benchmark::kMillisecond)->MinTime(2.0); });
  ltb::add(
      "charlm_step", ltb::kAll, [](benchmark::State& st, Sys s) { train_step<CharLm>(st, s, 2); },
      [](auto* b) { b->Unit(benchmark::kMillisecond)->MinTime(2.0); });
  ltb::add("main_job_vs_mlp_step", {Sys::Mlir}, main_job_vs_mlp_step,
           [](auto* b) { b->Iterations(1)->Unit(benchmark::kMillisecond); });
  ltb::add(
      "peak_rss_mlp_step", ltb::kAll,
      [](benchmark::State& st, Sys s) { peak_rss<Mlp>(st, s, 3, 20); },
      [](auto* b) { b->Iterations(1)->Unit(benchmark::kMillisecond); });
  ltb::add(
      "peak_rss_transformer_step", ltb::kAll,
      [](benchmark::State& st, Sys s) { peak_rss<Transformer>(st, s, 2, 5); },
      [](auto* b) { b->Iterations(1)->Unit(benchmark::kMillisecond); });
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
