// torch::nn as libtorch programs spell it, through the drop-in <torch/torch.h>: modules built
// from Options, holders registered with register_module (and empty holders assigned later),
// named_parameters()/named_children() as OrderedDicts, the containers (Sequential, ModuleList,
// ModuleDict, Functional, AnyModule) and the loss and activation modules, on cpu and on lazy.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace F = torch::nn::functional;

std::vector<double> dv(const torch::Tensor& t) {
  return t.to(torch::kCPU).to(torch::kFloat64).to_vector<double>();
}

void expect_same(const torch::Tensor& a, const torch::Tensor& b, double tol = 1e-5) {
  ASSERT_EQ(a.sizes(), b.sizes());
  std::vector<double> x = dv(a), y = dv(b);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol) << "[" << i << "]";
}

// A user module written as libtorch's examples write theirs.
struct Net : torch::nn::Module {
  Net() {
    conv = register_module(
        "conv", torch::nn::Conv2d(
                    torch::nn::Conv2dOptions(1, 4, {3, 3}).stride(1).padding({1, 1}).bias(false)));
    drop = register_module("drop", torch::nn::Dropout2d(0.25));
    fc = register_module("fc", torch::nn::Linear(torch::nn::LinearOptions(4 * 4 * 4, 3)));
    scale = register_parameter("scale", torch::ones({1}));
    register_buffer("steps", torch::zeros({}, torch::kInt64));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv->forward(x), {2, 2}));
    x = drop->forward(x);
    x = x.view({x.size(0), -1});
    return torch::log_softmax(fc->forward(x) * scale, 1);
  }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Dropout2d drop{nullptr};
  torch::nn::Linear fc{nullptr};
  torch::Tensor scale;
};

class TorchNn : public ::testing::TestWithParam<std::string> {
 protected:
  torch::Device dev() const { return torch::Device(GetParam()); }
};

TEST_P(TorchNn, UserModuleWithHoldersRegistersAndTrains) {
  torch::manual_seed(0);
  Net net;
  net.to(dev());
  auto params = net.named_parameters();
  EXPECT_EQ(params.keys(),
            (std::vector<std::string>{"scale", "conv.weight", "fc.weight", "fc.bias"}));
  EXPECT_TRUE(params.contains("fc.bias"));
  EXPECT_FALSE(params.contains("conv.bias"));  // bias(false)
  EXPECT_EQ(params["conv.weight"].sizes(), std::vector<int64_t>({4, 1, 3, 3}));
  EXPECT_EQ(params["fc.weight"].device(), dev());
  for (const auto& item : params) EXPECT_TRUE(item->requires_grad()) << item.key();
  for (const auto& [name, p] : net.named_parameters()) EXPECT_TRUE(p.defined()) << name;
  EXPECT_EQ(net.named_buffers().keys(), std::vector<std::string>{"steps"});
  EXPECT_EQ(net.named_children().keys(), (std::vector<std::string>{"conv", "drop", "fc"}));
  EXPECT_EQ(net.conv->options.kernel_size()[1], 3);
  EXPECT_EQ(net.conv->options.padding()[0], 1);

  torch::optim::SGD opt(net.parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
  torch::Tensor x = torch::randn({8, 1, 8, 8}).to(dev());
  torch::Tensor y = torch::randint(0, 3, {8}).to(dev());
  net.eval();  // no dropout: the loss must fall
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    torch::Tensor loss = torch::nll_loss(net.forward(x), y);
    loss.backward();
    opt.step();
    if (step == 0) first = loss.item<float>();
    last = loss.item<float>();
  }
  EXPECT_LT(last, first * 0.8f);
}

