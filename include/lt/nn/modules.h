// The lt::nn modules. Initialization follows PyTorch's defaults.
#pragma once
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "lt/nn/module.h"
#include "lt/ops.h"

namespace lt::nn {

class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x);
  std::string name() const override { return "Linear"; }
  Tensor weight, bias;
};
LT_MODULE(Linear);

struct Conv2dOptions {
  Conv2dOptions(int64_t in, int64_t out, int64_t kernel) : in_channels(in), out_channels(out), kernel_size(kernel) {}
  Conv2dOptions& stride(int64_t v) { stride_ = v; return *this; }
  Conv2dOptions& padding(int64_t v) { padding_ = v; return *this; }
  Conv2dOptions& dilation(int64_t v) { dilation_ = v; return *this; }
  Conv2dOptions& groups(int64_t v) { groups_ = v; return *this; }
  Conv2dOptions& bias(bool v) { bias_ = v; return *this; }
  int64_t in_channels, out_channels, kernel_size;
  int64_t stride_ = 1, padding_ = 0, dilation_ = 1, groups_ = 1;
  bool bias_ = true;
};

class Conv2dImpl : public Module {
 public:
  explicit Conv2dImpl(const Conv2dOptions& o);
  Conv2dImpl(int64_t in, int64_t out, int64_t kernel) : Conv2dImpl(Conv2dOptions(in, out, kernel)) {}
  Tensor forward(const Tensor& x);
  std::string name() const override { return "Conv2d"; }
  Conv2dOptions options;
  Tensor weight, bias;
};
LT_MODULE(Conv2d);

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape, double eps = 1e-5,
                         bool elementwise_affine = true);
  Tensor forward(const Tensor& x);
  std::string name() const override { return "LayerNorm"; }
  std::vector<int64_t> normalized_shape;
  double eps;
  Tensor weight, bias;
};
LT_MODULE(LayerNorm);

class BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1);
  Tensor forward(const Tensor& x);
  std::string name() const override { return "BatchNorm2d"; }
  int64_t num_features;
  double eps, momentum;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
};
LT_MODULE(BatchNorm2d);

class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim);
  Tensor forward(const Tensor& indices);
  std::string name() const override { return "Embedding"; }
  Tensor weight;
};
LT_MODULE(Embedding);

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5) : p(p) {}
  Tensor forward(const Tensor& x) { return dropout(x, p, is_training()); }
  std::string name() const override { return "Dropout"; }
  double p;
};
LT_MODULE(Dropout);

class ReLUImpl : public Module {
 public:
  Tensor forward(const Tensor& x) { return relu(x); }
  std::string name() const override { return "ReLU"; }
};
LT_MODULE(ReLU);

class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none") : approximate(std::move(approximate)) {}
  Tensor forward(const Tensor& x) { return gelu(x, approximate); }
  std::string name() const override { return "GELU"; }
  std::string approximate;
};
LT_MODULE(GELU);

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1) : start(start_dim), end(end_dim) {}
  Tensor forward(const Tensor& x) { return x.flatten(start, end); }
  std::string name() const override { return "Flatten"; }
  int64_t start, end;
};
LT_MODULE(Flatten);

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(int64_t kernel, int64_t stride = 0) : k(kernel), s(stride ? stride : kernel) {}
  Tensor forward(const Tensor& x) { return max_pool2d(x, {k, k}, {s, s}); }
  std::string name() const override { return "MaxPool2d"; }
  int64_t k, s;
};
LT_MODULE(MaxPool2d);

// Runs its modules in order; each must have Tensor forward(const Tensor&).
class SequentialImpl : public Module {
 public:
  template <typename... M>
  explicit SequentialImpl(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  template <typename Holder>
  void push_back(const Holder& h) {
    auto p = h.ptr();
    register_module(std::to_string(steps_.size()), p);
    steps_.push_back([p](const Tensor& x) { return p->forward(x); });
  }
  Tensor forward(const Tensor& x);
  size_t size() const { return steps_.size(); }
  std::string name() const override { return "Sequential"; }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};
LT_MODULE(Sequential);

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim(embed_dim), num_heads(num_heads) {}
  MultiheadAttentionOptions& dropout(double v) { dropout_ = v; return *this; }
  MultiheadAttentionOptions& bias(bool v) { bias_ = v; return *this; }
  MultiheadAttentionOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  int64_t embed_dim, num_heads;
  double dropout_ = 0.0;
  bool bias_ = true;
  bool batch_first_ = false;  // PyTorch's default: inputs are [L, N, E]
};

class MultiheadAttentionImpl : public Module {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& o);
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  // Returns (output, attention weights averaged over heads). As PyTorch's: attn_mask [L, S] is
  // additive (float) or bool with true = may NOT attend; key_padding_mask bool [N, S], true =
  // ignore that key.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {},
                                     const Tensor& attn_mask = {});
  std::string name() const override { return "MultiheadAttention"; }
  MultiheadAttentionOptions options;
  Tensor in_proj_weight, in_proj_bias;
  Linear out_proj;
};
LT_MODULE(MultiheadAttention);

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model(d_model), nhead(nhead) {}
  TransformerEncoderLayerOptions& dim_feedforward(int64_t v) { dim_feedforward_ = v; return *this; }
  TransformerEncoderLayerOptions& dropout(double v) { dropout_ = v; return *this; }
  TransformerEncoderLayerOptions& activation(std::string v) { activation_ = std::move(v); return *this; }
  TransformerEncoderLayerOptions& norm_first(bool v) { norm_first_ = v; return *this; }
  TransformerEncoderLayerOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  int64_t d_model, nhead;
  int64_t dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  std::string activation_ = "relu";
  bool norm_first_ = false;
  bool batch_first_ = false;
};

class TransformerEncoderLayerImpl : public Module {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o);
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});
  std::string name() const override { return "TransformerEncoderLayer"; }
  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn;
  Linear linear1, linear2;
  LayerNorm norm1, norm2;
};
LT_MODULE(TransformerEncoderLayer);

}  // namespace lt::nn
