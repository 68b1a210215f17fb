// scatter_reduce (lt/ops.h) against PyTorch 1.13's values (tests/reference/scatter_reduce_golden.py
// printed the k_* values below): sum, mean, amax, amin and prod along dim 0 and dim 1, with and
// without include_self, with ties in src (amax/amin share their gradient evenly), and prod with
// zeros; values and gradients in float64 on cpu and lazy (tolerance 1e-14: sums, products and
// quotients of a few terms); integers (mean floor-divides), a src larger than index, NaN, errors,
// prod over long runs against a plain loop, and lazy against eager on random sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "error_message.h"
#include "golden.h"
#include "gradcheck.h"
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

const std::vector<double> k_d0_prod_self = {
    -0.019230407897628688, 0.045334353624198062,  -0.38064082955580636, -0.072865001708838348,
    0.0080558782984633797, -0.003313734033471748, 0.070445565318662182, 0.01871622353189243,
    0.35791646885620171,   -0.22322090851471177,  -0.30039489870867042, 0.0097714037967193291,
    0.22292602140706458,   -0.35807494712787213,  -0.13065405044188891};
const std::vector<double> k_d0_prod_self_gself = {
    -0.0076555922719555207, -0.10369158231849207,  -0.033235761126998914, 0.39957653673590882,
    -0.0014064039785557122, -0.042066785399351464, -0.030228326846418383, 0.048337167275535456,
    -0.25524267293918007,   -0.27252550622220001,  0.32546949500284217,   0.0061319028206395631,
    -0.37408396607781558,   -0.092258282370958261, 0.39785790955113526};
const std::vector<double> k_d0_prod_self_gsrc = {
    -0.0068075221086717971, 0.016727449303893104,   -0.0037984978104397054, -0.0068075221086717971,
    -0.066844272738027316,  -0.0038188753018244476, -0.065826912797463458,  0.016773613841404182,
    0.022321070137834072,   0.0064619905121977806,  -0.027851655569724958,  0.0046839554713081133};
const std::vector<double> k_d0_prod_noself = {
    -0.057133306569147141, 0.26518769203287335,  -0.38064082955580636, -0.072865001708838348,
    0.020169075122725907,  0.11023568288498568,  -0.17985898581384061, 0.14288308715923034,
    0.35791646885620171,   -0.22322090851471177, -0.30039489870867042, 0.03250315803194341,
    0.22292602140706458,   -0.35807494712787213, -0.13065405044188891};
const std::vector<double> k_d0_prod_noself_gself = {0,
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
                                                    -0.092258282370958261,
                                                    0.39785790955113526};
const std::vector<double> k_d0_prod_noself_gsrc = {
    -0.020225064891054793, 0.12770041951930572,  0.12636198193379053,   -0.020225064891054793,
    -0.39101204706603881,  0.12703986575174031,  0.16806681473065574,   0.12805284807550571,
    0.07424780361402078,   0.019198494745701237, -0.069730712489191868, 0.015580498776401816};
const std::vector<double> k_d1_prod_self = {
    -0.11205262467707126,  0.024493554119060464,  -0.38064082955580636, -0.019148531855331365,
    0.0089794617851476893, -0.030060448184723722, -0.14825535535319281, 0.13098977565507722};
const std::vector<double> k_d1_prod_self_gself = {
    -0.04460795694489135,   -0.056023196101186848, -0.033235761126998914, 0.1050065719191831,
    -0.0015676441862744579, -0.38160769996083582,  0.063616656606785588,  0.33829873245717335};
const std::vector<double> k_d1_prod_self_gsrc = {
    -0.025301896461358674, -0.025301896461358674, 0.045101249377706341,  -0.029115145032073707,
    -0.065826912797463472, 0.0018909285080585924, 0.0034813065647767913, -0.0016587558052922316};
const std::vector<double> k_d1_prod_noself = {
    -0.3329069768895605,  0.14327741695315332,   -0.38064082955580636, 0.26279463948751536,
    0.022481402101225338, -0.030060448184723722, 0.37852003507496579,  0.13098977565507722};
const std::vector<double> k_d1_prod_noself_gself = {
    0, 0, -0.033235761126998914, 0, 0, -0.38160769996083582, 0, 0.33829873245717335};
const std::vector<double> k_d1_prod_noself_gsrc = {
    -0.14800589377017118, -0.14800589377017118,  0.13399526006236187,   0.39957653673590882,
    0.16806681473065574,  0.0047342173898049658, 0.0087159625591184883, -0.0041529389109041309};
const std::vector<double> k_zeros_prod_self = {0,
                                               0.045334353624198062,
                                               -0.38064082955580636,
                                               -0.072865001708838348,
                                               0.0080558782984633797,
                                               0,
                                               0.070445565318662182,
                                               0,
                                               0.35791646885620171,
                                               -0.22322090851471177,
                                               -0.30039489870867042,
                                               0.0097714037967193291,
                                               0.22292602140706458,
                                               -0.35807494712787213,
                                               -0.13065405044188891};
