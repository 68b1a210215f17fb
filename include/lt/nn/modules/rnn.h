// Recurrent layers, written over lt ops so a lazy graph records the time loop unrolled (the
// paper's figure 2) and fuses each step's gates: RNN, LSTM and GRU (stacked, bidirectional,
// batch_first, dropout between layers, LSTM projections) and RNNCell, LSTMCell, GRUCell, with
// libtorch's options, parameter names, shapes and initialization. Also the functional cells
// lt::lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell (libtorch's at:: spellings).
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "lt/nn/module.h"
#include "lt/nn/options.h"
#include "lt/ops.h"

namespace lt {

// One step for a batch input [N, in] (or one sample [in]) and state [N, H] (or [H]); weights as
// the modules hold them: w_ih [G*H, in], w_hh [G*H, H], biases [G*H] or undefined, with G = 4
// gates for LSTM (i, f, g, o), 3 for GRU (r, z, n), 1 for the plain cells.
// lstm_cell's hx is {h, c}; it returns (h', c').
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx,
                                     const Tensor& w_ih, const Tensor& w_hh,
                                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});

}  // namespace lt

namespace lt::nn {

// What RNN, LSTM and GRU share: per layer and direction the weights weight_ih_l{k}[_reverse],
// weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} (and weight_hr_l{k} with proj_size), registered in
// PyTorch's order and drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
class RNNImplBase : public Module {
 public:
  enum class Mode { RnnTanh, RnnRelu, Lstm, Gru };
  struct Config {
    Mode mode;
    int64_t input_size, hidden_size, num_layers;
    bool bias, batch_first;
    double dropout;
    bool bidirectional;
    int64_t proj_size;
  };
  explicit RNNImplBase(const Config& c);
  // New U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) values for every parameter, in order.
  void reset_parameters();
  // libtorch packs the weights for cuDNN here; on CPU (and here) there is nothing to pack.
  void flatten_parameters() {}
  // Every weight, per layer and direction: w_ih, w_hh, then b_ih, b_hh, w_hr where present.
  std::vector<Tensor> all_weights() const;
  void pretty_print(std::ostream& os) const override;

 protected:
  // input [L, N, in] ([N, L, in] when batch_first, or [L, in] unbatched); hx (and cx for LSTM)
  // [layers * directions, N, H] ([.., H] unbatched) or undefined for zeros.
  // Returns (output, h_n, c_n); c_n is undefined but for LSTM.
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, Tensor hx, Tensor cx);
  Config config_;
  std::vector<std::vector<Tensor>>
      weights_;  // per layer * directions: w_ih, w_hh, b_ih, b_hh, w_hr
};

class RNNImpl : public RNNImplBase {
 public:
  explicit RNNImpl(const RNNOptions& o);
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  // Returns (output [L, N, D * H], h_n [layers * D, N, H]).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  std::string name() const override { return "RNN"; }
  LT_CLONE_FROM_OPTIONS(RNNImpl)
  RNNOptions options;
};
LT_MODULE(RNN);

class LSTMImpl : public RNNImplBase {
 public:
  explicit LSTMImpl(const LSTMOptions& o);
  LSTMImpl(int64_t input_size, int64_t hidden_size)
      : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  // Returns (output, (h_n, c_n)); hx_opt is (h_0, c_0).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  std::string name() const override { return "LSTM"; }
  LT_CLONE_FROM_OPTIONS(LSTMImpl)
  LSTMOptions options;
};
LT_MODULE(LSTM);

class GRUImpl : public RNNImplBase {
 public:
  explicit GRUImpl(const GRUOptions& o);
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  std::string name() const override { return "GRU"; }
  LT_CLONE_FROM_OPTIONS(GRUImpl)
  GRUOptions options;
};
LT_MODULE(GRU);

// The cells' shared parameters: weight_ih [G*H, in], weight_hh [G*H, H], bias_ih, bias_hh.
class RNNCellImplBase : public Module {
 public:
  RNNCellImplBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t gates);
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  // Checks input [N, in] or [in] and returns hx, or zeros [N, H] ([H]) when undefined.
  Tensor state(const Tensor& input, const Tensor& hx, const char* what) const;
  int64_t input_size_, hidden_size_;
};

class RNNCellImpl : public RNNCellImplBase {
 public:
  explicit RNNCellImpl(const RNNCellOptions& o);
  RNNCellImpl(int64_t input_size, int64_t hidden_size)
      : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  Tensor forward(const Tensor& input, Tensor hx = {});
  std::string name() const override { return "RNNCell"; }
  LT_CLONE_FROM_OPTIONS(RNNCellImpl)
  RNNCellOptions options;
};
LT_MODULE(RNNCell);

class LSTMCellImpl : public RNNCellImplBase {
 public:
  explicit LSTMCellImpl(const LSTMCellOptions& o);
  LSTMCellImpl(int64_t input_size, int64_t hidden_size)
      : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  // Returns (h', c'); hx_opt is (h, c).
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  std::string name() const override { return "LSTMCell"; }
  LT_CLONE_FROM_OPTIONS(LSTMCellImpl)
  LSTMCellOptions options;
};
LT_MODULE(LSTMCell);

class GRUCellImpl : public RNNCellImplBase {
 public:
  explicit GRUCellImpl(const GRUCellOptions& o);
  GRUCellImpl(int64_t input_size, int64_t hidden_size)
      : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  Tensor forward(const Tensor& input, Tensor hx = {});
  std::string name() const override { return "GRUCell"; }
  LT_CLONE_FROM_OPTIONS(GRUCellImpl)
  GRUCellOptions options;
};
LT_MODULE(GRUCell);

}  // namespace lt::nn
