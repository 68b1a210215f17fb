// Layers with parameters or state: Linear, Conv2d, LayerNorm, BatchNorm1d/2d, Embedding, the
// dropouts, Flatten/Unflatten and the 2-d pools. Initialization follows PyTorch's defaults.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "lt/nn/functional.h"
#include "lt/nn/module.h"
#include "lt/nn/options.h"
#include "lt/ops.h"

namespace lt::nn {

class LinearImpl : public Module {
 public:
  explicit LinearImpl(const LinearOptions& o);
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true)
      : LinearImpl(LinearOptions(in_features, out_features).bias(bias)) {}
  Tensor forward(const Tensor& x);
  // Draws new weights (and bias) as the constructor does.
  void reset_parameters();
  std::string name() const override { return "Linear"; }
  LT_CLONE_FROM_OPTIONS(LinearImpl)
  void pretty_print(std::ostream& os) const override;
  LinearOptions options;
  Tensor weight, bias;
};
LT_MODULE(Linear);

// Conv1d: [N, C, L] -> [N, out, L'], weight [out, C / groups, k], PyTorch's initialization.
class Conv1dImpl : public Module {
 public:
  explicit Conv1dImpl(const Conv1dOptions& o);
  Conv1dImpl(int64_t in, int64_t out, ExpandingArray<1> kernel)
      : Conv1dImpl(Conv1dOptions(in, out, kernel)) {}
  Tensor forward(const Tensor& x);
  void reset_parameters();
  std::string name() const override { return "Conv1d"; }
  LT_CLONE_FROM_OPTIONS(Conv1dImpl)
  Conv1dOptions options;
  Tensor weight, bias;
};
LT_MODULE(Conv1d);

class Conv2dImpl : public Module {
 public:
  explicit Conv2dImpl(const Conv2dOptions& o);
  Conv2dImpl(int64_t in, int64_t out, ExpandingArray<2> kernel)
      : Conv2dImpl(Conv2dOptions(in, out, kernel)) {}
  Tensor forward(const Tensor& x);
  void reset_parameters();
  std::string name() const override { return "Conv2d"; }
  LT_CLONE_FROM_OPTIONS(Conv2dImpl)
  void pretty_print(std::ostream& os) const override;
  Conv2dOptions options;
  Tensor weight, bias;
};
LT_MODULE(Conv2d);

// ConvTranspose1d/2d: weight [in, out / groups, k...], PyTorch's init (kaiming-uniform with
// a = sqrt(5) over fan_in = out / groups * prod(k), which is what PyTorch's fan rule reads
// from this layout). forward's output_size (the spatial extent, optionally with the batch and
// channel dims in front) picks output_padding as libtorch's does.
#define LT_CONV_TRANSPOSE_MODULE(Name, D)                                                  \
  class Name##Impl : public Module {                                                       \
   public:                                                                                 \
    explicit Name##Impl(const Name##Options& o);                                           \
    Name##Impl(int64_t in, int64_t out, ExpandingArray<D> kernel)                          \
        : Name##Impl(Name##Options(in, out, kernel)) {}                                    \
    Tensor forward(const Tensor& x,                                                        \
                   const std::optional<std::vector<int64_t>>& output_size = std::nullopt); \
    void reset_parameters();                                                               \
    std::string name() const override { return #Name; }                                    \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                                      \
    Name##Options options;                                                                 \
    Tensor weight, bias;                                                                   \
  };                                                                                       \
  LT_MODULE(Name);
LT_CONV_TRANSPOSE_MODULE(ConvTranspose1d, 1)
LT_CONV_TRANSPOSE_MODULE(ConvTranspose2d, 2)
#undef LT_CONV_TRANSPOSE_MODULE

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& o);
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape)
      : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  Tensor forward(const Tensor& x);
  std::string name() const override { return "LayerNorm"; }
  LT_CLONE_FROM_OPTIONS(LayerNormImpl)
  LayerNormOptions options;
  Tensor weight, bias;
};
LT_MODULE(LayerNorm);