TEST_P(TorchNn, EmptyHoldersAndRegistrationErrors) {
  torch::nn::Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_THROW(empty->forward(torch::ones({1, 1})), c10::Error);
  empty = torch::nn::Linear(2, 3);
  EXPECT_FALSE(empty.is_empty());
  torch::nn::Module m;
  m.register_module("a", torch::nn::ReLU());
  EXPECT_THROW(m.register_module("a", torch::nn::ReLU()), c10::Error);    // duplicate
  EXPECT_THROW(m.register_module("b.c", torch::nn::ReLU()), c10::Error);  // dotted
  EXPECT_THROW(m.register_parameter("", torch::ones({1})), c10::Error);   // empty name
  EXPECT_THROW(m.register_module("n", torch::nn::Linear(nullptr)), c10::Error);
  EXPECT_EQ(m.named_children().size(), 1u);  // nothing half-registered
}

TEST_P(TorchNn, SequentialModuleListModuleDictFunctional) {
  torch::manual_seed(1);
  torch::nn::Sequential seq(torch::nn::Linear(4, 8), torch::nn::ReLU(), torch::nn::Dropout(0.0),
                            torch::nn::Linear(8, 2));
  seq->to(dev());
  EXPECT_EQ(seq->size(), 4u);
  torch::Tensor x = torch::randn({5, 4}).to(dev());
  torch::Tensor by_hand = x;
  for (const auto& m : *seq) by_hand = m.forward(by_hand);
  expect_same(seq->forward(x), by_hand);
  EXPECT_EQ(seq[0]->name(), "Linear");
  EXPECT_EQ(seq->ptr<torch::nn::LinearImpl>(3)->options.out_features(), 2);
  EXPECT_THROW(seq->ptr<torch::nn::LinearImpl>(1), c10::Error);  // a ReLU
  EXPECT_THROW(seq[9], c10::Error);

  torch::nn::Sequential named({{"first", torch::nn::Linear(4, 3)},
                               {"act", torch::nn::Functional(torch::leaky_relu, 0.2)},
                               {"soft", torch::nn::Softmax(1)}});
  named->to(dev());
  EXPECT_EQ(named->named_children().keys(), (std::vector<std::string>{"first", "act", "soft"}));
  torch::Tensor out = named->forward(x);
  for (double s : dv(out.sum(1))) EXPECT_NEAR(s, 1.0, 1e-5);

  torch::nn::ModuleList list(torch::nn::Linear(4, 4), torch::nn::Tanh());
  list->push_back(torch::nn::Linear(4, 1));
  list->insert(1, torch::nn::ReLU());
  EXPECT_EQ(list->size(), 4u);
  EXPECT_EQ(list[1]->name(), "ReLU");
  EXPECT_EQ(list->named_children().keys(), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(list->parameters().size(), 4u);
  list->to(dev());
  torch::Tensor h = x;
  for (const auto& m : *list) {
    if (auto lin = std::dynamic_pointer_cast<torch::nn::LinearImpl>(m)) h = lin->forward(h);
  }
  EXPECT_EQ(h.sizes(), std::vector<int64_t>({5, 1}));

  torch::nn::ModuleDict dict;
  dict->insert("enc", torch::nn::Linear(4, 2));
  dict->insert("act", torch::nn::GELU());
  EXPECT_TRUE(dict->contains("enc"));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"enc", "act"}));
  EXPECT_EQ(dict->at<torch::nn::LinearImpl>("enc").options.in_features(), 4);
  auto popped = dict->pop("act");
  EXPECT_EQ(popped->name(), "GELU");
  EXPECT_EQ(dict->named_children().size(), 1u);
  EXPECT_THROW((*dict)["act"], c10::Error);

  torch::nn::AnyModule any(torch::nn::Linear(4, 2));
  any.ptr()->to(dev());
  EXPECT_EQ(any.forward(x).sizes(), std::vector<int64_t>({5, 2}));
  EXPECT_THROW(any.forward(x, x), c10::Error);  // Linear takes one tensor
}

