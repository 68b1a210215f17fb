// lt::nn::functional (libtorch's torch::nn::functional, usually `namespace F`): the functions of
// lt/ops.h, plus overloads taking libtorch's XxxFuncOptions, e.g.
//   F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).padding(1))
//   F::cross_entropy(x, t, F::CrossEntropyFuncOptions().ignore_index(0).reduction(torch::kSum))
#pragma once
#include "lt/autograd.h"
#include "lt/nn/options.h"
#include "lt/ops.h"

namespace lt::nn::functional {

using lt::alpha_dropout;
using lt::avg_pool1d;
using lt::avg_pool2d;
using lt::binary_cross_entropy;
using lt::binary_cross_entropy_with_logits;
using lt::celu;
using lt::conv1d;
using lt::conv2d;
using lt::conv_transpose1d;
using lt::conv_transpose2d;
using lt::cross_entropy;
using lt::dropout;
using lt::dropout2d;
using lt::elu;
using lt::embedding;
using lt::embedding_bag;
using lt::feature_alpha_dropout;
using lt::feature_dropout;
using lt::gelu;
using lt::glu;
using lt::hardsigmoid;
using lt::hardswish;
using lt::hardtanh;
using lt::huber_loss;
using lt::kl_div;
using lt::l1_loss;
using lt::layer_norm;
using lt::leaky_relu;
using lt::linear;
using lt::log_sigmoid;
using lt::log_softmax;
using lt::max_pool1d;
using lt::max_pool2d;
using lt::mish;
using lt::mse_loss;
using lt::nll_loss;
using lt::one_hot;
using lt::pad;
using lt::relu;
using lt::relu6;
using lt::scaled_dot_product_attention;
using lt::selu;
using lt::sigmoid;
using lt::silu;
using lt::smooth_l1_loss;
using lt::softmax;
using lt::softmin;
using lt::softplus;
using lt::softsign;
using lt::tanh;
using lt::threshold;

// ---- options of the functionals that have no module twin
struct DropoutFuncOptions {
  LT_ARG(double, p) = 0.5;
  LT_ARG(bool, training) = true;
  LT_ARG(bool, inplace) = false;
};
using Dropout2dFuncOptions = DropoutFuncOptions;
using FeatureDropoutFuncOptions = DropoutFuncOptions;
// The alpha dropouts default to training = false, as libtorch's options do (F::dropout's
// default to true).
struct AlphaDropoutFuncOptions {
  LT_ARG(double, p) = 0.5;
  LT_ARG(bool, training) = false;
  LT_ARG(bool, inplace) = false;
};
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;
struct GumbelSoftmaxFuncOptions {
  LT_ARG(double, tau) = 1.0;
  LT_ARG(bool, hard) = false;
  LT_ARG(int64_t, dim) = -1;
};
using UnfoldFuncOptions = UnfoldOptions;
using FoldFuncOptions = FoldOptions;
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;

struct Conv2dFuncOptions {
  LT_ARG(Tensor, bias);
  LT_ARG(ExpandingArray<2>, stride) = 1;
  LT_ARG(ConvPadding<2>, padding) = 0;
  LT_ARG(ExpandingArray<2>, dilation) = 1;
  LT_ARG(int64_t, groups) = 1;
};

struct Conv1dFuncOptions {
  LT_ARG(Tensor, bias);
  LT_ARG(ExpandingArray<1>, stride) = 1;
  LT_ARG(ConvPadding<1>, padding) = 0;
  LT_ARG(ExpandingArray<1>, dilation) = 1;
  LT_ARG(int64_t, groups) = 1;
};
inline Tensor conv1d(const Tensor& x, const Tensor& w, const Conv1dFuncOptions& o = {}) {
  if (o.padding().is_same())
    return lt::conv1d(x, w, o.bias(), o.stride(), "same", o.dilation(), o.groups());
  return lt::conv1d(x, w, o.bias(), o.stride(), o.padding().sizes(), o.dilation(), o.groups());
}

#define LT_CONV_TRANSPOSE_FUNC(Name, D, fn)                                                \
  struct Name {                                                                            \
    LT_ARG(Tensor, bias);                                                                  \
    LT_ARG(ExpandingArray<D>, stride) = 1;                                                 \
    LT_ARG(ExpandingArray<D>, padding) = 0;                                                \
    LT_ARG(ExpandingArray<D>, output_padding) = 0;                                         \
    LT_ARG(int64_t, groups) = 1;                                                           \
    LT_ARG(ExpandingArray<D>, dilation) = 1;                                               \
  };                                                                                       \
  inline Tensor fn(const Tensor& x, const Tensor& w, const Name& o = {}) {                 \
    return lt::fn(x, w, o.bias(), o.stride(), o.padding(), o.output_padding(), o.groups(), \
                  o.dilation());                                                           \
  }
LT_CONV_TRANSPOSE_FUNC(ConvTranspose1dFuncOptions, 1, conv_transpose1d)
LT_CONV_TRANSPOSE_FUNC(ConvTranspose2dFuncOptions, 2, conv_transpose2d)
#undef LT_CONV_TRANSPOSE_FUNC

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  LT_ARG(std::vector<int64_t>, normalized_shape);
  LT_ARG(Tensor, weight);
  LT_ARG(Tensor, bias);
  LT_ARG(double, eps) = 1e-5;
};