// Batch normalization over dim 1 of [N, C, ...]: batch statistics in training (and running
// estimates updated with momentum when track_running_stats), the running estimates in eval.
class BatchNormImplBase : public Module {
 public:
  BatchNormImplBase(const BatchNormOptions& o, int64_t min_dim, int64_t max_dim, const char* kind);
  Tensor forward(const Tensor& x);
  void reset_running_stats();
  std::string name() const override { return kind_; }
  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int64_t min_dim_, max_dim_;
  const char* kind_;
};

class BatchNorm1dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm1dImpl(const BatchNormOptions& o) : BatchNormImplBase(o, 2, 3, "BatchNorm1d") {}
  explicit BatchNorm1dImpl(int64_t num_features)
      : BatchNorm1dImpl(BatchNormOptions(num_features)) {}
  LT_CLONE_FROM_OPTIONS(BatchNorm1dImpl)
};
LT_MODULE(BatchNorm1d);

class BatchNorm2dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm2dImpl(const BatchNormOptions& o) : BatchNormImplBase(o, 4, 4, "BatchNorm2d") {}
  explicit BatchNorm2dImpl(int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  LT_CLONE_FROM_OPTIONS(BatchNorm2dImpl)
};
LT_MODULE(BatchNorm2d);

class EmbeddingImpl : public Module {
 public:
  explicit EmbeddingImpl(const EmbeddingOptions& o);
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  Tensor forward(const Tensor& indices);
  std::string name() const override { return "Embedding"; }
  LT_CLONE_FROM_OPTIONS(EmbeddingImpl)
  EmbeddingOptions options;
  Tensor weight;
};

class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  // An Embedding holding a copy of `embeddings` [num, dim]; frozen (no gradient) by default.
  static Embedding from_pretrained(const Tensor& embeddings,
                                   const EmbeddingFromPretrainedOptions& options = {});
};

// EmbeddingBag: weight [num, dim] from N(0, 1) (the padding row zero); forward sums, averages
// or maxes each bag's rows (F::embedding_bag).
class EmbeddingBagImpl : public Module {
 public:
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& o);
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  Tensor forward(const Tensor& input, const Tensor& offsets = {},
                 const Tensor& per_sample_weights = {});
  std::string name() const override { return "EmbeddingBag"; }
  LT_CLONE_FROM_OPTIONS(EmbeddingBagImpl)
  EmbeddingBagOptions options;
  Tensor weight;
};

class EmbeddingBag : public ModuleHolder<EmbeddingBagImpl> {
 public:
  using ModuleHolder<EmbeddingBagImpl>::ModuleHolder;
  // An EmbeddingBag holding a copy of `embeddings` [num, dim] with the options' mode, padding_idx
  // and include_last_offset; frozen (no gradient) by default.
  static EmbeddingBag from_pretrained(const Tensor& embeddings,
                                      const EmbeddingBagFromPretrainedOptions& options = {});
};

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& o = {}) : options(o) {}
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  Tensor forward(const Tensor& x);
  std::string name() const override { return "Dropout"; }
  LT_CLONE_FROM_OPTIONS(DropoutImpl)
  DropoutOptions options;
};
LT_MODULE(Dropout);

// Zeroes whole channels: [N, C, H, W] or [C, H, W].
class Dropout2dImpl : public Module {
 public:
  explicit Dropout2dImpl(const Dropout2dOptions& o = {}) : options(o) {}
  explicit Dropout2dImpl(double p) : Dropout2dImpl(Dropout2dOptions(p)) {}
  Tensor forward(const Tensor& x);
  std::string name() const override { return "Dropout2d"; }
  LT_CLONE_FROM_OPTIONS(Dropout2dImpl)
  Dropout2dOptions options;
};
LT_MODULE(Dropout2d);
// libtorch's older name for Dropout2d.
using FeatureDropoutImpl = Dropout2dImpl;
using FeatureDropout = Dropout2d;

// AlphaDropout (for SELU networks) and FeatureAlphaDropout (whole channels).
#define LT_NN_ALPHA_DROPOUT(Name, fn)                                 \
  class Name##Impl : public Module {                                  \
   public:                                                            \
    explicit Name##Impl(const DropoutOptions& o = {}) : options(o) {} \
    explicit Name##Impl(double p) : Name##Impl(DropoutOptions(p)) {}  \
    Tensor forward(const Tensor& x) {                                 \
      return functional::fn(x, functional::AlphaDropoutFuncOptions()  \
                                   .p(options.p())                    \
                                   .training(is_training())           \
                                   .inplace(options.inplace()));      \
    }                                                                 \
    std::string name() const override { return #Name; }               \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                 \
    DropoutOptions options;                                           \
  };                                                                  \
  LT_MODULE(Name)
