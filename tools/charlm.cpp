// lt-train --model charlm (tools/charlm.h).
#include "charlm.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

namespace charlm {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

Corpus read_corpus(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw lt::Error("charlm: no text directory \"" + dir +
                    "\" (install Debian's `fortunes` package, or give --data-dir)");
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const fs::path& p = e.path();
    if (e.is_symlink() || !e.is_regular_file() || p.extension() == ".dat" || p.extension() == ".u8")
      continue;
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  std::vector<unsigned char> bytes;
  for (const fs::path& p : files) {
    std::ifstream in(p, std::ios::binary);
    bytes.insert(bytes.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (bytes.size() < 4096)
    throw lt::Error("charlm: \"" + dir + "\" holds " + std::to_string(bytes.size()) +
                    " bytes of text; at least 4096 are needed");
  Corpus c;
  c.files = static_cast<int64_t>(files.size());
  std::array<int64_t, 256> count{};
  for (unsigned char b : bytes) ++count[b];
  std::array<int64_t, 256> id{};
  for (int b = 0; b < 256; ++b) {
    if (count[b] == 0) continue;
    id[b] = static_cast<int64_t>(c.vocab.size());
    c.vocab.push_back(static_cast<unsigned char>(b));
    const double p = static_cast<double>(count[b]) / static_cast<double>(bytes.size());
    c.unigram_nats -= p * std::log(p);
  }
  c.tokens.reserve(bytes.size());
  for (unsigned char b : bytes) c.tokens.push_back(id[b]);
  return c;
}

CharLmImpl::CharLmImpl(int64_t vocab, int64_t seq_len, int64_t d_model, int64_t nhead,
                       int64_t layers) {
  using namespace lt::nn;
  embed = register_module("embed", Embedding(vocab, d_model));
  pos = register_parameter("pos", lt::randn({1, seq_len, d_model}) * 0.02);
  decoder = register_module(
      "decoder",
      TransformerDecoder(TransformerDecoderOptions(TransformerDecoderLayerOptions(d_model, nhead)
                                                       .dim_feedforward(4 * d_model)
                                                       .dropout(0.1)
                                                       .norm_first(true)
                                                       .batch_first(true),
                                                   layers)
                             .norm(AnyModule(LayerNorm(LayerNormOptions({d_model}))))));
  head = register_module("head", Linear(d_model, vocab));
  // Not a buffer: it is rebuilt, not saved; moved with the module by to() below.
  mask = TransformerImpl::generate_square_subsequent_mask(seq_len);
}

lt::Tensor CharLmImpl::forward(const lt::Tensor& tokens) {
  const int64_t T = tokens.size(1);
  if (mask.device() != tokens.device()) mask = mask.to(tokens.device());
  lt::Tensor x = embed->forward(tokens) + pos.narrow(1, 0, T);
  lt::Tensor m = mask.narrow(0, 0, T).narrow(1, 0, T);
  return head->forward(decoder->forward(x, x, m, m));
}

namespace {

// Batches of `b` windows of t + 1 tokens starting at `starts[first..]`: inputs and next tokens.
std::pair<lt::Tensor, lt::Tensor> batch(const std::vector<int64_t>& tokens,
                                        const std::vector<int64_t>& starts, size_t first, int64_t b,
                                        int64_t t) {
  std::vector<int64_t> x(static_cast<size_t>(b * t)), y(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < t; ++j) {
      const size_t s = static_cast<size_t>(starts[first + static_cast<size_t>(i)] + j);
      x[static_cast<size_t>(i * t + j)] = tokens[s];
      y[static_cast<size_t>(i * t + j)] = tokens[s + 1];
    }
  return {lt::tensor(x, {b, t}), lt::tensor(y, {b * t})};
}

// The mean next-token loss over `starts` (whole batches), in eval mode without gradients.
double mean_loss(CharLm& m, const std::vector<int64_t>& tokens, const std::vector<int64_t>& starts,
                 int64_t b, int64_t t, lt::Device dev) {
  lt::NoGradGuard g;
  m->eval();
  double sum = 0;
  int64_t n = 0;
  for (size_t first = 0; first + static_cast<size_t>(b) <= starts.size();
       first += static_cast<size_t>(b), ++n) {
    auto [x, y] = batch(tokens, starts, first, b, t);
    lt::Tensor logits = m->forward(x.to(dev));
    sum += lt::nn::functional::cross_entropy(logits.reshape({b * t, -1}), y.to(dev)).item<double>();
  }
  m->train();
  return n > 0 ? sum / static_cast<double>(n) : std::nan("");
}

// `n` bytes drawn from the model at temperature 0.8 after `prompt`, each from the logits of the
// last position of a full window (so every draw runs the one compiled [1, T] graph).
std::string sample(CharLm& m, const Corpus& c, const std::string& prompt, int n, int64_t t,
                   lt::Device dev, uint64_t seed) {
  lt::NoGradGuard g;
  m->eval();
  std::array<int64_t, 256> id{};
  id.fill(-1);
  for (size_t i = 0; i < c.vocab.size(); ++i) id[c.vocab[i]] = static_cast<int64_t>(i);
  const int64_t pad = id['\n'] >= 0 ? id['\n'] : 0;
  std::vector<int64_t> ctx(static_cast<size_t>(t), pad);
  for (unsigned char ch : prompt)
    if (id[ch] >= 0) {
      ctx.erase(ctx.begin());
      ctx.push_back(id[ch]);
    }
  std::mt19937_64 rng(seed);
  std::string out = prompt;
  for (int i = 0; i < n; ++i) {
    lt::Tensor logits = m->forward(lt::tensor(ctx, {1, t}).to(dev)).select(1, t - 1).select(0, 0);
    std::vector<double> p = lt::softmax(logits / 0.8, 0).cpu().to(lt::kFloat64).to_vector<double>();
    const int64_t next = std::discrete_distribution<int64_t>(p.begin(), p.end())(rng);
    out.push_back(static_cast<char>(c.vocab[static_cast<size_t>(next)]));
    ctx.erase(ctx.begin());
    ctx.push_back(next);
  }
  m->train();
  return out;
}

}  // namespace

int train(const Config& c, std::vector<double>* losses) {
  const Corpus corpus = read_corpus(c.data_dir);
  const int64_t n = static_cast<int64_t>(corpus.tokens.size()), T = c.seq_len, B = c.batch_size;
  const int64_t V = static_cast<int64_t>(corpus.vocab.size());
  // The last 5% is held out; windows of T + 1 tokens start every T tokens.
  const int64_t split = n - n / 20;
  std::vector<int64_t> train_starts, val_starts;
  for (int64_t s = 0; s + T + 1 <= split; s += T) train_starts.push_back(s);
  for (int64_t s = split; s + T + 1 <= n; s += T) val_starts.push_back(s);
  if (static_cast<int64_t>(train_starts.size()) < B)
    throw lt::Error("charlm: " + std::to_string(train_starts.size()) +
                    " training windows, fewer than --batch-size " + std::to_string(B));
  val_starts.resize(std::min<size_t>(val_starts.size(), static_cast<size_t>(8 * B)));
  std::printf(
      "charlm: %lld bytes of text from %lld files in %s, vocabulary %lld, unigram entropy %.4f "
      "nats/char (%.3f bits)\n",
      static_cast<long long>(n), static_cast<long long>(corpus.files), c.data_dir.c_str(),
      static_cast<long long>(V), corpus.unigram_nats, corpus.unigram_nats / std::log(2.0));

  lt::Device dev(c.device);
  lt::manual_seed(static_cast<uint64_t>(c.seed));
  CharLm m(V, T, c.d_model, c.nhead, c.layers);
  m->to(dev);
  std::unique_ptr<lt::optim::Optimizer> opt;
  if (c.optim == "sgd")
    opt = std::make_unique<lt::optim::SGD>(m->parameters(),
                                           lt::optim::SGDOptions(c.lr).momentum(0.9));
  else
    opt = std::make_unique<lt::optim::Adam>(m->parameters(), lt::optim::AdamOptions(c.lr));
  const int64_t per_epoch = static_cast<int64_t>(train_starts.size()) / B;
  const int64_t steps = c.max_steps > 0 ? std::min(c.max_steps, per_epoch) : per_epoch;
  std::printf(
      "charlm on %s: d_model %lld, %lld heads, %lld decoder layers, sequence %lld, batch %lld, "
      "%s lr %g, %d threads, %lld steps/epoch\n",
      c.device.c_str(), static_cast<long long>(c.d_model), static_cast<long long>(c.nhead),
      static_cast<long long>(c.layers), static_cast<long long>(T), static_cast<long long>(B),
      c.optim.c_str(), c.lr, lt::get_num_threads(), static_cast<long long>(steps));

  std::mt19937_64 rng(static_cast<uint64_t>(c.seed));
  int64_t below_at = -1, total = 0;
  double window_sum = 0;  // the mean of the last 20 losses decides "below the unigram entropy"
  const auto start = Clock::now();
  for (int64_t epoch = 1; epoch <= c.epochs; ++epoch) {
    std::shuffle(train_starts.begin(), train_starts.end(), rng);
    const auto t0 = Clock::now();
    const double compile0 = lt::metrics::timer_ms("CompileTime");
    for (int64_t step = 0; step < steps; ++step, ++total) {
      auto [x, y] = batch(corpus.tokens, train_starts, static_cast<size_t>(step * B), B, T);
      opt->zero_grad();
      lt::Tensor loss =
          lt::nn::functional::cross_entropy(m->forward(x.to(dev)).reshape({B * T, V}), y.to(dev));
      loss.backward();
      opt->step();
      losses->push_back(loss.item<double>());
      window_sum += losses->back();
      if (losses->size() > 20) window_sum -= (*losses)[losses->size() - 21];
      if (below_at < 0 && losses->size() >= 20 && window_sum / 20 < corpus.unigram_nats)
        below_at = total + 1;
      if (!c.quiet && ((step + 1) % 100 == 0 || step + 1 == steps))
        std::printf("epoch %lld step %lld/%lld  loss %.4f  %.1f steps/s\n",
                    static_cast<long long>(epoch), static_cast<long long>(step + 1),
                    static_cast<long long>(steps), losses->back(),
                    static_cast<double>(step + 1) / since(t0));
    }
    const double secs = since(t0);
    const double val = mean_loss(m, corpus.tokens, val_starts, B, T, dev);
    double last = 0;
    const size_t k = std::min<size_t>(100, losses->size());
    for (size_t i = losses->size() - k; i < losses->size(); ++i) last += (*losses)[i];
    std::printf(
        "epoch %lld: training loss %.4f (mean of the last %zu steps), held-out loss %.4f "
        "nats/char (%.3f bits), unigram entropy %.4f  (%.1f s, %.1f steps/s, compile %.2f s)\n",
        static_cast<long long>(epoch), last / static_cast<double>(k), k, val, val / std::log(2.0),
        corpus.unigram_nats, secs, static_cast<double>(steps) / secs,
        (lt::metrics::timer_ms("CompileTime") - compile0) / 1e3);
  }
  if (below_at > 0)
    std::printf(
        "the training loss (mean of 20 steps) fell below the unigram entropy at step %lld\n",
        static_cast<long long>(below_at));
  else
    std::printf("the training loss did not fall below the unigram entropy\n");
  std::printf("sample: %s\n", sample(m, corpus, "Q:", 160, T, dev, 1).c_str());
  std::printf("done: %lld steps in %.1f s; metrics: %lld compiles, %lld cache hits\n",
              static_cast<long long>(total), since(start),
              static_cast<long long>(lt::metrics::counter("UncachedCompile")),
              static_cast<long long>(lt::metrics::counter("CachedCompile")));
  return 0;
}

}  // namespace charlm
