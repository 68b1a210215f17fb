// RNN, LSTM, GRU and their cells (lt/nn/modules/rnn.h). Each layer and direction projects the
// whole sequence through weight_ih in one matmul, then steps through time with the recurrent
// matmul and the gates: the time loop is C++, so a lazy graph holds it unrolled.
#include <cmath>
#include <ostream>

#include "core/check.h"
#include "core/shape.h"
#include "lt/nn/init.h"
#include "lt/nn/modules.h"

namespace lt {
namespace {

// The gates of one step, given the input's projection gx = input W_ih^T + b_ih.
Tensor rnn_step(const Tensor& gx, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh,
                bool relu) {
  Tensor pre = gx + linear(h, w_hh, b_hh);
  return relu ? lt::relu(pre) : lt::tanh(pre);
}

std::tuple<Tensor, Tensor> lstm_step(const Tensor& gx, const Tensor& h, const Tensor& c,
                                     const Tensor& w_hh, const Tensor& b_hh, const Tensor& w_hr) {
  std::vector<Tensor> g = (gx + linear(h, w_hh, b_hh)).chunk(4, -1);  // i, f, g, o
  Tensor c2 = sigmoid(g[1]) * c + sigmoid(g[0]) * lt::tanh(g[2]);
  Tensor h2 = sigmoid(g[3]) * lt::tanh(c2);
  if (w_hr.defined()) h2 = linear(h2, w_hr);
  return {h2, c2};
}

Tensor gru_step(const Tensor& gx, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  std::vector<Tensor> a = gx.chunk(3, -1), b = linear(h, w_hh, b_hh).chunk(3, -1);  // r, z, n
  Tensor r = sigmoid(a[0] + b[0]), z = sigmoid(a[1] + b[1]);
  Tensor n = lt::tanh(a[2] + r * b[2]);
  return n + z * (h - n);  // (1 - z) * n + z * h
}

// The functional cells' checks: input [N, in] or [in], state [N, H] or [H], the weights'
// shapes for `gates` gates; errors name the cell and the shapes.
void check_cell(const char* op, const Tensor& input, const Tensor& h, const Tensor& w_ih,
                const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, int64_t gates) {
  LT_CHECK(input.defined() && h.defined() && w_ih.defined() && w_hh.defined(), op,
           ": input, hx, w_ih and w_hh must be defined");
  LT_CHECK(w_hh.dim() == 2 && w_ih.dim() == 2, op, ": w_ih ", shape_str(w_ih.sizes()), " and w_hh ",
           shape_str(w_hh.sizes()), " must be 2-d");
  const int64_t H = w_hh.size(1), G = gates * H;
  LT_CHECK(w_hh.size(0) == G && w_ih.size(0) == G, op, ": w_ih ", shape_str(w_ih.sizes()),
           " and w_hh ", shape_str(w_hh.sizes()), " must have ", gates, " x hidden size (", G,
           ") rows");
  LT_CHECK((input.dim() == 1 || input.dim() == 2) && input.size(-1) == w_ih.size(1), op, ": input ",
           shape_str(input.sizes()), " must be [N, ", w_ih.size(1), "] or [", w_ih.size(1),
           "] (w_ih ", shape_str(w_ih.sizes()), ")");
  std::vector<int64_t> want = {H};
  if (input.dim() == 2) want.insert(want.begin(), input.size(0));
  LT_CHECK(h.sizes().vec() == want, op, ": hx ", shape_str(h.sizes()), " must be ", shape_str(want),
           " for input ", shape_str(input.sizes()));
  for (const Tensor* b : {&b_ih, &b_hh})
    LT_CHECK(!b->defined() || (b->dim() == 1 && b->size(0) == G), op, ": bias ",
             shape_str(b->sizes()), " must be [", G, "]");
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx,
                                     const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                     const Tensor& b_hh) {
  LT_CHECK(hx.size() == 2, "lstm_cell: hx must be {h, c}, got ", hx.size(), " tensors");
  check_cell("lstm_cell", input, hx[0], w_ih, w_hh, b_ih, b_hh, 4);
  LT_CHECK(hx[1].defined() && hx[1].sizes() == hx[0].sizes(), "lstm_cell: c ",
           shape_str(hx[1].sizes()), " must have h's shape ", shape_str(hx[0].sizes()));
  return lstm_step(linear(input, w_ih, b_ih), hx[0], hx[1], w_hh, b_hh, {});
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  check_cell("gru_cell", input, hx, w_ih, w_hh, b_ih, b_hh, 3);
  return gru_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh);
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  check_cell("rnn_tanh_cell", input, hx, w_ih, w_hh, b_ih, b_hh, 1);
  return rnn_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh, false);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  check_cell("rnn_relu_cell", input, hx, w_ih, w_hh, b_ih, b_hh, 1);
  return rnn_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh, true);
}

}  // namespace lt