TEST_P(TorchNn, LayersAndActivationsFromOptions) {
  torch::manual_seed(2);
  torch::Tensor x = torch::randn({2, 3, 4}).to(dev());
  torch::nn::Unflatten unflatten(torch::nn::UnflattenOptions(2, {2, 2}));
  EXPECT_EQ(unflatten(x).sizes(), std::vector<int64_t>({2, 3, 2, 2}));
  torch::nn::Flatten flat(torch::nn::FlattenOptions().start_dim(0).end_dim(1));
  EXPECT_EQ(flat(x).sizes(), std::vector<int64_t>({6, 4}));
  expect_same(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.3))(x),
              torch::leaky_relu(x, 0.3));
  expect_same(torch::nn::ELU(torch::nn::ELUOptions().alpha(0.5))(x), torch::elu(x, 0.5));
  expect_same(torch::nn::Softplus(torch::nn::SoftplusOptions().beta(2))(x), torch::softplus(x, 2));
  expect_same(torch::nn::Identity()(x), x, 0);
  expect_same(torch::nn::LogSoftmax(torch::nn::LogSoftmaxOptions(1))(x), torch::log_softmax(x, 1));
  expect_same(F::relu(x, F::ReLUFuncOptions(false)), torch::relu(x));
  expect_same(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.1)),
              torch::leaky_relu(x, 0.1));
  // In place: the input itself changes.
  torch::Tensor y = x.clone();
  torch::nn::ReLU inplace(torch::nn::ReLUOptions(true));
  inplace(y);
  expect_same(y, torch::relu(x));
  torch::Tensor z = x.clone();
  F::relu(z, true);
  expect_same(z, torch::relu(x));

  torch::nn::BatchNorm1d bn(torch::nn::BatchNorm1dOptions(3).momentum(0.5).affine(false));
  bn->to(dev());
  torch::Tensor b = bn(x);
  EXPECT_TRUE(bn->named_parameters().is_empty());
  for (double m : dv(b.mean({0, 2}))) EXPECT_NEAR(m, 0, 1e-5);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  // The functional spellings: F::batch_norm with its options, and torch::batch_norm.
  torch::Tensor rm = torch::zeros({3}).to(dev()), rv = torch::ones({3}).to(dev());
  torch::Tensor w = torch::full({3}, 2.0).to(dev()), bias = torch::ones({3}).to(dev());
  torch::Tensor f = F::batch_norm(
      x, rm, rv, F::BatchNormFuncOptions().weight(w).bias(bias).momentum(0.5).training(true));
  expect_same(f, b * 2.0 + 1.0, 1e-4);
  expect_same(rm, bn->running_mean);
  expect_same(rv, bn->running_var);
  expect_same(torch::batch_norm(x, w, {}, rm, rv, false, 0.1, 1e-5, false),
              (x - rm.reshape({1, 3, 1})) / torch::sqrt(rv.reshape({1, 3, 1}) + 1e-5) * 2.0);

  torch::Tensor table = torch::randn({5, 2});
  auto emb = torch::nn::Embedding::from_pretrained(table);
  EXPECT_FALSE(emb->weight.requires_grad());
  emb->to(dev());
  expect_same(emb(torch::tensor({4, 0}).to(dev())), table.index_select(0, torch::tensor({4, 0})));
  auto trainable = torch::nn::Embedding::from_pretrained(
      table, torch::nn::EmbeddingFromPretrainedOptions().freeze(false));
  EXPECT_TRUE(trainable->weight.requires_grad());

  torch::nn::AvgPool2d avg(torch::nn::AvgPool2dOptions({2, 2}).stride(2));
  EXPECT_EQ(avg(torch::ones({1, 1, 4, 6}).to(dev())).sizes(), std::vector<int64_t>({1, 1, 2, 3}));
}

// A cloneable user module: reset() builds everything, as libtorch's Cloneable asks.
struct Tower : torch::nn::Cloneable<Tower> {
  explicit Tower(int64_t width) : width(width) { reset(); }
  void reset() override {
    body = register_module(
        "body", torch::nn::Sequential(torch::nn::Linear(width, width), torch::nn::Tanh()));
    head = register_module("head", torch::nn::Linear(width, 1));
    gain = register_parameter("gain", torch::ones({1}));
    seen = register_buffer("seen", torch::zeros({}, torch::kInt64));
  }
  torch::Tensor forward(const torch::Tensor& x) { return head(body->forward(x)) * gain; }
  int64_t width;
  torch::nn::Sequential body{nullptr};
  torch::nn::Linear head{nullptr};
  torch::Tensor gain, seen;
};

