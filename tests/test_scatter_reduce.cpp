// scatter_reduce (lt/ops.h) against PyTorch 1.13's values (tests/reference/scatter_reduce_golden.py
// printed the k_* values below): sum, mean, amax and amin along dim 0 and dim 1, with and without
// include_self, with ties in src (amax/amin share their gradient evenly), values and gradients
// in float64 on cpu and lazy (tolerance 1e-14: sums and quotients of a few terms); integers
// (mean floor-divides), a src larger than index, NaN, errors, and lazy against eager on random
// sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "error_message.h"
#include "golden.h"
#include "lt/lt.h"

namespace {

// The error `f` throws contains `part`.
#define EXPECT_THROW_MESSAGE(f, part)                                                 \
  EXPECT_NE(lt_test::error_message([&] { (void)(f); }).find(part), std::string::npos) \
      << lt_test::error_message([&] { (void)(f); })

using lt::Tensor;

// PyTorch 1.13's values (tests/reference/scatter_reduce_golden.py).
const std::vector<double> k_d0_sum_self = {
    0.69486843765645179, 0.43613964412640527,  -0.38064082955580636, -0.072865001708838348,
    0.41958641327256796, -0.69409801270854565, -0.57153007747436757, 0.88698807850768491,
    0.35791646885620171, -0.22322090851471177, -0.30039489870867042, 0.77677903676342441,
    0.22292602140706458, -0.35807494712787213, -0.13065405044188891};
const std::vector<double> k_d0_sum_self_gself = {
    0.13399526006236187,   -0.39101204706603881,  -0.033235761126998914, 0.39957653673590882,
    -0.069730712489191868, -0.38160769996083582,  0.16806681473065574,   0.33829873245717335,
    -0.25524267293918007,  -0.27252550622220001,  0.32546949500284217,   0.18865560123767847,
    -0.37408396607781558,  -0.092258282370958275, 0.39785790955113526};
const std::vector<double> k_d0_sum_self_gsrc = {
    0.13399526006236187,  0.33829873245717335,  -0.38160769996083582,  0.13399526006236187,
    -0.39101204706603881, -0.38160769996083582, 0.16806681473065574,   0.33829873245717335,
    0.18865560123767847,  0.13399526006236187,  -0.069730712489191868, 0.18865560123767847};
const std::vector<double> k_d0_sum_noself = {
    0.35828004373329314,  0.26518769203287335,  -0.38064082955580636, -0.072865001708838348,
    0.020169075122725907, -0.66403756452382201, -0.17985898581384061, 0.75599830285260772,
    0.35791646885620171,  -0.22322090851471177, -0.30039489870867042, 0.47614967062256514,
    0.22292602140706458,  -0.35807494712787213, -0.13065405044188891};
const std::vector<double> k_d0_sum_noself_gself = {0,
                                                   0,
                                                   -0.033235761126998914,
                                                   0.39957653673590882,
                                                   0,
                                                   0,
                                                   0,
                                                   0,
                                                   -0.25524267293918007,
                                                   -0.27252550622220001,
                                                   0.32546949500284217,
                                                   0,
                                                   -0.37408396607781558,
                                                   -0.092258282370958275,
                                                   0.39785790955113526};
const std::vector<double> k_d0_sum_noself_gsrc = {
    0.13399526006236187,  0.33829873245717335,  -0.38160769996083582,  0.13399526006236187,
    -0.39101204706603881, -0.38160769996083582, 0.16806681473065574,   0.33829873245717335,
    0.18865560123767847,  0.13399526006236187,  -0.069730712489191868, 0.18865560123767847};
const std::vector<double> k_d0_mean_self = {
    0.17371710941411295, 0.21806982206320263,  -0.38064082955580636, -0.072865001708838348,
    0.20979320663628398, -0.23136600423618189, -0.28576503873718379, 0.29566269283589497,
    0.35791646885620171, -0.22322090851471177, -0.30039489870867042, 0.25892634558780814,
    0.22292602140706458, -0.35807494712787213, -0.13065405044188891};
const std::vector<double> k_d0_mean_self_gself = {
    0.033498815015590468,  -0.19550602353301941,  -0.033235761126998914, 0.39957653673590882,
    -0.034865356244595934, -0.12720256665361193,  0.08403340736532787,   0.11276624415239112,
    -0.25524267293918007,  -0.27252550622220001,  0.32546949500284217,   0.062885200412559489,
    -0.37408396607781558,  -0.092258282370958275, 0.39785790955113526};
const std::vector<double> k_d0_mean_self_gsrc = {
    0.033498815015590468, 0.11276624415239112,  -0.12720256665361193,  0.033498815015590468,
    -0.19550602353301941, -0.12720256665361193, 0.08403340736532787,   0.11276624415239112,
    0.062885200412559489, 0.033498815015590468, -0.034865356244595934, 0.062885200412559489};
const std::vector<double> k_d0_mean_noself = {
    0.11942668124443105,  0.26518769203287335,  -0.38064082955580636, -0.072865001708838348,
    0.020169075122725907, -0.33201878226191101, -0.17985898581384061, 0.37799915142630386,
    0.35791646885620171,  -0.22322090851471177, -0.30039489870867042, 0.23807483531128257,
    0.22292602140706458,  -0.35807494712787213, -0.13065405044188891};
const std::vector<double> k_d0_mean_noself_gself = {0,
                                                    0,
                                                    -0.033235761126998914,
                                                    0.39957653673590882,
                                                    0,
                                                    0,
                                                    0,
                                                    0,
                                                    -0.25524267293918007,
                                                    -0.27252550622220001,
                                                    0.32546949500284217,
                                                    0,
                                                    -0.37408396607781558,
                                                    -0.092258282370958275,
                                                    0.39785790955113526};
const std::vector<double> k_d0_mean_noself_gsrc = {
    0.044665086687453955, 0.16914936622858667,  -0.19080384998041791,  0.044665086687453955,
    -0.39101204706603881, -0.19080384998041791, 0.16806681473065574,   0.16914936622858667,
    0.094327800618839233, 0.044665086687453955, -0.069730712489191868, 0.094327800618839233};
const std::vector<double> k_d0_amax_self = {
    0.37852003507496579, 0.26518769203287335,   -0.38064082955580636, -0.072865001708838348,
    0.39941733814984204, -0.030060448184723722, -0.17985898581384061, 0.37852003507496579,
    0.35791646885620171, -0.22322090851471177,  -0.30039489870867042, 0.39356267784744647,
    0.22292602140706458, -0.35807494712787213,  -0.13065405044188891};
const std::vector<double> k_d0_amax_self_gself = {0,
                                                  -0,
                                                  -0.033235761126998914,
                                                  0.39957653673590882,
                                                  -0.069730712489191868,
                                                  -0.38160769996083582,
                                                  0,
                                                  0,
                                                  -0.25524267293918007,
                                                  -0.27252550622220001,
                                                  0.32546949500284217,
                                                  0,
                                                  -0.37408396607781558,
                                                  -0.092258282370958275,
                                                  0.39785790955113526};
const std::vector<double> k_d0_amax_self_gsrc = {0.066997630031180935,
                                                 0.33829873245717335,
                                                 -0,
                                                 0.066997630031180935,
                                                 -0.39101204706603881,
                                                 -0,
                                                 0.16806681473065574,
                                                 0,
                                                 0,
                                                 0,
                                                 -0,
                                                 0.18865560123767847};
const std::vector<double> k_d0_amax_noself = {
    0.37852003507496579,  0.26518769203287335,  -0.38064082955580636, -0.072865001708838348,
    0.020169075122725907, -0.33113058763426151, -0.17985898581384061, 0.37852003507496579,
    0.35791646885620171,  -0.22322090851471177, -0.30039489870867042, 0.39356267784744647,
    0.22292602140706458,  -0.35807494712787213, -0.13065405044188891};
const std::vector<double> k_d0_amax_noself_gself = {0,
                                                    0,
                                                    -0.033235761126998914,
                                                    0.39957653673590882,
                                                    0,
                                                    0,
                                                    0,
                                                    0,
                                                    -0.25524267293918007,
                                                    -0.27252550622220001,
                                                    0.32546949500284217,
                                                    0,
                                                    -0.37408396607781558,
                                                    -0.092258282370958275,
                                                    0.39785790955113526};
const std::vector<double> k_d0_amax_noself_gsrc = {0.066997630031180935,
                                                   0.33829873245717335,
                                                   -0,
                                                   0.066997630031180935,
                                                   -0.39101204706603881,
                                                   -0.38160769996083582,
                                                   0.16806681473065574,
                                                   0,
                                                   0,
                                                   0,
                                                   -0.069730712489191868,
                                                   0.18865560123767847};
const std::vector<double> k_d0_amin_self = {
    -0.39876002641663844, 0.17095195209353192,  -0.38064082955580636, -0.072865001708838348,
    0.020169075122725907, -0.3329069768895605,  -0.39167109166052699, 0.13098977565507722,
    0.35791646885620171,  -0.22322090851471177, -0.30039489870867042, 0.082586992775118648,
    0.22292602140706458,  -0.35807494712787213, -0.13065405044188891};
const std::vector<double> k_d0_amin_self_gself = {0,
                                                  -0.39101204706603881,
                                                  -0.033235761126998914,
                                                  0.39957653673590882,
                                                  -0,
                                                  -0,
                                                  0.16806681473065574,
                                                  0.33829873245717335,
                                                  -0.25524267293918007,
                                                  -0.27252550622220001,
                                                  0.32546949500284217,
                                                  0,
                                                  -0.37408396607781558,
                                                  -0.092258282370958275,
                                                  0.39785790955113526};
const std::vector<double> k_d0_amin_self_gsrc = {0,
                                                 0,
                                                 -0.38160769996083582,
                                                 0,
                                                 -0,
                                                 -0,
                                                 0,
                                                 0,
                                                 0.18865560123767847,
                                                 0.13399526006236187,
                                                 -0.069730712489191868,
                                                 0};
const std::vector<double> k_d0_amin_noself = {
    -0.39876002641663844, 0.26518769203287335,  -0.38064082955580636, -0.072865001708838348,
    0.020169075122725907, -0.3329069768895605,  -0.17985898581384061, 0.37747826777764193,
    0.35791646885620171,  -0.22322090851471177, -0.30039489870867042, 0.082586992775118648,
    0.22292602140706458,  -0.35807494712787213, -0.13065405044188891};
const std::vector<double> k_d0_amin_noself_gself = {0,
                                                    0,
                                                    -0.033235761126998914,
                                                    0.39957653673590882,
                                                    0,
                                                    0,
                                                    0,
                                                    0,
                                                    -0.25524267293918007,
                                                    -0.27252550622220001,
                                                    0.32546949500284217,
                                                    0,
                                                    -0.37408396607781558,
                                                    -0.092258282370958275,
                                                    0.39785790955113526};
const std::vector<double> k_d0_amin_noself_gsrc = {0,
                                                   0,
                                                   -0.38160769996083582,
                                                   0,
                                                   -0.39101204706603881,
                                                   -0,
                                                   0.16806681473065574,
                                                   0.33829873245717335,
                                                   0.18865560123767847,
                                                   0.13399526006236187,
                                                   -0.069730712489191868,
                                                   0};
const std::vector<double> k_d1_sum_self = {
    0.0036814170335981444, 0.92799202224346344,   -0.38064082955580636,  0.189929637778677,
    0.26590603247938183,   -0.030060448184723722, -0.013151056585561205, 0.13098977565507722};
const std::vector<double> k_d1_sum_self_gself = {
    0.13399526006236187,   -0.39101204706603881, -0.033235761126998914, 0.39957653673590882,
    -0.069730712489191868, -0.38160769996083582, 0.16806681473065574,   0.33829873245717335};
const std::vector<double> k_d1_sum_self_gsrc = {
    -0.39101204706603881, -0.39101204706603881,  0.13399526006236187,   0.39957653673590882,
    0.16806681473065574,  -0.069730712489191868, -0.069730712489191868, -0.069730712489191868};
const std::vector<double> k_d1_sum_noself = {
    -0.3329069768895605,  0.75704007014993158,   -0.38064082955580636, 0.26279463948751536,
    -0.13351130567046021, -0.030060448184723722, 0.37852003507496579,  0.13098977565507722};
const std::vector<double> k_d1_sum_noself_gself = {
    0, 0, -0.033235761126998914, 0, 0, -0.38160769996083582, 0, 0.33829873245717335};
const std::vector<double> k_d1_sum_noself_gsrc = {
    -0.39101204706603881, -0.39101204706603881,  0.13399526006236187,   0.39957653673590882,
    0.16806681473065574,  -0.069730712489191868, -0.069730712489191868, -0.069730712489191868};
const std::vector<double> k_d1_mean_self = {
    0.0018407085167990722, 0.3093306740811545,    -0.38064082955580636,   0.094964818889338498,
    0.066476508119845457,  -0.030060448184723722, -0.0065755282927806025, 0.13098977565507722};
const std::vector<double> k_d1_mean_self_gself = {
    0.066997630031180935,  -0.13033734902201294, -0.033235761126998914, 0.19978826836795441,
    -0.017432678122297967, -0.38160769996083582, 0.08403340736532787,   0.33829873245717335};
const std::vector<double> k_d1_mean_self_gsrc = {
    -0.13033734902201294, -0.13033734902201294,  0.066997630031180935,  0.19978826836795441,
    0.08403340736532787,  -0.017432678122297967, -0.017432678122297967, -0.017432678122297967};
const std::vector<double> k_d1_mean_noself = {
    -0.3329069768895605,   0.37852003507496579,   -0.38064082955580636, 0.26279463948751536,
    -0.044503768556820068, -0.030060448184723722, 0.37852003507496579,  0.13098977565507722};
const std::vector<double> k_d1_mean_noself_gself = {
    0, 0, -0.033235761126998914, 0, 0, -0.38160769996083582, 0, 0.33829873245717335};
const std::vector<double> k_d1_mean_noself_gsrc = {
    -0.19550602353301941, -0.19550602353301941,  0.13399526006236187,   0.39957653673590882,
    0.16806681473065574,  -0.023243570829730623, -0.023243570829730623, -0.023243570829730623};
const std::vector<double> k_d1_amax_self = {
    0.33658839392315865, 0.37852003507496579,   -0.38064082955580636, 0.26279463948751536,
    0.39941733814984204, -0.030060448184723722, 0.37852003507496579,  0.13098977565507722};
const std::vector<double> k_d1_amax_self_gself = {
    0.13399526006236187,  -0, -0.033235761126998914, 0, -0.069730712489191868,
    -0.38160769996083582, 0,  0.33829873245717335};
const std::vector<double> k_d1_amax_self_gsrc = {-0.19550602353301941,
                                                 -0.19550602353301941,
                                                 0,
                                                 0.39957653673590882,
                                                 0.16806681473065574,
                                                 -0,
                                                 -0,
                                                 -0};
const std::vector<double> k_d1_amax_noself = {
    -0.3329069768895605, 0.37852003507496579,   -0.38064082955580636, 0.26279463948751536,
    0.37747826777764193, -0.030060448184723722, 0.37852003507496579,  0.13098977565507722};
const std::vector<double> k_d1_amax_noself_gself = {
    0, 0, -0.033235761126998914, 0, 0, -0.38160769996083582, 0, 0.33829873245717335};
const std::vector<double> k_d1_amax_noself_gsrc = {-0.19550602353301941,
                                                   -0.19550602353301941,
                                                   0.13399526006236187,
                                                   0.39957653673590882,
                                                   0.16806681473065574,
                                                   -0,
                                                   -0,
                                                   -0.069730712489191868};
const std::vector<double> k_d1_amin_self = {
    -0.3329069768895605,  0.17095195209353192,   -0.38064082955580636, -0.072865001708838348,
    -0.33113058763426151, -0.030060448184723722, -0.39167109166052699, 0.13098977565507722};
const std::vector<double> k_d1_amin_self_gself = {
    0,  -0.39101204706603881, -0.033235761126998914, 0.39957653673590882,
    -0, -0.38160769996083582, 0.16806681473065574,   0.33829873245717335};
const std::vector<double> k_d1_amin_self_gsrc = {
    -0, -0, 0.13399526006236187, 0, 0, -0.069730712489191868, -0, -0};
const std::vector<double> k_d1_amin_noself = {
    -0.3329069768895605,  0.37852003507496579,   -0.38064082955580636, 0.26279463948751536,
    -0.33113058763426151, -0.030060448184723722, 0.37852003507496579,  0.13098977565507722};
const std::vector<double> k_d1_amin_noself_gself = {
    0, 0, -0.033235761126998914, 0, 0, -0.38160769996083582, 0, 0.33829873245717335};
const std::vector<double> k_d1_amin_noself_gsrc = {-0.19550602353301941,
                                                   -0.19550602353301941,
                                                   0.13399526006236187,
                                                   0.39957653673590882,
                                                   0.16806681473065574,
                                                   -0.069730712489191868,
                                                   -0,
                                                   -0};

class ScatterReduce : public ::testing::TestWithParam<std::string> {
 protected:
  lt::Device dev() const { return lt::Device(GetParam()); }
};

// The golden script's src: filled values with src[1][0] and src[0][1] set to src[0][0] (ties).
Tensor tied_src(const std::vector<int64_t>& sizes, lt::Device d) {
  std::vector<double> v = lt_test::values_of(lt_test::filled(sizes, 2, lt::Device("cpu")));
  v[static_cast<size_t>(sizes[1])] = v[0];
  v[1] = v[0];
  return lt::tensor(v, sizes).to(d);
}

TEST_P(ScatterReduce, MatchesPyTorchWithGradients) {
  struct Case {
    int64_t dim;
    const char* reduce;
    bool self;
    const std::vector<double>*out, *gself, *gsrc;
  };
  const std::vector<Case> cases = {
#define LT_CASE(d, r, s, n) \
  {d, #r, s, &k_d##d##_##r##_##n, &k_d##d##_##r##_##n##_gself, &k_d##d##_##r##_##n##_gsrc}
      LT_CASE(0, sum, true, self),  LT_CASE(0, sum, false, noself),
      LT_CASE(0, mean, true, self), LT_CASE(0, mean, false, noself),
      LT_CASE(0, amax, true, self), LT_CASE(0, amax, false, noself),
      LT_CASE(0, amin, true, self), LT_CASE(0, amin, false, noself),
      LT_CASE(1, sum, true, self),  LT_CASE(1, sum, false, noself),
      LT_CASE(1, mean, true, self), LT_CASE(1, mean, false, noself),
      LT_CASE(1, amax, true, self), LT_CASE(1, amax, false, noself),
      LT_CASE(1, amin, true, self), LT_CASE(1, amin, false, noself),
#undef LT_CASE
  };
  const Tensor index0 =
      lt::tensor(std::vector<int64_t>{0, 2, 1, 0, 0, 1, 2, 2, 3, 0, 1, 3}, {4, 3});
  const Tensor index1 = lt::tensor(std::vector<int64_t>{1, 1, 0, 3, 2, 0, 0, 0}, {2, 4});
  for (const Case& c : cases) {
    const std::vector<int64_t> self_shape =
        c.dim == 0 ? std::vector<int64_t>{5, 3} : std::vector<int64_t>{2, 4};
    const Tensor& index = c.dim == 0 ? index0 : index1;
    Tensor x = lt_test::filled(self_shape, 1, dev()).requires_grad_(true);
    Tensor s = tied_src(index.sizes().vec(), dev()).requires_grad_(true);
    Tensor out = x.scatter_reduce(c.dim, index.to(dev()), s, c.reduce, c.self);
    (out * lt_test::filled(self_shape, 3, dev())).sum().backward();
    const std::string what = std::string("dim ") + std::to_string(c.dim) + " " + c.reduce +
                             (c.self ? " include_self" : "");
    lt_test::expect_golden(out, *c.out, 1e-14, what, &self_shape);
    lt_test::expect_golden(x.grad(), *c.gself, 1e-14, what + " grad self");
    lt_test::expect_golden(s.grad(), *c.gsrc, 1e-14, what + " grad src");
  }
}

TEST_P(ScatterReduce, IntegersSrcLargerThanIndexAndNaN) {
  // Integers: mean floor-divides (PyTorch's rule); src beyond index's extent is not read.
  const Tensor t = lt::tensor(std::vector<int64_t>{10, -7, 3}, {3}).to(dev());
  const Tensor src = lt::tensor(std::vector<int64_t>{4, -2, 5, 100, 100}, {5}).to(dev());
  const Tensor index = lt::tensor(std::vector<int64_t>{0, 1, 1}, {3}).to(dev());
  EXPECT_EQ(t.scatter_reduce(0, index, src, "mean").to_vector<int64_t>(),
            (std::vector<int64_t>{7, -2, 3}));  // (10 + 4) / 2, floor((-7 - 2 + 5) / 3)
  EXPECT_EQ(t.scatter_reduce(0, index, src, "mean", false).to_vector<int64_t>(),
            (std::vector<int64_t>{4, 1, 3}));
  EXPECT_EQ(t.scatter_reduce(0, index, src, "amax").to_vector<int64_t>(),
            (std::vector<int64_t>{10, 5, 3}));
  EXPECT_EQ(t.scatter_reduce(0, index, src, "amin", false).to_vector<int64_t>(),
            (std::vector<int64_t>{4, -2, 3}));
  EXPECT_EQ(t.scatter_reduce(0, index, src, "sum", false).to_vector<int64_t>(),
            (std::vector<int64_t>{4, 3, 3}));
  // A NaN among a target's elements gives NaN, for amax and amin alike.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor f = lt::tensor(std::vector<float>{1, 2}, {2}).to(dev());
  const Tensor fs = lt::tensor(std::vector<float>{nan, 5, 0}, {3}).to(dev());
  const Tensor fi = lt::tensor(std::vector<int64_t>{0, 0, 1}, {3}).to(dev());
  for (const char* r : {"amax", "amin"}) {
    std::vector<float> v = f.scatter_reduce(0, fi, fs, r).to_vector<float>();
    EXPECT_TRUE(std::isnan(v[0])) << r;
    EXPECT_EQ(v[1], std::string(r) == "amax" ? 2.0f : 0.0f) << r;
  }
}

TEST_P(ScatterReduce, ErrorsNameTheOp) {
  const Tensor t = lt::zeros({3}).to(dev()), src = lt::ones({3}).to(dev());
  const Tensor index = lt::tensor(std::vector<int64_t>{0, 1, 2}, {3}).to(dev());
  EXPECT_THROW_MESSAGE(t.scatter_reduce(0, index, src, "max"), "reduce must be one of");
  EXPECT_THROW_MESSAGE(t.scatter_reduce(0, index, src, "prod"), "'prod' is not supported");
  EXPECT_THROW_MESSAGE(t.scatter_reduce(0, index, src.to(lt::kFloat64), "sum"),
                       "expected self and src of one dtype");
  EXPECT_THROW_MESSAGE(t.scatter_reduce(0, index.reshape({3, 1}), src, "sum"), "number of dims");
  EXPECT_THROW_MESSAGE(
      t.scatter_reduce(0, lt::tensor(std::vector<int64_t>{0, 5, 1}, {3}).to(dev()), src, "amax"),
      "out of bounds");
}

// Lazy against eager on random sizes, each reduce, both include_self, with float and int64.
TEST(ScatterReduceLazy, MatchesEagerOnRandomSizes) {
  lt::manual_seed(11);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t n = 2 + trial % 5, m = 1 + trial % 4, k = 1 + trial % 3;
    const Tensor t = lt::randn({n, m}), src = lt::randn({k + 1, m});
    const Tensor index = lt::randint(0, n, {k, m});
    for (const char* r : {"sum", "mean", "amax", "amin"})
      for (bool self : {true, false}) {
        const Tensor want = t.scatter_reduce(0, index, src, r, self);
        const Tensor got =
            t.to("lazy").scatter_reduce(0, index.to("lazy"), src.to("lazy"), r, self).cpu();
        EXPECT_TRUE(lt::allclose(got, want, 1e-6, 1e-6)) << r << " trial " << trial;
        const Tensor ti = (t * 10).to(lt::kInt64), si = (src * 10).to(lt::kInt64);
        EXPECT_TRUE(lt::equal(
            ti.to("lazy").scatter_reduce(0, index.to("lazy"), si.to("lazy"), r, self).cpu(),
            ti.scatter_reduce(0, index, si, r, self)))
            << r << " int64 trial " << trial;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ScatterReduce, ::testing::Values("cpu", "lazy"),
                         [](const auto& info) { return info.param; });

}  // namespace