namespace lt::nn {
namespace {

int64_t gates_of(RNNImplBase::Mode m) {
  return m == RNNImplBase::Mode::Lstm ? 4 : m == RNNImplBase::Mode::Gru ? 3 : 1;
}

// Every parameter of `m` from U(-1/sqrt(hidden), 1/sqrt(hidden)), in registration order.
void reset_uniform(Module& m, int64_t hidden) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
  for (Tensor& p : m.parameters()) init::uniform_(p, -bound, bound);
}

}  // namespace

RNNImplBase::RNNImplBase(const Config& c) : config_(c) {
  const char* nm = c.mode == Mode::Lstm ? "LSTM" : c.mode == Mode::Gru ? "GRU" : "RNN";
  LT_CHECK(c.input_size > 0 && c.hidden_size > 0 && c.num_layers > 0, nm, ": input_size ",
           c.input_size, ", hidden_size ", c.hidden_size, " and num_layers ", c.num_layers,
           " must be positive");
  LT_CHECK(c.dropout >= 0 && c.dropout <= 1, nm, ": dropout ", c.dropout, " must be in [0, 1]");
  LT_CHECK(c.proj_size >= 0 && c.proj_size < c.hidden_size, nm, ": proj_size ", c.proj_size,
           " must be in [0, hidden_size ", c.hidden_size, ")");
  const int64_t D = c.bidirectional ? 2 : 1, G = gates_of(c.mode) * c.hidden_size;
  const int64_t h_out = c.proj_size > 0 ? c.proj_size : c.hidden_size;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    for (int64_t d = 0; d < D; ++d) {
      const std::string s = std::to_string(l) + (d == 1 ? "_reverse" : "");
      const int64_t in = l == 0 ? c.input_size : h_out * D;
      std::vector<Tensor> w(5);
      w[0] = register_parameter("weight_ih_l" + s, empty({G, in}));
      w[1] = register_parameter("weight_hh_l" + s, empty({G, h_out}));
      if (c.bias) {
        w[2] = register_parameter("bias_ih_l" + s, empty({G}));
        w[3] = register_parameter("bias_hh_l" + s, empty({G}));
      }
      if (c.proj_size > 0)
        w[4] = register_parameter("weight_hr_l" + s, empty({c.proj_size, c.hidden_size}));
      weights_.push_back(std::move(w));
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() { reset_uniform(*this, config_.hidden_size); }

std::vector<Tensor> RNNImplBase::all_weights() const {
  std::vector<Tensor> out;
  for (const std::vector<Tensor>& w : weights_)
    for (const Tensor& t : w)
      if (t.defined()) out.push_back(t);
  return out;
}

void RNNImplBase::pretty_print(std::ostream& os) const {
  const Config& c = config_;
  os << name() << "(input_size=" << c.input_size << ", hidden_size=" << c.hidden_size
     << ", num_layers=" << c.num_layers << ", bias=" << (c.bias ? "true" : "false")
     << ", batch_first=" << (c.batch_first ? "true" : "false") << ", dropout=" << c.dropout
     << ", bidirectional=" << (c.bidirectional ? "true" : "false");
  if (c.proj_size > 0) os << ", proj_size=" << c.proj_size;
  os << ")";
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& input, Tensor hx, Tensor cx) {
  const Config& c = config_;
  const std::string nm = name();
  LT_CHECK(input.defined() && (input.dim() == 2 || input.dim() == 3), nm,
           ": expected a 3-d input (or 2-d unbatched), got ",
           input.defined() ? shape_str(input.sizes()) : std::string("an undefined tensor"));
  const bool batched = input.dim() == 3;
  Tensor x = !batched ? input.unsqueeze(1) : c.batch_first ? input.transpose(0, 1) : input;
  LT_CHECK(x.size(2) == c.input_size, nm, ": input ", shape_str(input.sizes()), " has ", x.size(2),
           " features, expected input_size ", c.input_size);
  LT_CHECK(x.size(0) > 0, nm, ": input ", shape_str(input.sizes()), " has an empty sequence");
  const bool lstm = c.mode == Mode::Lstm;
  const int64_t L = x.size(0), N = x.size(1), D = c.bidirectional ? 2 : 1;
  const int64_t h_out = c.proj_size > 0 ? c.proj_size : c.hidden_size;
  auto state = [&](const Tensor& s, int64_t size, const char* what) {
    if (!s.defined()) return zeros({c.num_layers * D, N, size}, x.options());
    std::vector<int64_t> want = {c.num_layers * D, size};
    if (batched) want.insert(want.begin() + 1, N);
    LT_CHECK(s.sizes().vec() == want, nm, ": ", what, " ", shape_str(s.sizes()), " must be ",
             shape_str(want), " for input ", shape_str(input.sizes()));
    return batched ? s : s.unsqueeze(1);
  };
  hx = state(hx, h_out, "hx");
  if (lstm) cx = state(cx, c.hidden_size, "cx");
  std::vector<Tensor> h_n, c_n;
  Tensor layer_in = x;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    std::vector<Tensor> outs_by_dir;
    for (int64_t d = 0; d < D; ++d) {
      const std::vector<Tensor>& w = weights_[static_cast<size_t>(l * D + d)];
      const Tensor gx = linear(layer_in, w[0], w[2]);  // every step's input projection
      Tensor h = hx.select(0, l * D + d), cs = lstm ? cx.select(0, l * D + d) : Tensor();
      std::vector<Tensor> outs(static_cast<size_t>(L));
      for (int64_t s = 0; s < L; ++s) {
        const int64_t t = d == 0 ? s : L - 1 - s;
        const Tensor g = gx.select(0, t);
        if (lstm)
          std::tie(h, cs) = lstm_step(g, h, cs, w[1], w[3], w[4]);
        else if (c.mode == Mode::Gru)
          h = gru_step(g, h, w[1], w[3]);
        else
          h = rnn_step(g, h, w[1], w[3], c.mode == Mode::RnnRelu);
        outs[static_cast<size_t>(t)] = h;
      }
      outs_by_dir.push_back(stack(outs, 0));
      h_n.push_back(h);
      if (lstm) c_n.push_back(cs);
    }
    layer_in = D == 1 ? outs_by_dir[0] : cat(outs_by_dir, 2);
    if (l + 1 < c.num_layers && c.dropout > 0 && is_training())
      layer_in = lt::dropout(layer_in, c.dropout, true);
  }
  Tensor out = layer_in, hn = stack(h_n, 0), cn = lstm ? stack(c_n, 0) : Tensor();
  if (!batched) {
    out = out.squeeze(1);
    hn = hn.squeeze(1);
    if (lstm) cn = cn.squeeze(1);
  } else if (c.batch_first) {
    out = out.transpose(0, 1);
  }
  return {out, hn, cn};
}

namespace {
Nonlinearity rnn_nonlinearity(Nonlinearity n, const char* module) {
  LT_CHECK(n == Nonlinearity::Tanh || n == Nonlinearity::ReLU, module,
           ": nonlinearity must be torch::kTanh or torch::kReLU");
  return n;
}
}  // namespace

RNNImpl::RNNImpl(const RNNOptions& o)
    : RNNImplBase({rnn_nonlinearity(o.nonlinearity(), "RNN") == Nonlinearity::ReLU ? Mode::RnnRelu
                                                                                   : Mode::RnnTanh,
                   o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(),
                   o.dropout(), o.bidirectional(), 0}),
      options(o) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, hn, cn] = run(input, std::move(hx), {});
  return {out, hn};
}