LT_NN_ALPHA_DROPOUT(AlphaDropout, alpha_dropout);
LT_NN_ALPHA_DROPOUT(FeatureAlphaDropout, feature_alpha_dropout);
#undef LT_NN_ALPHA_DROPOUT

// Modules whose forward is F::fn(x, options) and whose options have no default.
#define LT_NN_FORWARD_OPTIONS(Name, fn)                                    \
  class Name##Impl : public Module {                                       \
   public:                                                                 \
    explicit Name##Impl(const Name##Options& o) : options(o) {}            \
    Tensor forward(const Tensor& x) { return functional::fn(x, options); } \
    std::string name() const override { return #Name; }                    \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                      \
    Name##Options options;                                                 \
  };                                                                       \
  LT_MODULE(Name)
LT_NN_FORWARD_OPTIONS(PixelShuffle, pixel_shuffle);
LT_NN_FORWARD_OPTIONS(PixelUnshuffle, pixel_unshuffle);
LT_NN_FORWARD_OPTIONS(Unfold, unfold);
LT_NN_FORWARD_OPTIONS(Fold, fold);
#undef LT_NN_FORWARD_OPTIONS

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) { return x.flatten(options.start_dim(), options.end_dim()); }
  std::string name() const override { return "Flatten"; }
  LT_CLONE_FROM_OPTIONS(FlattenImpl)
  FlattenOptions options;
};
LT_MODULE(Flatten);

class UnflattenImpl : public Module {
 public:
  explicit UnflattenImpl(const UnflattenOptions& o) : options(o) {}
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes)
      : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  Tensor forward(const Tensor& x);
  std::string name() const override { return "Unflatten"; }
  LT_CLONE_FROM_OPTIONS(UnflattenImpl)
  UnflattenOptions options;
};
LT_MODULE(Unflatten);

// MaxPool1d/2d and AvgPool1d/2d: F::fn(x, options).
#define LT_NN_POOL(Name, fn, D)                                                          \
  class Name##Impl : public Module {                                                     \
   public:                                                                               \
    explicit Name##Impl(const Name##Options& o) : options(o) {}                          \
    explicit Name##Impl(ExpandingArray<D> kernel) : Name##Impl(Name##Options(kernel)) {} \
    Tensor forward(const Tensor& x) { return functional::fn(x, options); }               \
    std::string name() const override { return #Name; }                                  \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                                    \
    Name##Options options;                                                               \
  };                                                                                     \
  LT_MODULE(Name)
LT_NN_POOL(AdaptiveAvgPool1d, adaptive_avg_pool1d, 1);
LT_NN_POOL(AdaptiveAvgPool2d, adaptive_avg_pool2d, 2);
// AdaptiveMaxPool1d/2d and MaxPool1d/2d: forward gives the values, forward_with_indices also
// the indices.
#define LT_NN_ADAPTIVE_MAX(Name, fn, D)                                              \
  class Name##Impl : public Module {                                                 \
   public:                                                                           \
    explicit Name##Impl(const Name##Options& o) : options(o) {}                      \
    explicit Name##Impl(ExpandingArray<D> size) : Name##Impl(Name##Options(size)) {} \
    Tensor forward(const Tensor& x) { return functional::fn(x, options); }           \
    std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {               \
      return functional::fn##_with_indices(x, options);                              \
    }                                                                                \
    std::string name() const override { return #Name; }                              \
    LT_CLONE_FROM_OPTIONS(Name##Impl)                                                \
    Name##Options options;                                                           \
  };                                                                                 \
  LT_MODULE(Name)
LT_NN_ADAPTIVE_MAX(AdaptiveMaxPool1d, adaptive_max_pool1d, 1);
LT_NN_ADAPTIVE_MAX(AdaptiveMaxPool2d, adaptive_max_pool2d, 2);
LT_NN_ADAPTIVE_MAX(MaxPool1d, max_pool1d, 1);
LT_NN_ADAPTIVE_MAX(MaxPool2d, max_pool2d, 2);
#undef LT_NN_ADAPTIVE_MAX
LT_NN_POOL(AvgPool1d, avg_pool1d, 1);
LT_NN_POOL(AvgPool2d, avg_pool2d, 2);
#undef LT_NN_POOL

// Upsample: F::interpolate with the module's options.
class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const UpsampleOptions& o = {}) : options(o) {}
  Tensor forward(const Tensor& x) {
    return lt::interpolate(x, options.size() ? IntList(*options.size()) : IntList(),
                           options.scale_factor().value_or(std::vector<double>{}), options.mode(),
                           options.align_corners());
  }
  std::string name() const override { return "Upsample"; }
  LT_CLONE_FROM_OPTIONS(UpsampleImpl)
  UpsampleOptions options;
};
LT_MODULE(Upsample);