TEST_P(TorchNn, CloneIsADeepCopyWithTheSameValues) {
  torch::manual_seed(4);
  auto tower = std::make_shared<Tower>(3);
  tower->to(dev());
  {
    torch::NoGradGuard no_grad;
    tower->gain.fill_(2.5);
    tower->seen.fill_(7);
  }
  tower->eval();
  auto copy = std::dynamic_pointer_cast<Tower>(tower->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_FALSE(copy->is_training());
  EXPECT_EQ(copy->named_parameters().keys(), tower->named_parameters().keys());
  torch::Tensor x = torch::randn({4, 3}).to(dev());
  expect_same(copy->forward(x), tower->forward(x));
  EXPECT_EQ(copy->seen.item<int64_t>(), 7);
  // Separate tensors: the members point at the copy's own registered parameters.
  EXPECT_FALSE(copy->gain.is_same(tower->gain));
  EXPECT_TRUE(copy->gain.is_same(copy->named_parameters()["gain"]));
  EXPECT_TRUE(copy->head->weight.is_same(copy->named_parameters()["head.weight"]));
  {
    torch::NoGradGuard no_grad;
    copy->head->weight.zero_();
  }
  EXPECT_GT(tower->head->weight.abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(copy->head->weight.requires_grad());
  // Training the copy leaves the original alone.
  torch::optim::SGD opt(copy->parameters(), 0.1);
  copy->forward(x).sum().backward();
  opt.step();
  EXPECT_FALSE(tower->gain.grad().defined());
  EXPECT_EQ(tower->gain.item<float>(), 2.5f);
}

TEST_P(TorchNn, CloneToAnotherDeviceAndBuiltInClones) {
  torch::manual_seed(5);
  torch::nn::Linear fc(4, 2);
  auto moved = std::dynamic_pointer_cast<torch::nn::LinearImpl>(fc->clone(dev()));
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->weight.device(), dev());
  EXPECT_EQ(fc->weight.device(), torch::Device(torch::kCPU));
  torch::Tensor x = torch::randn({3, 4});
  expect_same(moved->forward(x.to(dev())), fc(x));
  torch::nn::TransformerEncoderLayer layer(
      torch::nn::TransformerEncoderLayerOptions(8, 2).dropout(0.0));
  layer->to(dev());
  auto layer2 = std::dynamic_pointer_cast<torch::nn::TransformerEncoderLayerImpl>(layer->clone());
  torch::Tensor src = torch::randn({5, 2, 8}).to(dev());
  expect_same(layer2->forward(src), layer->forward(src));
  EXPECT_NE(std::dynamic_pointer_cast<torch::nn::ReLUImpl>(torch::nn::ReLU()->clone()), nullptr);
  EXPECT_THROW(Net().clone(), c10::Error);  // a plain Module subclass cannot clone
}

TEST_P(TorchNn, OptimizerStatePerParameter) {
  torch::nn::Linear fc(3, 2);
  fc->to(dev());
  torch::optim::SGD sgd(fc->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  EXPECT_TRUE(sgd.state().empty());  // nothing before the first step
  fc(torch::ones({1, 3}).to(dev())).sum().backward();
  sgd.step();
  ASSERT_EQ(sgd.state().size(), 2u);
  auto& w_state =
      static_cast<torch::optim::SGDParamState&>(*sgd.state().at(fc->weight.unsafeGetTensorImpl()));
  expect_same(w_state.momentum_buffer(), torch::ones({2, 3}));

  torch::nn::Linear g(3, 2);
  g->to(dev());
  torch::optim::Adam adam(g->parameters(), torch::optim::AdamOptions(0.01));
  g(torch::ones({1, 3}).to(dev())).sum().backward();
  adam.step();
  adam.step();
  auto& b_state =
      static_cast<torch::optim::AdamParamState&>(*adam.state().at(g->bias.unsafeGetTensorImpl()));
  EXPECT_EQ(b_state.step(), 2);
  // exp_avg after two steps of a constant gradient 1: 1 - 0.9^2.
  expect_same(b_state.exp_avg(), torch::full({2}, 1 - 0.81));
  expect_same(b_state.exp_avg_sq(), torch::full({2}, 1 - 0.999 * 0.999), 1e-6);
}

// A sequence classifier spelled as libtorch programs spell one: an LSTM holder registered in a
// user module, the (output, (h_n, c_n)) tuple, a GRU with torch::kReLU-free defaults and an
// RNNCell with torch::kReLU, trained a few steps; lazy matches cpu.
struct SeqNet : torch::nn::Module {
  SeqNet() {
    lstm = register_module(
        "lstm", torch::nn::LSTM(torch::nn::LSTMOptions(3, 5).num_layers(2).batch_first(true)));
    head = register_module("head", torch::nn::Linear(5, 2));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto [out, state] = lstm->forward(x);
    torch::Tensor h_n = std::get<0>(state);  // [layers, N, H]
    return head->forward(h_n[-1] + out.select(1, -1));
  }
  torch::nn::LSTM lstm{nullptr};
  torch::nn::Linear head{nullptr};
};

TEST_P(TorchNn, RecurrentModulesTrainAsInLibtorch) {
  torch::manual_seed(2);
  auto net = std::make_shared<SeqNet>();
  torch::manual_seed(2);  // the same initial weights
  auto lazy_net = std::make_shared<SeqNet>();
  lazy_net->to(dev());
  torch::optim::SGD a(net->parameters(), torch::optim::SGDOptions(0.1));
  torch::optim::SGD b(lazy_net->parameters(), torch::optim::SGDOptions(0.1));
  torch::Tensor x = torch::randn({4, 6, 3}), y = torch::tensor({0, 1, 1, 0}, torch::kInt64);
  for (int step = 0; step < 3; ++step) {
    for (auto [m, opt, d] : {std::make_tuple(net.get(), &a, torch::Device("cpu")),
                             std::make_tuple(lazy_net.get(), &b, dev())}) {
      opt->zero_grad();
      torch::nn::functional::cross_entropy(m->forward(x.to(d)), y.to(d)).backward();
      opt->step();
    }
  }
  expect_same(lazy_net->lstm->named_parameters()["weight_hh_l1"],
              net->lstm->named_parameters()["weight_hh_l1"]);
  torch::nn::GRU gru(torch::nn::GRUOptions(3, 4).bidirectional(true));
  gru->to(dev());
  auto [out, h_n] = gru->forward(x.transpose(0, 1).to(dev()));
  EXPECT_EQ(out.sizes(), torch::IntArrayRef({6, 4, 8}));
  EXPECT_EQ(h_n.sizes(), torch::IntArrayRef({2, 4, 4}));
  torch::nn::RNNCell cell(torch::nn::RNNCellOptions(3, 4).nonlinearity(torch::kReLU));
  cell->to(dev());
  torch::Tensor h = cell(x.select(1, 0).to(dev()));
  EXPECT_GE(h.min().item<float>(), 0.0f);
  auto [h2, c2] = torch::lstm_cell(x.select(1, 0), {torch::zeros({4, 5}), torch::zeros({4, 5})},
                                   net->lstm->named_parameters()["weight_ih_l0"],
                                   net->lstm->named_parameters()["weight_hh_l0"]);
  EXPECT_EQ(c2.sizes(), torch::IntArrayRef({4, 5}));
  // torch::nn::init as libtorch programs call it on a module's weights.
  torch::nn::Linear fc(3, 4);
  torch::nn::init::kaiming_normal_(fc->weight, 0.0, torch::kFanOut, torch::kReLU);
  torch::nn::init::xavier_uniform_(fc->weight, torch::nn::init::calculate_gain(torch::kTanh));
  torch::nn::init::zeros_(fc->bias);
  EXPECT_LE(fc->weight.abs().max().item<float>(), 5.0 / 3 * std::sqrt(6.0 / 7) + 1e-6);
  EXPECT_EQ(fc->bias.abs().sum().item<float>(), 0.0f);
}

// The transformer stack as a libtorch program spells it: options with torch::kGELU, the encoder
// and decoder from layer options, a final norm as AnyModule, the causal mask, one Adam step.
TEST_P(TorchNn, TransformerAsInLibtorch) {
  namespace nn = torch::nn;
  torch::manual_seed(3);
  nn::Transformer model(nn::TransformerOptions(16, 4, 1, 2)
                            .dim_feedforward(32)
                            .dropout(0.0)
                            .activation(torch::kGELU));
  nn::TransformerDecoder dec(
      nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(16, 4).dropout(0.0), 1)
          .norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({16})))));
  model->to(dev());
  dec->to(dev());
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(1e-3));
  torch::Tensor src = torch::randn({5, 2, 16}).to(dev()), tgt = torch::randn({4, 2, 16}).to(dev());
  torch::Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(4).to(dev());
  torch::Tensor out = model->forward(src, tgt, {}, mask);
  EXPECT_EQ(out.sizes(), torch::IntArrayRef({4, 2, 16}));
  EXPECT_EQ(dec->forward(tgt, src, mask).sizes(), torch::IntArrayRef({4, 2, 16}));
  torch::Tensor before = model->named_parameters()["decoder.layers.1.linear2.weight"].clone();
  out.pow(2).mean().backward();
  opt.step();
  EXPECT_GT((model->named_parameters()["decoder.layers.1.linear2.weight"] - before)
                .abs()
                .max()
                .item<float>(),
            0.0f);
}

