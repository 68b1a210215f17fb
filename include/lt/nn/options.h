// Options of the nn modules and functionals, spelled as libtorch's: `Conv2dOptions(3, 8, {3, 3})
// .stride(2).padding({1, 0})`, `CrossEntropyLossOptions().ignore_index(0).reduction(torch::kSum)`.
// Every argument is a setter that returns the options and a getter of the same name. The
// functional spellings (F::Conv2dFuncOptions, ...) are in lt/nn/functional.h.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "lt/arg.h"
#include "lt/error.h"
#include "lt/reduction.h"
#include "lt/tensor.h"

namespace lt::nn {

// D values of T given as D values or as one value repeated: ExpandingArray<2>(3) is {3, 3}.
template <size_t D, typename T = int64_t>
class ExpandingArray {
 public:
  ExpandingArray(T single) { values_.fill(single); }
  ExpandingArray(std::initializer_list<T> list) : ExpandingArray(std::vector<T>(list)) {}
  ExpandingArray(const std::vector<T>& v) {
    if (v.size() == 1) {
      values_.fill(v[0]);
      return;
    }
    if (v.size() != D)
      throw Error("ExpandingArray: expected " + std::to_string(D) + " values (or one), got " +
                  std::to_string(v.size()));
    for (size_t i = 0; i < D; ++i) values_[i] = v[i];
  }
  ExpandingArray(const std::array<T, D>& a) : values_(a) {}

  std::array<T, D>& operator*() { return values_; }
  const std::array<T, D>& operator*() const { return values_; }
  std::array<T, D>* operator->() { return &values_; }
  const std::array<T, D>* operator->() const { return &values_; }
  T& operator[](size_t i) { return values_[i]; }
  const T& operator[](size_t i) const { return values_[i]; }
  static constexpr size_t size() { return D; }
  operator ArrayRef<T>() const { return ArrayRef<T>(values_.data(), D); }
  std::vector<T> vec() const { return std::vector<T>(values_.begin(), values_.end()); }
  bool operator==(const ExpandingArray& o) const { return values_ == o.values_; }

 private:
  std::array<T, D> values_{};
};

// A convolution's padding, as libtorch's padding_t: D sizes (or one, repeated), torch::kValid (no
// padding) or torch::kSame (each output as large as its input; stride 1 only; an odd total goes
// one more after than before, as PyTorch's). operator[] and sizes() give the explicit sizes (0
// for kValid and kSame).
template <size_t D>
class ConvPadding {
 public:
  ConvPadding(int64_t single) : sizes_(single) {}
  ConvPadding(std::initializer_list<int64_t> list) : sizes_(list) {}
  ConvPadding(const std::vector<int64_t>& v) : sizes_(v) {}
  ConvPadding(const ExpandingArray<D>& a) : sizes_(a) {}
  ConvPadding(enumtype::kValid) : sizes_(0) {}
  ConvPadding(enumtype::kSame) : sizes_(0), same_(true) {}
  bool is_same() const { return same_; }
  const ExpandingArray<D>& sizes() const { return sizes_; }
  int64_t operator[](size_t i) const { return sizes_[i]; }
  bool operator==(const ConvPadding& o) const { return same_ == o.same_ && sizes_ == o.sizes_; }

 private:
  ExpandingArray<D> sizes_;
  bool same_ = false;
};

// ---- layers
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  LT_ARG(int64_t, in_features);
  LT_ARG(int64_t, out_features);
  LT_ARG(bool, bias) = true;
};

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  LT_ARG(int64_t, in_channels);
  LT_ARG(int64_t, out_channels);
  LT_ARG(ExpandingArray<2>, kernel_size);
  LT_ARG(ExpandingArray<2>, stride) = 1;
  LT_ARG(ConvPadding<2>, padding) = 0;
  LT_ARG(ExpandingArray<2>, dilation) = 1;
  LT_ARG(int64_t, groups) = 1;
  LT_ARG(bool, bias) = true;
  LT_ARG(PadMode, padding_mode) = PadMode::Constant;  // torch::kZeros, kReflect, ...
};