LSTMImpl::LSTMImpl(const LSTMOptions& o)
    : RNNImplBase({Mode::Lstm, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(),
                   o.batch_first(), o.dropout(), o.bidirectional(), o.proj_size()}),
      options(o) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  Tensor h0, c0;
  if (hx_opt) std::tie(h0, c0) = *hx_opt;
  LT_CHECK(h0.defined() == c0.defined(), "LSTM: hx must give both h_0 and c_0, or neither");
  auto [out, hn, cn] = run(input, h0, c0);
  return {out, {hn, cn}};
}

GRUImpl::GRUImpl(const GRUOptions& o)
    : RNNImplBase({Mode::Gru, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(),
                   o.batch_first(), o.dropout(), o.bidirectional(), 0}),
      options(o) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, hn, cn] = run(input, std::move(hx), {});
  return {out, hn};
}

// ---- cells

RNNCellImplBase::RNNCellImplBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t gates)
    : input_size_(input_size), hidden_size_(hidden_size) {
  LT_CHECK(input_size > 0 && hidden_size > 0, "RNN cell: input_size ", input_size,
           " and hidden_size ", hidden_size, " must be positive");
  weight_ih = register_parameter("weight_ih", empty({gates * hidden_size, input_size}));
  weight_hh = register_parameter("weight_hh", empty({gates * hidden_size, hidden_size}));
  if (bias) {
    bias_ih = register_parameter("bias_ih", empty({gates * hidden_size}));
    bias_hh = register_parameter("bias_hh", empty({gates * hidden_size}));
  }
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() { reset_uniform(*this, hidden_size_); }

void RNNCellImplBase::pretty_print(std::ostream& os) const {
  os << name() << "(" << input_size_ << ", " << hidden_size_
     << ", bias=" << (bias_ih.defined() ? "true" : "false") << ")";
}

Tensor RNNCellImplBase::state(const Tensor& input, const Tensor& hx, const char* what) const {
  LT_CHECK(
      input.defined() && (input.dim() == 1 || input.dim() == 2) && input.size(-1) == input_size_,
      name(), ": input ", input.defined() ? shape_str(input.sizes()) : std::string("(undefined)"),
      " must be [N, ", input_size_, "] or [", input_size_, "]");
  std::vector<int64_t> want = {hidden_size_};
  if (input.dim() == 2) want.insert(want.begin(), input.size(0));
  if (!hx.defined()) return zeros(want, input.options());
  LT_CHECK(hx.sizes().vec() == want, name(), ": ", what, " ", shape_str(hx.sizes()), " must be ",
           shape_str(want), " for input ", shape_str(input.sizes()));
  return hx;
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 1), options(o) {
  rnn_nonlinearity(o.nonlinearity(), "RNNCell");
}

Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  hx = state(input, hx, "hx");
  return options.nonlinearity() == Nonlinearity::ReLU
             ? rnn_relu_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh)
             : rnn_tanh_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 4), options(o) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  Tensor h, c;
  if (hx_opt) std::tie(h, c) = *hx_opt;
  h = state(input, h, "h");
  c = state(input, c, "c");
  return lstm_cell(input, {h, c}, weight_ih, weight_hh, bias_ih, bias_hh);
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 3), options(o) {}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  hx = state(input, hx, "hx");
  return gru_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}

}  // namespace lt::nn
