// The transformer modules (lt/nn/modules/transformer.h): TransformerDecoderLayer,
// TransformerEncoder, TransformerDecoder and Transformer against PyTorch 1.13's values
// (tests/reference/transformer_golden.py fills parameters and inputs by a formula and printed the
// k_* values below), on cpu and lazy, with a gradient; parameter names and counts as PyTorch's;
// stacked layers start equal and train apart; clone(); libtorch's activation spellings; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "error_message.h"
#include "golden.h"
#include "gradcheck.h"
#include "lt/lt.h"

namespace {

using lt::Tensor;

// PyTorch 1.13's values (tests/reference/transformer_golden.py).
const std::vector<double> k_decoder_layer = {
    -0.30386183427404612, -0.33535485239170831, 0.43437978414826628, -0.42363941082253415,
    -0.30440147013150365, -0.3794762549530144,  0.30810715898338764, -0.93791073661749091,
    -0.3228428751237899,  -0.34695810165952889, 0.42888246637988042, -0.45969011614202526,
    -0.29657716616628838, -0.36004119941258339, 0.30826674285781824, -0.92771036201623358,
    -0.30915312195602235, -0.3770913254774238,  0.45026307946918476, -0.43285575658240527,
    -0.29295195486276904, -0.32211539997328492, 0.30801798565118588, -0.91832584914703663,
    -0.29070217995429248, -0.32506297090347686, 0.46060764556519218, -0.39337155229508619,
    -0.27249264641881749, -0.30995801292156239, 0.30733757788612182, -0.89537337063695888,
    -0.28088047330573812, -0.31319130698326092, 0.46058191237815299, -0.37267080074255565,
    -0.27988420984101009, -0.33305782834138675, 0.30730337731142621, -0.90646753875623109,
    -0.29326134654770653, -0.29714298352859236, 0.447169730657628,   -0.40105392246096261,
    -0.28131854873817735, -0.35787761355377984, 0.30758496452763207, -0.91658453956456976};
const std::vector<double> k_decoder_layer_norm_first = {
    1.8077739703353384,    -0.37581815097261478,  -1.6973677926021586,  -0.67675851889859329,
    0.25864157071373567,   0.41477278558184905,   1.1209957819953258,   1.0504225653206132,
    1.2942526528825575,    -0.6436092934654789,   -1.2844571036574277,  -0.49054574380972049,
    -0.010572135963209023, 0.47064142352721233,   1.3642777805445396,   0.74612475351262508,
    0.98302106064314509,   -0.3609909187713306,   -0.99355398556980534, -0.83695047726332716,
    -0.25615198228065061,  0.8221920153174187,    1.506509064326415,    0.40510873046346219,
    1.0791687105524914,    0.022305956029139373,  -1.1913310275458142,  -1.2880914593060737,
    -0.060349634538002891, 1.2183794670148087,    1.3216422143746622,   0.17901718999124311,
    1.7452726033141537,    0.43439085658074761,   -1.6309309856036163,  -1.6515737495275435,
    0.077211395476672717,  1.2055424658646581,    1.2310385373682355,   0.60119564048017038,
    1.7412065251309503,    -0.075164730460525131, -1.8526680011913115,  -0.996274884154978,
    0.57975130634206229,   0.79354066687693492,   0.76469429856386595,  0.68767995063184317};
const std::vector<double> k_encoder = {
    0.26757209121746844, -0.23157277187133765, 0.43137721176956034, 0.61906571945578381,
    0.2103639084384227,  -0.27100742025353125, 0.71692726419749209, 0.30555970453950826,
    0.26689155667899372, -0.23399896779094045, 0.43624516621035558, 0.62112334516062118,
    0.19627922373777579, -0.27064966340905477, 0.70543377897867099, 0.30455955056438211,
    0.26454883657161377, -0.23637326869325265, 0.43990365826963229, 0.61862926453295808,
    0.19172716526854244, -0.26561373590226151, 0.70354311259355318, 0.30488013220690707,
    0.26431958297802599, -0.23664364649935599, 0.43689582323126935, 0.61569290455212144,
    0.20015939949275272, -0.26182745755593706, 0.71297080027528548, 0.30605963427268429,
    0.26492192496810163, -0.23330053089204089, 0.43081315717807284, 0.61465522752761192,
    0.21387345371751298, -0.26394975319634173, 0.72412429241755805, 0.30677662479723689,
    0.26651955857322335, -0.23111421994801204, 0.42845847175553003, 0.61644784097497962,
    0.21728744106541084, -0.26809999136703278, 0.72527295519721946, 0.30647727629441818,
    0.2675209223441336,  -0.23144423561854222, 0.43105825431967049, 0.6188267432291954,
    0.2112515128829382,  -0.27085975873852841, 0.71780789991139116, 0.30564621832616307,
    0.26705496706701765, -0.23380676866727182, 0.43579209940385055, 0.62118585384542735,
    0.197275153921428,   -0.27089298511343507, 0.70608500035671062, 0.30459876714476941};
const std::vector<double> k_transformer = {
    -0.17225205036768412, -0.30751426836819379, 0.95607704919764058, 0.27207960760156341,
    -0.28685170722063991, -0.192166479418552,   0.81930961329223428, 0.52684425835831283,
    -0.16515297632453435, -0.30881304131661869, 0.96181431843859444, 0.27344301299551271,
    -0.28944848460706291, -0.1768558588474243,  0.81568775583689934, 0.52324811713113772,
    -0.16946626432490935, -0.30841860273644184, 0.96683209363006639, 0.26574108233727034,
    -0.28231435964419782, -0.18089809554828296, 0.80454763296022791, 0.5325564869611813,
    -0.17315338985524167, -0.30718543018572025, 0.96397213678854887, 0.26263244618771203,
    -0.2797227055040058,  -0.19319686739918446, 0.80317019845920834, 0.53838432574907935,
    -0.17627075498007444, -0.30657489489418743, 0.95932759361672471, 0.26396986316510418,
    -0.2813822407929602,  -0.2004908317233659,  0.807330083355846,   0.5382341287491198,
    -0.17615249773481692, -0.30662299779299551, 0.95554735198231899, 0.26780012437072975,
    -0.28418930662423209, -0.20110261443280039, 0.81446227304143182, 0.53363514284664637};
const std::vector<double> k_transformer_grad_src = {
    6.4283792068052474e-06,  -1.206704637404366e-05,  1.0558132153499776e-05,
    2.2773670455111177e-06,  -1.3802148720711142e-06, -2.9824660581516622e-06,
    4.1307174411220161e-06,  -7.422951518067957e-06,  1.1293424089405491e-05,
    -1.4176704380936931e-05, 1.9060709655369957e-05,  -6.224092956897473e-07,
    -4.8592925957339559e-07, -4.8470107466418944e-06, 1.0206916815169747e-06,
    -1.2129011551245736e-05, 1.4507631873203712e-05,  -2.0445335322014518e-05,
    1.7056314991104428e-05,  7.5893444716905838e-06,  2.4482153334297237e-07,
    -1.3472363224995168e-05, 1.9933457657074308e-06,  -8.4277077919284292e-06,
    2.0823516415117663e-05,  -3.0443962716514811e-05, 5.4967593589889285e-06,
    1.3424055133112415e-05,  -1.785357241993048e-06,  -1.710208991434652e-05,
    1.1596280046603153e-05,  -2.7123984368002817e-06, 1.1580308682873968e-05,
    -2.0663897421134978e-05, 3.0470967269992441e-06,  1.0498276330139787e-05,
    -2.1327809290458587e-06, -9.6980822275856356e-06, 8.8825728003008711e-06,
    -1.941615130130539e-06,  1.0214830155783731e-05,  -1.8963868260216632e-05,
    8.284910440599722e-06,   7.8809713188289597e-06,  -1.4704262785110626e-06,
    -8.3251593624183141e-06, 6.2148576696934524e-06,  -3.5553415594403023e-06,
    6.4295433860584771e-06,  -1.2281602428124456e-05, 1.0246194409781943e-05,
    2.614072784958215e-06,   -1.4156708619808132e-06, -3.1752954852288449e-06,
    4.282898099533043e-06,   -7.1069925038106871e-06, 1.0866509562182906e-05,
    -1.3954919808791134e-05, 1.8514763363008228e-05,  -6.5856416023055087e-07,
    -5.9546388973893506e-07, -4.4063246088264246e-06, 1.3470921384253772e-06,
    -1.1979379433435536e-05};
const std::vector<double> k_transformer_grad_w = {
    4.6875512473856891e-07,  7.3140383242511242e-08,  1.8287299913263392e-07,
    6.8407109465496456e-08,  2.1591603447285578e-07,  3.4944929424580989e-07,
    5.2275033112336721e-09,  4.3870165200406575e-07,  -1.0428822572293925e-06,
    -1.572697416979814e-07,  -4.1003136396075585e-07, -1.584201307209516e-07,
    -4.7721236463348569e-07, -7.9497278823968616e-07, -2.4009480345799412e-08,
    -9.8737029004570238e-07, -1.5360491541042492e-06, -2.3409149268038796e-07,
    -6.0250237107209412e-07, -2.3053553621521782e-07, -7.0429897893479104e-07,
    -1.1630307935135249e-06, -2.9798997210561217e-08, -1.4491842908960904e-06,
    -5.2912271228956177e-07, -8.2301361109826639e-08, -2.065743735194242e-07,
    -7.7511777846384303e-08, -2.4357283416978771e-07, -3.9528221253400219e-07,
    -6.4870513416301352e-09, -4.95736484858202e-07,   -7.0271533579754653e-07,
    -8.4661562232969113e-09, -3.1706193928559548e-07, -1.4370980139551658e-07,
    -2.7125729581348429e-07, -7.2745326709331255e-07, -1.7760648691661233e-07,
    -7.9045694387542091e-07, -1.0985195702629684e-06, -1.7203216195855592e-08,
    -4.9360741176168222e-07, -2.2143724915358981e-07, -4.2619639733375311e-07,
    -1.1266129761257674e-06, -2.6968320053651525e-07, -1.228822414204342e-06,
    -4.2151836398561291e-07, -9.1397525977385742e-09, -1.880998273202877e-07,
    -8.2910847543995497e-08, -1.6491550035630643e-07, -4.2553144857289596e-07,
    -9.8389453907424541e-08, -4.6712972685326196e-07, 6.6713431077519681e-07,
    7.8495204071215802e-09,  3.0110454652253679e-07,  1.3658562574165712e-07,
    2.5742055743413725e-07,  6.9112069382742385e-07,  1.6899064777720508e-07,
    7.5075812175543522e-07,  1.9974525935616108e-07,  1.5218096505630565e-06,
    -3.4345693035951347e-08, 2.2837442078109246e-06,  2.9700723416797247e-07,
    -1.1835563564183905e-06, -8.6763002701593395e-08, 2.3387972988540547e-07,
    1.4135511725765706e-07,  1.0646859285402579e-06,  -2.403857911573827e-08,
    1.5767445742128653e-06,  2.0885369931971655e-07,  -8.3526977394862164e-07,
    -5.2638348942613333e-08, 1.5986778928194525e-07,  -1.2465495636367389e-07,
    -9.6949598249007889e-07, 2.1835270714245395e-08,  -1.4879952892699964e-06,
    -1.8748492315470795e-07, 7.4199051928835952e-07,  6.8181701794462002e-08,
    -1.5447114911777002e-07, -2.0329734078701951e-07, -1.5500319252626224e-06,
    3.4979351702630811e-08,  -2.3280204418502639e-06, -3.0241358370146652e-07,
    1.2047936322189215e-06,  8.9126812255936902e-08,  -2.3852541249518307e-07,
    4.4606988487701632e-08,  3.1544053644762447e-07,  -7.1738091017115531e-09,
    4.3244770672191874e-07,  6.3671687412400244e-08,  -2.6014241937639104e-07,
    -2.0355381267927448e-09, 4.1644095134664864e-08,  -2.1818244558684587e-08,
    -2.0674442654305341e-07, 4.6585563972329921e-09,  -3.8023680047458404e-07,
    -3.6824898742197765e-08, 1.3719262202184753e-07,  3.848468838610366e-08,
    -4.4614462801302525e-08, -5.4571616685354876e-08, -4.225459724581043e-07,
    9.5932541048906808e-09,  -6.4725500310247772e-07, -8.1866202836099596e-08,
    3.2537028724852533e-07,  2.8718126540960212e-08,  -6.8146343473090884e-08,
    -6.757976866109911e-08,  -5.0918090046679953e-07, 1.1530673010755655e-08,
    -7.5519062231882083e-07, -9.9847606933569309e-08, 3.9977442911807439e-07,
    2.5373433777421745e-08,  -7.7105796894447513e-08, 0.00075307776831739571,
    0.00071633851274737598,  -0.00061258760020599975, 0.00080959460670111325,
    0.00074574221930820742,  -7.0871499362541029e-05, 3.2430764233780134e-05,
    0.0013179946776107076,   -0.0030176609893285628,  -0.0028564862990233201,
    0.0024541829293732264,   -0.0032312817660037746,  -0.0029874381823928584,
    0.00027423038271581453,  -0.00012701947389117817, -0.0052805610281859436,
    2.4540239933330723e-05,  1.9746552572117647e-05,  -1.9828316681592249e-05,
    2.3071123433081823e-05,  2.4087704390875016e-05,  2.0534939956784958e-07,
    3.0075552460409529e-07,  4.2747752935811209e-05,  0.003011337239720354,
    0.0028513978298628445,   -0.0024490733905020781,  0.0032253365915406373,
    0.0029812310462108875,   -0.00027428329899489634, 0.00012694197250422951,
    0.0052695454029673622,   -0.00080048204725572053, -0.00075415844964543265,
    0.00065091935588454278,  -0.00085364901622265175, -0.00079224790074513228,
    7.0196350105403995e-05,  -3.3037494912055052e-05, -0.0014005927996237223,
    -0.0028050429092050921,  -0.0026568567500950759,  0.0022813339788027576,
    -0.003004952947806323,   -0.0027770431052104223,  0.00025606976105527006,
    -0.00011847895968840157, -0.004908576744225384,   0.0015233107174832791,
    0.0014388011784087387,   -0.0012387940015206231,  0.0016279923021065594,
    0.001507861329800557,    -0.00013618270784048853, 6.3568218203479115e-05,
    0.0026654789762647138,   0.0024125025111069323,   0.0022860935296473289,
    -0.0019621104054782595,  0.0025854372580424822,   0.0023884838441985737,
    -0.00022097697680826528, 0.00010209812983301241,  0.0042217121627210448};

std::vector<double> dv(const Tensor& t) { return lt_test::values_of(t); }
using lt_test::filled;  // tests/reference/golden.py's formula
// The module in float64 on `d`, parameter k of the sorted names filled with formula k.
void fill_parameters(lt::nn::Module& m, lt::Device d) {
  m.to(lt::kFloat64);
  m.to(d);
  lt::NoGradGuard g;
  std::map<std::string, Tensor> by_name;
  for (const auto& item : m.named_parameters()) by_name[item.key()] = item.value();
  int k = 0;
  for (auto& [name, p] : by_name) p.set_data(filled(p.sizes().vec(), k++, d));
}

void expect_values(const Tensor& got, const std::vector<int64_t>& sizes,
                   const std::vector<double>& want, double tol, const std::string& what) {
  lt_test::expect_golden(got, want, tol, what, &sizes);
}

Tensor causal(int64_t n, lt::Device d) {
  return lt::nn::TransformerImpl::generate_square_subsequent_mask(n).to(lt::kFloat64).to(d);
}
Tensor bools(const std::vector<std::vector<int>>& rows, lt::Device d) {
  std::vector<double> v;
  for (const auto& r : rows) v.insert(v.end(), r.begin(), r.end());
  const int64_t n = static_cast<int64_t>(rows.size());
  return (lt::tensor(v, {n, static_cast<int64_t>(v.size()) / n}) != 0).to(d);
}

class Transformers : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
};