const std::vector<double> k_zeros_prod_self_gself = {0,
                                                     -0.10369158231849207,
                                                     -0.033235761126998914,
                                                     0.39957653673590882,
                                                     -0.0014064039785557122,
                                                     -0.042066785399351464,
                                                     -0.030228326846418383,
                                                     0,
                                                     -0.25524267293918007,
                                                     -0.27252550622220001,
                                                     0.32546949500284217,
                                                     0.0061319028206395631,
                                                     -0.37408396607781558,
                                                     -0.092258282370958261,
                                                     0.39785790955113526};
const std::vector<double> k_zeros_prod_self_gsrc = {0,
                                                    0.0167274493038931,
                                                    0,
                                                    0,
                                                    -0.066844272738027316,
                                                    0,
                                                    -0.065826912797463458,
                                                    0,
                                                    0.022321070137834072,
                                                    0,
                                                    -0.027851655569724958,
                                                    0.0046839554713081133};
const std::vector<double> k_zeros_prod_noself = {0,
                                                 0.26518769203287335,
                                                 -0.38064082955580636,
                                                 -0.072865001708838348,
                                                 0.020169075122725907,
                                                 0.11023568288498568,
                                                 -0.17985898581384061,
                                                 0,
                                                 0.35791646885620171,
                                                 -0.22322090851471177,
                                                 -0.30039489870867042,
                                                 0.03250315803194341,
                                                 0.22292602140706458,
                                                 -0.35807494712787213,
                                                 -0.13065405044188891};
const std::vector<double> k_zeros_prod_noself_gself = {0,
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
                                                       -0.092258282370958261,
                                                       0.39785790955113526};
const std::vector<double> k_zeros_prod_noself_gsrc = {0,
                                                      0.12770041951930572,
                                                      0.12636198193379053,
                                                      0,
                                                      -0.39101204706603881,
                                                      0.12703986575174031,
                                                      0.16806681473065574,
                                                      0,
                                                      0.07424780361402078,
                                                      0,
                                                      -0.069730712489191868,
                                                      0.015580498776401816};

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

// prod with zeros: two on one target (every gradient there is 0), one on another (its gradient
// is the product of the others), and a zero self; PyTorch's values.
TEST_P(ScatterReduce, ProdWithZerosMatchesPyTorch) {
  const Tensor index =
      lt::tensor(std::vector<int64_t>{0, 2, 1, 0, 0, 1, 2, 2, 3, 0, 1, 3}, {4, 3}).to(dev());
  for (bool self : {true, false}) {
    std::vector<double> xv = lt_test::values_of(lt_test::filled({5, 3}, 1, lt::Device("cpu")));
    std::vector<double> sv = lt_test::values_of(lt_test::filled({4, 3}, 2, lt::Device("cpu")));
    sv[3] = sv[9] = sv[1] = 0.0;  // src[1][0], src[3][0], src[0][1]
    xv[5] = 0.0;                  // self[1][2]
    Tensor x = lt::tensor(xv, {5, 3}).to(dev()).requires_grad_(true);
    Tensor s = lt::tensor(sv, {4, 3}).to(dev()).requires_grad_(true);
    Tensor out = x.scatter_reduce(0, index, s, "prod", self);
    (out * lt_test::filled({5, 3}, 3, dev())).sum().backward();
    const std::string what = self ? "prod zeros include_self" : "prod zeros";
    lt_test::expect_golden(out, self ? k_zeros_prod_self : k_zeros_prod_noself, 1e-14, what);
    lt_test::expect_golden(x.grad(), self ? k_zeros_prod_self_gself : k_zeros_prod_noself_gself,
                           1e-14, what + " grad self");
    lt_test::expect_golden(s.grad(), self ? k_zeros_prod_self_gsrc : k_zeros_prod_noself_gsrc,
                           1e-14, what + " grad src");
  }
}