// InstanceNorm1d/2d: F::instance_norm, with running stats when track_running_stats (updated in
// training, used in eval).
template <int64_t Dims, typename Self>
class InstanceNormImplBase : public Cloneable<Self> {
 public:
  explicit InstanceNormImplBase(const InstanceNormOptions& o) : options(o) { reset(); }
  void reset() override {
    const int64_t n = options.num_features();
    if (options.affine()) {
      weight = this->register_parameter("weight", ones({n}));
      bias = this->register_parameter("bias", zeros({n}));
    }
    if (options.track_running_stats()) {
      running_mean = this->register_buffer("running_mean", zeros({n}));
      running_var = this->register_buffer("running_var", ones({n}));
    }
  }
  // [N, C, ...] or one unbatched sample [C, ...], as libtorch's.
  Tensor forward(const Tensor& x) {
    if (x.dim() == Dims + 1 && x.size(0) == options.num_features())
      return forward(x.unsqueeze(0)).squeeze(0);
    if (x.dim() != Dims + 2 || x.size(1) != options.num_features())
      throw Error(std::string(name_()) + ": expected an input [N, " +
                  std::to_string(options.num_features()) + (Dims == 1 ? ", L]" : ", H, W]") +
                  " or one sample without N, got " + std::to_string(x.dim()) + " dims");
    const bool tracked = options.track_running_stats();
    return functional::instance_norm(x, functional::InstanceNormFuncOptions()
                                            .running_mean(tracked ? running_mean : Tensor())
                                            .running_var(tracked ? running_var : Tensor())
                                            .weight(weight)
                                            .bias(bias)
                                            .use_input_stats(this->is_training() || !tracked)
                                            .momentum(options.momentum())
                                            .eps(options.eps()));
  }
  std::string name() const override { return name_(); }
  InstanceNormOptions options;
  Tensor weight, bias, running_mean, running_var;

 private:
  static const char* name_() { return Dims == 1 ? "InstanceNorm1d" : "InstanceNorm2d"; }
};
class InstanceNorm1dImpl : public InstanceNormImplBase<1, InstanceNorm1dImpl> {
 public:
  using InstanceNormImplBase::InstanceNormImplBase;
  explicit InstanceNorm1dImpl(int64_t n) : InstanceNormImplBase(InstanceNormOptions(n)) {}
};
LT_MODULE(InstanceNorm1d);
class InstanceNorm2dImpl : public InstanceNormImplBase<2, InstanceNorm2dImpl> {
 public:
  using InstanceNormImplBase::InstanceNormImplBase;
  explicit InstanceNorm2dImpl(int64_t n) : InstanceNormImplBase(InstanceNormOptions(n)) {}
};
LT_MODULE(InstanceNorm2d);

// GroupNorm: group_norm over num_groups groups of the channels, with a per-channel affine.
class GroupNormImpl : public Module {
 public:
  explicit GroupNormImpl(const GroupNormOptions& o) : options(o) {
    if (o.affine()) {
      weight = register_parameter("weight", ones({o.num_channels()}));
      bias = register_parameter("bias", zeros({o.num_channels()}));
    }
  }
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  Tensor forward(const Tensor& x) {
    return lt::group_norm(x, options.num_groups(), weight, bias, options.eps());
  }
  std::string name() const override { return "GroupNorm"; }
  LT_CLONE_FROM_OPTIONS(GroupNormImpl)
  GroupNormOptions options;
  Tensor weight, bias;
};
LT_MODULE(GroupNorm);

}  // namespace lt::nn