// float64 throughout: softmax, layer_norm and gelu compiled within a few ulp of libm
// (docs/ARCHITECTURE.md); a few layers of O(1) values keep the difference far below 1e-11.
constexpr double kGoldenTol = 1e-11;

TEST_P(Transformers, DecoderLayerMatchesPyTorch) {
  lt::nn::TransformerDecoderLayer m(
      lt::nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.0));
  fill_parameters(*m, dev());
  Tensor kpm = bools({{0, 0, 1, 0}, {0, 0, 0, 0}}, dev());
  Tensor y = m->forward(filled({3, 2, 8}, 100, dev()), filled({4, 2, 8}, 101, dev()),
                        causal(3, dev()), {}, {}, kpm);
  expect_values(y, {3, 2, 8}, k_decoder_layer, kGoldenTol, "decoder layer");
}

TEST_P(Transformers, DecoderLayerNormFirstGeluBatchFirstMatchesPyTorch) {
  lt::nn::TransformerDecoderLayer m(lt::nn::TransformerDecoderLayerOptions(8, 2)
                                        .dim_feedforward(12)
                                        .dropout(0.0)
                                        .activation(lt::kGELU)
                                        .norm_first(true)
                                        .batch_first(true)
                                        .layer_norm_eps(1e-3));
  fill_parameters(*m, dev());
  Tensor mmask = bools({{0, 1, 0, 0}, {0, 0, 1, 1}, {1, 0, 0, 0}}, dev());
  Tensor tkpm = bools({{0, 0, 0}, {0, 1, 0}}, dev());
  Tensor y =
      m->forward(filled({2, 3, 8}, 100, dev()), filled({2, 4, 8}, 101, dev()), {}, mmask, tkpm);
  expect_values(y, {2, 3, 8}, k_decoder_layer_norm_first, kGoldenTol, "norm_first decoder layer");
}