struct Conv1dOptions {
  Conv1dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  LT_ARG(int64_t, in_channels);
  LT_ARG(int64_t, out_channels);
  LT_ARG(ExpandingArray<1>, kernel_size);
  LT_ARG(ExpandingArray<1>, stride) = 1;
  LT_ARG(ConvPadding<1>, padding) = 0;
  LT_ARG(ExpandingArray<1>, dilation) = 1;
  LT_ARG(int64_t, groups) = 1;
  LT_ARG(bool, bias) = true;
  LT_ARG(PadMode, padding_mode) = PadMode::Constant;
};

// ConvTranspose1d/2d: libtorch's options; padding_mode must stay torch::kZeros, as libtorch's.
#define LT_CONV_TRANSPOSE_OPTIONS(Name, D)                                                     \
  struct Name {                                                                                \
    Name(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)             \
        : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {} \
    LT_ARG(int64_t, in_channels);                                                              \
    LT_ARG(int64_t, out_channels);                                                             \
    LT_ARG(ExpandingArray<D>, kernel_size);                                                    \
    LT_ARG(ExpandingArray<D>, stride) = 1;                                                     \
    LT_ARG(ExpandingArray<D>, padding) = 0;                                                    \
    LT_ARG(ExpandingArray<D>, output_padding) = 0;                                             \
    LT_ARG(int64_t, groups) = 1;                                                               \
    LT_ARG(bool, bias) = true;                                                                 \
    LT_ARG(ExpandingArray<D>, dilation) = 1;                                                   \
    LT_ARG(PadMode, padding_mode) = PadMode::Constant;                                         \
  };
LT_CONV_TRANSPOSE_OPTIONS(ConvTranspose1dOptions, 1)
LT_CONV_TRANSPOSE_OPTIONS(ConvTranspose2dOptions, 2)
#undef LT_CONV_TRANSPOSE_OPTIONS

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  LT_ARG(std::vector<int64_t>, normalized_shape);
  LT_ARG(double, eps) = 1e-5;
  LT_ARG(bool, elementwise_affine) = true;
};

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  LT_ARG(int64_t, num_features);
  LT_ARG(double, eps) = 1e-5;
  LT_ARG(double, momentum) = 0.1;
  LT_ARG(bool, affine) = true;
  LT_ARG(bool, track_running_stats) = true;
};
using BatchNorm1dOptions = BatchNormOptions;

// InstanceNorm1d/2d: libtorch's defaults differ from BatchNorm's (no affine, no running stats).
struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}
  LT_ARG(int64_t, num_features);
  LT_ARG(double, eps) = 1e-5;
  LT_ARG(double, momentum) = 0.1;
  LT_ARG(bool, affine) = false;
  LT_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using BatchNorm2dOptions = BatchNormOptions;

// What Embedding's and F::embedding's options share (F::EmbeddingFuncOptions is this).
struct EmbeddingOptionsBase {
  LT_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  LT_ARG(std::optional<double>, max_norm) = std::nullopt;
  LT_ARG(double, norm_type) = 2.0;
  LT_ARG(bool, scale_grad_by_freq) = false;
  LT_ARG(bool, sparse) = false;
};
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  LT_ARG(int64_t, num_embeddings);
  LT_ARG(int64_t, embedding_dim);
  LT_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  LT_ARG(std::optional<double>, max_norm) = std::nullopt;
  LT_ARG(double, norm_type) = 2.0;
  LT_ARG(bool, scale_grad_by_freq) = false;
  LT_ARG(bool, sparse) = false;
};

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  LT_ARG(int64_t, num_embeddings);
  LT_ARG(int64_t, embedding_dim);
  LT_ARG(std::optional<double>, max_norm) = std::nullopt;
  LT_ARG(double, norm_type) = 2.0;
  LT_ARG(bool, scale_grad_by_freq) = false;
  LT_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;  // torch::kSum, kMean, kMax
  LT_ARG(bool, sparse) = false;
  LT_ARG(bool, include_last_offset) = false;
  LT_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