struct NormalizeFuncOptions {
  LT_ARG(double, p) = 2.0;
  LT_ARG(int64_t, dim) = 1;
  LT_ARG(double, eps) = 1e-12;
};

// ---- the module options under their functional names
using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using SELUFuncOptions = SELUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using CELUFuncOptions = CELUOptions;
using GELUFuncOptions = GELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using HardtanhFuncOptions = HardtanhOptions;
using ThresholdFuncOptions = ThresholdOptions;
using SoftmaxFuncOptions = SoftmaxOptions;
using LogSoftmaxFuncOptions = LogSoftmaxOptions;
using SoftminFuncOptions = SoftminOptions;
using GLUFuncOptions = GLUOptions;
struct PadFuncOptions {
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}
  LT_ARG(std::vector<int64_t>, pad);
  LT_ARG(PadMode, mode) = PadMode::Constant;
  LT_ARG(double, value) = 0;
};
inline Tensor pad(const Tensor& x, const PadFuncOptions& o) {
  return lt::pad(x, o.pad(), o.mode(), o.value());
}
namespace detail {
// max_norm: the weight rows `indices` read whose norm exceeds max_norm are scaled down to it,
// in place and without gradient, as libtorch's embedding_renorm_.
inline void renorm_rows(const Tensor& weight, const Tensor& indices, double max_norm,
                        double norm_type) {
  NoGradGuard g;
  Tensor flat = indices.reshape({-1});
  Tensor rows = weight.detach().index_select(0, flat);
  Tensor norm = rows.norm(norm_type, {1}, true);
  Tensor scale = lt::where(norm > max_norm, max_norm / (norm + 1e-7), 1.0);
  weight.copy_(lt::index_copy(weight.detach(), 0, flat, rows * scale));
}
}  // namespace detail
using EmbeddingFuncOptions = EmbeddingOptionsBase;
// libtorch's embedding with options: padding_idx rows take no gradient; max_norm renormalizes
// (in place, without gradient) the weight rows the indices read whose norm exceeds it.
inline Tensor embedding(const Tensor& indices, const Tensor& weight,
                        const EmbeddingFuncOptions& o) {
  if (o.sparse()) throw Error("embedding: sparse gradients are not supported (sparse(false))");
  if (o.scale_grad_by_freq())
    throw Error("embedding: scale_grad_by_freq is not supported (scale_grad_by_freq(false))");
  if (o.max_norm()) detail::renorm_rows(weight, indices, *o.max_norm(), o.norm_type());
  Tensor w = weight;
  if (o.padding_idx()) {
    const int64_t n = weight.size(0),
                  p = *o.padding_idx() < 0 ? *o.padding_idx() + n : *o.padding_idx();
    if (p < 0 || p >= n)
      throw Error("embedding: padding_idx " + std::to_string(*o.padding_idx()) +
                  " is out of range for " + std::to_string(n) + " embeddings");
    Tensor is_pad =
        (lt::arange(n, TensorOptions(kInt64).device(weight.device())) == p).unsqueeze(1);
    w = lt::where(is_pad, weight.detach(), weight);  // the padding row's value, no gradient
  }
  return lt::embedding(indices, w);
}
struct EmbeddingBagFuncOptions {
  LT_ARG(Tensor, offsets);
  LT_ARG(std::optional<double>, max_norm) = std::nullopt;
  LT_ARG(double, norm_type) = 2.0;
  LT_ARG(bool, scale_grad_by_freq) = false;
  LT_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;  // torch::kSum, kMean, kMax
  LT_ARG(bool, sparse) = false;
  LT_ARG(Tensor, per_sample_weights);
  LT_ARG(bool, include_last_offset) = false;
  LT_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
inline Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                            const EmbeddingBagFuncOptions& o) {
  if (o.sparse()) throw Error("embedding_bag: sparse gradients are not supported (sparse(false))");
  if (o.scale_grad_by_freq())
    throw Error("embedding_bag: scale_grad_by_freq is not supported (scale_grad_by_freq(false))");
  if (o.max_norm()) detail::renorm_rows(weight, input, *o.max_norm(), o.norm_type());
  return lt::embedding_bag(input, weight, o.offsets(), o.mode(), o.per_sample_weights(),
                           o.include_last_offset(), o.padding_idx());
}
struct BatchNormFuncOptions {
  LT_ARG(Tensor, weight);
  LT_ARG(Tensor, bias);
  LT_ARG(bool, training) = false;
  LT_ARG(std::optional<double>, momentum) = 0.1;
  LT_ARG(double, eps) = 1e-5;
};
struct GroupNormFuncOptions {
  /* implicit */ GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}
  LT_ARG(int64_t, num_groups);
  LT_ARG(Tensor, weight);
  LT_ARG(Tensor, bias);
  LT_ARG(double, eps) = 1e-5;
};
struct InstanceNormFuncOptions {
  LT_ARG(Tensor, running_mean);
  LT_ARG(Tensor, running_var);
  LT_ARG(Tensor, weight);
  LT_ARG(Tensor, bias);
  LT_ARG(bool, use_input_stats) = true;
  LT_ARG(double, momentum) = 0.1;
  LT_ARG(double, eps) = 1e-5;
};
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPool1dOptions;
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
using InterpolateFuncOptions = InterpolateOptions;
using MaxPool1dFuncOptions = MaxPool1dOptions;
using MaxPool2dFuncOptions = MaxPool2dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using CTCLossFuncOptions = CTCLossOptions;