TEST_P(Transformers, EncoderStackWithFinalNormMatchesPyTorch) {
  lt::nn::TransformerEncoder m(
      lt::nn::TransformerEncoderOptions(
          lt::nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.0), 2)
          .norm(lt::nn::AnyModule(lt::nn::LayerNorm(std::vector<int64_t>{8}))));
  fill_parameters(*m, dev());
  Tensor y =
      m->forward(filled({4, 2, 8}, 100, dev()), {}, bools({{0, 0, 1, 0}, {0, 0, 0, 0}}, dev()));
  expect_values(y, {4, 2, 8}, k_encoder, kGoldenTol, "encoder");
}

TEST_P(Transformers, TransformerForwardAndGradientsMatchPyTorch) {
  lt::nn::Transformer m(lt::nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(12).dropout(0.0));
  fill_parameters(*m, dev());
  Tensor src = filled({4, 2, 8}, 100, dev()).requires_grad_();
  Tensor y = m->forward(src, filled({3, 2, 8}, 101, dev()), {}, causal(3, dev()));
  expect_values(y, {3, 2, 8}, k_transformer, kGoldenTol, "transformer");
  (y * filled({3, 2, 8}, 102, dev())).sum().backward();
  expect_values(src.grad(), {4, 2, 8}, k_transformer_grad_src, 1e-10, "d/d src");
  auto& layer = m->decoder.get<lt::nn::TransformerDecoderImpl>()
                    .layers->at<lt::nn::TransformerDecoderLayerImpl>(0);
  expect_values(layer.multihead_attn->in_proj_weight.grad(), {24, 8}, k_transformer_grad_w, 1e-10,
                "d/d decoder cross-attention in_proj_weight");
}