// prod over runs longer than the scan's first steps (up to 40 elements on one target), along
// dim 1 of a 3-d tensor, against a plain loop; a -0.0 product keeps its sign; 0-d and empty.
TEST_P(ScatterReduce, ProdOfLongRunsMatchesALoop) {
  lt::manual_seed(5);
  const int64_t a = 2, n = 40, m = 3, c = 2;
  const Tensor src = (lt::rand({a, n, c}) * 0.5 + 0.75).to(lt::kFloat64);
  const Tensor index = lt::randint(0, m, {a, n, c});
  const Tensor t = lt::randn({a, m, c}, lt::TensorOptions().dtype(lt::kFloat64));
  const std::vector<double> sv = lt_test::values_of(src), tv = lt_test::values_of(t);
  const std::vector<int64_t> iv = index.to_vector<int64_t>();
  for (bool self : {true, false}) {
    std::vector<double> want = tv;
    std::vector<bool> hit(want.size(), false);
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t k = 0; k < c; ++k) {
          const size_t from = static_cast<size_t>((i * n + j) * c + k);
          const size_t to = static_cast<size_t>((i * m + iv[from]) * c + k);
          if (!self && !hit[to]) want[to] = 1.0;
          hit[to] = true;
          want[to] *= sv[from];
        }
    const Tensor got = t.to(dev()).scatter_reduce(1, index.to(dev()), src.to(dev()), "prod", self);
    const std::vector<double> g = lt_test::values_of(got);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(g[i], want[i], 1e-13 * std::abs(want[i])) << i << (self ? " include_self" : "");
  }
  // -0.0 from src alone, and an int64 product.
  const Tensor z = lt::tensor(std::vector<float>{5, 5}, {2}).to(dev());
  const Tensor zi = lt::tensor(std::vector<int64_t>{0, 0, 1}, {3}).to(dev());
  const std::vector<float> zv =
      z.scatter_reduce(0, zi, lt::tensor(std::vector<float>{-0.0f, 3, 2}, {3}).to(dev()), "prod",
                       false)
          .to_vector<float>();
  EXPECT_TRUE(zv[0] == 0.0f && std::signbit(zv[0])) << zv[0];
  EXPECT_EQ(zv[1], 2.0f);
  EXPECT_EQ(
      lt::tensor(std::vector<int64_t>{2, 3}, {2})
          .to(dev())
          .scatter_reduce(0, zi, lt::tensor(std::vector<int64_t>{-4, 5, 7}, {3}).to(dev()), "prod")
          .to_vector<int64_t>(),
      (std::vector<int64_t>{-40, 21}));
  // A 0-d tensor and an empty index.
  const Tensor s0 = lt::full({}, 3.0).to(dev());
  EXPECT_EQ(s0.scatter_reduce(0, lt::zeros({}, lt::TensorOptions().dtype(lt::kInt64)).to(dev()),
                              lt::full({}, 2.0).to(dev()), "prod")
                .item<double>(),
            6.0);
  const Tensor e = lt::ones({0}, lt::TensorOptions().dtype(lt::kInt64)).to(dev());
  EXPECT_TRUE(lt::equal(z.scatter_reduce(0, e, lt::ones({0}).to(dev()), "prod").cpu(), z.cpu()));
}

// Non-contiguous self, index and src (transposed views) give what contiguous copies give, for
// every reduce.
TEST_P(ScatterReduce, NonContiguousInputs) {
  lt::manual_seed(9);
  const Tensor t = lt::randn({4, 5}).to(dev()), src = lt::randn({3, 5}).to(dev());
  const Tensor index = lt::randint(0, 4, {3, 5}).to(dev());
  const Tensor tt = t.t().contiguous().t(), st = src.t().contiguous().t();
  const Tensor it = index.t().contiguous().t();
  ASSERT_FALSE(tt.is_contiguous());
  for (const char* r : {"sum", "prod", "mean", "amax", "amin"})
    for (bool self : {true, false})
      EXPECT_TRUE(lt::allclose(tt.scatter_reduce(0, it, st, r, self).cpu(),
                               t.scatter_reduce(0, index, src, r, self).cpu(), 1e-6, 1e-6))
          << r << (self ? " include_self" : "");
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
  EXPECT_THROW_MESSAGE(t.scatter_reduce(0, index, src.to(lt::kFloat64), "sum"),
                       "expected self and src of one dtype");
  EXPECT_THROW_MESSAGE(t.scatter_reduce(0, index.reshape({3, 1}), src, "sum"), "number of dims");
  EXPECT_THROW_MESSAGE(
      t.scatter_reduce(0, lt::tensor(std::vector<int64_t>{0, 5, 1}, {3}).to(dev()), src, "amax"),
      "out of bounds");
}

// Every reduce's gradient by finite differences (float64, distinct values so that amax/amin have
// no ties), with and without include_self, along dim 1 with targets that receive 0 to 3 elements.
TEST(ScatterReduceGrad, Gradcheck) {
  for (const char* dev : {"cpu", "lazy"}) {
    const lt::Device d(dev);
    const Tensor index = lt::tensor(std::vector<int64_t>{0, 2, 0, 0, 3, 3, 1, 3}, {2, 4}).to(d);
    for (const char* r : {"sum", "prod", "mean", "amax", "amin"})
      for (bool self : {true, false})
        lt_test::gradcheck(
            std::string(r) + (self ? " include_self" : ""),
            [&](lt_test::Ts in) { return in[0].scatter_reduce(1, index, in[1], r, self); },
            {{{0.3, -1.2, 0.7, 1.9, -0.4, 1.1, 0.8, -1.6}, {2, 4}},
             {{1.3, -0.6, 0.9, -1.1, 0.45, 1.7, -0.85, 0.2}, {2, 4}}},
            d);
  }
}

// Lazy against eager on random sizes, each reduce, both include_self, with float and int64.
TEST(ScatterReduceLazy, MatchesEagerOnRandomSizes) {
  lt::manual_seed(11);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t n = 2 + trial % 5, m = 1 + trial % 4, k = 1 + trial % 3;
    const Tensor t = lt::randn({n, m}), src = lt::randn({k + 1, m});
    const Tensor index = lt::randint(0, n, {k, m});
    for (const char* r : {"sum", "mean", "amax", "amin", "prod"})
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