// CTC as a libtorch speech program spells it: log_softmax over [T, N, C], a module with
// CPU length tensors, torch::ctc_loss with lists, F::ctc_loss with options; all agree.
TEST_P(TorchNn, CtcLossAsInLibtorch) {
  torch::manual_seed(4);
  torch::Tensor logits = torch::randn({12, 2, 5}).to(dev()).requires_grad_(true);
  torch::Tensor lp = logits.log_softmax(2);
  torch::Tensor targets = torch::randint(1, 5, {2, 4}, torch::kLong).to(dev());
  torch::Tensor in_len = torch::full({2}, 12, torch::kLong), tgt_len = torch::tensor({4, 3});
  torch::nn::CTCLoss ctc(torch::nn::CTCLossOptions().blank(0).zero_infinity(true));
  torch::Tensor loss = ctc(lp, targets, in_len, tgt_len);
  expect_same(loss,
              torch::ctc_loss(lp, targets, {12, 12}, {4, 3}, 0, torch::Reduction::Mean, true));
  torch::Tensor each =
      F::ctc_loss(lp, targets, in_len, tgt_len, F::CTCLossFuncOptions().reduction(torch::kNone));
  expect_same(loss, (each / torch::tensor({4.0f, 3.0f}).to(dev())).mean());
  expect_same(each.sum(), F::ctc_loss(lp, targets, in_len, tgt_len,
                                      F::CTCLossFuncOptions().reduction(torch::kSum)));
  loss.backward();
  EXPECT_TRUE(logits.grad().defined());
  EXPECT_TRUE(std::isfinite(logits.grad().abs().sum().item<float>()));
}

TEST(TorchNnPrint, ModulesPrintTheirTree) {
  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::ReLU());
  std::ostringstream os;
  os << *seq;
  EXPECT_NE(os.str().find("(0): Linear(in_features=3, out_features=4, bias=true)"),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("(1): ReLU"), std::string::npos) << os.str();
}

INSTANTIATE_TEST_SUITE_P(Devices, TorchNn, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