struct EmbeddingFromPretrainedOptions {
  LT_ARG(bool, freeze) = true;
};
struct EmbeddingBagFromPretrainedOptions {
  LT_ARG(bool, freeze) = true;
  LT_ARG(std::optional<double>, max_norm) = std::nullopt;
  LT_ARG(double, norm_type) = 2.0;
  LT_ARG(bool, scale_grad_by_freq) = false;
  LT_ARG(EmbeddingBagMode, mode) = EmbeddingBagMode::Mean;
  LT_ARG(bool, sparse) = false;
  LT_ARG(bool, include_last_offset) = false;
  LT_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  LT_ARG(double, p);
  LT_ARG(bool, inplace) = false;
};
using Dropout2dOptions = DropoutOptions;
using FeatureDropoutOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}
  LT_ARG(int64_t, upscale_factor);
};
struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}
  LT_ARG(int64_t, downscale_factor);
};

// Unfold (im2col) and Fold (col2im): sliding windows of kernel_size.
struct UnfoldOptions {
  UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}
  LT_ARG(ExpandingArray<2>, kernel_size);
  LT_ARG(ExpandingArray<2>, dilation) = 1;
  LT_ARG(ExpandingArray<2>, padding) = 0;
  LT_ARG(ExpandingArray<2>, stride) = 1;
};
struct FoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  LT_ARG(ExpandingArray<2>, output_size);
  LT_ARG(ExpandingArray<2>, kernel_size);
  LT_ARG(ExpandingArray<2>, dilation) = 1;
  LT_ARG(ExpandingArray<2>, padding) = 0;
  LT_ARG(ExpandingArray<2>, stride) = 1;
};

struct FlattenOptions {
  LT_ARG(int64_t, start_dim) = 1;
  LT_ARG(int64_t, end_dim) = -1;
};

struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  LT_ARG(int64_t, dim);
  LT_ARG(std::vector<int64_t>, sizes);
};

// Pooling windows, with libtorch's options (stride defaults to the kernel size).
template <size_t D>
struct MaxPoolOptions {
  MaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  LT_ARG(ExpandingArray<D>, kernel_size);
  LT_ARG(ExpandingArray<D>, stride);
  LT_ARG(ExpandingArray<D>, padding) = 0;
  LT_ARG(ExpandingArray<D>, dilation) = 1;
  LT_ARG(bool, ceil_mode) = false;
};
template <size_t D>
struct AvgPoolOptions {
  AvgPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  LT_ARG(ExpandingArray<D>, kernel_size);
  LT_ARG(ExpandingArray<D>, stride);
  LT_ARG(ExpandingArray<D>, padding) = 0;
  LT_ARG(bool, ceil_mode) = false;
  LT_ARG(bool, count_include_pad) = true;
  LT_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
template <size_t D>
struct AdaptiveAvgPoolOptions {
  AdaptiveAvgPoolOptions(ExpandingArray<D> output_size) : output_size_(output_size) {}
  LT_ARG(ExpandingArray<D>, output_size);
};
using AdaptiveAvgPool1dOptions = AdaptiveAvgPoolOptions<1>;
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<2>;
template <size_t D>
using AdaptiveMaxPoolOptions = AdaptiveAvgPoolOptions<D>;
using AdaptiveMaxPool1dOptions = AdaptiveMaxPoolOptions<1>;
using AdaptiveMaxPool2dOptions = AdaptiveMaxPoolOptions<2>;

// Upsample and F::interpolate: a size or a scale factor per spatial dim (or one for all).
struct UpsampleOptions {
  LT_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  LT_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  LT_ARG(InterpolateMode, mode) = InterpolateMode::Nearest;
  LT_ARG(std::optional<bool>, align_corners) = std::nullopt;
};
struct InterpolateOptions {
  LT_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  LT_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  LT_ARG(InterpolateMode, mode) = InterpolateMode::Nearest;
  LT_ARG(std::optional<bool>, align_corners) = std::nullopt;
  LT_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;  // accepted; sizes are exact
};

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  LT_ARG(int64_t, num_groups);
  LT_ARG(int64_t, num_channels);
  LT_ARG(double, eps) = 1e-5;
  LT_ARG(bool, affine) = true;
};