INSTANTIATE_TEST_SUITE_P(Devices, Transformers, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

TEST(Transformer, ParameterNamesAndCountAsPyTorch) {
  lt::nn::Transformer m(lt::nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(12));
  auto named = m->named_parameters();
  EXPECT_EQ(named.size(), 46u);  // PyTorch 1.13's count for the same options
  for (const char* name :
       {"encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.1.linear2.bias",
        "encoder.norm.weight", "decoder.layers.0.multihead_attn.out_proj.weight",
        "decoder.layers.0.norm3.bias", "decoder.norm.bias"})
    EXPECT_TRUE(named.contains(name)) << name;
  // Every matrix drawn xavier-uniform: |w| <= sqrt(6 / (fan_in + fan_out)).
  const Tensor& w = named["decoder.layers.0.linear1.weight"];
  EXPECT_LE(dv(w.abs().max())[0], std::sqrt(6.0 / (8 + 12)) + 1e-6);
  EXPECT_GT(dv(w.abs().max())[0], 0.5 * std::sqrt(6.0 / (8 + 12)));
  // The mask: -inf above the diagonal, 0 on and below it.
  std::vector<double> mask = dv(lt::nn::TransformerImpl::generate_square_subsequent_mask(3));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(mask, (std::vector<double>{0, -inf, -inf, 0, 0, -inf, 0, 0, 0}));
}

TEST(Transformer, StackedLayersStartEqualAndTrainApart) {
  lt::nn::TransformerEncoderLayer layer(
      lt::nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.0));
  lt::nn::TransformerEncoder enc(layer, 2);
  auto& l0 = enc->layers->at<lt::nn::TransformerEncoderLayerImpl>(0);
  auto& l1 = enc->layers->at<lt::nn::TransformerEncoderLayerImpl>(1);
  EXPECT_EQ(dv(l0.linear1->weight), dv(l1.linear1->weight));
  EXPECT_EQ(dv(l0.linear1->weight), dv(layer->linear1->weight));
  {
    lt::NoGradGuard g;
    l0.linear1->weight.add_(1.0);
  }
  EXPECT_NE(dv(l0.linear1->weight), dv(l1.linear1->weight)) << "the layers share storage";
  EXPECT_NE(dv(l0.linear1->weight), dv(layer->linear1->weight));

  // clone(): an equal, independent copy of the whole stack.
  auto copy = std::dynamic_pointer_cast<lt::nn::TransformerEncoderImpl>(enc->clone());
  ASSERT_TRUE(copy);
  Tensor x = lt::randn({3, 2, 8});
  EXPECT_EQ(dv(copy->forward(x)), dv(enc(x)));
  {
    lt::NoGradGuard g;
    copy->layers->at<lt::nn::TransformerEncoderLayerImpl>(1).linear2->bias.add_(1.0);
  }
  EXPECT_NE(dv(copy->forward(x)), dv(enc(x)));
}

