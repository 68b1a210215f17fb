// The recurrent layers and cells (lt/nn/modules/rnn.h): forward values against PyTorch 1.13's
// (tests/reference/rnn_golden.py fills parameters, inputs and states by a formula and printed
// the k_* values below), on cpu and lazy; lazy against cpu on random sizes in float32;
// gradients by finite differences in float64; parameter names, shapes and initialization;
// dropout between layers; and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "error_message.h"
#include "golden.h"
#include "gradcheck.h"
#include "lt/lt.h"

namespace {

using lt::Tensor;
using lt_test::In;

// PyTorch 1.13's values (tests/reference/rnn_golden.py).
const std::vector<double> k_lstm_out = {
    -0.03174808380653453,  0.044272865373964618,   0.054189114275126432, 0.019077042351511597,
    0.42623105885492096,   -0.16197774450223945,   -0.18815229016813964, 0.018689171349592169,
    -0.051198297759669366, 0.0039564565260498726,  0.060510686833111754, 0.084841200595265398,
    0.41846058269717218,   -0.14096014756501279,   -0.18459943686408745, 0.017489311146906879,
    -0.098971176377251877, -0.0033302105876730609, 0.26013622946079384,  0.03597072964883391,
    0.3848985691655129,    -0.15694997873173433,   -0.16033464546533255, 0.075062869548042283,
    -0.10922353490181291,  -0.037591013105621164,  0.25905990400271345,  0.071568797680407636,
    0.37113235637876008,   -0.13422925252094578,   -0.14209982091198251, 0.083980507300477292,
    -0.10315191196246971,  -0.028461595750686096,  0.36495961519269554,  -0.02429520035474669,
    0.31298752053876927,   -0.15895518936900274,   -0.16529703132452206, 0.1265025247052827,
    -0.11967113887820441,  -0.063625911532804336,  0.34796616984024498,  0.0043905548829181167,
    0.27336912875693298,   -0.13997631405092009,   -0.1345436144713979,  0.126419023111496};
const std::vector<double> k_lstm_h = {
    -0.050885284570211319, -0.12832590937299848,  0.10487553488527121,  0.23990941895963863,
    -0.039095998724956102, -0.093313531966109697, 0.1385811534377511,   0.25735547403052617,
    0.15497532410974446,   0.25655994489958883,   -0.18330639393630485, -0.11805692751788037,
    0.20423035083861782,   0.27642652083146196,   -0.19817858144182385, -0.13755930674038494,
    -0.10315191196246971,  -0.028461595750686096, 0.36495961519269554,  -0.02429520035474669,
    -0.11967113887820441,  -0.063625911532804336, 0.34796616984024498,  0.0043905548829181167,
    0.42623105885492096,   -0.16197774450223945,  -0.18815229016813964, 0.018689171349592169,
    0.41846058269717218,   -0.14096014756501279,  -0.18459943686408745, 0.017489311146906879};
const std::vector<double> k_lstm_c = {
    -0.1317750658318835,  -0.3172313598747481,  0.1653028609717643,   0.48806264318338133,
    -0.12426535449100316, -0.2464707223388824,  0.20155648283971256,  0.44289381355232171,
    0.22541310490864241,  0.47675460876225645,  -0.65588663751525167, -0.24903803389318863,
    0.30942600287611499,  0.49601612125353278,  -0.64728200380735634, -0.29910726657907799,
    -0.38397394623071118, -0.05628924714673509, 0.61304913790476934,  -0.053108861402562803,
    -0.41912098283629506, -0.12070400579209614, 0.57438457935242138,  0.0099197211949900999,
    0.87823452434312954,  -0.43215256971192417, -0.49529884332321017, 0.028438413783361136,
    0.86750902087492343,  -0.37032565376745374, -0.4738757360548228,  0.026306281856093745};
const std::vector<double> k_gru_0 = {
    0.11297014371501092, 0.16156747693900309, -0.18487094179607519, -0.13500175096738598,
    0.1361538451037004,  0.23793164554627755, -0.28060754932932791, -0.1580840257560055,
    0.15321121446062022, 0.29899323170838776, -0.28422125420399158, -0.10984718697818899,
    0.15880237451805343, 0.20896028034399033, -0.10498770369851164, -0.058244488317230336,
    0.24246043375300869, 0.32800733612605132, -0.14649467151510792, -0.075446611163607361,
    0.25460576988925238, 0.37357373429848562, -0.22055554198548027, -0.12444946356973619};
const std::vector<double> k_gru_1 = {
    -0.14565140228334861, -0.44057686009127417, 0.20348291835484111,     0.31985677771876153,
    -0.02787759628047904, -0.42886282661056119, -0.00036855670438355748, 0.19065986992470974,
    0.15321121446062022,  0.29899323170838776,  -0.28422125420399158,    -0.10984718697818899,
    0.25460576988925238,  0.37357373429848562,  -0.22055554198548027,    -0.12444946356973619};
const std::vector<double> k_rnn_relu_0 = {0,
                                          0,
                                          0,
                                          0.1018920160066934,
                                          0.14583624697850578,
                                          0,
                                          0,
                                          0,
                                          0.13135792412741329,
                                          0,
                                          0,
                                          0.012831976116363251,
                                          0.29484876849330921,
                                          0.39145344335702514,
                                          0.13080419974879931,
                                          0,
                                          0.19617155745544224,
                                          0.17535292736979455,
                                          0,
                                          0,
                                          0,
                                          0.11443799983846534,
                                          0.35634023727804065,
                                          0.34223649974819753};
const std::vector<double> k_rnn_relu_1 = {
    0.19617155745544224, 0.17535292736979455, 0, 0, 0.14583624697850578, 0, 0, 0};
const std::vector<double> k_lstm_proj_out = {
    0.092132054342161318, 0.066837689479472148, 0.11495739674501804, 0.08642725267441588,
    0.16568084936154284,  0.11689261918068432,  0.1558969461284766,  0.096979682214074173,
    0.1615201700319554,   0.090922890311335991, 0.16830129797825719, 0.10107416907452339};
const std::vector<double> k_lstm_proj_h = {0.1615201700319554, 0.090922890311335991,
                                           0.16830129797825719, 0.10107416907452339};
const std::vector<double> k_lstm_proj_c = {
    -0.16679530582384597, -0.30234258880829362, 0.13705252734426226, 0.77507984895763038,
    -0.18533403773074852, -0.22688882007894268, 0.19328731050064224, 0.72820507752454033};
const std::vector<double> k_lstm_cell_0 = {
    -0.050392099124109885, -0.0035282645536391477, 0.18541383445705667, -0.028836311608410832,
    -0.038323605289565341, 0.019709382798545502,   0.14992314317783312, 0.0099760685117877591};
const std::vector<double> k_lstm_cell_1 = {
    -0.19558462233634266, -0.011186526107777942, 0.29131683250873119, -0.047486618454694346,
    -0.14391940409589693, 0.073098428871249246,  0.25672505852993754, 0.016981193031610164};
const std::vector<double> k_gru_cell_out = {
    -0.17919592120268776, -0.17818381840206296, 0.30987347570233736, 0.10898972024927714,
    -0.24280117996589307, -0.11208553320472364, 0.38563859264386341, 0.040658514407320268};
const std::vector<double> k_rnn_cell_out = {0.16944818902517453, -0.80085805155066991,
                                            -0.6027169255027115, 0.64358120871306412};

std::string shape(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

std::vector<double> dv(const Tensor& t) { return lt_test::values_of(t); }
using lt_test::filled;  // tests/reference/golden.py's formula
// The module in float64 on `d`, its parameters filled in registration order.
void fill_parameters(lt::nn::Module& m, lt::Device d) {
  m.to(lt::kFloat64);
  m.to(d);
  lt::NoGradGuard g;
  int k = 0;
  for (Tensor& p : m.parameters()) p.set_data(filled(p.sizes().vec(), k++, d));
}

void expect_values(const Tensor& got, const std::vector<int64_t>& sizes,
                   const std::vector<double>& want, double tol, const std::string& what) {
  lt_test::expect_golden(got, want, tol, what, &sizes);
}

class Rnn : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
};

// float64 throughout; compiled tanh/sigmoid/exp are within 2 ulp of libm (docs/ARCHITECTURE.md),
// which a few steps of O(1) gates keep far below 1e-12.
constexpr double kGoldenTol = 1e-12;

TEST_P(Rnn, LstmStackedBidirectionalMatchesPyTorch) {
  lt::nn::LSTM lstm(lt::nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  fill_parameters(*lstm, dev());
  auto [out, state] =
      lstm->forward(filled({3, 2, 3}, 100, dev()),
                    std::make_tuple(filled({4, 2, 4}, 200, dev()), filled({4, 2, 4}, 201, dev())));
  expect_values(out, {3, 2, 8}, k_lstm_out, kGoldenTol, "output");
  expect_values(std::get<0>(state), {4, 2, 4}, k_lstm_h, kGoldenTol, "h_n");
  expect_values(std::get<1>(state), {4, 2, 4}, k_lstm_c, kGoldenTol, "c_n");
}

TEST_P(Rnn, GruBatchFirstWithZeroStateMatchesPyTorch) {
  lt::nn::GRU gru(lt::nn::GRUOptions(3, 4).num_layers(2).batch_first(true));
  fill_parameters(*gru, dev());
  auto [out, h] = gru->forward(filled({2, 3, 3}, 100, dev()));
  expect_values(out, {2, 3, 4}, k_gru_0, kGoldenTol, "output");
  expect_values(h, {2, 2, 4}, k_gru_1, kGoldenTol, "h_n");
}

TEST_P(Rnn, UnbatchedReluRnnWithoutBiasMatchesPyTorch) {
  lt::nn::RNN rnn(lt::nn::RNNOptions(3, 4).bidirectional(true).bias(false).nonlinearity(lt::kReLU));
  fill_parameters(*rnn, dev());
  auto [out, h] = rnn->forward(filled({3, 3}, 100, dev()), filled({2, 4}, 200, dev()));
  expect_values(out, {3, 8}, k_rnn_relu_0, kGoldenTol, "output");
  expect_values(h, {2, 4}, k_rnn_relu_1, kGoldenTol, "h_n");
}

TEST_P(Rnn, LstmWithProjectionsMatchesPyTorch) {
  lt::nn::LSTM lstm(lt::nn::LSTMOptions(3, 4).proj_size(2));
  fill_parameters(*lstm, dev());
  auto [out, state] = lstm->forward(filled({3, 2, 3}, 100, dev()));
  expect_values(out, {3, 2, 2}, k_lstm_proj_out, kGoldenTol, "output");
  expect_values(std::get<0>(state), {1, 2, 2}, k_lstm_proj_h, kGoldenTol, "h_n");
  expect_values(std::get<1>(state), {1, 2, 4}, k_lstm_proj_c, kGoldenTol, "c_n");
}

TEST_P(Rnn, CellsMatchPyTorch) {
  lt::nn::LSTMCell lstm(3, 4);
  fill_parameters(*lstm, dev());
  auto [h, c] =
      lstm->forward(filled({2, 3}, 100, dev()),
                    std::make_tuple(filled({2, 4}, 200, dev()), filled({2, 4}, 201, dev())));
  expect_values(h, {2, 4}, k_lstm_cell_0, kGoldenTol, "LSTMCell h");
  expect_values(c, {2, 4}, k_lstm_cell_1, kGoldenTol, "LSTMCell c");
  lt::nn::GRUCell gru(3, 4);
  fill_parameters(*gru, dev());
  expect_values(gru(filled({2, 3}, 100, dev()), filled({2, 4}, 200, dev())), {2, 4}, k_gru_cell_out,
                kGoldenTol, "GRUCell");
  lt::nn::RNNCell rnn(3, 4);  // unbatched: input [3], hx [4]
  fill_parameters(*rnn, dev());
  expect_values(rnn(filled({3}, 100, dev()), filled({4}, 200, dev())), {4}, k_rnn_cell_out,
                kGoldenTol, "RNNCell");
}

TEST_P(Rnn, ParameterNamesShapesAndInitialization) {
  lt::manual_seed(3);
  lt::nn::LSTM lstm(lt::nn::LSTMOptions(5, 4).num_layers(2).bidirectional(true).proj_size(3));
  std::vector<std::string> names;
  for (const auto& [name, p] : lstm->named_parameters()) {
    names.push_back(name + " " + shape(p));
    for (double v : dv(p)) EXPECT_LE(std::fabs(v), 0.5) << name;  // U(-1/sqrt(4), 1/sqrt(4))
  }
  const std::vector<std::string> want = {"weight_ih_l0 [16, 5]",
                                         "weight_hh_l0 [16, 3]",
                                         "bias_ih_l0 [16]",
                                         "bias_hh_l0 [16]",
                                         "weight_hr_l0 [3, 4]",
                                         "weight_ih_l0_reverse [16, 5]",
                                         "weight_hh_l0_reverse [16, 3]",
                                         "bias_ih_l0_reverse [16]",
                                         "bias_hh_l0_reverse [16]",
                                         "weight_hr_l0_reverse [3, 4]",
                                         "weight_ih_l1 [16, 6]",
                                         "weight_hh_l1 [16, 3]",
                                         "bias_ih_l1 [16]",
                                         "bias_hh_l1 [16]",
                                         "weight_hr_l1 [3, 4]",
                                         "weight_ih_l1_reverse [16, 6]",
                                         "weight_hh_l1_reverse [16, 3]",
                                         "bias_ih_l1_reverse [16]",
                                         "bias_hh_l1_reverse [16]",
                                         "weight_hr_l1_reverse [3, 4]"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(lstm->all_weights().size(), 20u);
  lt::nn::GRUCell cell(lt::nn::GRUCellOptions(2, 3).bias(false));
  EXPECT_EQ(cell->parameters().size(), 2u);
  EXPECT_EQ(cell->weight_ih.sizes().vec(), (std::vector<int64_t>{9, 2}));
  std::ostringstream os;
  os << *lstm;
  EXPECT_NE(os.str().find("LSTM(input_size=5, hidden_size=4, num_layers=2"), std::string::npos)
      << os.str();
}

// Lazy against cpu in float32 on random sizes: the same module (cloned to each device), inputs
// given transposed (a non-contiguous view) or batch-first, states given or zero, and the
// parameters' gradients. Tolerance 1e-5 relative: float32 gates over a few steps, where the
// compiled and eager kernels sum matmuls in different orders.
TEST(RnnLazy, MatchesCpuOnRandomSizes) {
  for (int trial = 0; trial < 6; ++trial) {
    lt::manual_seed(40 + trial);
    const int64_t L = 1 + trial % 4, N = 1 + (trial * 3) % 5, in = 2 + trial % 3, H = 3 + trial % 4;
    const bool bidir = trial % 2 == 1, batch_first = trial % 3 == 0;
    std::shared_ptr<lt::nn::Module> cpu_m;
    std::function<Tensor(lt::nn::Module&, const Tensor&)> run;
    if (trial % 3 == 0) {
      auto m = std::make_shared<lt::nn::LSTMImpl>(
          lt::nn::LSTMOptions(in, H).num_layers(2).bidirectional(bidir).batch_first(batch_first));
      cpu_m = m;
      run = [](lt::nn::Module& mod, const Tensor& x) {
        auto [o, s] = static_cast<lt::nn::LSTMImpl&>(mod).forward(x);
        return o.sum() + std::get<0>(s).sum() * 0.5 + std::get<1>(s).sum() * 0.25;
      };
    } else if (trial % 3 == 1) {
      auto m = std::make_shared<lt::nn::GRUImpl>(
          lt::nn::GRUOptions(in, H).num_layers(2).bidirectional(bidir).batch_first(batch_first));
      cpu_m = m;
      run = [](lt::nn::Module& mod, const Tensor& x) {
        auto [o, h] = static_cast<lt::nn::GRUImpl&>(mod).forward(x);
        return (o * o).sum() + h.sum();
      };
    } else {
      auto m = std::make_shared<lt::nn::RNNImpl>(
          lt::nn::RNNOptions(in, H).bidirectional(bidir).batch_first(batch_first));
      cpu_m = m;
      run = [](lt::nn::Module& mod, const Tensor& x) {
        auto [o, h] = static_cast<lt::nn::RNNImpl&>(mod).forward(x);
        return o.sum() + h.sum();
      };
    }
    std::shared_ptr<lt::nn::Module> lazy_m = cpu_m->clone(lt::Device("lazy"));
    // Made as [in, ..] and transposed: the module reads a non-contiguous view.
    Tensor x = batch_first ? lt::randn({in, L, N}).permute({2, 1, 0})
                           : lt::randn({in, N, L}).permute({2, 1, 0});
    SCOPED_TRACE("trial " + std::to_string(trial));
    Tensor lc = run(*cpu_m, x), ll = run(*lazy_m, x.to(lt::Device("lazy")));
    EXPECT_NEAR(ll.item<double>(), lc.item<double>(), 1e-5 * (1 + std::fabs(lc.item<double>())));
    lc.backward();
    ll.backward();
    lt::mark_step();  // every gradient in one graph (reading them one by one would cut many)
    auto pc = cpu_m->parameters(), pl = lazy_m->parameters();
    ASSERT_EQ(pc.size(), pl.size());
    for (size_t i = 0; i < pc.size(); ++i) {
      std::vector<double> a = dv(pc[i].grad()), b = dv(pl[i].grad());
      ASSERT_EQ(a.size(), b.size());
      for (size_t j = 0; j < a.size(); ++j)
        EXPECT_NEAR(b[j], a[j], 1e-5 * (1 + std::fabs(a[j]))) << "parameter " << i;
    }
  }
}

In rnd(std::vector<int64_t> sizes, unsigned seed, double scale = 0.6) {
  lt::manual_seed(seed);
  return {dv(lt::randn(sizes) * scale), sizes};
}

// Every input of the functional cells (input, states, both weights, both biases) by finite
// differences in float64, batched.
TEST_P(Rnn, CellGradients) {
  const In x = rnd({2, 3}, 1), h = rnd({2, 4}, 2), c = rnd({2, 4}, 3);
  const In w_ih4 = rnd({16, 3}, 4), w_hh4 = rnd({16, 4}, 5), b4 = rnd({16}, 6), b4b = rnd({16}, 7);
  lt_test::gradcheck(
      "lstm_cell",
      [](lt_test::Ts t) {
        auto [h2, c2] = lt::lstm_cell(t[0], {t[1], t[2]}, t[3], t[4], t[5], t[6]);
        return lt::cat({h2, c2 * 0.7}, 1);
      },
      {x, h, c, w_ih4, w_hh4, b4, b4b}, dev());
  const In w_ih3 = rnd({12, 3}, 8), w_hh3 = rnd({12, 4}, 9), b3 = rnd({12}, 10),
           b3b = rnd({12}, 11);
  lt_test::gradcheck(
      "gru_cell", [](lt_test::Ts t) { return lt::gru_cell(t[0], t[1], t[2], t[3], t[4], t[5]); },
      {x, h, w_ih3, w_hh3, b3, b3b}, dev());
  const In w_ih1 = rnd({4, 3}, 12), w_hh1 = rnd({4, 4}, 13), b1 = rnd({4}, 14), b1b = rnd({4}, 15);
  lt_test::gradcheck(
      "rnn_tanh_cell",
      [](lt_test::Ts t) { return lt::rnn_tanh_cell(t[0], t[1], t[2], t[3], t[4], t[5]); },
      {x, h, w_ih1, w_hh1, b1, b1b}, dev());
  lt_test::gradcheck(
      "rnn_relu_cell",
      [](lt_test::Ts t) { return lt::rnn_relu_cell(t[0], t[1], t[2], t[3], t[4], t[5]); },
      {x, h, w_ih1, w_hh1, b1, b1b}, dev());
}

// Through the whole unrolled sequence: the input and the initial states of a stacked,
// bidirectional LSTM and a GRU, by finite differences in float64.
TEST_P(Rnn, SequenceGradients) {
  lt::manual_seed(9);
  lt::nn::LSTM lstm(lt::nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true));
  lstm->to(lt::kFloat64);
  lstm->to(dev());
  lt_test::gradcheck(
      "LSTM",
      [&](lt_test::Ts t) {
        auto [o, s] = lstm->forward(t[0], std::make_tuple(t[1], t[2]));
        return lt::cat(
            {o.reshape({-1}), std::get<0>(s).reshape({-1}), std::get<1>(s).reshape({-1})});
      },
      {rnd({3, 2, 2}, 20), rnd({4, 2, 3}, 21), rnd({4, 2, 3}, 22)}, dev());
  lt::nn::GRU gru(lt::nn::GRUOptions(2, 3).batch_first(true));
  gru->to(lt::kFloat64);
  gru->to(dev());
  lt_test::gradcheck(
      "GRU", [&](lt_test::Ts t) { return std::get<0>(gru->forward(t[0], t[1])); },
      {rnd({2, 3, 2}, 23), rnd({1, 2, 3}, 24)}, dev());
}

// Dropout between layers acts in training only: with p = 1 every first-layer output is zeroed,
// so the second layer's output no longer depends on the input; in eval it does.
TEST_P(Rnn, DropoutBetweenLayersInTrainingOnly) {
  lt::manual_seed(5);
  lt::nn::GRU gru(lt::nn::GRUOptions(3, 4).num_layers(2).dropout(1.0));
  gru->to(dev());
  Tensor a = lt::randn({4, 2, 3}).to(dev()), b = lt::randn({4, 2, 3}).to(dev());
  auto output = [&](const Tensor& x) { return dv(std::get<0>(gru->forward(x))); };
  EXPECT_EQ(output(a), output(b));
  gru->eval();
  EXPECT_NE(output(a), output(b));
}

TEST_P(Rnn, ErrorsNameTheModuleAndShapes) {
  lt::nn::LSTM lstm(lt::nn::LSTMOptions(3, 4).num_layers(2));
  lstm->to(dev());
  Tensor keep = lt::ones({2}).to(dev()) * 3.0;  // pending on lazy: must survive the errors
  auto message = lt_test::error_message;
  EXPECT_NE(message([&] {
              lstm->forward(lt::zeros({5, 2, 7}).to(dev()));
            }).find("LSTM: input [5, 2, 7] has 7 features, expected input_size 3"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lstm->forward(
                  lt::zeros({5, 2, 3}).to(dev()),
                  std::make_tuple(lt::zeros({1, 2, 4}).to(dev()), lt::zeros({2, 2, 4}).to(dev())));
            }).find("LSTM: hx [1, 2, 4] must be [2, 2, 4]"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lstm->forward(lt::zeros({5, 2, 3, 1}).to(dev()));
            }).find("expected a 3-d input"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lstm->forward(lt::zeros({0, 2, 3}).to(dev()));
            }).find("empty sequence"),
            std::string::npos);
  EXPECT_NE(
      message([&] { lt::nn::GRU(lt::nn::GRUOptions(3, 4).dropout(1.5)); }).find("dropout 1.5"),
      std::string::npos);
  EXPECT_NE(message([&] {
              lt::nn::LSTM(lt::nn::LSTMOptions(3, 4).proj_size(4));
            }).find("proj_size 4 must be in [0, hidden_size 4)"),
            std::string::npos);
  EXPECT_NE(
      message([&] {
        lt::gru_cell(lt::zeros({2, 3}), lt::zeros({2, 4}), lt::zeros({12, 3}), lt::zeros({8, 4}));
      }).find("gru_cell: w_ih [12, 3] and w_hh [8, 4] must have 3 x hidden size (12) rows"),
      std::string::npos);
  EXPECT_NE(message([&] {
              lt::nn::GRUCell cell(3, 4);
              cell(lt::zeros({2, 3}), lt::zeros({3, 4}));
            }).find("GRUCell: hx [3, 4] must be [2, 4]"),
            std::string::npos);
  EXPECT_EQ(dv(keep), (std::vector<double>{3, 3}));
  auto [out, state] = lstm->forward(lt::zeros({5, 2, 3}).to(dev()));  // still usable
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{5, 2, 4}));
}

INSTANTIATE_TEST_SUITE_P(Devices, Rnn, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