// ---- overloads with options (the result written into the input where `inplace` says so)
namespace detail {
inline Tensor inplace_result(const Tensor& x, const Tensor& y, bool inplace) {
  return inplace ? x.copy_(y) : y;
}
}  // namespace detail

inline Tensor relu(const Tensor& x, const ReLUFuncOptions& o) {
  return o.inplace() ? x.relu_() : lt::relu(x);
}
inline Tensor relu6(const Tensor& x, const ReLU6FuncOptions& o) {
  return detail::inplace_result(x, lt::relu6(x), o.inplace());
}
inline Tensor selu(const Tensor& x, const SELUFuncOptions& o) {
  return detail::inplace_result(x, lt::selu(x), o.inplace());
}
inline Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& o) {
  return detail::inplace_result(x, lt::leaky_relu(x, o.negative_slope()), o.inplace());
}
inline Tensor elu(const Tensor& x, const ELUFuncOptions& o) {
  return detail::inplace_result(x, lt::elu(x, o.alpha()), o.inplace());
}
inline Tensor celu(const Tensor& x, const CELUFuncOptions& o) {
  return detail::inplace_result(x, lt::celu(x, o.alpha()), o.inplace());
}
inline Tensor gelu(const Tensor& x, const GELUFuncOptions& o) {
  return lt::gelu(x, o.approximate());
}
inline Tensor softplus(const Tensor& x, const SoftplusFuncOptions& o) {
  return lt::softplus(x, o.beta(), o.threshold());
}
inline Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& o) {
  return detail::inplace_result(x, lt::hardtanh(x, o.min_val(), o.max_val()), o.inplace());
}
inline Tensor threshold(const Tensor& x, const ThresholdFuncOptions& o) {
  return detail::inplace_result(x, lt::threshold(x, o.threshold(), o.value()), o.inplace());
}
inline Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) {
  return lt::softmax(x, o.dim());
}
inline Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) {
  return lt::log_softmax(x, o.dim());
}
inline Tensor softmin(const Tensor& x, const SoftminFuncOptions& o) {
  return lt::softmin(x, o.dim());
}
inline Tensor glu(const Tensor& x, const GLUFuncOptions& o) { return lt::glu(x, o.dim()); }
inline Tensor dropout(const Tensor& x, const DropoutFuncOptions& o = {}) {
  return detail::inplace_result(x, lt::dropout(x, o.p(), o.training()),
                                o.inplace() && o.training());
}
inline Tensor alpha_dropout(const Tensor& x, const AlphaDropoutFuncOptions& o = {}) {
  return detail::inplace_result(x, lt::alpha_dropout(x, o.p(), o.training()),
                                o.inplace() && o.training());
}
inline Tensor feature_alpha_dropout(const Tensor& x, const FeatureAlphaDropoutFuncOptions& o = {}) {
  return detail::inplace_result(x, lt::feature_alpha_dropout(x, o.p(), o.training()),
                                o.inplace() && o.training());
}
// A sample of the Gumbel-softmax distribution over `dim`; hard: one-hot with the soft
// sample's gradient (src/nn/gumbel.cpp).
Tensor gumbel_softmax(const Tensor& logits, double tau = 1.0, bool hard = false, int64_t dim = -1);
inline Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& o) {
  return gumbel_softmax(logits, o.tau(), o.hard(), o.dim());
}
inline Tensor unfold(const Tensor& x, const UnfoldFuncOptions& o) {
  return lt::im2col(x, o.kernel_size(), o.dilation(), o.padding(), o.stride());
}
inline Tensor fold(const Tensor& x, const FoldFuncOptions& o) {
  return lt::col2im(x, o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
}
inline Tensor pixel_shuffle(const Tensor& x, const PixelShuffleFuncOptions& o) {
  return lt::pixel_shuffle(x, o.upscale_factor());
}
inline Tensor pixel_unshuffle(const Tensor& x, const PixelUnshuffleFuncOptions& o) {
  return lt::pixel_unshuffle(x, o.downscale_factor());
}
inline Tensor dropout2d(const Tensor& x, const Dropout2dFuncOptions& o = {}) {
  return detail::inplace_result(x, lt::dropout2d(x, o.p(), o.training()),
                                o.inplace() && o.training());
}
inline Tensor conv2d(const Tensor& x, const Tensor& w, const Conv2dFuncOptions& o) {
  if (o.padding().is_same())
    return lt::conv2d(x, w, o.bias(), o.stride(), "same", o.dilation(), o.groups());
  return lt::conv2d(x, w, o.bias(), o.stride(), o.padding().sizes(), o.dilation(), o.groups());
}
inline Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& o) {
  return lt::max_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
inline std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x,
                                                          const MaxPool2dFuncOptions& o) {
  return lt::max_pool2d_with_indices(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                                     o.ceil_mode());
}
inline std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x,
                                                          const MaxPool1dFuncOptions& o) {
  return lt::max_pool1d_with_indices(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                                     o.ceil_mode());
}
inline Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
  return lt::avg_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                        o.count_include_pad(), o.divisor_override());
}
// libtorch's F::batch_norm: lt::batch_norm with the options' weight, bias, training, momentum
// and eps (running_mean/running_var may be undefined when training).
inline Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                         const BatchNormFuncOptions& o = {}) {
  if (!o.momentum().has_value())
    throw Error("batch_norm: momentum must be a number (libtorch's F::batch_norm takes its value)");
  return lt::batch_norm(x, o.weight(), o.bias(), running_mean, running_var, o.training(),
                        *o.momentum(), o.eps());
}
inline Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& o) {
  return lt::group_norm(x, o.num_groups(), o.weight(), o.bias(), o.eps());
}
inline Tensor logsigmoid(const Tensor& x) { return lt::log_sigmoid(x); }  // libtorch's spelling
// Each (sample, channel) normalized over its spatial dims (group_norm with a group per
// channel). With use_input_stats and running stats given, they move towards the batch average of
// the instances' means and unbiased variances, as libtorch's; without, they normalize.
inline Tensor instance_norm(const Tensor& x, const InstanceNormFuncOptions& o = {}) {
  if (x.dim() < 3)
    throw Error("instance_norm: expected an input [N, C, ...] of at least 3 dims, got " +
                std::to_string(x.dim()) + " dims");
  const int64_t c = x.size(1);
  std::vector<int64_t> spatial, bshape(static_cast<size_t>(x.dim()), 1);
  for (int64_t d = 2; d < x.dim(); ++d) spatial.push_back(d);
  bshape[1] = c;
  if (o.use_input_stats()) {
    if (o.running_mean().defined() && o.running_var().defined()) {
      NoGradGuard g;
      Tensor v = x.detach();
      const double m = o.momentum();
      o.running_mean().mul_(1.0 - m).add_(v.mean(spatial).mean({0}) * m);
      o.running_var().mul_(1.0 - m).add_(v.var(spatial, true).mean({0}) * m);
    }
    return lt::group_norm(x, c, o.weight(), o.bias(), o.eps());
  }
  Tensor y =
      (x - o.running_mean().reshape(bshape)) * rsqrt(o.running_var().reshape(bshape) + o.eps());
  if (o.weight().defined()) y = y * o.weight().reshape(bshape);
  if (o.bias().defined()) y = y + o.bias().reshape(bshape);
  return y;
}
inline Tensor adaptive_avg_pool1d(const Tensor& x, const AdaptiveAvgPool1dFuncOptions& o) {
  return lt::adaptive_avg_pool1d(x, o.output_size());
}
inline std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(
    const Tensor& x, const AdaptiveMaxPool1dFuncOptions& o) {
  return lt::adaptive_max_pool1d(x, o.output_size());
}
inline Tensor adaptive_max_pool1d(const Tensor& x, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(lt::adaptive_max_pool1d(x, o.output_size()));
}
inline std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& x, const AdaptiveMaxPool2dFuncOptions& o) {
  return lt::adaptive_max_pool2d(x, o.output_size());
}
inline Tensor adaptive_max_pool2d(const Tensor& x, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(lt::adaptive_max_pool2d(x, o.output_size()));
}
inline Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& o) {
  return lt::adaptive_avg_pool2d(x, o.output_size());
}
inline Tensor interpolate(const Tensor& x, const InterpolateFuncOptions& o = {}) {
  return lt::interpolate(x, o.size() ? IntList(*o.size()) : IntList(),
                         o.scale_factor().value_or(std::vector<double>{}), o.mode(),
                         o.align_corners());
}
inline Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& o) {
  return lt::max_pool1d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
inline Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& o) {
  return lt::avg_pool1d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                        o.count_include_pad());
}
inline Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& o) {
  return lt::layer_norm(x, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}
// x / max(||x||_p over dim, eps).
inline Tensor normalize(const Tensor& x, const NormalizeFuncOptions& o = {}) {
  return x / lt::norm(x, o.p(), {o.dim()}, true).clamp_min(o.eps());
}
inline Tensor mse_loss(const Tensor& a, const Tensor& b, const MSELossFuncOptions& o) {
  return lt::mse_loss(a, b, o.reduction());
}
inline Tensor l1_loss(const Tensor& a, const Tensor& b, const L1LossFuncOptions& o) {
  return lt::l1_loss(a, b, o.reduction());
}
inline Tensor nll_loss(const Tensor& x, const Tensor& t, const NLLLossFuncOptions& o) {
  return lt::nll_loss(x, t, o.weight(), o.reduction(), o.ignore_index());
}
inline Tensor cross_entropy(const Tensor& x, const Tensor& t, const CrossEntropyFuncOptions& o) {
  return lt::cross_entropy(x, t, o.weight(), o.reduction(), o.ignore_index(), o.label_smoothing());
}
inline Tensor binary_cross_entropy(const Tensor& x, const Tensor& y,
                                   const BinaryCrossEntropyFuncOptions& o) {
  return lt::binary_cross_entropy(x, y, o.weight(), o.reduction());
}
inline Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& y,
                                               const BinaryCrossEntropyWithLogitsFuncOptions& o) {
  return lt::binary_cross_entropy_with_logits(x, y, o.weight(), o.reduction(), o.pos_weight());
}
inline Tensor smooth_l1_loss(const Tensor& a, const Tensor& b, const SmoothL1LossFuncOptions& o) {
  return lt::smooth_l1_loss(a, b, o.reduction(), o.beta());
}
inline Tensor huber_loss(const Tensor& a, const Tensor& b, const HuberLossFuncOptions& o) {
  return lt::huber_loss(a, b, o.reduction(), o.delta());
}
inline Tensor kl_div(const Tensor& x, const Tensor& t, const KLDivFuncOptions& o) {
  return lt::kl_div(x, t, o.reduction(), o.log_target());
}
inline Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                       const Tensor& target_lengths, const CTCLossFuncOptions& o = {}) {
  return lt::ctc_loss(log_probs, targets, input_lengths, target_lengths, o.blank(), o.reduction(),
                      o.zero_infinity());
}
inline Tensor margin_ranking_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                                  const MarginRankingLossFuncOptions& o = {}) {
  return lt::margin_ranking_loss(x1, x2, target, o.margin(), o.reduction());
}
inline Tensor cosine_embedding_loss(const Tensor& x1, const Tensor& x2, const Tensor& target,
                                    const CosineEmbeddingLossFuncOptions& o = {}) {
  return lt::cosine_embedding_loss(x1, x2, target, o.margin(), o.reduction());
}
inline Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive,
                                  const Tensor& negative,
                                  const TripletMarginLossFuncOptions& o = {}) {
  return lt::triplet_margin_loss(anchor, positive, negative, o.margin(), o.p(), o.eps(), o.swap(),
                                 o.reduction());
}

}  // namespace lt::nn::functional