TEST(Transformer, LibtorchActivationSpellings) {
  Tensor x = lt::randn({3, 2, 8});
  lt::manual_seed(7);
  lt::nn::TransformerEncoderLayer by_tag(
      lt::nn::TransformerEncoderLayerOptions(8, 2).dropout(0.0).activation(lt::kGELU));
  lt::manual_seed(7);
  lt::nn::TransformerEncoderLayer by_string(
      lt::nn::TransformerEncoderLayerOptions(8, 2).dropout(0.0).activation("gelu"));
  lt::manual_seed(7);
  lt::nn::TransformerEncoderLayer by_function(
      lt::nn::TransformerEncoderLayerOptions(8, 2).dropout(0.0).activation(
          [](const Tensor& t) { return lt::gelu(t); }));
  EXPECT_EQ(dv(by_tag(x)), dv(by_string(x)));
  EXPECT_EQ(dv(by_tag(x)), dv(by_function(x)));
  EXPECT_EQ(by_function->options.activation().name(), "function");
}

TEST(Transformer, ErrorsNameTheModuleAndShapes) {
  EXPECT_THROW(lt::nn::TransformerDecoderLayer(
                   lt::nn::TransformerDecoderLayerOptions(8, 2).activation("tanh")),
               lt::Error);
  EXPECT_THROW(lt::nn::TransformerDecoderLayer(8, 3), lt::Error);  // 8 % 3 != 0
  lt::nn::Transformer m(lt::nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(12));
  std::string msg = lt_test::error_message([&] { m(lt::randn({4, 2, 8}), lt::randn({3, 5, 8})); });
  EXPECT_NE(msg.find("Transformer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3, 5, 8]"), std::string::npos) << msg;
  msg = lt_test::error_message([&] { m(lt::randn({4, 2, 6}), lt::randn({3, 2, 6})); });
  EXPECT_NE(msg.find("d_model = 8"), std::string::npos) << msg;
  // A decoder as AnyModule takes its six tensors; a Linear does not.
  lt::nn::AnyModule any(lt::nn::Linear(8, 8));
  msg = lt_test::error_message([&] { any.forward(lt::randn({2, 8}), lt::randn({2, 8})); });
  EXPECT_NE(msg.find("does not take 2 tensors"), std::string::npos) << msg;
  // The module stays usable after the errors.
  EXPECT_EQ(m(lt::randn({4, 2, 8}), lt::randn({3, 2, 8})).sizes().vec(),
            (std::vector<int64_t>{3, 2, 8}));
}

// A custom decoder given as AnyModule is called with all six tensors.
TEST(Transformer, CustomEncoderAndDecoder) {
  lt::nn::TransformerDecoder dec(
      lt::nn::TransformerDecoderLayer(
          lt::nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.0)),
      1);
  lt::nn::TransformerEncoder enc(
      lt::nn::TransformerEncoderLayer(
          lt::nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.0)),
      1);
  lt::nn::Transformer m(lt::nn::TransformerOptions(8, 2)
                            .custom_encoder(lt::nn::AnyModule(enc))
                            .custom_decoder(lt::nn::AnyModule(dec)));
  EXPECT_EQ(m->named_parameters().size(), 12u + 18u);  // no final norms
  Tensor src = lt::randn({4, 2, 8}), tgt = lt::randn({3, 2, 8});
  Tensor mask = lt::nn::TransformerImpl::generate_square_subsequent_mask(3);
  auto& e = m->encoder.get<lt::nn::TransformerEncoderImpl>();
  auto& d = m->decoder.get<lt::nn::TransformerDecoderImpl>();
  EXPECT_EQ(dv(m->forward(src, tgt, {}, mask)), dv(d.forward(tgt, e.forward(src), mask)));
}

}  // namespace