using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;

// ---- activations
struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}
  LT_ARG(bool, inplace);
};
using ReLU6Options = ReLUOptions;
using SELUOptions = ReLUOptions;

struct LeakyReLUOptions {
  LT_ARG(double, negative_slope) = 1e-2;
  LT_ARG(bool, inplace) = false;
};

struct ELUOptions {
  LT_ARG(double, alpha) = 1.0;
  LT_ARG(bool, inplace) = false;
};
using CELUOptions = ELUOptions;

struct GELUOptions {
  LT_ARG(std::string, approximate) = "none";
};

struct SoftplusOptions {
  LT_ARG(double, beta) = 1.0;
  LT_ARG(double, threshold) = 20.0;
};

struct HardtanhOptions {
  LT_ARG(double, min_val) = -1.0;
  LT_ARG(double, max_val) = 1.0;
  LT_ARG(bool, inplace) = false;
};

struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  LT_ARG(double, threshold);
  LT_ARG(double, value);
  LT_ARG(bool, inplace) = false;
};

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}
  LT_ARG(int64_t, dim);
};
using LogSoftmaxOptions = SoftmaxOptions;
using SoftminOptions = SoftmaxOptions;

struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}
  LT_ARG(int64_t, dim);
};

// ---- losses
struct LossReductionOptions {
  LossReductionOptions(Reduction::Reduction reduction = Reduction::Mean) : reduction_(reduction) {}
  LT_ARG(Reduction::Reduction, reduction);
};
using MSELossOptions = LossReductionOptions;
using L1LossOptions = LossReductionOptions;

struct NLLLossOptions {
  LT_ARG(Tensor, weight);
  LT_ARG(int64_t, ignore_index) = -100;
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
};

struct CrossEntropyLossOptions {
  LT_ARG(Tensor, weight);
  LT_ARG(int64_t, ignore_index) = -100;
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
  LT_ARG(double, label_smoothing) = 0.0;
};

struct BCELossOptions {
  LT_ARG(Tensor, weight);
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
};

struct BCEWithLogitsLossOptions {
  LT_ARG(Tensor, weight);
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
  LT_ARG(Tensor, pos_weight);
};

struct SmoothL1LossOptions {
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
  LT_ARG(double, beta) = 1.0;
};

struct HuberLossOptions {
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
  LT_ARG(double, delta) = 1.0;
};

struct KLDivLossOptions {
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
  LT_ARG(bool, log_target) = false;
};

struct MarginRankingLossOptions {
  LT_ARG(double, margin) = 0.0;
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
};

struct CosineEmbeddingLossOptions {
  LT_ARG(double, margin) = 0.0;
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
};

struct TripletMarginLossOptions {
  LT_ARG(double, margin) = 1.0;
  LT_ARG(double, p) = 2.0;
  LT_ARG(double, eps) = 1e-6;
  LT_ARG(bool, swap) = false;
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
};

struct CTCLossOptions {
  LT_ARG(int64_t, blank) = 0;
  LT_ARG(Reduction::Reduction, reduction) = Reduction::Mean;
  LT_ARG(bool, zero_infinity) = false;
};

// ---- recurrent layers (libtorch's names and defaults)
struct RNNOptions {
  RNNOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LT_ARG(int64_t, input_size);
  LT_ARG(int64_t, hidden_size);
  LT_ARG(int64_t, num_layers) = 1;
  LT_ARG(Nonlinearity, nonlinearity) = Nonlinearity::Tanh;  // torch::kTanh or torch::kReLU
  LT_ARG(bool, bias) = true;
  LT_ARG(bool, batch_first) = false;  // inputs [L, N, in] unless true ([N, L, in])
  LT_ARG(double, dropout) = 0.0;      // on each layer's output but the last, in training
  LT_ARG(bool, bidirectional) = false;
};

struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LT_ARG(int64_t, input_size);
  LT_ARG(int64_t, hidden_size);
  LT_ARG(int64_t, num_layers) = 1;
  LT_ARG(bool, bias) = true;
  LT_ARG(bool, batch_first) = false;
  LT_ARG(double, dropout) = 0.0;
  LT_ARG(bool, bidirectional) = false;
  LT_ARG(int64_t, proj_size) = 0;  // > 0: h is projected to this size (weight_hr)
};

struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LT_ARG(int64_t, input_size);
  LT_ARG(int64_t, hidden_size);
  LT_ARG(int64_t, num_layers) = 1;
  LT_ARG(bool, bias) = true;
  LT_ARG(bool, batch_first) = false;
  LT_ARG(double, dropout) = 0.0;
  LT_ARG(bool, bidirectional) = false;
};

struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LT_ARG(int64_t, input_size);
  LT_ARG(int64_t, hidden_size);
  LT_ARG(bool, bias) = true;
  LT_ARG(Nonlinearity, nonlinearity) = Nonlinearity::Tanh;
};

struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LT_ARG(int64_t, input_size);
  LT_ARG(int64_t, hidden_size);
  LT_ARG(bool, bias) = true;
};

struct GRUCellOptions {
  GRUCellOptions(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}
  LT_ARG(int64_t, input_size);
  LT_ARG(int64_t, hidden_size);
  LT_ARG(bool, bias) = true;
};

// ---- attention
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  LT_ARG(int64_t, embed_dim);
  LT_ARG(int64_t, num_heads);
  LT_ARG(double, dropout) = 0.0;
  LT_ARG(bool, bias) = true;
  LT_ARG(bool, batch_first) = false;  // PyTorch's default: inputs are [L, N, E]
};

// A transformer layer's activation, libtorch's activation_t: torch::kReLU, torch::kGELU or a
// function of a tensor; the strings "relu" and "gelu" (Python's spelling) name the first two.
// Anything else is refused when the layer is made.
class TransformerActivation {
 public:
  TransformerActivation(enumtype::kReLU) : name_("relu") {}
  TransformerActivation(enumtype::kGELU) : name_("gelu") {}
  TransformerActivation(std::string name) : name_(std::move(name)) {}
  TransformerActivation(const char* name) : name_(name) {}
  template <typename F,
            typename = std::enable_if_t<std::is_invocable_r_v<Tensor, const F&, const Tensor&> &&
                                        !std::is_convertible_v<const F&, std::string>>>
  TransformerActivation(F f) : name_("function"), fn_(std::move(f)) {}
  // "relu", "gelu", "function", or the string given.
  const std::string& name() const noexcept { return name_; }
  bool valid() const noexcept { return fn_ || name_ == "relu" || name_ == "gelu"; }
  Tensor operator()(const Tensor& x) const;

 private:
  std::string name_;
  std::function<Tensor(const Tensor&)> fn_;
};
using activation_t = TransformerActivation;

// TransformerEncoderLayer's and TransformerDecoderLayer's options: libtorch's, and Python's
// layer_norm_eps, norm_first and batch_first.
#define LT_TRANSFORMER_LAYER_OPTIONS(Name)                                     \
  struct Name {                                                                \
    Name(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {} \
    LT_ARG(int64_t, d_model);                                                  \
    LT_ARG(int64_t, nhead);                                                    \
    LT_ARG(int64_t, dim_feedforward) = 2048;                                   \
    LT_ARG(double, dropout) = 0.1;                                             \
    LT_ARG(TransformerActivation, activation) = enumtype::kReLU();             \
    LT_ARG(double, layer_norm_eps) = 1e-5;                                     \
    LT_ARG(bool, norm_first) = false;                                          \
    LT_ARG(bool, batch_first) = false;                                         \
  };
LT_TRANSFORMER_LAYER_OPTIONS(TransformerEncoderLayerOptions)
LT_TRANSFORMER_LAYER_OPTIONS(TransformerDecoderLayerOptions)
#undef LT_TRANSFORMER_LAYER_OPTIONS

}  // namespace lt::nn
